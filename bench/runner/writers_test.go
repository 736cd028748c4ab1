package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// testReport is a report of the given rows, as runMain builds one.
func testReport(t *testing.T, rows ...*Row) *report {
	t.Helper()
	dir := t.TempDir()
	rep := newReport(&config{scale: "small", count: 1, results: dir, repo: "."})
	rep.started = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	rep.rows = rows
	return rep
}

func ratioRow(suite, name string, lakelogSecs, deltarsSecs float64) *Row {
	return &Row{Suite: suite, Name: name, Unit: "rows",
		Lakelog: &Outcome{Seconds: lakelogSecs, Count: 1000, PeakMB: 40}, DeltaRS: &Outcome{Seconds: deltarsSecs, Count: 1000, PeakMB: 150}}
}

// TestExitStatus: a WRONG row or a suite that did not complete makes the
// runner exit non-zero, and the report says which; slow rows never do.
func TestExitStatus(t *testing.T) {
	slow := ratioRow("data path", "full scan", 100, 1) // 100 times slower: not a failure
	rep := testReport(t, slow)
	if got := rep.exitStatus(); got != 0 {
		t.Errorf("clean run: exit %d, want 0", got)
	}
	wrong := ratioRow("dml", "DELETE", 1, 1)
	wrong.DeltaRSNote = "**WRONG: read back {Rows:1}, want {Rows:2}**"
	rep = testReport(t, slow, wrong)
	if got := rep.exitStatus(); got != 1 {
		t.Errorf("run with a WRONG row: exit %d, want 1", got)
	}
	if md := rep.markdown(); !strings.Contains(md, "## Failures") || !strings.Contains(md, "WRONG result: dml: DELETE") {
		t.Errorf("report does not list the WRONG row:\n%s", md)
	}
	rep = testReport(t, slow)
	rep.failed("cdf", os.ErrNotExist)
	if got := rep.exitStatus(); got != 1 {
		t.Errorf("run with a failed suite: exit %d, want 1", got)
	}
	if md := rep.markdown(); !strings.Contains(md, "- cdf: file does not exist") {
		t.Errorf("report does not list the failed suite:\n%s", md)
	}
}

// TestRunnerExitsNonZeroOnFailure runs runMain on a suite that cannot
// complete (no S3 server under CI) and checks its exit status.
func TestRunnerExitsNonZeroOnFailure(t *testing.T) {
	t.Setenv("CI", "true")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	dir := t.TempDir()
	if got := runMain([]string{"-only", "commit-s3,writers-s3", "-no-peer", "-results", dir, "-work", dir}); got != 1 {
		t.Errorf("runner with a failing suite exited %d, want 1", got)
	}
	if got := runMain([]string{"-only", "nonsense"}); got != 2 {
		t.Errorf("unknown suite: exit %d, want 2", got)
	}
}

