package maintenance_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer"
)

// appendMany appends n one-row files with ids from first on.
func appendMany(t *testing.T, snap *deltalog.Snapshot, first, n int, region func(i int) string) *deltalog.Snapshot {
	t.Helper()
	for i := first; i < first+n; i++ {
		snap = tabletest.Append(t, snap, fmt.Sprintf(`[{"id":%d,"region":%q}]`, i, region(i)))
	}
	return snap
}

func us(int) string { return "US" }

func TestOptimizeCompactsSmallFiles(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil)
	snap = appendMany(t, snap, 0, 20, us)
	before := tabletest.ScanLines(t, snap)

	// Through a checked allocator: every batch read ahead is released.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	res, err := maintenance.Optimize(ctx, snap, maintenance.OptimizeWriterOptions(writer.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	after := tabletest.Open(t, store)
	if after.NumFiles() != 1 || len(res.Commits) != 1 {
		t.Fatalf("%d files in %d commits after OPTIMIZE, want 1 in 1", after.NumFiles(), len(res.Commits))
	}
	if got := tabletest.ScanLines(t, after); !slices.Equal(got, before) {
		t.Fatalf("rows changed:\n%v\nwant\n%v", got, before)
	}
	for _, a := range lastCommit(t, after) {
		if a.Add != nil && a.Add.DataChange || a.Remove != nil && a.Remove.DataChange {
			t.Fatalf("OPTIMIZE action with dataChange: %+v", a)
		}
	}
	ci := commitInfo(t, after)
	if ci.Operation != "OPTIMIZE" || ci.OperationParameters["predicate"] != "[]" || ci.OperationParameters["zOrderBy"] != "[]" {
		t.Fatalf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	m := ci.OperationMetrics
	if m["numRemovedFiles"] != "20" || m["numAddedFiles"] != "1" || m["minFileSize"] != m["maxFileSize"] || m["numAddedBytes"] != m["maxFileSize"] {
		t.Fatalf("operationMetrics %v", m)
	}
	if res.Metrics.NumRemovedFiles != 20 || res.Metrics.NumAddedFiles != 1 {
		t.Fatalf("metrics %+v", res.Metrics)
	}
	// A second run finds nothing to do: a compacted file is not rewritten
	// again on its own.
	res, err = maintenance.Optimize(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) != 0 || tabletest.Open(t, store).Version() != after.Version() {
		t.Fatalf("a second OPTIMIZE committed %d times", len(res.Commits))
	}
}

