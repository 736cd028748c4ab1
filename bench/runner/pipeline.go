package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

// pipelineLag: the CDC pipeline under a steady Postgres workload
// (examples/cdcpipeline's bronze and silver processes, Debezium through
// Kafka Connect): for each row inserted, the time from its Postgres
// insert (clock_timestamp()) to its delivery by a follower of bronze's
// change feed and of silver's, and the bronze-to-silver lag between them.
func pipelineLag(ctx context.Context, cfg *config, rep *report) error {
	const suite = "CDC pipeline lag"
	env := map[string]string{}
	for _, k := range []string{"LAKELOG_PG_HOST", "LAKELOG_PG_PORT", "LAKELOG_PG_USER", "LAKELOG_KAFKA_BROKERS", "LAKELOG_CONNECT_URL"} {
		if env[k] = os.Getenv(k); env[k] == "" {
			return missingServer(rep, "pipeline", k)
		}
	}
	rate, seconds := 20, 15
	if cfg.scale == "full" {
		seconds = 60
	}
	dir := filepath.Join(cfg.work, "pipeline")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(dir, "cdcpipeline")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/cdcpipeline")
	build.Dir = cfg.repo
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building examples/cdcpipeline: %v\n%s", err, out)
	}
	table := "bench_" + randomID()
	psql := func(sql string) error {
		cmd := exec.CommandContext(ctx, "psql", "-h", env["LAKELOG_PG_HOST"], "-p", env["LAKELOG_PG_PORT"], "-U", env["LAKELOG_PG_USER"], "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("psql %q: %v: %s", sql, err, out)
		}
		return nil
	}
	if err := psql(fmt.Sprintf("create table %s (id bigint primary key, v text, created_at timestamptz not null default clock_timestamp())", table)); err != nil {
		return err
	}
	connector := map[string]any{"name": table, "config": map[string]string{
		"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "plugin.name": "pgoutput",
		"database.hostname": env["LAKELOG_PG_HOST"], "database.port": env["LAKELOG_PG_PORT"], "database.user": env["LAKELOG_PG_USER"],
		"database.password": "unused", "database.dbname": "postgres", "topic.prefix": table, "table.include.list": "public." + table,
		"slot.name": table, "publication.name": table, "publication.autocreate.mode": "filtered", "snapshot.mode": "no_data",
	}}
	body, _ := json.Marshal(connector)
	resp, err := http.Post(env["LAKELOG_CONNECT_URL"]+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	defer func() {
		req, _ := http.NewRequest(http.MethodDelete, env["LAKELOG_CONNECT_URL"]+"/connectors/"+table, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		for range 50 {
			if psql(fmt.Sprintf("select pg_drop_replication_slot('%s') from pg_replication_slots where slot_name = '%s'", table, table)) == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		psql(fmt.Sprintf("drop publication if exists %s; drop table if exists %s", table, table))
	}()
	if err := waitConnector(ctx, env["LAKELOG_CONNECT_URL"], table); err != nil {
		return err
	}
	bronzeDir, silverDir := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	logf, err := os.Create(filepath.Join(dir, "stages.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	stages := [][]string{
		{"bronze", "-table", bronzeDir, "-brokers", env["LAKELOG_KAFKA_BROKERS"], "-topic", table + ".public." + table, "-group", table, "-max-records", "1000"},
		{"silver", "-bronze", bronzeDir, "-table", silverDir, "-key", "id", "-poll", "50ms"},
	}
	for _, args := range stages {
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return err
		}
		defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	}

	// Followers of both tables record when each id arrives.
	fctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+180)*time.Second)
	defer cancel()
	var mu sync.Mutex
	arrived := map[string]map[int64]time.Time{"bronze": {}, "silver": {}}
	created := map[int64]time.Time{}
	n := int64(rate * seconds)
	var wg sync.WaitGroup
	followErr := make(chan error, 2)
	for name, root := range map[string]string{"bronze": bronzeDir, "silver": silverDir} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := followIDs(fctx, root, n, func(id int64, at, createdAt time.Time) {
				mu.Lock()
				defer mu.Unlock()
				if _, ok := arrived[name][id]; !ok {
					arrived[name][id] = at
				}
				created[id] = createdAt
			})
			if err != nil {
				err = fmt.Errorf("following %s: %w", name, err)
				cancel() // the other follower too
			}
			followErr <- err
		}()
	}
	// The workload: one insert per transaction at a steady rate, from one
	// psql session.
	cmd := exec.CommandContext(ctx, "psql", "-h", env["LAKELOG_PG_HOST"], "-p", env["LAKELOG_PG_PORT"], "-U", env["LAKELOG_PG_USER"], "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAt")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
			time.Sleep(d)
		}
		if _, err := fmt.Fprintf(in, "insert into %s (id, v) values (%d, 'row %d');\n", table, i+1, i+1); err != nil {
			return err
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("the workload's psql: %w", err)
	}
	wg.Wait()
	close(followErr)
	for err := range followErr {
		if err != nil {
			return fmt.Errorf("%w (the stages' log: %s)", err, logf.Name())
		}
	}
	var e2e, bronzeLag, b2s []float64
	for id := int64(1); id <= n; id++ {
		c, b, s := created[id], arrived["bronze"][id], arrived["silver"][id]
		e2e = append(e2e, s.Sub(c).Seconds())
		bronzeLag = append(bronzeLag, b.Sub(c).Seconds())
		b2s = append(b2s, max(0, s.Sub(b).Seconds()))
	}
	rep.note("%s: %d single-row insert transactions at %d/s into Postgres; Debezium 3.6.1 (pgoutput) -> Kafka -> examples/cdcpipeline bronze (franz-go, one commit per poll) -> silver (cdf.Follow poll 50 ms, MERGE per batch), "+
		"tables on local disk; latencies from the row's clock_timestamp() in Postgres to its delivery by a follower of each table's change feed (10 ms poll); one machine, shared.", suite, n, rate)
	for _, r := range []struct {
		name string
		secs []float64
	}{{"Postgres insert -> bronze delivered", bronzeLag}, {"bronze delivered -> silver delivered", b2s}, {"Postgres insert -> silver delivered (end to end)", e2e}} {
		l := summarize(r.secs)
		rep.add(&Row{Suite: suite, Name: r.name, Unit: "rows", Lakelog: &Outcome{Seconds: l.P50 / 1000, Count: n, Latency: l},
			LakelogNote: fmt.Sprintf("p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d rows", l.P50, l.P99, l.Max, n)})
	}
	return nil
}