// TestChart draws the chart of a report's rows with matplotlib and checks
// the SVG holds every row's label and suite; rows without a ratio are
// left out.
func TestChart(t *testing.T) {
	python := os.Getenv("LAKELOG_PYTHON")
	if python == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("LAKELOG_PYTHON is not set (source .ci/peers.sh; peers_install; peers_env)")
		}
		t.Skip("LAKELOG_PYTHON is not set")
	}
	rows := []*Row{
		ratioRow("data path", "append 1,000,000 rows", 1, 2),
		ratioRow("data path", "full scan, all columns", 3, 1),
		{Suite: "commits, local disk", Name: "floor without a peer", Unit: "commits", Lakelog: &Outcome{Seconds: 1, Count: 10}},
		ratioRow("dml", "MERGE, copy-on-write", 1, 40),
	}
	if got := chartRows(rows); len(got) != 3 || got[0].Ratio != 2 || got[1].Ratio != 1.0/3 || got[2].Ratio != 40 {
		t.Fatalf("chart rows %+v", got)
	}
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(t.TempDir(), "run.svg")
	if err := writeChart(context.Background(), python, filepath.Join(repo, "bench", "peers"), "test run", rows, svg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(strings.TrimSpace(text), "<?xml") || !strings.Contains(text, "<svg") {
		t.Fatalf("not an SVG: %.200s", text)
	}
	for _, want := range []string{"append 1,000,000 rows", "full scan, all columns", "MERGE, copy-on-write", "data path", "dml", "2.00×", "40.00×", "log scale"} {
		if !strings.Contains(text, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if strings.Contains(text, "floor without a peer") {
		t.Error("the chart has a row without a ratio")
	}
	if _, err := os.Stat(strings.TrimSuffix(svg, ".svg") + ".json"); err != nil {
		t.Errorf("the rows' JSON is not kept beside the chart: %v", err)
	}
	// A script failure is an error, not an empty chart.
	if err := writeChart(context.Background(), python, t.TempDir(), "x", rows, filepath.Join(t.TempDir(), "y.svg")); err == nil {
		t.Error("no error without chart.py")
	}
	if err := writeChart(context.Background(), python, filepath.Join(repo, "bench", "peers"), "x", rows[2:3], svg); err == nil {
		t.Error("no error for rows without a ratio")
	}
}

// TestFillBlocksPartialRun: a run with -only fills the blocks of the
// suites it ran and leaves every other block, the run block included,
// byte for byte.
func TestFillBlocksPartialRun(t *testing.T) {
	rep := testReport(t, ratioRow("dml", "DELETE", 2, 1))
	rep.cfg.only = map[string]bool{"dml": true}
	text := strings.Join([]string{
		"# Benchmarks", "<!-- runner:run -->", "old header", "", "<!-- runner:end -->",
		"## Data path", "<!-- runner:table data path -->", "| old | table |", "<!-- runner:end -->",
		"## DML", "<!-- runner:table dml -->", "| old dml |", "<!-- runner:end -->",
		"## Empty", "<!-- runner:table empty -->", "<!-- runner:end -->",
		"## Others", "<!-- runner:table * -->", "**old other**", "<!-- runner:end -->", "end text", "",
	}, "\n")
	out, err := fillBlocks(text, rep, "bench/results/2026-12-02.md")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(text, "| old dml |", strings.TrimSuffix(tableBlock(rep, "dml", map[string]bool{"data path": true, "dml": true, "empty": true, "*": true}, "bench/results/2026-12-02.md"), "\n"), 1)
	if out != want {
		t.Errorf("partial fill:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(out, "| DELETE |") || strings.Contains(out, "Not in the run") {
		t.Errorf("the dml block is not filled:\n%s", out)
	}
}

// TestFillBlocks fills a BENCHMARKS.md-like text from a report: each
// suite's table goes into its block, suites without one into the *
// block, text outside the blocks stays.
func TestFillBlocks(t *testing.T) {
	rep := testReport(t, ratioRow("data path", "append", 1, 2), ratioRow("dml", "DELETE", 2, 1), ratioRow("new suite", "op", 1, 1))
	rep.chart = "2026-12-02.svg"
	text := strings.Join([]string{
		"# Benchmarks", "<!-- runner:run -->", "old header", "<!-- runner:end -->",
		"## Data path", "what it is", "<!-- runner:table data path -->", "| old | table |", "<!-- runner:end -->",
		"## DML", "<!-- runner:table dml -->", "<!-- runner:end -->",
		"## CDF", "<!-- runner:table change data feed -->", "| old cdf |", "<!-- runner:end -->",
		"## Others", "<!-- runner:table * -->", "<!-- runner:end -->", "end text", "",
	}, "\n")
	out, err := fillBlocks(text, rep, "bench/results/2026-12-02.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"old header", "| old | table |", "| old cdf |"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q is still there", gone)
		}
	}
	section := func(from, to string) string {
		i, j := strings.Index(out, from), strings.Index(out, to)
		if i < 0 || j < i {
			t.Fatalf("no section %q..%q in\n%s", from, to, out)
		}
		return out[i:j]
	}
	if s := section("## Data path", "## DML"); !strings.Contains(s, "what it is") || !strings.Contains(s, "| append | 1.00 s | 40 | 2.00 s | 150 | 2.00× | 3.75× |") || strings.Contains(s, "DELETE") {
		t.Errorf("data path section:\n%s", s)
	}
	if s := section("## DML", "## CDF"); !strings.Contains(s, "| DELETE |") || !strings.Contains(s, "0.50×") {
		t.Errorf("dml section:\n%s", s)
	}
	if s := section("## CDF", "## Others"); !strings.Contains(s, "Not in the run of 2026-12-02") {
		t.Errorf("cdf section:\n%s", s)
	}
	if s := section("## Others", "end text"); !strings.Contains(s, "**new suite**") || strings.Contains(s, "| append |") {
		t.Errorf("others section:\n%s", s)
	}
	if s := section("# Benchmarks", "## Data path"); !strings.Contains(s, "Filled from the run of 2026-12-02") || !strings.Contains(s, "](bench/results/2026-12-02.svg)") {
		t.Errorf("run block:\n%s", s)
	}
	if !strings.HasSuffix(out, "end text\n") {
		t.Errorf("the text after the blocks changed: %q", out[len(out)-20:])
	}
	again, err := fillBlocks(out, rep, "bench/results/2026-12-02.md")
	if err != nil || again != out {
		t.Errorf("filling twice changes the text (%v)", err)
	}
	if _, err := fillBlocks("<!-- runner:table dml -->\n| x |\n", rep, "r.md"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a block without its end: %v", err)
	}
	// The repository's BENCHMARKS.md has a block for the suites the
	// runner names.
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repo, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	w := ratioRow("concurrent writers, S3 (MinIO)", "8 writers", 1, 2)
	w.LakelogNote = "10 commits, 0 gave up, slowest writer's p99 5 ms; per writer (commits: p50/p99 wait) w0 5: 1 ms/5 ms"
	rep = testReport(t, ratioRow("data path", "append", 1, 2), w)
	out, err = fillBlocks(string(b), rep, "bench/results/x.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range []string{"data path", "checkpoints", "commits, local disk", "commits, S3 (MinIO)", "dml", "maintenance",
		"change data feed", "concurrent writers, local disk", "concurrent writers, S3 (MinIO)", "*"} {
		if !strings.Contains(out, markTable+suite+" -->") {
			t.Errorf("BENCHMARKS.md has no block for %q", suite)
		}
	}
	if strings.Count(out, "| append | 1.00 s |") != 1 || strings.Count(out, "| 8 writers |") != 1 ||
		!strings.Contains(out, "- 8 writers, lakelog: 10 commits, 0 gave up, slowest writer's p99 5 ms\n") || strings.Contains(out, "w0 5:") {
		t.Errorf("BENCHMARKS.md filled:\n%s", out)
	}
}

// TestFairness folds writers' waits: the median of all waits, the
// slowest writer's p99 and the goal.
func TestFairness(t *testing.T) {
	even := func(ms float64, n int) []float64 {
		var w []float64
		for range n {
			w = append(w, ms)
		}
		return w
	}
	outs := []Outcome{
		{Seconds: 10, Count: 100, Attempts: 150, Waits: even(10, 100), PeakMB: 50},
		{Seconds: 10, Count: 50, Attempts: 50, Waits: even(20, 50), PeakMB: 60},
	}
	agg, note := fairness(outs, true)
	if agg.Count != 150 || agg.Rate != 15 || agg.PeakMB != 60 || agg.Latency == nil || math.Abs(agg.Latency.Mean-40.0/3) > 1e-9 {
		t.Errorf("aggregate %+v", agg)
	}
	for _, want := range []string{"150 commits", "0.33 retries per commit", "0 gave up", "wait median 10 ms", "slowest writer's p99 20 ms (2.0× the median)", "commits per writer 50 to 100"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if strings.Contains(note, "goal missed") {
		t.Errorf("fair writers missed the goal: %s", note)
	}
	outs = append(outs, Outcome{Seconds: 12, Count: 1, Attempts: 900, Waits: []float64{11000}})
	if _, note = fairness(outs, true); !strings.Contains(note, "goal missed") || !strings.Contains(note, "commits per writer 1 to 100") || !strings.Contains(note, "(1100.0×)") {
		t.Errorf("a starved writer: %s", note)
	}
	outs[0].Failed = 1
	if _, note = fairness(outs[:2], false); !strings.Contains(note, "1 gave up") || !strings.Contains(note, "goal missed") || strings.Contains(note, "retries") {
		t.Errorf("a writer gave up: %s", note)
	}
}

// TestWriteCommits runs two writers of the writers suite in-process on a
// local table and reads the rows back.
func TestWriteCommits(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(t.TempDir(), "w")
	if err := createWritersTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	const rows = 2000
	type res struct {
		o   Outcome
		err error
	}
	ch := make(chan res, 2)
	for i := range 2 {
		go func() {
			o, err := lakelogOp(ctx, Spec{Op: "write-commits", Table: table, Seconds: 0.5, Rows: rows, Lo: int64(i) * rows})
			ch <- res{o, err}
		}()
	}
	var commits int64
	for range 2 {
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		o := r.o
		if o.Count == 0 || int64(len(o.Waits)) != o.Count || int64(len(o.Ops)) != o.Count || o.Attempts < o.Count || o.Latency == nil {
			t.Errorf("outcome %+v", o)
		}
		for i := range o.Waits {
			if o.Waits[i] <= 0 || o.Waits[i] > o.Ops[i] {
				t.Errorf("wait %d: %v ms of an op of %v ms", i, o.Waits[i], o.Ops[i])
			}
		}
		commits += o.Count
	}
	st, err := objstore.NewLocal(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != commits || int64(snap.NumFiles()) != commits {
		t.Errorf("table at version %d with %d files after %d commits", snap.Version(), snap.NumFiles(), commits)
	}
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	var c workload.Checksum
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		c.Add(rec)
	}
	if c.Rows != commits*rows {
		t.Errorf("read %d rows, want %d", c.Rows, commits*rows)
	}
}
