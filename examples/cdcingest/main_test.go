package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
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
func runCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, func() { t.Fatal("unexpected crash") })
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), code
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

// tableState opens the table and reads all its events.
func tableState(t *testing.T, dir string) (*deltalog.Snapshot, []change) {
	t.Helper()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readChanges(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	return snap, rows
}

// wantBatches fails unless the table holds batches 1..n of five events
// each, every event exactly once, and app "cdcingest" at version n.
func wantBatches(t *testing.T, dir string, n int64) {
	t.Helper()
	snap, rows := tableState(t, dir)
	src := &source{batches: n, rows: 5}
	seen := map[int64]int{}
	for _, c := range rows {
		seen[c.Seq]++
	}
	for b := int64(1); b <= n; b++ {
		for _, c := range src.Batch(b) {
			if seen[c.Seq] != 1 {
				t.Errorf("event %d of batch %d is in the table %d times", c.Seq, b, seen[c.Seq])
			}
		}
	}
	if len(rows) != int(n)*5 {
		t.Errorf("the table has %d events, want %d", len(rows), n*5)
	}
	if v, ok := snap.TxnVersion("cdcingest"); !ok || v != n {
		t.Errorf("TxnVersion(cdcingest) = %d, %v; want %d", v, ok, n)
	}
}

func TestIngestEachBatchOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "changes")
	out, code := runCmd(t, "-table", dir, "-batches", "6")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantBatches(t, dir, 6)
	// Nothing new: a second run commits nothing.
	out, code = runCmd(t, "-table", dir, "-batches", "6")
	if code != 0 || strings.Contains(out, "committed") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	if out, code = runCmd(t, "-table", dir, "-batches", "6", "-check"); code != 0 {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	wantBatches(t, dir, 6)
}

// A source that delivers acknowledged batches again (it lost its
// acknowledgements) lands nothing twice: the table's app version says
// which batches it holds.
func TestRedeliveredBatchesAreSkipped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "changes")
	if out, code := runCmd(t, "-table", dir, "-batches", "5"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	src := &source{dir: dir + ".source"}
	if err := src.Ack(2); err != nil {
		t.Fatal(err)
	}
	out, code := runCmd(t, "-table", dir, "-batches", "7")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, b := range []string{"3", "4", "5"} {
		if !strings.Contains(out, "batch "+b+": already in the table") {
			t.Errorf("batch %s was not skipped:\n%s", b, out)
		}
	}
	wantBatches(t, dir, 7)
}

// The process dies in the middle of batch 3, before its commit or after
// it; the restarted process lands every batch exactly once.
func TestCrashAndRestart(t *testing.T) {
	for _, tc := range []struct {
		crash     string
		landed    int64 // batches in the table after the crash
		wantAfter string
	}{
		{crash: "files:3", landed: 2, wantAfter: "batch 3: committed"},
		{crash: "commit:3", landed: 3, wantAfter: "batch 3: already in the table"},
	} {
		t.Run(tc.crash, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "changes")
			out, code := runProcess(t, "-table", dir, "-batches", "5", "-crash", tc.crash)
			if code != crashStatus {
				t.Fatalf("crash run: exit %d, want %d\n%s", code, crashStatus, out)
			}
			wantBatches(t, dir, tc.landed)
			acked, err := (&source{dir: dir + ".source"}).Acked()
			if err != nil || acked != 2 {
				t.Fatalf("after the crash the source has batch %d acknowledged (%v), want 2", acked, err)
			}
			if tc.landed == 2 {
				// Batch 3's data files were written: orphans, in no snapshot.
				if n := countParquet(t, dir); n != 3 {
					t.Errorf("%d data files on disk after the crash, want 3 (two committed, one orphan)", n)
				}
			}

			out, code = runProcess(t, "-table", dir, "-batches", "5")
			if code != 0 {
				t.Fatalf("restart: exit %d\n%s", code, out)
			}
			if !strings.Contains(out, tc.wantAfter) {
				t.Errorf("restart output lacks %q:\n%s", tc.wantAfter, out)
			}
			wantBatches(t, dir, 5)
			if out, code = runProcess(t, "-table", dir, "-batches", "5", "-check"); code != 0 {
				t.Fatalf("check: exit %d\n%s", code, out)
			}
		})
	}
}

// Two ingestors of the same feed on one table (a zombie and its
// replacement) race batch for batch: each batch still lands once.
func TestConcurrentIngestors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "changes")
	st, err := objstore.NewLocal(dir)
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
			in := &ingestor{
				store: st, app: "cdcingest", out: &outs[i],
				src: &source{dir: filepath.Join(t.TempDir(), "source"), batches: 8, rows: 5},
			}
			errs[i] = in.ingest(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("ingestor %d: %v\n%s", i, err, outs[i].String())
		}
	}
	wantBatches(t, dir, 8)
}

func countParquet(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".parquet") && !strings.Contains(path, "_delta_log") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
