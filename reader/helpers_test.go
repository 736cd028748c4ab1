package reader_test

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// newTable creates an empty table "tbl" in store.
func newTable(t *testing.T, store objstore.Store, ddl string, parts ...string) *deltalog.Snapshot {
	t.Helper()
	schema, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(store, "tbl", &actions.Metadata{SchemaString: s, PartitionColumns: parts})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return open(t, store)
}

func open(t *testing.T, store objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "tbl", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// appendJSON appends rows (a JSON array of objects in the table's Arrow
// form) to the table and returns the new snapshot.
func appendJSON(t *testing.T, store objstore.Store, rows string, opts ...writer.Option) *deltalog.Snapshot {
	t.Helper()
	snap := open(t, store)
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	one := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	if _, err := writer.Append(context.Background(), snap, one, opts...); err != nil {
		t.Fatal(err)
	}
	return open(t, store)
}

// collect scans and returns the canonical rows in scan order.
func collect(t *testing.T, sc *reader.Scan) []string {
	t.Helper()
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Schema().Equal(sc.Schema()) {
			t.Fatalf("batch schema %s, want %s", rec.Schema(), sc.Schema())
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	return lines
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func seq(recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func mustScan(t *testing.T, snap *deltalog.Snapshot, opts ...reader.Option) *reader.Scan {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %d: %s\nwant %d: %s", len(got), strings.Join(got, "\n      "), len(want), strings.Join(want, "\n      "))
	}
}
