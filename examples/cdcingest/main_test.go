package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

var (
	seedFlag    = flag.Uint64("cdc.seed", 0, "seed of the generated change events (0: the time)")
	batchesFlag = flag.Int("cdc.batches", 4, "batches of the crash test")
)

// mainEnv makes the test binary run main, as the built command would:
// the crash tests need a process that really dies.
const mainEnv = "CDCINGEST_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// runCmd runs the command in this process (a crash fails the test).
func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, func() { t.Fatal("unexpected crash") })
	return out.String(), errOut.String(), code
}

// runProcess runs the command as a process of its own and returns its
// output and exit status.
func runProcess(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("run %v: %v\n%s", args, err, out)
	return "", -1
}

func seed(t *testing.T) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -cdc.seed %d)", s, s)
	return s
}

// customer is a row of the table, and of the model.
type customer struct {
	Key       int64     `json:"key"`
	Name      *string   `json:"name"`
	Balance   *int64    `json:"balance"`
	UpdatedAt time.Time `json:"updated_at"`
}

// replay is the source's final state, computed without MERGE: every event
// of a batch applied in turn, in order of timestamp and then of line;
// insert and update set the row, delete removes it.
func replay(batches [][]event) map[int64]customer {
	rows := map[int64]customer{}
	for _, b := range batches {
		b = slices.Clone(b)
		slices.SortStableFunc(b, func(x, y event) int { return x.TS.Compare(y.TS) })
		for _, e := range b {
			if e.Op == "delete" {
				delete(rows, *e.Key)
				continue
			}
			rows[*e.Key] = customer{Key: *e.Key, Name: e.Columns.Name, Balance: e.Columns.Balance, UpdatedAt: e.TS.Truncate(time.Microsecond)}
		}
	}
	return rows
}

// tableRows reads the table.
func tableRows(t *testing.T, snap *deltalog.Snapshot) map[int64]customer {
	t.Helper()
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[int64]customer{}
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		lines, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			var c customer
			if err := json.Unmarshal(l, &c); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if _, dup := rows[c.Key]; dup {
				t.Errorf("key %d is in the table twice", c.Key)
			}
			rows[c.Key] = c
		}
	}
	return rows
}

func openTable(t *testing.T, dir string) (objstore.Store, *deltalog.Snapshot) {
	t.Helper()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	return st, snap
}

// checkTable fails unless the table holds exactly want, its txn version
// for cdcingest is last, and no batch was committed twice.
func checkTable(t *testing.T, dir string, want map[int64]customer, last int64) {
	t.Helper()
	st, snap := openTable(t, dir)
	got := tableRows(t, snap)
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("key %d is missing; want %s", k, show(w))
		case show(g) != show(w):
			t.Errorf("key %d is %s; want %s", k, show(g), show(w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %d, %s, should not be in the table", k, show(g))
		}
	}
	if v, ok := snap.TxnVersion("cdcingest"); !ok || v != last {
		t.Errorf("TxnVersion(cdcingest) = %d, %v; want %d", v, ok, last)
	}
	committed := map[int64]int64{} // batch -> table version
	for c, err := range deltalog.Commits(context.Background(), st, "", 0, -1) {
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Actions {
			if a.Txn == nil || a.Txn.AppID != "cdcingest" {
				continue
			}
			if v, twice := committed[a.Txn.Version]; twice {
				t.Errorf("batch %d is committed twice: versions %d and %d", a.Txn.Version, v, c.Version)
			}
			committed[a.Txn.Version] = c.Version
		}
	}
}

