package maintenance_test

import (
	"context"
	"errors"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// The seed scenario: a mistaken delete of one region is undone by a
// restore to the version before it, which writes no data file.
func TestRestoreUndoesADelete(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, name string, region string", nil)
	snap = tabletest.Append(t, snap, `[{"id":1,"name":"ann","region":"US"},{"id":2,"name":"bo","region":"EU"},{"id":3,"name":"cy","region":"APAC"}]`)
	snap = tabletest.Append(t, snap, `[{"id":4,"name":"di","region":"US"},{"id":5,"name":"ed","region":"EU"}]`)
	before := tabletest.ScanLines(t, snap)
	beforeVersion := snap.Version()

	// DELETE WHERE region = 'US', as replaceWhere with no new rows.
	pred, err := expr.Parse("region = 'US'")
	if err != nil {
		t.Fatal(err)
	}
	res, err := dml.ReplaceWhere(ctx, snap, pred, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[]`)))
	if err != nil {
		t.Fatal(err)
	}
	snap, _ = res.Snapshot()
	if got := tabletest.ScanLines(t, snap); len(got) != 3 {
		t.Fatalf("after the delete: %d rows, want 3", len(got))
	}
	keysBefore := storeKeys(t, store, "tbl/")

	rr, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(beforeVersion))
	if err != nil {
		t.Fatal(err)
	}
	restored := tabletest.Open(t, store)
	if restored.Version() != snap.Version()+1 || rr.Commit.Version != restored.Version() {
		t.Fatalf("restore landed at %d (result %d), want %d", restored.Version(), rr.Commit.Version, snap.Version()+1)
	}
	if got := tabletest.ScanLines(t, restored); !slices.Equal(got, before) {
		t.Fatalf("rows after restore:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(before, "\n"))
	}
	// Only a commit file was written: no data file.
	var added []string
	for _, k := range storeKeys(t, store, "tbl/") {
		if !slices.Contains(keysBefore, k) {
			added = append(added, k)
		}
	}
	if len(added) != 1 || !strings.HasPrefix(added[0], "tbl/_delta_log/") {
		t.Fatalf("restore wrote %v, want only its commit", added)
	}
	if !slices.Equal(fileKeys(restored), fileKeys(tabletest.Open(t, store, deltalog.AtVersion(beforeVersion)))) {
		t.Fatalf("live files %v differ from version %d's", fileKeys(restored), beforeVersion)
	}
	h, err := deltalog.History(ctx, store, "tbl", 1)
	if err != nil {
		t.Fatal(err)
	}
	ci := h[0].Info
	if ci.Operation != "RESTORE" || ci.OperationParameters["version"] != "2" {
		t.Fatalf("history shows %s %v, want RESTORE of version 2", ci.Operation, ci.OperationParameters)
	}
	m := ci.OperationMetrics
	want := map[string]string{
		"numRestoredFiles":       "2", // the two appended files the delete rewrote
		"numRemovedFiles":        "1", // the rewrite of the kept rows
		"numOfFilesAfterRestore": "2",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("operationMetrics[%s] = %v, want %s (all: %v)", k, m[k], v, m)
		}
	}
	if rr.Metrics.NumRestoredFiles != 2 || rr.Metrics.RestoredFilesSize <= 0 || rr.Metrics.TableSizeAfterRestore != restored.SizeInBytes() {
		t.Errorf("metrics %+v", rr.Metrics)
	}
	for _, a := range lastCommit(t, restored) {
		if a.Add != nil && !a.Add.DataChange || a.Remove != nil && !a.Remove.DataChange {
			t.Errorf("restore action without dataChange: %+v", a)
		}
	}
}

// A file whose deletion vector changed after the target version comes
// back with the deletion vector it had then: files are matched by path
// and deletion-vector id, as log replay matches them (delta-rs matches by
// path alone and restores nothing here). The table is Spark's: one file,
// three DELETEs that each replace its deletion vector.
func TestRestoreDeletionVectors(t *testing.T) {
	ctx := context.Background()
	for _, v := range []int64{0, 1, 2} {
		store := copyCase(t, "log-replay-dv-key-cases")
		snap, err := deltalog.Open(ctx, store, "")
		if err != nil {
			t.Fatal(err)
		}
		target, err := deltalog.Open(ctx, store, "", deltalog.AtVersion(v))
		if err != nil {
			t.Fatal(err)
		}
		rr, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(v))
		if err != nil {
			t.Fatalf("restore to %d: %v", v, err)
		}
		after, err := deltalog.Open(ctx, store, "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fileKeys(after), fileKeys(target)) {
			t.Fatalf("restore to %d: live files %v, want %v", v, fileKeys(after), fileKeys(target))
		}
		if rr.Metrics.NumRestoredFiles != 1 || rr.Metrics.NumRemovedFiles != 1 {
			t.Fatalf("restore to %d: metrics %+v, want one file restored and one removed", v, rr.Metrics)
		}
		var targetDV, liveDV string
		for f := range target.Files() {
			targetDV = f.DeletionVector.UniqueID()
		}
		for f := range snap.Files() {
			liveDV = f.DeletionVector.UniqueID()
		}
		var added, removed []string
		for _, a := range lastCommit(t, after) {
			switch {
			case a.Add != nil:
				added = append(added, a.Add.DeletionVector.UniqueID())
			case a.Remove != nil:
				removed = append(removed, a.Remove.DeletionVector.UniqueID())
			}
		}
		if !slices.Equal(added, []string{targetDV}) || !slices.Equal(removed, []string{liveDV}) {
			t.Fatalf("restore to %d: added DVs %q, removed %q; want %q and %q", v, added, removed, targetDV, liveDV)
		}
		sc, err := reader.NewScan(after)
		if err != nil {
			t.Fatal(err)
		}
		n, err := sc.Count(ctx) // numRecords less the deletion vector's cardinality
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{50, 49, 48}[v]; n != want {
			t.Fatalf("restore to %d: %d rows, want %d", v, n, want)
		}
	}
}

// A restore to a version whose files were deleted (by VACUUM, or by hand)
// fails before committing, naming the missing files; so does one whose
// deletion vector file is gone.
func TestRestoreRefusesMissingFiles(t *testing.T) {
	ctx := context.Background()
	t.Run("data file", func(t *testing.T) {
		store := objstore.NewMem()
		snap := tabletest.Create(t, store, "id long", nil)
		snap = tabletest.Append(t, snap, `[{"id":1}]`)
		old := snap.Version()
		var gone string
		for f := range snap.Files() {
			gone = snap.TablePath(f.Path)
		}
		pred, _ := expr.Parse("id = 1")
		res, err := dml.ReplaceWhere(ctx, snap, pred, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":1}]`)))
		if err != nil {
			t.Fatal(err)
		}
		snap, _ = res.Snapshot()
		if err := store.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
		_, err = maintenance.Restore(ctx, snap, maintenance.ToVersion(old))
		var me *maintenance.MissingFilesError
		if !errors.As(err, &me) || me.Total != 1 || me.Keys[0] != gone || me.Version != old {
			t.Fatalf("got %v, want a MissingFilesError naming %s", err, gone)
		}
		if !strings.Contains(err.Error(), gone) {
			t.Fatalf("message %q does not name %s", err, gone)
		}
		if v := tabletest.Open(t, store).Version(); v != snap.Version() {
			t.Fatalf("a failed restore committed version %d", v)
		}
	})
	t.Run("deletion vector file", func(t *testing.T) {
		store := copyCase(t, "log-replay-dv-key-cases")
		snap, err := deltalog.Open(ctx, store, "")
		if err != nil {
			t.Fatal(err)
		}
		key := dvFileOfVersion(t, store, 1)
		if err := store.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		_, err = maintenance.Restore(ctx, snap, maintenance.ToVersion(1))
		var me *maintenance.MissingFilesError
		if !errors.As(err, &me) || me.Keys[0] != key {
			t.Fatalf("got %v, want a MissingFilesError naming %s", err, key)
		}
	})
}

