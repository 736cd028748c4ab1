// Package cdctest drives the CDC pipeline's real servers in tests:
// PostgreSQL, Kafka and Kafka Connect with Debezium, as .ci/services.sh
// starts them and exports their addresses (LAKELOG_PG_HOST,
// LAKELOG_PG_PORT, LAKELOG_PG_USER, LAKELOG_KAFKA_BROKERS,
// LAKELOG_CONNECT_URL). Under CI=true a missing server fails the test.
//
// A test that kills Kafka Connect starts a worker of its own
// (StartConnect) from the cached jars: the session's worker is shared.
package cdctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// Services are the pipeline's servers.
type Services struct {
	PGHost, PGPort, PGUser string
	Brokers                string // comma separated
	Connect                string // the Connect worker's REST URL
}

// Require returns the servers, or skips (fails under CI=true) when one
// is missing.
func Require(t testing.TB) Services {
	return Services{
		PGHost:  cloudtest.Require(t, "LAKELOG_PG_HOST", "PostgreSQL"),
		PGPort:  cloudtest.Require(t, "LAKELOG_PG_PORT", "PostgreSQL"),
		PGUser:  cloudtest.Require(t, "LAKELOG_PG_USER", "PostgreSQL"),
		Brokers: cloudtest.Require(t, "LAKELOG_KAFKA_BROKERS", "Kafka"),
		Connect: cloudtest.Require(t, "LAKELOG_CONNECT_URL", "Kafka Connect"),
	}
}

// BrokerList is Brokers split.
func (s Services) BrokerList() []string { return strings.Split(s.Brokers, ",") }

// Psql runs SQL on the postgres database and returns psql's unaligned
// output (fields separated by |), failing the test on an error.
func (s Services) Psql(t testing.TB, sql string) string {
	t.Helper()
	out, err := s.PsqlErr(sql)
	if err != nil {
		if len(sql) > 2000 {
			sql = sql[:2000] + "..."
		}
		t.Fatalf("psql: %.3000v\n%s", err, sql)
	}
	return out
}

// PsqlErr runs SQL and returns psql's output or its error.
func (s Services) PsqlErr(sql string) (string, error) {
	cmd := exec.Command("psql", "-h", s.PGHost, "-p", s.PGPort, "-U", s.PGUser, "-d", "postgres",
		"-v", "ON_ERROR_STOP=1", "-qAtX", "-F", "|")
	cmd.Stdin = strings.NewReader(sql)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), nil
}

// ConnectorConfig is the configuration of Debezium's Postgres connector
// that the pipeline expects, for the tables (schema.table) with topic
// prefix and slot named name: the schema part on keys and values,
// transaction metadata, truncates streamed, a heartbeat every second.
func (s Services) ConnectorConfig(name string, tables ...string) map[string]string {
	return map[string]string{
		"connector.class":                           "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                               "pgoutput",
		"database.hostname":                         s.PGHost,
		"database.port":                             s.PGPort,
		"database.user":                             s.PGUser,
		"database.password":                         "unused",
		"database.dbname":                           "postgres",
		"topic.prefix":                              name,
		"table.include.list":                        strings.Join(tables, ","),
		"slot.name":                                 name,
		"publication.name":                          name,
		"publication.autocreate.mode":               "filtered",
		"snapshot.mode":                             "initial",
		"tasks.max":                                 "1",
		"key.converter":                             "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                           "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":              "true",
		"value.converter.schemas.enable":            "true",
		"provide.transaction.metadata":              "true",
		"skipped.operations":                        "none",
		"heartbeat.interval.ms":                     "1000",
		"topic.creation.default.partitions":         "1",
		"topic.creation.default.replication.factor": "1",
	}
}

// Connector registers a connector named name with cfg on the worker at
// url, waits until its task runs, and removes it (its slot and
// publication too) when the test ends.
func (s Services) Connector(t testing.TB, url, name string, cfg map[string]string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg := new(bytes.Buffer)
	msg.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("registering connector %s: %s %s", name, resp.Status, msg)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, url+"/connectors/"+name, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		// The slot is released when the task stops.
		for range 100 {
			if _, err := s.PsqlErr(fmt.Sprintf("select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = '%s'", name)); err == nil {
				if out, _ := s.PsqlErr(fmt.Sprintf("select count(*) from pg_replication_slots where slot_name = '%s'", name)); strings.TrimSpace(out) == "0" {
					break
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		s.PsqlErr(fmt.Sprintf("drop publication if exists %s", name))
	})
	WaitRunning(t, url, name, 120*time.Second)
}

// WaitRunning waits until the connector's task runs, failing the test
// when it failed or the wait ran out.
func WaitRunning(t testing.TB, url, name string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		resp, err := http.Get(url + "/connectors/" + name + "/status")
		if err == nil {
			var st struct {
				Tasks []struct{ State, Trace string }
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if len(st.Tasks) > 0 && st.Tasks[0].State == "RUNNING" {
				return
			}
			if len(st.Tasks) > 0 && st.Tasks[0].State == "FAILED" {
				t.Fatalf("connector %s's task failed: %s", name, st.Tasks[0].Trace)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("connector %s did not run within %s", name, wait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// ReadTopics reads the topics from their start until no record came for
// idle, and returns their records in order per partition.
func (s Services) ReadTopics(t testing.TB, idle time.Duration, topics ...string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.BrokerList()...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), idle)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r); n++ })
		if n == 0 && ctx.Err() != nil {
			return out
		}
	}
}
