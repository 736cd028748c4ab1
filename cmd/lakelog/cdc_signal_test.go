package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/cdctest"
)

// TestCDCRunInterrupted runs the built lakelog binary's `cdc run` as its
// own process against the real Postgres, Kafka and Kafka Connect with
// Debezium while a stream of source transactions flows, sends it SIGINT
// mid-stream and checks that it exits 0 and leaves the tables
// consistent: every commit of bronze and silver decodes, every file on
// disk is one a commit added (nothing half written), silver is the
// source table as of a whole source transaction (each transaction's 20
// rows and its update all there or none) and is no further into bronze
// than bronze goes. Restarted, it lands the rest: silver equals
// Postgres row by row, and bronze holds each source change once (no
// Kafka record twice, every insert, update and snapshot read once).
func TestCDCRunInterrupted(t *testing.T) {
	svc := cdctest.Require(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "lakelog")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lakelog/lakelog/cmd/lakelog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	table := strings.ReplaceAll(cloudtest.Name("cdcsig_"), "-", "_")
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, batch int not null, v text, touched int)", table))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	const snapshotRows = 50
	svc.Psql(t, fmt.Sprintf("insert into %s select g, 0, md5(g::text), null from generate_series(1, %d) g", table, snapshotRows))
	svc.Connector(t, svc.Connect, table, svc.ConnectorConfig(table, "public."+table))
	topic := table + ".public." + table
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	config := filepath.Join(dir, "pipeline.yaml")
	yaml := fmt.Sprintf(`brokers: [%s]
connect: %s
connector: %s
properties:
  delta.deletedFileRetentionDuration: interval 2 seconds
vacuum:
  interval: 2s
tables:
  - topic: %s
    bronze: %s
    silver: %s
`, svc.Brokers, svc.Connect, table, topic, bronze, silver)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "run.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var proc *exec.Cmd
	var exited chan error
	start := func() {
		fmt.Fprintln(logf, "--- test: start ---")
		proc = exec.Command(bin, "cdc", "run", "--config", config)
		proc.Stdout, proc.Stderr = logf, logf
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		exited = make(chan error, 1)
		go func(c *exec.Cmd, ch chan error) { ch <- c.Wait() }(proc, exited)
	}
	// interrupt sends SIGINT and wants exit 0 within 30 s.
	interrupt := func(what string) {
		t.Helper()
		proc.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("%s: lakelog cdc run after SIGINT: %v\n%s", what, err, runLog(logPath))
			}
		case <-time.After(30 * time.Second):
			proc.Process.Kill()
			<-exited
			t.Fatalf("%s: lakelog cdc run did not stop within 30 s of SIGINT\n%s", what, runLog(logPath))
		}
		proc = nil
	}
	defer func() {
		if proc != nil {
			proc.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the run's log:\n%s", tailLines(runLog(logPath), 40))
		}
	}()
	start()

	// The stream, until told to stop: transaction k inserts 20 rows of
	// batch k and marks the first row of batch k-1 touched = k.
	stopLoad := make(chan struct{})
	loaded := make(chan int, 1) // the transactions committed; -1 on error
	go func() {
		k := 0
		for {
			select {
			case <-stopLoad:
				loaded <- k
				return
			case <-time.After(20 * time.Millisecond):
			}
			sql := fmt.Sprintf("begin; insert into %[1]s select %[2]d * 1000 + g, %[2]d, md5(g::text), null from generate_series(0, 19) g;", table, k+1)
			if k > 0 {
				sql += fmt.Sprintf(" update %s set touched = %d where id = %d;", table, k+1, k*1000)
			}
			if _, err := svc.PsqlErr(sql + " commit;"); err != nil {
				t.Errorf("the stream: %v", err)
				loaded <- -1
				return
			}
			k++
		}
	}()
	defer func() {
		select {
		case <-stopLoad:
		default:
			close(stopLoad)
			<-loaded
		}
	}()
	// model is the source table after transaction m, as "id|batch|touched".
	model := func(m int) []string {
		var rows []string
		for id := 1; id <= snapshotRows; id++ {
			rows = append(rows, fmt.Sprintf("%d|0|NULL", id))
		}
		for k := 1; k <= m; k++ {
			for g := range 20 {
				touched := "NULL"
				if g == 0 && k < m {
					touched = fmt.Sprint(k + 1)
				}
				rows = append(rows, fmt.Sprintf("%d|%d|%s", k*1000+g, k, touched))
			}
		}
		return rows
	}

	// SIGINT once silver holds some of the stream and Postgres is still
	// committing it.
	deadline := time.Now().Add(90 * time.Second)
	for {
		if rows := tableRows(t, silver, "id", "batch", "touched"); len(rows) > snapshotRows+5*20 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("lakelog cdc run exited by itself: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("silver did not get 5 of the stream's transactions within 90 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	interrupt("mid-stream")
	if log := runLog(logPath); strings.Contains(log, "level=ERROR") || strings.Contains(log, "level=WARN msg=\"vacuum failed") {
		t.Fatalf("the run logged a failure before or at SIGINT:\n%s", tailLines(log, 20))
	}

	// At rest: whole commits, silver at a whole source transaction.
	for _, uri := range []string{bronze, silver} {
		checkWholeCommits(t, uri)
	}
	got := tableRows(t, silver, "id", "batch", "touched")
	m := 0
	for _, r := range got {
		var id, batch int
		fmt.Sscanf(r, "%d|%d", &id, &batch)
		m = max(m, batch)
	}
	if want := model(m); !slices.Equal(got, want) {
		t.Fatalf("silver after SIGINT is not the source table after its transaction %d: %d rows, want %d (first %q, want %q)", m, len(got), len(want), first(got), first(want))
	}
	cfg, err := cdc.LoadConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cdc.Status(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := st[0]; s.SilverBronzeVersion > s.BronzeVersion || s.BronzeOffset[0] >= s.KafkaEnd[0] {
		t.Fatalf("after SIGINT: status %+v", s)
	}
	t.Logf("SIGINT mid-stream: exit 0; silver at source transaction %d, bronze version %d, silver at bronze version %d", m, st[0].BronzeVersion, st[0].SilverBronzeVersion)

	// Restarted, it lands the rest: nothing lost, nothing twice. The
	// stream stops once silver holds 5 transactions more than at the
	// interrupt.
	start()
	deadline = time.Now().Add(90 * time.Second)
	for len(tableRows(t, silver, "id")) < len(model(m+5)) {
		select {
		case err := <-exited:
			t.Fatalf("lakelog cdc run exited by itself after the restart: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("after the restart silver did not get 5 more transactions within 90 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stopLoad)
	txns := <-loaded
	if txns < 0 {
		t.FailNow()
	}
	want := model(txns)
	deadline = time.Now().Add(90 * time.Second)
	for got = tableRows(t, silver, "id", "batch", "touched"); !slices.Equal(got, want); got = tableRows(t, silver, "id", "batch", "touched") {
		select {
		case err := <-exited:
			t.Fatalf("lakelog cdc run exited by itself after the restart: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart silver (%d rows) differs from the source after its %d transactions (%d rows)", len(got), txns, len(want))
		}
		time.Sleep(300 * time.Millisecond)
	}
	pg := strings.Split(strings.TrimSpace(svc.Psql(t, fmt.Sprintf("select id || '|' || batch || '|' || coalesce(touched::text, 'NULL') from %s order by id", table))), "\n")
	if !slices.Equal(got, pg) {
		t.Fatalf("silver differs from Postgres: %d rows, Postgres %d", len(got), len(pg))
	}
	t.Logf("restarted: silver equals Postgres after %d source transactions", txns)
	interrupt("at rest")

	// Bronze holds each source change once.
	events := tableRows(t, bronze, cdc.ColOp, cdc.ColTopic, cdc.ColPartition, cdc.ColOffset, "id")
	offsets := map[string]bool{}
	ops := map[string]int{}
	changes := map[string]bool{}
	for _, e := range events {
		f := strings.Split(e, "|")
		at := f[1] + "/" + f[2] + "@" + f[3]
		if offsets[at] {
			t.Fatalf("bronze holds Kafka record %s twice", at)
		}
		offsets[at] = true
		if f[0] == cdc.OpEnd {
			continue
		}
		ops[f[0]]++
		if k := f[0] + "|" + f[4]; changes[k] {
			t.Fatalf("bronze holds the change %s of row %s twice", f[0], f[4])
		} else {
			changes[k] = true
		}
	}
	if wantOps := map[string]int{"r": snapshotRows, "c": 20 * txns, "u": txns - 1}; !maps.Equal(ops, wantOps) {
		t.Fatalf("bronze's events by op: %v, want %v", ops, wantOps)
	}
}

func runLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// tableRows reads the table's columns as "a|b|...", ordered by the text
// (nil while it does not exist or a file was vacuumed under the read).
func tableRows(t *testing.T, uri string, cols ...string) []string {
	snap, err := deltalog.OpenURI(t.Context(), uri)
	if err != nil {
		return nil
	}
	scan, err := reader.NewScan(snap, reader.WithColumns(cols...))
	if err != nil {
		return nil
	}
	var rows []string
	for rec, err := range scan.Records(t.Context()) {
		if err != nil {
			return nil
		}
		for i := range int(rec.NumRows()) {
			parts := make([]string, len(cols))
			for c := range cols {
				v, _ := actions.ArrowValue(rec.Column(c), i)
				if v == nil {
					parts[c] = "NULL"
				} else {
					parts[c] = fmt.Sprint(v)
				}
			}
			rows = append(rows, strings.Join(parts, "|"))
		}
	}
	slices.SortFunc(rows, func(a, b string) int {
		var x, y int64
		fmt.Sscan(strings.SplitN(a, "|", 2)[0], &x)
		fmt.Sscan(strings.SplitN(b, "|", 2)[0], &y)
		if x != y {
			return int(x - y)
		}
		return strings.Compare(a, b)
	})
	return rows
}

// checkWholeCommits checks that every commit of the table decodes and
// every file under its root outside the log is one a commit added (a
// data or change data file): nothing was written for a commit that was
// not made.
func checkWholeCommits(t *testing.T, uri string) {
	t.Helper()
	store, err := objstore.Open(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(store)
	added := map[string]bool{}
	for c, err := range deltalog.Commits(t.Context(), store, "", 0, -1) {
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		for _, a := range c.Actions {
			switch {
			case a.Add != nil:
				added[a.Add.Path] = true
			case a.CDC != nil:
				added[a.CDC.Path] = true
			}
		}
	}
	err = filepath.WalkDir(uri, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(uri, path)
		if strings.HasPrefix(rel, "_delta_log"+string(filepath.Separator)) {
			return nil
		}
		if !added[filepath.ToSlash(rel)] {
			t.Errorf("%s: %s is on disk but no commit added it", uri, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