func TestRestoreArguments(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	snap = tabletest.Append(t, snap, `[{"id":1}]`)
	if _, err := maintenance.Restore(ctx, snap); err == nil {
		t.Fatal("a restore without a target succeeded")
	}
	if _, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(snap.Version())); !errors.Is(err, maintenance.ErrNothingToRestore) {
		t.Fatalf("restore to the current version: %v", err)
	}
	if _, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(7)); !errors.Is(err, deltalog.ErrVersionNotFound) {
		t.Fatalf("restore to a version that does not exist: %v", err)
	}
	// By timestamp: version 0's own timestamp restores version 0.
	v0 := tabletest.Open(t, store, deltalog.AtVersion(0))
	rr, err := maintenance.Restore(ctx, snap, maintenance.ToTimestamp(v0.Timestamp()))
	if err != nil {
		t.Fatal(err)
	}
	if rr.RestoredVersion != 0 || tabletest.Open(t, store).NumFiles() != 0 {
		t.Fatalf("restore by timestamp restored version %d", rr.RestoredVersion)
	}
	ci := commitInfo(t, tabletest.Open(t, store))
	if ci.OperationParameters["timestamp"] == nil || ci.OperationParameters["version"] != nil {
		t.Fatalf("parameters %v", ci.OperationParameters)
	}
}

// dvFileOfVersion is the key of the deletion vector file of the one file
// of the snapshot at version v, checked to exist: Spark wrote it, so this
// checks the decoding of "u" paths.
func dvFileOfVersion(t *testing.T, store objstore.Store, v int64) string {
	t.Helper()
	snap := openAt(t, store, v)
	var key string
	for f := range snap.Files() {
		k, err := maintenance.DVKey(snap, f.DeletionVector)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	if !strings.HasPrefix(key, "deletion_vector_") || !strings.HasSuffix(key, ".bin") {
		t.Fatalf("deletion vector key %q", key)
	}
	if _, err := store.Head(context.Background(), key); err != nil {
		t.Fatalf("the decoded deletion vector path: %v", err)
	}
	return key
}

func openAt(t *testing.T, store objstore.Store, v int64) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "", deltalog.AtVersion(v))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
