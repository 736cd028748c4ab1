package maintenance_test

import (
	"context"
	"errors"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// touch writes a file under dir with the given modification time.
func touch(t *testing.T, dir, rel string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func deleteWhere(t *testing.T, snap *deltalog.Snapshot, pred string, now time.Time) *deltalog.Snapshot {
	t.Helper()
	p, err := expr.Parse(pred)
	if err != nil {
		t.Fatal(err)
	}
	res, err := dml.ReplaceWhere(context.Background(), snap, p, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[]`)), dml.WithCommitOptions(deltalog.WithClock(func() time.Time { return now })))
	if err != nil {
		t.Fatal(err)
	}
	s, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exists(t *testing.T, store objstore.Store, key string) bool {
	t.Helper()
	_, err := store.Head(context.Background(), key)
	if errors.Is(err, objstore.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// VACUUM with a fake clock: the files of versions inside the retention
// window survive and time travel to them works; the files of older
// removes are deleted; so are a crashed writer's file and change data
// files older than the window; a file newer than the window, hidden
// files and the log are kept; a dry run deletes nothing.
func TestVacuumRetention(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	t0 := time.Now().Truncate(time.Millisecond)
	snap := tabletest.Create(t, store, "id long, region string", nil)
	snap = tabletest.Append(t, snap, `[{"id":1,"region":"US"}]`) // file A
	fileA := onlyFile(t, snap)
	snap = tabletest.Append(t, snap, `[{"id":2,"region":"EU"}]`) // file B
	snap = deleteWhere(t, snap, "region = 'US'", t0)             // A removed at t0
	vB := snap.Version()
	var fileB string
	for f := range snap.Files() {
		fileB = snap.TablePath(f.Path)
	}
	snap = tabletest.Append(t, snap, `[{"id":3,"region":"EU"}]`)
	snap = deleteWhere(t, snap, "id = 2", t0.Add(5*day)) // B removed at t0+5d
	// Every file so far was written at t0.
	for _, k := range storeKeys(t, store, "tbl/") {
		if !strings.Contains(k, "_delta_log/") {
			touch(t, dir, k, t0)
		}
	}
	touch(t, dir, "tbl/part-00000-crashed-writer.parquet", t0.Add(-30*day))
	touch(t, dir, "tbl/_change_data/cdc-00000-old.c000.snappy.parquet", t0.Add(-30*day))
	touch(t, dir, "tbl/_tmp_staging/old.parquet", t0.Add(-30*day))
	touch(t, dir, "tbl/.hidden-old", t0.Add(-30*day))
	now := t0.Add(8 * day) // the window (7 days) starts at t0+1d
	touch(t, dir, "tbl/part-00000-uncommitted.parquet", now.Add(-time.Minute))
	clock := maintenance.VacuumClock(func() time.Time { return now })

	wantGone := []string{"tbl/_change_data/cdc-00000-old.c000.snappy.parquet", fileA, "tbl/part-00000-crashed-writer.parquet"}
	slices.Sort(wantGone)
	before := storeKeys(t, store, "tbl/")
	dry, err := maintenance.Vacuum(ctx, snap, clock, maintenance.DryRun())
	if err != nil {
		t.Fatal(err)
	}
	if got := vacuumKeys(dry); !slices.Equal(got, wantGone) {
		t.Fatalf("dry run lists %v, want %v", got, wantGone)
	}
	if dry.Bytes <= 0 || dry.StartVersion != -1 {
		t.Fatalf("dry run result %+v", dry)
	}
	if after := storeKeys(t, store, "tbl/"); !slices.Equal(after, before) {
		t.Fatalf("a dry run changed the store: %v -> %v", before, after)
	}

	res, err := maintenance.Vacuum(ctx, snap, clock)
	if err != nil {
		t.Fatal(err)
	}
	if got := vacuumKeys(res); !slices.Equal(got, wantGone) {
		t.Fatalf("deleted %v, want %v", got, wantGone)
	}
	for _, k := range wantGone {
		if exists(t, store, k) {
			t.Errorf("%s survived", k)
		}
	}
	for _, k := range []string{fileB, "tbl/part-00000-uncommitted.parquet", "tbl/_tmp_staging/old.parquet", "tbl/.hidden-old"} {
		if !exists(t, store, k) {
			t.Errorf("%s was deleted", k)
		}
	}
	for _, k := range before {
		if strings.HasPrefix(k, "tbl/_delta_log/") && !exists(t, store, k) {
			t.Errorf("log file %s was deleted", k)
		}
	}
	// Version vB (which reads B, removed inside the window) still reads.
	if got := tabletest.ScanLines(t, tabletest.Open(t, store, deltalog.AtVersion(vB))); len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
		t.Fatalf("time travel to version %d: %v", vB, got)
	}
	if got := tabletest.ScanLines(t, tabletest.Open(t, store)); len(got) != 1 {
		t.Fatalf("latest: %v", got)
	}
	// VACUUM START and VACUUM END, as Spark records them.
	h, err := deltalog.History(ctx, store, "tbl", 2)
	if err != nil {
		t.Fatal(err)
	}
	end, start := h[0].Info, h[1].Info
	if start.Operation != "VACUUM START" || end.Operation != "VACUUM END" {
		t.Fatalf("history %s, %s", start.Operation, end.Operation)
	}
	if start.OperationMetrics["numFilesToDelete"] != "3" || start.OperationParameters["defaultRetentionMillis"] != "604800000" || start.OperationParameters["retentionCheckEnabled"] != "true" {
		t.Errorf("VACUUM START %v %v", start.OperationParameters, start.OperationMetrics)
	}
	if end.OperationParameters["status"] != "COMPLETED" || end.OperationMetrics["numDeletedFiles"] != "3" {
		t.Errorf("VACUUM END %v %v", end.OperationParameters, end.OperationMetrics)
	}
	if res.StartVersion != h[1].Version || res.EndVersion != h[0].Version {
		t.Errorf("versions %d, %d", res.StartVersion, res.EndVersion)
	}
}

func onlyFile(t *testing.T, snap *deltalog.Snapshot) string {
	t.Helper()
	var out []string
	for f := range snap.Files() {
		out = append(out, snap.TablePath(f.Path))
	}
	if len(out) != 1 {
		t.Fatalf("%d files, want 1", len(out))
	}
	return out[0]
}

func vacuumKeys(r *maintenance.VacuumResult) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Key)
	}
	return out
}

func TestVacuumRetentionCheck(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", map[string]string{"delta.deletedFileRetentionDuration": "interval 2 days"})
	_, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(24*time.Hour))
	if !errors.Is(err, maintenance.ErrRetentionTooShort) {
		t.Fatalf("retention under the table's: %v", err)
	}
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused vacuum committed version %d", v)
	}
	if _, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(-time.Hour), maintenance.Force()); err == nil {
		t.Fatal("a negative retention was accepted")
	}
	res, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(0), maintenance.Force())
	if err != nil {
		t.Fatal(err)
	}
	ci := commitInfo(t, tabletest.Open(t, store, deltalog.AtVersion(res.StartVersion)))
	if ci.OperationParameters["retentionCheckEnabled"] != "false" || ci.OperationParameters["specifiedRetentionMillis"] != "0" || ci.OperationParameters["defaultRetentionMillis"] != "172800000" {
		t.Fatalf("parameters %v", ci.OperationParameters)
	}
	if _, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(72*time.Hour)); err != nil {
		t.Fatalf("a retention over the table's: %v", err)
	}
}

// Spark's table with deletion vectors: the files of the vectors that
// later DELETEs replaced go once their removes leave the window; the live
// file's vector stays.
func TestVacuumDeletionVectors(t *testing.T) {
	ctx := context.Background()
	store := copyCase(t, "log-replay-dv-key-cases")
	dir := objstore.Location(store)
	for _, k := range storeKeys(t, store, "") {
		if !strings.HasPrefix(k, "_delta_log/") {
			touch(t, dir, k, time.UnixMilli(1697571663000))
		}
	}
	live := dvFileOfVersion(t, store, 3)
	old1, old2 := dvFileOfVersion(t, store, 1), dvFileOfVersion(t, store, 2)
	snap, err := deltalog.Open(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	// One day after the last delete, with a 7-day window, nothing goes.
	res, err := maintenance.Vacuum(ctx, snap, maintenance.DryRun(), maintenance.VacuumClock(func() time.Time { return time.UnixMilli(1697571690963).Add(24 * time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 0 {
		t.Fatalf("inside the window: would delete %v", vacuumKeys(res))
	}
	res, err = maintenance.Vacuum(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{old1, old2}
	slices.Sort(want)
	if got := vacuumKeys(res); !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
	if !exists(t, store, live) || !exists(t, store, onlyFile(t, snap)) {
		t.Fatal("the live file or its deletion vector was deleted")
	}
}

// VACUUM given an old snapshot works on the latest version: the files of
// later commits stay.
func TestVacuumUsesTheLatestVersion(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	old := snap
	tabletest.Append(t, snap, `[{"id":1}]`)
	latest := tabletest.Open(t, store)
	res, err := maintenance.Vacuum(ctx, old, maintenance.Retain(0), maintenance.Force(), maintenance.VacuumClock(func() time.Time { return time.Now().Add(time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 0 {
		t.Fatalf("deleted %v, the latest version's files", vacuumKeys(res))
	}
	if got := tabletest.ScanLines(t, tabletest.Open(t, store)); len(got) != 1 || latest.NumFiles() != 1 {
		t.Fatalf("rows %v", got)
	}
}

// A live file the log names by an absolute URI inside the table is kept.
func TestVacuumKeepsAbsolutePaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Create(t, store, "id long", nil)
	old := time.Now().Add(-time.Hour)
	touch(t, dir, "tbl/abs-file.parquet", old)
	touch(t, dir, "tbl/orphan.parquet", old)
	tx := snap.NewTransaction()
	tx.Add(actions.Action{Add: &actions.Add{Path: "file://" + filepath.ToSlash(dir) + "/tbl/abs-file.parquet", Size: 1, ModificationTime: old.UnixMilli(), DataChange: true, PartitionValues: map[string]*string{}}})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := maintenance.Vacuum(ctx, tabletest.Open(t, store), maintenance.Retain(0), maintenance.Force())
	if err != nil {
		t.Fatal(err)
	}
	if got := vacuumKeys(res); !slices.Equal(got, []string{"tbl/orphan.parquet"}) {
		t.Fatalf("deleted %v, want only the orphan", got)
	}
}

// TestVacuumKeepsIcebergMetadata: on a UniForm table VACUUM keeps the
// Iceberg metadata under metadata/, which no Delta version references
// (Spark treats the folder as hidden there); on another table a
// metadata/ folder is data like any other. It deleted it, so Iceberg
// readers lost the table.
func TestVacuumKeepsIcebergMetadata(t *testing.T) {
	ctx := context.Background()
	for _, uniform := range []bool{true, false} {
		store := objstore.NewMem()
		props := map[string]string{"delta.columnMapping.mode": "name"}
		if uniform {
			props["delta.enableIcebergCompatV2"] = "true"
			props["delta.universalFormat.enabledFormats"] = "iceberg"
		}
		tabletest.Create(t, store, "id long", props)
		snap := tabletest.AppendTo(t, store, `[{"id":1}]`)
		key := tabletest.Root + "/metadata/v1.metadata.json"
		if err := store.Put(ctx, key, strings.NewReader("{}"), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(8 * 24 * time.Hour)
		if _, err := maintenance.Vacuum(ctx, snap, maintenance.VacuumClock(func() time.Time { return later })); err != nil {
			t.Fatal(err)
		}
		_, err := store.Head(ctx, key)
		switch {
		case uniform && err != nil:
			t.Fatalf("VACUUM of a UniForm table deleted its Iceberg metadata: %v", err)
		case !uniform && !errors.Is(err, objstore.ErrNotFound):
			t.Fatalf("VACUUM of a table without UniForm kept an unreferenced metadata/ file: %v", err)
		}
	}
}
