package interop

import (
	"context"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/reader"
)

// peersAgree checks that delta-rs (both readers) and Spark read the latest
// version of the table at dir as want, and that Spark's DESCRIBE HISTORY
// names the latest commit's operation as op.
func peersAgree(t *testing.T, what, dir string, want []string, op string) {
	t.Helper()
	rs := requirePeer(t, deltaRS)
	sp := requirePeer(t, spark)
	for _, rd := range []string{"pyarrow", "datafusion"} {
		got, _ := peerRead(t, rs, request{Path: dir, Reader: rd})
		sameRows(t, what+": delta-rs "+rd, got, want)
	}
	got, _ := peerRead(t, sp, request{Path: dir})
	sameRows(t, what+": spark", got, want)
	// DESCRIBE HISTORY's fifth column is the operation.
	res := sp.call(t, request{Op: "sql", Statements: []string{"DESCRIBE HISTORY delta.`" + dir + "` LIMIT 1"}})
	if len(res.Result) != 1 || len(res.Result[0]) < 5 || res.Result[0][4] == nil || *res.Result[0][4] != op {
		t.Errorf("%s: spark's history names the latest operation %v, want %s", what, res.Result, op)
	}
}

// TestPeersReadAfterMaintenance runs RESTORE, OPTIMIZE, Z-order and VACUUM
// with lakelog on a partitioned table of many small files and checks that
// delta-rs and Spark read the rows lakelog reads after each.
func TestPeersReadAfterMaintenance(t *testing.T) {
	requirePeer(t, deltaRS)
	requirePeer(t, spark)
	ctx := context.Background()
	h := buildHistory(t, 700, nil, historySteps)
	noCP := deltalog.WithPostCommit("off")

	// RESTORE to a version before the replaceWheres.
	const target = 4
	snap := open(t, h.store, "")
	if _, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(target), maintenance.RestoreCommitOptions(noCP)); err != nil {
		t.Fatal(err)
	}
	want := h.rows[target]
	sameRows(t, "lakelog after RESTORE", openLines(t, h.store, ""), want)
	peersAgree(t, "RESTORE", h.dir, want, "RESTORE")

	// OPTIMIZE: bin-packing.
	before := open(t, h.store, "").NumFiles()
	res, err := maintenance.Optimize(ctx, open(t, h.store, ""), maintenance.OptimizeCommitOptions(noHooks))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.NumRemovedFiles == 0 || open(t, h.store, "").NumFiles() >= before {
		t.Fatalf("OPTIMIZE left %d of %d files", open(t, h.store, "").NumFiles(), before)
	}
	sameRows(t, "lakelog after OPTIMIZE", openLines(t, h.store, ""), want)
	peersAgree(t, "OPTIMIZE", h.dir, want, "OPTIMIZE")

	// Z-order, into several files per partition.
	if _, err := maintenance.Optimize(ctx, open(t, h.store, ""), maintenance.ZOrderBy("id", "amount", "ts"), maintenance.TargetSize(4<<10), maintenance.OptimizeCommitOptions(noHooks)); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "lakelog after Z-order", openLines(t, h.store, ""), want)
	peersAgree(t, "Z-order", h.dir, want, "OPTIMIZE")

	// VACUUM everything unreachable now.
	vr, err := maintenance.Vacuum(ctx, open(t, h.store, ""), maintenance.Retain(0), maintenance.Force(), maintenance.VacuumCommitOptions(noCP))
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Files) == 0 {
		t.Fatal("VACUUM deleted nothing")
	}
	sameRows(t, "lakelog after VACUUM", openLines(t, h.store, ""), want)
	peersAgree(t, "VACUUM", h.dir, want, "VACUUM END")
}

// TestLakelogRestoresSparkDeletionVectors has Spark write a table with
// deletion vectors (two DELETEs of rows of the same file: the second
// replaces the first's vector), then restores it with lakelog to the
// version between them, vacuums it and optimizes it (rewriting the file
// without its deleted rows): Spark and delta-rs must read what Spark read
// at that version after each.
func TestLakelogRestoresSparkDeletionVectors(t *testing.T) {
	sp := requirePeer(t, spark)
	rs := requirePeer(t, deltaRS)
	ctx := context.Background()
	store, dir := newLocal(t)
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table + " (id BIGINT, s STRING) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
		"INSERT INTO " + table + " SELECT id, concat('row ', id) FROM range(0, 100) ",
		"DELETE FROM " + table + " WHERE id % 10 = 0",
		"DELETE FROM " + table + " WHERE id % 10 = 1",
	}})
	latest := sp.call(t, request{Op: "version", Path: dir}).Version
	target := latest - 1
	want, _ := peerRead(t, sp, request{Path: dir, Version: &target})
	if len(want) != 90 {
		t.Fatalf("spark read %d rows at version %d, want 90", len(want), target)
	}
	snap := open(t, store, "")
	var dvs int
	for f := range snap.Files() {
		if f.DeletionVector != nil {
			dvs++
		}
	}
	if dvs == 0 {
		t.Fatal("spark wrote no deletion vector: the test tests nothing")
	}
	rr, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(target))
	if err != nil {
		t.Fatal(err)
	}
	if rr.Metrics.NumRestoredFiles == 0 || rr.Metrics.NumRemovedFiles == 0 {
		t.Fatalf("restore metrics %+v: the files differ only by deletion vector and must be swapped", rr.Metrics)
	}
	count := func() int64 {
		sc, err := reader.NewScan(open(t, store, ""))
		if err != nil {
			t.Fatal(err)
		}
		n, err := sc.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 90 {
		t.Fatalf("lakelog counts %d rows after the restore, want 90", n)
	}
	check := func(what string) {
		got, _ := peerRead(t, sp, request{Path: dir})
		sameRows(t, what+": spark", got, want)
		// delta-rs's pyarrow reader refuses deletion vectors.
		got, _ = peerRead(t, rs, request{Path: dir, Reader: "datafusion"})
		sameRows(t, what+": delta-rs datafusion", got, want)
	}
	check("RESTORE")

	// VACUUM with no retention: the later deletion vector goes, the
	// restored one stays.
	time.Sleep(10 * time.Millisecond) // the removes are strictly older than the window
	vr, err := maintenance.Vacuum(ctx, open(t, store, ""), maintenance.Retain(0), maintenance.Force())
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Files) == 0 {
		t.Fatal("VACUUM deleted nothing")
	}
	if n := count(); n != 90 {
		t.Fatalf("lakelog counts %d rows after the vacuum, want 90", n)
	}
	check("VACUUM")

	// OPTIMIZE rewrites the file without the rows its vector deletes.
	or, err := maintenance.Optimize(ctx, open(t, store, ""))
	if err != nil {
		t.Fatal(err)
	}
	if or.Metrics.NumDeletionVectorsRemoved == 0 {
		t.Fatalf("OPTIMIZE removed no deletion vector: %+v", or.Metrics)
	}
	if n := count(); n != 90 {
		t.Fatalf("lakelog counts %d rows after OPTIMIZE, want 90", n)
	}
	check("OPTIMIZE")
}