func show(c customer) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// The process is killed at every step of a run in turn (before each write
// to the store, after each commit, after each save of its progress), then
// killed again as far into the restart, then restarted for good: every
// time the table ends as the source's final state, each batch committed
// once.
func TestCrashAtEveryStep(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(root, "events")
	batches, err := generateBatches(events, *batchesFlag, seed(t))
	if err != nil {
		t.Fatal(err)
	}
	want := replay(batches)
	last := int64(len(batches))
	for k := 1; ; k++ {
		dir := filepath.Join(root, fmt.Sprint("run", k))
		args := []string{"-table", filepath.Join(dir, "customers"), "-events", events, "-progress", filepath.Join(dir, "progress")}
		crashAt := append(slices.Clone(args), "-crash-step", strconv.Itoa(k))
		out, code := runProcess(t, crashAt...)
		if code == 0 {
			// Step k is past the end: every step before it was a crash.
			if k < 4*int(last) {
				t.Fatalf("only %d steps for %d batches:\n%s", k-1, last, out)
			}
			t.Logf("killed at each of %d steps", k-1)
			checkTable(t, filepath.Join(dir, "customers"), want, last)
			return
		}
		if code != crashStatus || !strings.Contains(out, fmt.Sprintf("simulated crash at step %d", k)) {
			t.Fatalf("step %d: exit %d, want %d\n%s", k, code, crashStatus, out)
		}
		crash := out[strings.Index(out, "simulated crash"):]
		// Die again as many steps into the recovery.
		out2, code := runProcess(t, crashAt...)
		if code != 0 && code != crashStatus {
			t.Fatalf("step %d, first restart: exit %d\n%s", k, code, out2)
		}
		out3, code := runProcess(t, args...)
		if code != 0 {
			t.Fatalf("step %d, last restart: exit %d\n%s", k, code, out3)
		}
		t.Run(fmt.Sprint("step", k), func(t *testing.T) {
			checkTable(t, filepath.Join(dir, "customers"), want, last)
			if t.Failed() {
				t.Logf("%s\nrestarts:\n%s\n%s", crash, out2, out3)
			}
		})
	}
}

