package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/cdctest"
)

// TestCDCRunAndStatus runs `lakelog cdc run --config pipeline.yaml`
// against the real Postgres, Kafka and Kafka Connect with Debezium until
// silver equals the source table through inserts, updates, deletes and
// a source transaction, checks `lakelog cdc status` (JSON and table) at
// rest, the run's log (timestamps, auto compaction's table property,
// VACUUM of silver on its interval), and that an interrupt stops it
// cleanly (exit 0).
func TestCDCRunAndStatus(t *testing.T) {
	svc := cdctest.Require(t)
	dir := t.TempDir()
	table := strings.ReplaceAll(cloudtest.Name("cdcrun_"), "-", "_")
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, name text, amount numeric(12,2), at timestamptz)", table))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	svc.Psql(t, fmt.Sprintf("insert into %s select g, 'n' || g, g * 1.25, timestamptz '2024-01-01 00:00:00Z' + g * interval '1 hour' from generate_series(1, 50) g", table))
	name := table
	svc.Connector(t, svc.Connect, name, svc.ConnectorConfig(name, "public."+table))
	topic := name + ".public." + table
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	config := filepath.Join(dir, "pipeline.yaml")
	yaml := fmt.Sprintf(`brokers: [%s]
connect: %s
connector: %s
variable_numeric: string
properties:
  delta.deletedFileRetentionDuration: interval 2 seconds
vacuum:
  interval: 1s
tables:
  - topic: %s
    bronze: %s
    silver: %s
`, svc.Brokers, svc.Connect, name, topic, bronze, silver)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"cdc", "run", "--config", config}, strings.NewReader(""), &stdout, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		if t.Failed() {
			t.Logf("the run's log:\n%s", tailLines(stderr.String(), 40))
		}
	}()

	waitEqual := func(what string) {
		t.Helper()
		want := strings.Split(strings.TrimSpace(svc.Psql(t, fmt.Sprintf(
			"select id, coalesce(name, 'NULL'), coalesce(amount::text, 'NULL'), coalesce((extract(epoch from at) * 1000000)::bigint::text, 'NULL') from %s order by %[1]s.id", table))), "\n")
		var got []string
		deadline := time.Now().Add(120 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case code := <-done:
				t.Fatalf("lakelog cdc run exited with %d", code)
			default:
			}
			if got = silverRows(t, silver); slices.Equal(got, want) {
				t.Logf("%s: silver equals the table (%d rows)", what, len(got))
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
		t.Fatalf("%s: silver (%d rows) differs from the table (%d rows); first silver %q, first table %q", what, len(got), len(want), first(got), first(want))
	}
	waitEqual("the snapshot")
	svc.Psql(t, fmt.Sprintf(`insert into %[1]s values (51, 'new', -0.01, null);
update %[1]s set name = 'renamed', amount = amount + 1 where id %% 7 = 0;
delete from %[1]s where id in (3, 4, 5);
begin; insert into %[1]s select g, null, 99999.99, now() from generate_series(100, 140) g; update %[1]s set amount = null where id = 1; commit;`, table))
	waitEqual("the changes")

	// Status at rest: nothing left to land or apply.
	var st struct {
		Tables []cdc.TableStatus `json:"tables"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out, errOut := lakelog(t, "cdc", "status", "--config", config, "--format", "json")
		if code != 0 {
			t.Fatalf("cdc status: exit %d: %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Tables) != 1 {
			t.Fatalf("cdc status --format json: %v: %s", err, out)
		}
		s := st.Tables[0]
		if s.LagEvents == 0 && s.LagVersions == 0 && s.SilverBronzeVersion > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cdc status still shows lag: %s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	s := st.Tables[0]
	snap, err := deltalog.OpenURI(t.Context(), bronze)
	if err != nil {
		t.Fatal(err)
	}
	landed, _ := snap.TxnVersion("bronze/" + topic + "/0")
	if s.Topic != topic || s.KafkaEnd[0] != landed+1 || s.BronzeOffset[0] != landed || s.BronzeVersion < 1 ||
		s.SourcePosition["0"] == "" || s.SilverVersion < 1 || s.LagSeconds != 0 {
		t.Fatalf("cdc status: %+v (bronze holds offset %d)", s, landed)
	}
	code, out, errOut := lakelog(t, "cdc", "status", "--config", config)
	if code != 0 {
		t.Fatalf("cdc status: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		topic + "\n",
		fmt.Sprintf("  kafka     0: end %d, bronze %d; 0 events to land\n", s.KafkaEnd[0], s.BronzeOffset[0]),
		"  source    0: " + s.SourcePosition["0"] + "\n",
		fmt.Sprintf("  bronze    version %d (", s.BronzeVersion),
		fmt.Sprintf("  silver    version %d, at bronze version %d; 0 versions to apply, 0.0 s behind\n", s.SilverVersion, s.SilverBronzeVersion),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("cdc status lacks %q:\n%s", want, out)
		}
	}

	// The log: timestamps, the tables' auto compaction, VACUUM of silver.
	// VACUUM deleted files the MERGEs replaced more than 2 s before.
	vacuumed := regexp.MustCompile(`msg=vacuumed .*layer=silver files_deleted=[1-9]`)
	deadline = time.Now().Add(30 * time.Second)
	for !vacuumed.MatchString(stderr.String()) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	log := stderr.String()
	for _, want := range []string{"msg=\"pipeline starting\"", "msg=landed", "msg=merged", "msg=vacuumed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's log lacks %s", want)
		}
	}
	if !vacuumed.MatchString(log) {
		t.Errorf("no VACUUM of silver deleted a file")
	}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "time=20") {
			t.Errorf("a log line without a timestamp: %q", line)
			break
		}
	}
	for _, uri := range []string{bronze, silver} {
		snap, err := deltalog.OpenURI(t.Context(), uri)
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Config().AutoCompact() || snap.Metadata().Configuration[actions.PropDeletedFileRetentionDuration] != "interval 2 seconds" {
			t.Errorf("%s's properties: %v", uri, snap.Metadata().Configuration)
		}
	}

	// An interrupt stops it between commits, with exit 0.
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("lakelog cdc run exited with %d after an interrupt", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lakelog cdc run did not stop within 30 s of an interrupt")
	}
	if out := stdout.String(); out != "" {
		t.Errorf("cdc run printed to stdout: %q", out)
	}
}

// silverRows reads silver as "id|name|amount|at micros", ordered by id
// (nil while it does not exist).
func silverRows(t *testing.T, uri string) []string {
	snap, err := deltalog.OpenURI(t.Context(), uri)
	if err != nil {
		return nil
	}
	scan, err := reader.NewScan(snap, reader.WithColumns("id", "name", "amount", "at"))
	if err != nil {
		return nil
	}
	type row struct {
		id   int64
		text string
	}
	var rows []row
	for rec, err := range scan.Records(t.Context()) {
		if err != nil {
			return nil // a file vacuumed under the read: read again
		}
		for i := range int(rec.NumRows()) {
			var parts []string
			var id int64
			for c := range 4 {
				v, _ := actions.ArrowValue(rec.Column(c), i)
				switch x := v.(type) {
				case nil:
					parts = append(parts, "NULL")
				case int64:
					id = x
					parts = append(parts, fmt.Sprint(x))
				case actions.Decimal:
					parts = append(parts, x.String())
				case actions.Timestamp:
					parts = append(parts, fmt.Sprint(int64(x)))
				default:
					parts = append(parts, fmt.Sprint(x))
				}
			}
			rows = append(rows, row{id, strings.Join(parts, "|")})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.id - b.id) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
