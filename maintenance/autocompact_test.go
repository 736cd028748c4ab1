package maintenance_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer"
)

// syncHooks makes a write run its post-commit hooks before it returns.
var syncHooks = writer.WithCommitOptions(deltalog.WithPostCommit(deltalog.PostCommitSync))

// appendRows appends rows with the hooks run before it returns, and
// returns the commit's result and the latest snapshot.
func appendRows(t *testing.T, store objstore.Store, rows string) (*deltalog.CommitResult, *deltalog.Snapshot) {
	t.Helper()
	snap := tabletest.Open(t, store)
	mem := tabletest.CheckedMem(t)
	res, err := writer.Append(context.Background(), snap, tabletest.Batches(t, tabletest.Batch(t, mem, snap, rows)), writer.WithAllocator(mem), syncHooks)
	if err != nil {
		t.Fatal(err)
	}
	return res, tabletest.Open(t, store)
}

// filesPer counts the live files of each partition (by region).
func filesPer(snap *deltalog.Snapshot) map[string]int {
	out := map[string]int{}
	for f := range snap.Files() {
		out[*f.PartitionValues["region"]]++
	}
	return out
}

// TestAutoCompactHook: with delta.autoOptimize.autoCompact, the write
// that brings a partition to 50 small files is followed by one OPTIMIZE
// commit of that partition alone (dataChange false, auto=true, its
// predicate naming the partition), and the rows are unchanged; a
// partition with as many files that the write did not touch is left
// alone until a write touches it.
func TestAutoCompactHook(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, region string", nil, "region")
	for i := range 60 {
		appendRows(t, store, fmt.Sprintf(`[{"id":%d,"region":"EU"}]`, i))
	}
	for i := range 49 {
		appendRows(t, store, fmt.Sprintf(`[{"id":%d,"region":"US"}]`, 100+i))
	}
	snap := tabletest.Open(t, store)
	if _, err := maintenance.SetProperties(context.Background(), snap, map[string]string{actions.PropAutoCompact: "true"},
		deltalog.WithPostCommit(deltalog.PostCommitSync)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if got := filesPer(snap); got["EU"] != 60 || got["US"] != 49 {
		t.Fatalf("setting the property compacted: %v", got)
	}
	before := tabletest.ScanLines(t, snap)

	res, after := appendRows(t, store, `[{"id":149,"region":"US"}]`)
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	if after.Version() != res.Version+1 {
		t.Fatalf("the append is version %d, the table is at %d: want one auto compaction commit after it", res.Version, after.Version())
	}
	if got := filesPer(after); got["US"] != 1 || got["EU"] != 60 {
		t.Fatalf("files per partition after auto compaction: %v, want US 1 and EU 60", got)
	}
	want := tabletest.Sorted(append(before, `{"id":149,"region":"US"}`)...)
	if got := tabletest.ScanLines(t, after); !slices.Equal(got, want) {
		tabletest.DiffLines(t, "rows after auto compaction", got, want)
	}
	ci := commitInfo(t, after)
	if ci.Operation != "OPTIMIZE" || ci.OperationParameters["auto"] != "true" || ci.OperationParameters["zOrderBy"] != "[]" {
		t.Fatalf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	if p, _ := ci.OperationParameters["predicate"].(string); !strings.Contains(p, "region <=> 'US'") || strings.Contains(p, "EU") {
		t.Fatalf("predicate %v, want the US partition only", ci.OperationParameters["predicate"])
	}
	if ci.OperationMetrics["numRemovedFiles"] != "50" || ci.OperationMetrics["numAddedFiles"] != "1" {
		t.Fatalf("operationMetrics %v", ci.OperationMetrics)
	}
	for _, a := range lastCommit(t, after) {
		if a.Add != nil && a.Add.DataChange || a.Remove != nil && a.Remove.DataChange {
			t.Fatalf("auto compaction action with dataChange: %+v", a)
		}
	}
	// An append to EU compacts EU.
	res, after = appendRows(t, store, `[{"id":60,"region":"EU"}]`)
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	if got := filesPer(after); got["US"] != 1 || got["EU"] != 1 {
		t.Fatalf("files per partition: %v, want 1 each", got)
	}
	// OPTIMIZE's own commits never trigger it, and a write that leaves
	// fewer than 50 small files does nothing.
	res, after = appendRows(t, store, `[{"id":61,"region":"EU"}]`)
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	if after.Version() != res.Version || filesPer(after)["EU"] != 2 {
		t.Fatalf("version %d after the append's %d, files %v: nothing was to be compacted", after.Version(), res.Version, filesPer(after))
	}
}

// TestAutoCompactUnpartitioned: the function itself, with thresholds of
// the caller's, on an unpartitioned table: only files under the small
// size count, and the commit's predicate is empty.
func TestAutoCompactUnpartitioned(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", nil)
	snap = appendMany(t, snap, 0, 4, us)
	res, err := maintenance.AutoCompact(ctx, snap, nil, maintenance.AutoCompactMinFiles(5))
	if err != nil || len(res.Commits) != 0 {
		t.Fatalf("4 small files under a threshold of 5: %v commits, %v", len(res.Commits), err)
	}
	snap = appendMany(t, snap, 4, 1, us)
	// Files of 1 byte are never small: nothing to do.
	if res, err = maintenance.AutoCompact(ctx, snap, nil, maintenance.AutoCompactMinFiles(5), maintenance.AutoCompactFileSizes(2, 1)); err != nil || len(res.Commits) != 0 {
		t.Fatalf("no small file: %v commits, %v", len(res.Commits), err)
	}
	before := tabletest.ScanLines(t, snap)
	if res, err = maintenance.AutoCompact(ctx, snap, nil, maintenance.AutoCompactMinFiles(5)); err != nil || len(res.Commits) != 1 {
		t.Fatalf("5 small files: %v commits, %v", len(res.Commits), err)
	}
	after := tabletest.Open(t, store)
	if after.NumFiles() != 1 {
		t.Fatalf("%d files after auto compaction", after.NumFiles())
	}
	if got := tabletest.ScanLines(t, after); !slices.Equal(got, before) {
		tabletest.DiffLines(t, "rows", got, before)
	}
	if ci := commitInfo(t, after); ci.OperationParameters["predicate"] != "[]" || ci.OperationParameters["auto"] != "true" {
		t.Fatalf("operationParameters %v", ci.OperationParameters)
	}
}

// TestAutoCompactNeverFailsTheCommit: an auto compaction that fails
// leaves the write that triggered it committed, and the write's
// WaitHooks reports it as a *deltalog.HookError of the hook.
func TestAutoCompactNeverFailsTheCommit(t *testing.T) {
	// A hook whose OPTIMIZE is refused (an app transaction without an id).
	deltalog.RegisterHook(maintenance.AutoCompactHook(maintenance.AutoCompactMinFiles(2),
		maintenance.AutoCompactOptimizeOptions(maintenance.OptimizeCommitOptions(deltalog.WithAppTransaction("", 1)))))
	t.Cleanup(func() { deltalog.RegisterHook(maintenance.AutoCompactHook()) })
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, region string", map[string]string{actions.PropAutoCompact: "true"})
	appendRows(t, store, `[{"id":1,"region":"US"}]`)
	res, after := appendRows(t, store, `[{"id":2,"region":"US"}]`)
	err := res.WaitHooks()
	var he *deltalog.HookError
	if !errors.As(err, &he) || he.Hook != deltalog.HookAutoCompact || he.Version != res.Version {
		t.Fatalf("WaitHooks = %v, want the auto compaction's *HookError after version %d", err, res.Version)
	}
	if after.Version() != res.Version || after.NumFiles() != 2 {
		t.Fatalf("version %d with %d files, want the append (version %d) standing alone", after.Version(), after.NumFiles(), res.Version)
	}
}

// TestAutoCompactRandom drives random writes (one or several partitions
// a commit) through the registered hook with random thresholds and
// checks, after every commit, each partition's file count and the rows
// against a model: a partition the commit wrote to is compacted into one
// file when it holds at least the threshold's small files, and no other.
func TestAutoCompactRandom(t *testing.T) {
	seed := testseed.From(t, "AUTOCOMPACT_SEED")
	rng := rand.New(rand.NewPCG(seed, 7))
	minFiles := 2 + rng.IntN(6)
	deltalog.RegisterHook(maintenance.AutoCompactHook(maintenance.AutoCompactMinFiles(minFiles)))
	t.Cleanup(func() { deltalog.RegisterHook(maintenance.AutoCompactHook()) })
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, region string", map[string]string{actions.PropAutoCompact: "true"}, "region")
	regions := []string{"EU", "US", "APAC", ""}
	files := map[string]int{}
	var rows []string
	id := 0
	for step := range 60 {
		var batch []string
		touched := map[string]bool{}
		for range 1 + rng.IntN(4) {
			r := regions[rng.IntN(len(regions))]
			touched[r] = true
			region := fmt.Sprintf("%q", r)
			if r == "" {
				region = "null"
			}
			row := fmt.Sprintf(`{"id":%d,"region":%s}`, id, region)
			id++
			batch = append(batch, row)
			rows = append(rows, row)
		}
		res, snap := appendRows(t, store, "["+strings.Join(batch, ",")+"]")
		if err := res.WaitHooks(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		compacted := 0
		for r := range touched {
			files[r]++ // the writer writes one file per partition
			if files[r] >= minFiles {
				files[r] = 1
				compacted++
			}
		}
		got := map[string]int{}
		for f := range snap.Files() {
			v := f.PartitionValues["region"]
			if v == nil {
				got[""]++
			} else {
				got[*v]++
			}
		}
		for _, r := range regions {
			if got[r] != files[r] {
				t.Fatalf("step %d (threshold %d): partition %q has %d files, the model %d", step, minFiles, r, got[r], files[r])
			}
		}
		if wantVersion := res.Version + int64(min(compacted, 1)); snap.Version() != wantVersion {
			t.Fatalf("step %d: version %d, want %d (one auto compaction commit for %d partitions)", step, snap.Version(), wantVersion, compacted)
		}
	}
	got := tabletest.ScanLines(t, tabletest.Open(t, store))
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted(rows...))
}