// A batch keeps the latest event of each key by timestamp, then by line;
// an update of a missing key inserts it, an insert of a present key
// updates it, a delete of a missing key does nothing.
func TestLatestEventPerKeyWins(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(root, "events")
	if err := os.MkdirAll(events, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n int, lines ...string) {
		if err := os.WriteFile(filepath.Join(events, fmt.Sprintf("%08d.jsonl", n)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1,
		`{"op": "insert", "key": 1, "ts": "2026-03-01T10:00:02Z", "columns": {"name": "newer", "balance": 1}}`,
		`{"op": "update", "key": 1, "ts": "2026-03-01T10:00:01Z", "columns": {"name": "older, later line", "balance": 2}}`,
		`{"op": "insert", "key": 2, "ts": "2026-03-01T10:00:03Z", "columns": {"name": "gone", "balance": 3}}`,
		`{"op": "delete", "key": 2, "ts": "2026-03-01T10:00:03Z"}`,
		`{"op": "update", "key": 3, "ts": "2026-03-01T10:00:04Z", "columns": {"name": "never inserted"}}`,
		`{"op": "delete", "key": 4, "ts": "2026-03-01T10:00:05Z"}`,
		``,
		`{"op": "insert", "key": 5, "ts": "2026-03-01T10:00:06Z", "columns": {"name": "five", "balance": 5}}`,
	)
	write(2,
		`{"op": "insert", "key": 1, "ts": "2026-03-01T10:01:00Z", "columns": {"name": "again", "balance": 10}}`,
		`{"op": "delete", "key": 5, "ts": "2026-03-01T10:01:01Z"}`,
	)
	table := filepath.Join(root, "customers")
	out, errOut, code := runCmd(t, "-table", table, "-events", events)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"batch 1: 7 events, 5 keys: version 1 (3 inserted, 0 updated, 0 deleted)",
		"batch 2: 2 events, 2 keys: version 2 (0 inserted, 1 updated, 1 deleted)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, snap := openTable(t, table)
	var got []string
	for _, c := range tableRows(t, snap) {
		got = append(got, show(c))
	}
	slices.Sort(got)
	want := []string{
		`{"key":1,"name":"again","balance":10,"updated_at":"2026-03-01T10:01:00Z"}`,
		`{"key":3,"name":"never inserted","balance":null,"updated_at":"2026-03-01T10:00:04Z"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// With its progress file lost, the ingestor resumes from the table's txn
// version and commits nothing again; new batches then land.
func TestLostProgressResumesFromTheTable(t *testing.T) {
	root := t.TempDir()
	events, table := filepath.Join(root, "events"), filepath.Join(root, "customers")
	s := seed(t)
	first, err := generateBatches(events, 3, s)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCmd(t, "-table", table, "-events", events); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if err := os.Remove(filepath.Join(events, ".progress")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "-table", table, "-events", events)
	if code != 0 || !strings.Contains(out, "the table holds batches up to 3") || strings.Contains(out, "batch ") {
		t.Fatalf("restart without progress: exit %d: %s\n%s", code, errOut, out)
	}
	more, err := generateBatches(events, 2, s)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCmd(t, "-table", table, "-events", events); code != 0 || !strings.Contains(out, "batch 5:") || strings.Contains(out, "batch 3:") {
		t.Fatalf("new batches: exit %d: %s\n%s", code, errOut, out)
	}
	checkTable(t, table, replay(append(first, more...)), 5)
}

// A bad event fails its batch, naming the file and line; the batches
// before it stand and nothing of it is committed.
func TestBadEventFailsItsBatch(t *testing.T) {
	root := t.TempDir()
	events, table := filepath.Join(root, "events"), filepath.Join(root, "customers")
	batches, err := generateBatches(events, 1, seed(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{`{"op": "upsert", "key": 1, "ts": "2026-03-01T10:00:00Z"}`, `op "upsert"`},
		{`{"op": "delete", "ts": "2026-03-01T10:00:00Z"}`, "no key"},
		{`{"op": "delete", "key": 1}`, "no ts"},
		{`{"op": "delete", "key": 1, "ts": "yesterday"}`, "yesterday"},
		{`{"op": "insert", "key": 1, "ts": "2026-03-01T10:00:00Z", "columns": {"nme": "x"}}`, "nme"},
		{`{"op": "insert", "key": 1, "ts": "2026-03-01T10:00:00Z", "columns": {"balance": "x"}}`, "balance"},
	} {
		bad := filepath.Join(events, "00000002.jsonl")
		if err := os.WriteFile(bad, []byte(`{"op": "delete", "key": 1, "ts": "2026-03-01T10:00:00Z"}`+"\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCmd(t, "-table", table, "-events", events)
		if code != 1 || !strings.Contains(errOut, bad+":2: ") || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want exit 1 naming %s:2 and %q\n%s", c.line, code, errOut, bad, c.want, out)
		}
		checkTable(t, table, replay(batches), 1)
	}
}

// Two ingestors of the same feed on one table (a zombie and its
// replacement, each with its own progress) race batch for batch: each
// batch still lands once.
func TestConcurrentIngestors(t *testing.T) {
	root := t.TempDir()
	events, table := filepath.Join(root, "events"), filepath.Join(root, "customers")
	batches, err := generateBatches(events, 6, seed(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(table)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([]bytes.Buffer, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := &ingestor{store: st, app: "cdcingest", events: events, progress: filepath.Join(root, fmt.Sprint("progress", i)), out: &outs[i], crash: func(string) {}}
			errs[i] = in.ingest(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("ingestor %d: %v\n%s", i, err, outs[i].String())
		}
	}
	checkTable(t, table, replay(batches), 6)
	if t.Failed() {
		t.Logf("ingestor 0:\n%s\ningestor 1:\n%s", outs[0].String(), outs[1].String())
	}
}

// A batch whose MERGE changes nothing (it only deletes keys the table
// lacks) still records its batch: the commit carries the txn, as
// writer.Append records an app transaction on empty input and as Spark's
// idempotent DML commits its SetTransaction. It fails today: dml returns
// a nil CommitResult when nothing matched, with or without
// WithAppTransaction, so the table's txn version stays at batch 1 and
// only the ingestor's progress file knows batch 2 was applied. A dml
// issue, for the lead; the ingestor copes (its progress file).
func TestNoOpBatchRecordsItsTxn(t *testing.T) {
	root := t.TempDir()
	events, table := filepath.Join(root, "events"), filepath.Join(root, "customers")
	if err := os.MkdirAll(events, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, line := range []string{
		`{"op": "insert", "key": 1, "ts": "2026-03-01T10:00:00Z", "columns": {"name": "one", "balance": 1}}`,
		`{"op": "delete", "key": 99, "ts": "2026-03-01T10:01:00Z"}`,
	} {
		if err := os.WriteFile(filepath.Join(events, fmt.Sprintf("%08d.jsonl", n+1)), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, errOut, code := runCmd(t, "-table", table, "-events", events); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	_, snap := openTable(t, table)
	if v, ok := snap.TxnVersion("cdcingest"); !ok || v != 2 {
		t.Errorf("TxnVersion(cdcingest) = %d, %v after batch 2 changed nothing; want 2", v, ok)
	}
}
