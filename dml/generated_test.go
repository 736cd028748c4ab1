package dml_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestGeneratedColumns: a partition column generated as CAST(ts AS
// DATE): writers compute it where the input lacks it and refuse a given
// value that differs; UPDATE and MERGE recompute it from the new values;
// a filter on ts prunes partitions through it (the files have no stats
// on ts); an expression lakelog
// cannot evaluate is refused at create.
func TestGeneratedColumns(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	// Stats only for id: ts prunes through d's partition values alone.
	snap := tabletest.Create(t, store, "id long, ts timestamp, d date GENERATED ALWAYS AS (CAST(ts AS DATE)), v long",
		map[string]string{"delta.dataSkippingNumIndexedCols": "1"}, "d")
	if !snap.Protocol().HasWriterFeature("generatedColumns") {
		t.Fatalf("protocol %+v lacks generatedColumns", snap.Protocol())
	}
	mem := memory.DefaultAllocator
	noD, err := actions.ParseDDL("id long, ts timestamp, v long")
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := actions.ToArrowSchema(noD, false, "")
	rec := tabletest.RecordJSON(t, mem, sc, `[{"id":1,"ts":"2020-01-01T10:00:00Z","v":1},{"id":2,"ts":"2020-01-02T23:59:59Z","v":2},{"id":3,"ts":null,"v":3},{"id":4,"ts":"2020-01-05T00:00:00Z","v":4}]`)
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	want := []string{
		`{"id":1,"ts":"2020-01-01T10:00:00.000000Z","d":"2020-01-01","v":1}`,
		`{"id":2,"ts":"2020-01-02T23:59:59.000000Z","d":"2020-01-02","v":2}`,
		`{"id":3,"ts":null,"d":null,"v":3}`,
		`{"id":4,"ts":"2020-01-05T00:00:00.000000Z","d":"2020-01-05","v":4}`,
	}
	tabletest.DiffLines(t, "computed", tabletest.ScanLines(t, snap), tabletest.Sorted(want...))
	// A value given must be the expression's.
	bad := tabletest.Batch(t, mem, snap, `[{"id":5,"ts":"2020-01-01T10:00:00Z","d":"2020-01-01","v":5},{"id":6,"ts":"2020-01-01T10:00:00Z","d":"2021-01-01","v":6}]`)
	_, err = writer.Append(ctx, snap, tabletest.Batches(t, bad))
	var ce *writer.ConstraintError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "generated column d (d <=> CAST(ts AS DATE)) violated by row 2 with values: d = DATE '2021-01-01', ts = TIMESTAMP '2020-01-01T10:00:00Z'") {
		t.Errorf("a differing value: %v", err)
	}
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("the refused append moved the table to %d", v)
	}
	// Pruning through the generated partition column.
	for _, tc := range []struct {
		where string
		files int
	}{{"ts > '2020-01-02 12:00:00'", 2}, {"ts < '2020-01-02'", 2}, {"ts = '2020-01-05 00:00:00'", 1}, {"v > 0", 4}} {
		e := mustParse(t, tc.where)
		sc, err := reader.NewScan(snap, reader.WithFilter(e))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range sc.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != tc.files {
			t.Errorf("%s: %d files planned, want %d", tc.where, n, tc.files)
		}
	}
	// UPDATE recomputes d from the new ts; MERGE too.
	if _, err := dml.Update(ctx, snap, mustParse(t, "id = 1"), mustSet(t, "ts = TIMESTAMP '2022-05-05 10:00:00'")); err != nil {
		t.Fatal(err)
	}
	src := tabletest.RecordJSON(t, mem, sc, `[{"id":2,"ts":"2023-03-03T03:00:00Z","v":20},{"id":9,"ts":"2024-04-04T04:00:00Z","v":9}]`)
	if _, err := dml.Merge(ctx, tabletest.Open(t, store), tabletest.Batches(t, src), mustParse(t, "target.id = source.id"), []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		`{"id":1,"ts":"2022-05-05T10:00:00.000000Z","d":"2022-05-05","v":1}`,
		`{"id":2,"ts":"2023-03-03T03:00:00.000000Z","d":"2023-03-03","v":20}`,
		`{"id":3,"ts":null,"d":null,"v":3}`,
		`{"id":4,"ts":"2020-01-05T00:00:00.000000Z","d":"2020-01-05","v":4}`,
		`{"id":9,"ts":"2024-04-04T04:00:00.000000Z","d":"2024-04-04","v":9}`,
	}
	tabletest.DiffLines(t, "after UPDATE and MERGE", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(want...))
	// Setting the generated column to another value is refused.
	before := tabletest.Open(t, store)
	_, err = dml.Update(ctx, before, mustParse(t, "id = 4"), mustSet(t, "d = DATE '1999-01-01'"))
	if !errors.As(err, &ce) || ce.Name != "d" {
		t.Errorf("UPDATE of the generated column: %v", err)
	}
	if v := tabletest.Open(t, store).Version(); v != before.Version() {
		t.Fatalf("the refused UPDATE moved the table to %d", v)
	}
	// An expression lakelog cannot evaluate.
	s, _ := actions.ParseDDL("ts timestamp, y int GENERATED ALWAYS AS (window(ts, '1 hour'))")
	text, _ := actions.SchemaString(s)
	tx, err := deltalog.Create(objstore.NewMem(), "", &actions.Metadata{SchemaString: text})
	if err == nil {
		_, err = tx.Commit(ctx)
	}
	if !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), `generated column "y": lakelog cannot evaluate its expression window(ts, '1 hour')`) {
		t.Errorf("create with year(ts): %v", err)
	}
}