func TestOptimizePartitionPredicateAndLimits(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil, "region")
	snap = appendMany(t, snap, 0, 12, func(i int) string { return []string{"US", "EU"}[i%2] })
	before := tabletest.ScanLines(t, snap)

	if _, err := maintenance.Optimize(ctx, snap, maintenance.Where(mustParse(t, "id > 3"))); err == nil || !strings.Contains(err.Error(), "partition") {
		t.Fatalf("a predicate on a data column: %v", err)
	}
	res, err := maintenance.Optimize(ctx, snap, maintenance.Where(mustParse(t, "region = 'US'")))
	if err != nil {
		t.Fatal(err)
	}
	after := tabletest.Open(t, store)
	counts := map[string]int{}
	for f := range after.Files() {
		counts[*f.PartitionValues["region"]]++
	}
	if counts["US"] != 1 || counts["EU"] != 6 {
		t.Fatalf("files per partition %v, want US 1 and EU 6", counts)
	}
	if ci := commitInfo(t, after); ci.OperationParameters["predicate"] != `["(region = 'US')"]` && !strings.Contains(ci.OperationParameters["predicate"].(string), "region") {
		t.Fatalf("predicate parameter %v", ci.OperationParameters["predicate"])
	}
	_ = res
	// The rest in commits of at most a few files' bytes each.
	var size int64
	for f := range after.Files() {
		if *f.PartitionValues["region"] == "EU" {
			size = f.Size
		}
	}
	res, err = maintenance.Optimize(ctx, after, maintenance.MaxBytesPerCommit(3*size), maintenance.TargetSize(2*size+1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) < 2 {
		t.Fatalf("%d commits, want several under the bytes-per-commit bound", len(res.Commits))
	}
	if got := tabletest.ScanLines(t, tabletest.Open(t, store)); !slices.Equal(got, before) {
		t.Fatalf("rows changed:\n%v\nwant\n%v", got, before)
	}
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// OPTIMIZE commits on a snapshot that other writers moved past: an
// append rebases, a delete of one of its files aborts it.
func TestOptimizeRebasesOverAppendsAbortsOnDeletes(t *testing.T) {
	ctx := context.Background()
	t.Run("append", func(t *testing.T) {
		store := objstore.NewMem()
		snap := tabletest.Create(t, store, "id long, region string", nil)
		snap = appendMany(t, snap, 0, 5, us)
		tabletest.Append(t, snap, `[{"id":100,"region":"EU"}]`) // after OPTIMIZE's read
		if _, err := maintenance.Optimize(ctx, snap); err != nil {
			t.Fatalf("OPTIMIZE against a concurrent append: %v", err)
		}
		after := tabletest.Open(t, store)
		if got := tabletest.ScanLines(t, after); len(got) != 6 {
			t.Fatalf("%d rows, want 6: %v", len(got), got)
		}
		if after.NumFiles() != 2 {
			t.Fatalf("%d files, want the compacted one and the appended one", after.NumFiles())
		}
	})
	t.Run("delete", func(t *testing.T) {
		store := objstore.NewMem()
		snap := tabletest.Create(t, store, "id long, region string", nil)
		snap = appendMany(t, snap, 0, 5, us)
		deleteWhere(t, snap, "id = 2", time.Now())
		_, err := maintenance.Optimize(ctx, snap)
		if !errors.Is(err, conflict.ErrConflict) {
			t.Fatalf("OPTIMIZE against a concurrent delete of its file: %v, want a conflict", err)
		}
		if got := tabletest.ScanLines(t, tabletest.Open(t, store)); len(got) != 4 {
			t.Fatalf("%d rows after the aborted OPTIMIZE, want 4", len(got))
		}
	})
}

var longOptimize = flag.Bool("maint.long", false, "run TestOptimizeWithConcurrentWriters at the issue's size (1,000 small files)")

// OPTIMIZE of many small files while 4 writers keep appending: every
// append lands, no row is lost or duplicated. 200 files; 1,000 with
// -maint.long.
func TestOptimizeWithConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil)
	small, writers, perWriter := 200, 4, 10
	if *longOptimize {
		small, perWriter = 1000, 50
	}
	snap = appendMany(t, snap, 0, small, us)

	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := small + w*perWriter + i
				s, err := deltalog.Open(ctx, store, "tbl")
				if err != nil {
					errs <- err
					return
				}
				if _, err := writer.Append(ctx, s, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, s, fmt.Sprintf(`[{"id":%d,"region":"EU"}]`, id)))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	res, err := maintenance.Optimize(ctx, snap, maintenance.MaxBytesPerCommit(50*1024))
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	if err != nil {
		t.Fatalf("OPTIMIZE: %v", err)
	}
	after := tabletest.Open(t, store)
	got := tabletest.ScanLines(t, after)
	var want []string
	for i := range small + writers*perWriter {
		region := "US"
		if i >= small {
			region = "EU"
		}
		want = append(want, fmt.Sprintf(`{"id":%d,"region":%q}`, i, region))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rows after OPTIMIZE with concurrent appends: %d, want %d", len(got), len(want))
	}
	if len(res.Commits) < 2 {
		t.Fatalf("%d commits, want several under the bytes-per-commit bound", len(res.Commits))
	}
	if res.Metrics.NumRemovedFiles != int64(small) {
		t.Fatalf("OPTIMIZE removed %d files, want %d", res.Metrics.NumRemovedFiles, small)
	}
	t.Logf("%d commits, %d files after", len(res.Commits), after.NumFiles())
}

