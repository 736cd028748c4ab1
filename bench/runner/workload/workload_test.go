package workload_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

func TestBatchesMatchFormulas(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = workload.BatchSize + 123
	var got workload.Checksum
	batches := 0
	for rec, err := range workload.Batches(mem, n) {
		if err != nil {
			t.Fatal(err)
		}
		batches++
		got.Add(rec)
	}
	if batches != 2 {
		t.Errorf("%d batches, want 2", batches)
	}
	if want := workload.Expect(0, n); got != want {
		t.Errorf("checksum %+v, want %+v", got, want)
	}
	// Row 12345 by the formulas of the package doc.
	rec := workload.Batch(mem, 12345, 12346)
	defer rec.Release()
	if got, want := fmt.Sprintf("%s %s %s", rec.Column(0).ValueStr(0), rec.Column(1).ValueStr(0), rec.Column(3).ValueStr(0)), "12345 p5 s060055"; got != want {
		t.Errorf("row 12345 = %s, want %s", got, want)
	}
	if v := workload.V(1); v != float64(2654435761)/(1<<32) {
		t.Errorf("V(1) = %v", v)
	}
}

func TestSynthesizeLogOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spec := workload.LogSpec{Commits: 57, AddsPerCommit: 10}
	if err := workload.SynthesizeLog(ctx, dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version() != 56 || snap.NumFiles() != spec.Files() {
		t.Fatalf("version %d with %d files, want 56 with %d", snap.Version(), snap.NumFiles(), spec.Files())
	}
	// Stats are usable for skipping: ids [1000f, 1000f+999] for file f.
	pred, err := expr.Parse("id BETWEEN 5000 AND 5999")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := reader.NewScan(snap, reader.WithFilter(pred))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f, err := range sc.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if f.Stats == nil || f.Stats.NumRecords != 1000 {
			t.Errorf("%s: stats %+v", f.Add.Path, f.Stats)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d files planned for one file's id range, want 1", n)
	}
}

func TestSynthesizeLogRejectsEmpty(t *testing.T) {
	if err := workload.SynthesizeLog(context.Background(), t.TempDir(), workload.LogSpec{}); err == nil {
		t.Fatal("no error for a log without commits")
	}
}

// TestRoundTrip writes the rows with lakelog and reads them back whole and
// through a range filter, as the benchmarks do, checking the checksums the
// benchmarks compare engines by.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st := objstore.NewMem()
	const n = 200_000
	res, err := writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(mem, n),
		writer.WithTargetFileSize(64<<10), writer.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := reader.NewScan(snap, reader.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var got workload.Checksum
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got.Add(rec)
	}
	want := workload.Expect(0, n)
	if got.Rows != want.Rows || got.SumID != want.SumID || got.StrBytes != want.StrBytes {
		t.Errorf("full scan %+v, want %+v", got, want)
	}

	pred, err := expr.Parse("id BETWEEN 100000 AND 101999")
	if err != nil {
		t.Fatal(err)
	}
	sc, err = reader.NewScan(snap, reader.WithFilter(pred), reader.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	got = workload.Checksum{}
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got.Add(rec)
	}
	want = workload.Expect(100000, 102000)
	if got.Rows != want.Rows || got.SumID != want.SumID || got.StrBytes != want.StrBytes {
		t.Errorf("range scan %+v, want %+v", got, want)
	}
	// How many files the range skips depends on the writer's file sizes,
	// which the benchmarks report; here only the rows are checked.
	t.Logf("%d files; range scan metrics %+v", snap.NumFiles(), sc.Metrics())
}

// Example generates the first rows of the data-path table.
func Example() {
	for rec, err := range workload.Batches(nil, 3) {
		if err != nil {
			panic(err)
		}
		for i := range int(rec.NumRows()) {
			fmt.Println(rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(3).ValueStr(i))
		}
	}
	// Output:
	// 0 p0 s000000
	// 1 p1 s007919
	// 2 p2 s015838
}

func TestLinkTable(t *testing.T) {
	ctx := context.Background()
	src, dst := t.TempDir(), t.TempDir()
	if err := workload.SynthesizeLog(ctx, src, workload.LogSpec{Commits: 3, AddsPerCommit: 2}); err != nil {
		t.Fatal(err)
	}
	if err := workload.LinkTable(src, dst); err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(dst)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint in the copy does not appear in the source.
	if _, err := snap.Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "_delta_log", "_last_checkpoint")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checkpoint of the copy shows in the source: %v", err)
	}
	if snap.NumFiles() != 6 {
		t.Errorf("%d files in the copy, want 6", snap.NumFiles())
	}
}

func TestDMLSource(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 200_000 // the runner's small scale: 2,000 source rows
	seen := map[int64]bool{}
	var old, added int
	for rec, err := range workload.DMLSource(mem, n) {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64).Int64Values()
		vs := rec.Column(2).(*array.Float64).Float64Values()
		for j, k := range ids {
			if seen[k] {
				t.Fatalf("id %d twice", k)
			}
			seen[k] = true
			if k < n {
				old++
			} else {
				added++
			}
			if vs[j] != workload.V(k)+workload.DMLMergeShift {
				t.Errorf("id %d: v %v", k, vs[j])
			}
		}
	}
	if old != 1000 || added != 1000 {
		t.Errorf("%d existing and %d new ids, want 1000 each", old, added)
	}
	// Existing ids hit every 20,000-row file of the small table.
	files := map[int64]bool{}
	for k := range seen {
		if k < n {
			files[k/20_000] = true
		}
	}
	if len(files) != 10 {
		t.Errorf("source matches %d of 10 files", len(files))
	}
	base, _ := workload.DMLExpect("", n)
	merged, changed := workload.DMLExpect("merge", n)
	if changed != 2000 || merged.Rows != base.Rows+1000 {
		t.Errorf("merge changes %d rows and leaves %d, want 2000 and %d", changed, merged.Rows, base.Rows+1000)
	}
}
