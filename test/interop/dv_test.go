package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// TestPeersReadLakelogDeletionVectors: lakelog writes deletion vectors
// with deletionvector.Writer, inline and in a shared .bin file, and
// commits them as a DELETE does (a remove and an add of each file, on a
// table with delta.enableDeletionVectors, so reader 3 / writer 7 with the
// deletionVectors feature); delta-rs (both readers) and Spark read the
// same rows as lakelog, which are the written rows less the deleted ones.
// (delta-rs's PyArrow reader refuses deletion vectors altogether.)
func TestPeersReadLakelogDeletionVectors(t *testing.T) {
	rs := requirePeer(t, deltaRS)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, sc := tableSchema(t, historyDDL)
	g := newGen(77)
	g.pools = map[string][]any{"p": partitionInts[:3:3]}
	first, second := g.batch(mem, sc, 300), g.batch(mem, sc, 300)
	defer first.Release()
	defer second.Release()
	store, dir := newLocal(t)
	createTable(t, store, "", schema, []string{"p"}, map[string]string{"delta.enableDeletionVectors": "true"}, first)
	if _, err := writer.Append(ctx, open(t, store, ""), seq(second), writer.WithCommitOptions(noHooks), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	snap := open(t, store, "")
	if !snap.Protocol().HasReaderFeature(actions.FeatureDeletionVectors) {
		t.Fatalf("protocol %+v lacks deletionVectors", snap.Protocol())
	}
	total := int64(len(lakelogLines(t, snap)))

	w := deletionvector.NewWriter(store, snap.Root(), deletionvector.WithInlineLimit(64))
	tx := snap.NewTransaction()
	var deleted int64
	i := 0
	for add := range snap.Files() {
		st, err := actions.ParseStats(add.Stats)
		if err != nil || st.NumRecords <= 0 {
			t.Fatalf("%s: numRecords: %v", add.Path, err)
		}
		n := uint64(st.NumRecords)
		rows := roaring64.New()
		switch i % 3 {
		case 0: // a few rows: inline
			rows.Add(0)
			rows.Add(n - 1)
		case 1: // every other row: a .bin file
			for r := uint64(0); r < n; r += 2 {
				rows.Add(r)
			}
		case 2: // a run: inline, run-encoded
			rows.AddRange(n/4, n/2+1)
		}
		i++
		dv, err := w.Add(rows)
		if err != nil {
			t.Fatal(err)
		}
		withDV := *add
		withDV.DeletionVector = dv
		tx.RemoveFile(add, true)
		tx.Add(actions.Action{Add: &withDV})
		deleted += int64(rows.GetCardinality())
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(w.Keys()) != 1 {
		t.Fatalf("%d .bin files, want 1", len(w.Keys()))
	}
	tx.SetOperation("DELETE", map[string]any{"predicate": "[]"}, nil)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	latest := lakelogLines(t, open(t, store, ""))
	if int64(len(latest)) != total-deleted {
		t.Fatalf("lakelog reads %d rows, want %d - %d", len(latest), total, deleted)
	}
	got, _ := peerRead(t, rs, request{Path: dir, Reader: "datafusion"})
	sameRows(t, "delta-rs datafusion", got, latest)
	// delta-rs's PyArrow dataset refuses tables with deletion vectors (a
	// limit of its own); expected, so that an upgrade lifting it is noticed.
	l := layout{name: "deletion vectors", peerBugs: map[string]string{
		deltaRS + "/pyarrow": "reader features: {'deletionVectors'} but these are not yet supported",
	}}
	knownPeerBug(t, rs, l, "pyarrow", request{Path: dir, Reader: "pyarrow"})
	sp := requirePeer(t, spark)
	got, _ = peerRead(t, sp, request{Path: dir})
	sameRows(t, "spark", got, latest)
}

// TestSparkDeletionVectorsLakelogReads has Spark change a table with
// deletion vectors on (DELETE, UPDATE, and a second DELETE that unions
// vectors on files that already have one) and checks that lakelog reads
// every version as Spark does and counts it as Spark reads it.
func TestSparkDeletionVectorsLakelogReads(t *testing.T) {
	sp := requirePeer(t, spark)
	l := layouts[1]
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, sc := tableSchema(t, l.ddl)
	g := newGen(601)
	g.pools = map[string][]any{"p_str": {"a b", "ü€😀", nil}, "p_int": {int32(0), nil}}
	g.nestedNanos = true // Spark writes INT96; see TestSparkNestedInt96Timestamps
	inputs := parquetInputs(t, g, mem, sc, 2, 120)
	store, dir := newLocal(t)
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table + " USING delta PARTITIONED BY (p_str, p_int) " +
			"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') " +
			"AS SELECT * FROM parquet.`" + inputs[0] + "`",
		"INSERT INTO " + table + " SELECT * FROM parquet.`" + inputs[1] + "`",
		"DELETE FROM " + table + " WHERE i32 > 0",
		"UPDATE " + table + " SET s = 'updated by spark' WHERE id % 3 = 0",
		"DELETE FROM " + table + " WHERE id % 5 = 0",
	}})
	latest := sp.call(t, request{Op: "version", Path: dir}).Version
	snap := open(t, store, "")
	withDV := 0
	for add := range snap.Files() {
		if add.DeletionVector != nil {
			withDV++
		}
	}
	if withDV == 0 {
		t.Fatalf("spark wrote no deletion vectors (%d files): the test tests nothing", snap.NumFiles())
	}
	t.Logf("spark's table: version %d, %d files, %d with a deletion vector", latest, snap.NumFiles(), withDV)
	for v := range latest + 1 {
		got, _ := peerRead(t, sp, request{Path: dir, Version: &v})
		sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), got)
		sc, err := reader.NewScan(open(t, store, "", deltalog.AtVersion(v)))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := sc.Count(context.Background()); err != nil || n != int64(len(got)) {
			t.Errorf("version %d: Count %d (%v), spark reads %d rows", v, n, err, len(got))
		}
	}
}

// parquetInputs writes count Parquet files of rows random rows each, for
// a peer to read as input, and returns their paths.
func parquetInputs(t *testing.T, g *gen, mem memory.Allocator, sc *arrow.Schema, count, rows int) []string {
	t.Helper()
	files := t.TempDir()
	inputs := make([]string, count)
	for i := range inputs {
		rec := g.batch(mem, sc, rows)
		inputs[i] = filepath.Join(files, fmt.Sprintf("in-%d.parquet", i))
		writeParquet(t, inputs[i], rec)
		rec.Release()
	}
	return inputs
}