func waitConnector(ctx context.Context, connect, name string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(connect + "/connectors/" + name + "/status")
		if err == nil {
			var st struct {
				Tasks []struct{ State, Trace string }
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			json.Unmarshal(b, &st)
			if len(st.Tasks) > 0 && st.Tasks[0].State == "RUNNING" {
				return nil
			}
			if len(st.Tasks) > 0 && st.Tasks[0].State == "FAILED" {
				return fmt.Errorf("connector %s failed: %s", name, st.Tasks[0].Trace)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("connector %s did not start in 60 s", name)
}

// followIDs follows the table at root (waiting for it to exist) and calls
// seen for each inserted or updated row's id with the time it arrived and
// its created_at, until ids 1..n have all arrived.
func followIDs(ctx context.Context, root string, n int64, seen func(id int64, at, createdAt time.Time)) error {
	st, err := objstore.Open(ctx, root)
	if err != nil {
		return err
	}
	for {
		if _, err := deltalog.Open(ctx, st, ""); err == nil {
			break
		} else if !errors.Is(err, deltalog.ErrNotTable) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	got := map[int64]bool{}
	inserts := &expr.Compare{Op: expr.Ne, Left: expr.Col(actions.ChangeTypeColumn), Right: expr.Lit(actions.ChangeDelete)}
	// No projection: bronze has no id column before its first events.
	for b, err := range cdf.Follow(ctx, st, "", cdf.StartingVersion(0), cdf.WithPollInterval(10*time.Millisecond), cdf.WithMaxPollInterval(10*time.Millisecond),
		cdf.WithFilter(inserts)) {
		if err != nil {
			return err
		}
		for rec, err := range b.Records(ctx) {
			if err != nil {
				return err
			}
			now := time.Now()
			idCol, tsCol := rec.Schema().FieldIndices("id"), rec.Schema().FieldIndices("created_at")
			if len(idCol) != 1 || len(tsCol) != 1 {
				continue
			}
			ids := rec.Column(idCol[0]).(*array.Int64)
			ts := rec.Column(tsCol[0]).(*array.Timestamp)
			unit := ts.DataType().(*arrow.TimestampType).Unit
			for i := range ids.Len() {
				if ids.IsNull(i) || ts.IsNull(i) {
					continue
				}
				got[ids.Value(i)] = true
				seen(ids.Value(i), now, ts.Value(i).ToTime(unit))
			}
		}
		if int64(len(got)) >= n {
			return nil
		}
	}
	return ctx.Err()
}
