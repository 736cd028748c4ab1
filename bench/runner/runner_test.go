package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/objstore"
)

func TestSummarize(t *testing.T) {
	var ds []float64
	for i := 100; i >= 1; i-- {
		ds = append(ds, float64(i)/1000) // 1..100 ms, unsorted
	}
	l := summarize(ds)
	if l.P50 != 51 || l.P90 != 91 || l.P99 != 100 || l.Max != 100 || math.Abs(l.Mean-50.5) > 1e-9 {
		t.Errorf("summary %+v", *l)
	}
	if summarize(nil) != nil {
		t.Error("summary of nothing")
	}
}

func TestMedianKeepsLargestPeak(t *testing.T) {
	m := medianOutcome([]Outcome{{Seconds: 3, PeakMB: 10}, {Seconds: 1, PeakMB: 50}, {Seconds: 2, PeakMB: 20}})
	if m.Seconds != 2 || m.PeakMB != 50 {
		t.Errorf("median %+v, want 2 s with peak 50", *m)
	}
}

func TestAggregateSumsRates(t *testing.T) {
	agg, note := aggregate([]Outcome{
		{Seconds: 5, Count: 100, Attempts: 120, PeakMB: 40, Latency: &Latency{Mean: 10, P99: 30}},
		{Seconds: 10, Count: 0, Failed: 1, PeakMB: 45},
	})
	if agg.Rate != 20 || agg.Seconds != 10 || agg.Count != 100 || agg.PeakMB != 45 {
		t.Errorf("aggregate %+v", *agg)
	}
	for _, want := range []string{"100 commits", "20 lost races before the commits that landed", "1 commits gave up"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}

func TestRatios(t *testing.T) {
	row := &Row{Unit: "rows", Lakelog: &Outcome{Seconds: 1, Count: 100, PeakMB: 50}, DeltaRS: &Outcome{Seconds: 2, Count: 100, PeakMB: 150}}
	if s, m := ratios(row); s != "2.00×" || m != "3.00×" {
		t.Errorf("ratios %s %s", s, m)
	}
	row.DeltaRS = nil
	if s, m := ratios(row); s != "—" || m != "—" {
		t.Errorf("ratios without a peer %s %s", s, m)
	}
}

// TestLakelogOps runs every lakelog child operation in-process at a tiny
// size and checks what it reports.
func TestLakelogOps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	const n = 100_000
	o, err := lakelogOp(ctx, Spec{Op: "append", Table: table, Rows: n, TargetFileSize: workload.TargetFileSize(n)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Count != n || o.Files == 0 {
		t.Fatalf("append %+v", o)
	}
	o, err = lakelogOp(ctx, Spec{Op: "scan", Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if want := workload.Expect(0, n); checkRows(&o, want) != "rows checked" {
		t.Errorf("full scan: %s", checkRows(&o, want))
	}
	o, err = lakelogOp(ctx, Spec{Op: "select", Table: table, Lo: 5000, Hi: 5999})
	if err != nil {
		t.Fatal(err)
	}
	if want := workload.Expect(5000, 6000); checkRows(&o, want) != "rows checked" {
		t.Errorf("range scan: %s", checkRows(&o, want))
	}
	if o.FilesRead > o.Files || o.FilesRead == 0 {
		t.Errorf("range scan read %d of %d files", o.FilesRead, o.Files)
	}
	o, err = lakelogOp(ctx, Spec{Op: "gen", Rows: 1000})
	if err != nil || o.Checksum == nil || o.Checksum.Rows != 1000 {
		t.Errorf("gen %+v, %v", o, err)
	}

	logTable := filepath.Join(dir, "log")
	if err := workload.SynthesizeLog(ctx, logTable, workload.LogSpec{Commits: 20, AddsPerCommit: 10}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"open", "checkpoint", "open", "list"} {
		o, err := lakelogOp(ctx, Spec{Op: op, Table: logTable})
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if o.Count != 200 || o.Version != 19 {
			t.Errorf("%s: %d files at version %d, want 200 at 19", op, o.Count, o.Version)
		}
	}
	if _, err := os.Stat(filepath.Join(logTable, "_delta_log", "00000000000000000019.checkpoint.parquet")); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
	for _, method := range []string{"stats", "loadstats"} { // from the checkpoint, stats in one pass or two
		o, err := lakelogOp(ctx, Spec{Op: "open", Table: logTable, Method: method})
		if err != nil {
			t.Fatalf("open %s: %v", method, err)
		}
		if o.Count != 200 || o.Version != 19 {
			t.Errorf("open %s: %d files at version %d, want 200 at 19", method, o.Count, o.Version)
		}
	}

	commits := filepath.Join(dir, "c")
	if _, err := lakelogOp(ctx, Spec{Op: "create", Table: commits}); err != nil {
		t.Fatal(err)
	}
	o, err = lakelogOp(ctx, Spec{Op: "commits", Table: commits, N: 5, Partition: "p3"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Count != 5 || o.Version != 5 || o.Attempts != 5 || o.Latency == nil {
		t.Errorf("commits %+v", o)
	}
	o, err = lakelogOp(ctx, Spec{Op: "raw-create", Table: filepath.Join(dir, "raw"), N: 3})
	if err != nil || o.Count != 3 {
		t.Errorf("raw-create %+v, %v", o, err)
	}
	o, err = lakelogOp(ctx, Spec{Op: "raw-put", Table: filepath.Join(dir, "put"), N: 3})
	if err != nil || o.Count != 3 {
		t.Errorf("raw-put %+v, %v", o, err)
	}
	if _, err := lakelogOp(ctx, Spec{Op: "nonsense"}); err == nil {
		t.Error("no error for an unknown op")
	}
}

// TestChildProcess runs the built runner as a child, as the runner does,
// and reads its peak memory.
func TestChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runner")
	}
	exe := filepath.Join(t.TempDir(), "runner")
	if out, err := runCmd("go", "build", "-o", exe, "."); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	e := &Engine{Name: "lakelog", Command: func(spec []byte) []string { return []string{exe, "-child", string(spec)} }}
	o, err := run(context.Background(), e, Spec{Op: "gen", Rows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if o.Count != 1000 || o.PeakMB <= 1 || o.WallSeconds <= 0 {
		t.Errorf("outcome %+v", o)
	}
	table := filepath.Join(t.TempDir(), "c")
	if _, err := run(context.Background(), e, Spec{Op: "create", Table: table}); err != nil {
		t.Fatal(err)
	}
	specs := []Spec{{Op: "commits", Table: table, N: 3, Partition: "p0"}, {Op: "commits", Table: table, N: 3, Partition: "p1"}}
	outs, err := runGroup(context.Background(), e, specs)
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Count+outs[1].Count != 6 {
		t.Errorf("group outcomes %+v", outs)
	}
	if _, err := run(context.Background(), e, Spec{Op: "open", Table: filepath.Join(t.TempDir(), "missing")}); err == nil || !strings.Contains(err.Error(), "not a Delta table") {
		t.Errorf("error of a failing child: %v", err)
	}
}

// runCmd runs a command and returns its combined output.
func runCmd(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// TestDMLOps runs the dml suite's lakelog operations in-process on a
// small table, copy-on-write and with deletion vectors, and checks the
// bytes they wrote and the rows read back.
func TestDMLOps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n, files = 20_000, 4
	bases := map[string]string{}
	baseFiles := map[string]map[string]int64{}
	for _, mode := range []string{"cow", "dv"} {
		bases[mode] = filepath.Join(dir, "base-"+mode)
		st, err := objstore.NewLocal(bases[mode])
		if err != nil {
			t.Fatal(err)
		}
		snap, err := workload.CreateDMLTable(ctx, st, n, files, mode == "dv")
		if err != nil {
			t.Fatal(err)
		}
		if snap.NumFiles() != files || snap.Version() != 1 {
			t.Fatalf("%s base: %d files at version %d, want %d at 1", mode, snap.NumFiles(), snap.Version(), files)
		}
		if baseFiles[mode], err = tableFiles(bases[mode]); err != nil {
			t.Fatal(err)
		}
	}
	if got := dmlCheck(ctx, bases["cow"], &Outcome{}, workload.DMLChecksum{Rows: n}, 0); !strings.Contains(got, "**WRONG") {
		t.Errorf("a wrong expectation passed the check: %s", got)
	}
	if want, _ := workload.DMLExpect("", n); !strings.HasPrefix(dmlCheck(ctx, bases["cow"], &Outcome{}, want, 0), "rows checked") {
		t.Errorf("base table: %s", dmlCheck(ctx, bases["cow"], &Outcome{}, want, 0))
	}
	for _, op := range []string{"delete", "update", "merge"} {
		want, changed := workload.DMLExpect(op, n)
		if changed < n/200 || changed > n/50 {
			t.Errorf("%s changes %d of %d rows, want about 1%%", op, changed, n)
		}
		for _, mode := range []string{"cow", "dv"} {
			table := filepath.Join(dir, op+"-"+mode)
			if err := workload.LinkTable(bases[mode], table); err != nil {
				t.Fatal(err)
			}
			o, err := lakelogOp(ctx, dmlSpec(op, table, n))
			if err != nil {
				t.Fatalf("%s %s: %v", op, mode, err)
			}
			if o.Changed != changed || o.Version != 2 || o.Count != n {
				t.Errorf("%s %s: outcome %+v, want %d changed at version 2", op, mode, o, changed)
			}
			w, err := newFiles(baseFiles[mode], table)
			if err != nil {
				t.Fatal(err)
			}
			if w.log == 0 {
				t.Errorf("%s %s: no commit written: %+v", op, mode, w)
			}
			if mode == "cow" {
				if w.files == 0 || w.dv != 0 {
					t.Errorf("%s cow wrote %+v", op, w)
				}
				if check := dmlCheck(ctx, table, &o, want, changed); !strings.HasPrefix(check, "rows checked") {
					t.Errorf("%s cow: %s", op, check)
				}
				continue
			}
			// Deletion vectors: no file of the base table is rewritten.
			var cow int64
			for rel, size := range baseFiles["cow"] {
				if !strings.HasPrefix(rel, "_delta_log/") {
					cow += size
				}
			}
			if op == "delete" && (w.files != 0 || w.total() > cow/20) {
				t.Errorf("dv delete wrote %+v, want no data files and under 5%% of %d bytes", w, cow)
			}
			if check := dmlCheck(ctx, table, &o, want, changed); !strings.HasPrefix(check, "rows checked") {
				t.Errorf("%s dv: %s", op, check)
			}
		}
	}
}

// TestSparkDV runs the dml suite's Spark child (bench/peers/spark.py) on
// a small deletion-vector table: DELETE must write deletion vectors and
// no data file, report the JVM's peak and the rows the read-back check
// expects. It needs the peers' venv (LAKELOG_PYTHON); under CI a missing
// peer fails it.
func TestSparkDV(t *testing.T) {
	py := os.Getenv("LAKELOG_PYTHON")
	if os.Getenv("CI") != "true" && (py == "" || os.Getenv("LAKELOG_SKIP_PEERS") == "1") {
		t.Skip("no LAKELOG_PYTHON (source .ci/peers.sh; peers_env) or LAKELOG_SKIP_PEERS=1")
	}
	if py == "" {
		t.Fatal("CI=true and no LAKELOG_PYTHON: the Spark peer is missing")
	}
	ctx := context.Background()
	dir := t.TempDir()
	const n, files = 20_000, 4
	base := filepath.Join(dir, "base")
	st, err := objstore.NewLocal(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.CreateDMLTable(ctx, st, n, files, true); err != nil {
		t.Fatal(err)
	}
	baseFiles, err := tableFiles(base)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Name: "Spark", Command: func(spec []byte) []string {
		return []string{py, filepath.Join("..", "peers", "spark.py"), string(spec)}
	}}
	idle, err := run(ctx, e, Spec{Op: "idle"})
	if err != nil || !strings.Contains(idle.Info, "delta-spark") {
		t.Fatalf("idle: %+v, %v", idle, err)
	}
	table := filepath.Join(dir, "delete")
	if err := workload.LinkTable(base, table); err != nil {
		t.Fatal(err)
	}
	o, err := run(ctx, e, dmlSpec("delete", table, n))
	if err != nil {
		t.Fatal(err)
	}
	want, changed := workload.DMLExpect("delete", n)
	if o.Changed != changed || o.Version != 2 || o.Seconds <= 0 || o.PeakMB < 100 || !strings.Contains(o.Info, "JVM peak") {
		t.Errorf("outcome %+v, want %d changed at version 2 and the JVM's peak", o, changed)
	}
	w, err := newFiles(baseFiles, table)
	if err != nil {
		t.Fatal(err)
	}
	if w.dv == 0 || w.files != 0 {
		t.Errorf("Spark's DELETE on a deletion-vector table wrote %+v, want deletion vectors and no data file", w)
	}
	if check := dmlCheck(ctx, table, &o, want, changed); !strings.HasPrefix(check, "rows checked") {
		t.Errorf("read back: %s", check)
	}
}

// TestPeerCell: a row whose peer is not delta-rs names it in the peer
// cells and notes of the report and of BENCHMARKS.md's tables.
func TestPeerCell(t *testing.T) {
	o := &Outcome{Seconds: 2, Count: 100, PeakMB: 500}
	rows := []*Row{
		{Suite: "dml", Name: "DELETE, copy-on-write", Unit: "rows", Lakelog: o, DeltaRS: o, DeltaRSNote: "x"},
		{Suite: "dml", Name: "DELETE, deletion vectors (peer: Spark)", Unit: "rows", Lakelog: o, DeltaRS: o, Peer: "Spark", DeltaRSNote: "y"},
	}
	rep := newReport(&config{scale: "small", count: 1})
	rep.rows = rows
	md := rep.markdown()
	if !strings.Contains(md, "| 2.00 s (Spark) |") || !strings.Contains(md, "Spark: y") || !strings.Contains(md, "delta-rs: x") {
		t.Errorf("report:\n%s", md)
	}
	if strings.Count(md, "(Spark)") != 3 {
		t.Errorf("want the Spark row's time, rate and peak marked, got:\n%s", md)
	}
	tb := tableBlock(rep, "dml", map[string]bool{"dml": true}, "r.md")
	if !strings.Contains(tb, "| 2.00 s (Spark) | 500 (Spark) |") || strings.Count(tb, "(Spark)") != 2 {
		t.Errorf("table block:\n%s", tb)
	}
}