// Z-order: after OPTIMIZE ZORDER BY (x, y), a range filter on either
// column plans a small part of the files; after bin-packing alone (rows
// in arrival order) it plans nearly all of them.
func TestZOrderSkipping(t *testing.T) {
	ctx := context.Background()
	seed := testseed.From(t, "ZORDER_SEED")
	rng := rand.New(rand.NewPCG(seed, 1))
	const nrows, batches = 20000, 20
	mk := func() (objstore.Store, *deltalog.Snapshot) {
		store := objstore.NewMem()
		snap := tabletest.Create(t, store, "x long, y long, s string", nil)
		return store, snap
	}
	storeZ, snapZ := mk()
	storeB, snapB := mk()
	r := rand.New(rand.NewPCG(rng.Uint64(), 2))
	for range batches {
		var sb strings.Builder
		sb.WriteByte('[')
		for i := range nrows / batches {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"x":%d,"y":%d,"s":"v%d"}`, r.IntN(10000), r.IntN(10000), r.IntN(100))
		}
		sb.WriteByte(']')
		snapZ = tabletest.Append(t, snapZ, sb.String())
		snapB = tabletest.Append(t, snapB, sb.String())
	}
	before := tabletest.ScanLines(t, snapZ)
	target := int64(4 << 10)
	if _, err := maintenance.Optimize(ctx, snapZ, maintenance.ZOrderBy("x", "Y"), maintenance.TargetSize(target)); err != nil {
		t.Fatal(err)
	}
	if _, err := maintenance.Optimize(ctx, snapB, maintenance.TargetSize(target), maintenance.MinFileSize(1<<30)); err != nil {
		t.Fatal(err)
	}
	z, b := tabletest.Open(t, storeZ), tabletest.Open(t, storeB)
	if got := tabletest.ScanLines(t, z); !slices.Equal(got, before) {
		t.Fatal("Z-order changed the rows")
	}
	if ci := commitInfo(t, z); ci.OperationParameters["zOrderBy"] != `["x","y"]` {
		t.Fatalf("zOrderBy %v", ci.OperationParameters["zOrderBy"])
	}
	if z.NumFiles() < 8 {
		t.Fatalf("only %d files after Z-order: the test needs several", z.NumFiles())
	}
	for _, col := range []string{"x", "y"} {
		var fz, fb float64
		const probes = 10
		for range probes {
			lo := rng.IntN(9000)
			pred := fmt.Sprintf("%s >= %d AND %s < %d", col, lo, col, lo+1000)
			fz += plannedFraction(t, z, pred)
			fb += plannedFraction(t, b, pred)
		}
		fz, fb = fz/probes, fb/probes
		t.Logf("10%% range on %s: Z-order reads %.0f%% of %d files, bin-packing %.0f%% of %d", col, 100*fz, z.NumFiles(), 100*fb, b.NumFiles())
		if fz > 0.5 || fz > fb/1.5 {
			t.Errorf("Z-order on %s plans %.0f%% of the files (bin-packing %.0f%%)", col, 100*fz, 100*fb)
		}
	}
	// Again by the same columns: nothing changed, nothing is rewritten.
	again, err := maintenance.Optimize(ctx, z, maintenance.ZOrderBy("x", "y"), maintenance.TargetSize(target))
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Commits) != 0 {
		t.Fatalf("a second Z-order rewrote %d files", again.Metrics.NumRemovedFiles)
	}
	if _, err := maintenance.Optimize(ctx, z, maintenance.ZOrderBy("nope")); err == nil {
		t.Fatal("z-order by a missing column")
	}
}

func plannedFraction(t *testing.T, snap *deltalog.Snapshot, pred string) float64 {
	t.Helper()
	sc, err := reader.NewScan(snap, reader.WithFilter(mustParse(t, pred)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range sc.Files(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return float64(n) / float64(snap.NumFiles())
}

// Files with deletion vectors are rewritten without the rows their
// vectors delete, even alone in their partition: Spark's tables.
func TestOptimizeRewritesDeletionVectors(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"log-replay-dv-key-cases", "dv-partitioned-with-checkpoint", "basic-dv-no-checkpoint"} {
		t.Run(name, func(t *testing.T) {
			store := copyCase(t, name)
			snap, err := deltalog.Open(ctx, store, "")
			if err != nil {
				t.Fatal(err)
			}
			var dvs int64
			for f := range snap.Files() {
				if f.DeletionVector != nil {
					dvs++
				}
			}
			if dvs == 0 {
				t.Fatal("the case has no deletion vectors")
			}
			before := tabletest.ScanLines(t, snap)
			res, err := maintenance.Optimize(ctx, snap)
			if err != nil {
				t.Fatal(err)
			}
			after, err := deltalog.Open(ctx, store, "")
			if err != nil {
				t.Fatal(err)
			}
			for f := range after.Files() {
				if f.DeletionVector != nil {
					t.Errorf("%s still has a deletion vector", f.Path)
				}
			}
			if res.Metrics.NumDeletionVectorsRemoved != dvs {
				t.Errorf("numDeletionVectorsRemoved %d, want %d", res.Metrics.NumDeletionVectorsRemoved, dvs)
			}
			if got := tabletest.ScanLines(t, after); !slices.Equal(got, before) {
				t.Fatalf("rows changed: %d rows, want %d", len(got), len(before))
			}
			sc, err := reader.NewScan(after)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := sc.Count(ctx); err != nil || n != int64(len(before)) {
				t.Fatalf("count %d, %v; want %d", n, err, len(before))
			}
		})
	}
}

// Z-order rewrites only the partitions that changed since the last
// Z-order by the same columns.
func TestZOrderRewritesOnlyChangedPartitions(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil, "region")
	snap = appendMany(t, snap, 0, 6, func(i int) string { return []string{"US", "EU"}[i%2] })
	if _, err := maintenance.Optimize(ctx, snap, maintenance.ZOrderBy("id")); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Append(t, tabletest.Open(t, store), `[{"id":100,"region":"EU"}]`)
	res, err := maintenance.Optimize(ctx, snap, maintenance.ZOrderBy("id"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.NumRemovedFiles != 2 || res.Metrics.NumBatches != 1 {
		t.Fatalf("rewrote %d files in %d bins, want EU's 2 in 1", res.Metrics.NumRemovedFiles, res.Metrics.NumBatches)
	}
	// A partition column cannot be a Z-order column.
	if _, err = maintenance.Optimize(ctx, tabletest.Open(t, store), maintenance.ZOrderBy("id", "region")); err == nil {
		t.Fatal("z-order by a partition column was accepted")
	}
	if got := tabletest.ScanLines(t, tabletest.Open(t, store)); len(got) != 7 {
		t.Fatalf("%d rows", len(got))
	}
}

// A file of a bin that cannot be read fails OPTIMIZE before it commits,
// naming the file, and every batch read ahead is released.
func TestOptimizeFailsOnAMissingFile(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil)
	snap = appendMany(t, snap, 0, 8, us)
	var gone string
	for f := range snap.Files() {
		gone = snap.TablePath(f.Path)
	}
	if err := store.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	_, err := maintenance.Optimize(ctx, snap, maintenance.OptimizeWriterOptions(writer.WithAllocator(mem)))
	if err == nil || !strings.Contains(err.Error(), gone[strings.LastIndexByte(gone, '/')+1:]) {
		t.Fatalf("OPTIMIZE with a missing file: %v", err)
	}
	mem.AssertSize(t, 0)
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("a failed OPTIMIZE committed version %d", v)
	}
}

// TestZOrderReleasesMemory: a Z-order OPTIMIZE releases every Arrow
// buffer it allocated (the sort's Take kept a reference to the bin's rows
// and to the indices).
func TestZOrderReleasesMemory(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v string", nil)
	tabletest.AppendTo(t, store, `[{"id":3,"v":"c"},{"id":1,"v":"a"}]`)
	snap := tabletest.AppendTo(t, store, `[{"id":2,"v":"b"}]`)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	res, err := maintenance.Optimize(context.Background(), snap, maintenance.ZOrderBy("id", "v"),
		maintenance.OptimizeWriterOptions(writer.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) != 1 {
		t.Fatalf("%d commits, want 1", len(res.Commits))
	}
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of Arrow memory not released", n)
	}
}
