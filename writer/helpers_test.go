package writer_test

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
)

// checkedMem returns an allocator that fails the test when something it
// allocated is not released by the end.
func checkedMem(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// createTable creates an empty table at "tbl" in store with the schema
// (DDL, or the JSON form when it starts with '{') and partition columns,
// and returns its snapshot.
func createTable(t *testing.T, store objstore.Store, ddl string, props map[string]string, parts ...string) *deltalog.Snapshot {
	t.Helper()
	ctx := context.Background()
	var schema *actions.StructType
	var err error
	if strings.HasPrefix(ddl, "{") {
		schema, err = actions.ParseSchema(ddl)
	} else {
		schema, err = actions.ParseDDL(ddl)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	md := &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props}
	tx, err := deltalog.Create(store, "tbl", md)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return openTable(t, store)
}

func openTable(t *testing.T, store objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "tbl", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// recordJSON builds a batch of the given Arrow schema from a JSON array of
// row objects.
func recordJSON(t *testing.T, mem memory.Allocator, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("record from JSON: %v", err)
	}
	return rec
}

// tableBatch builds a batch of the table's own logical schema.
func tableBatch(t *testing.T, mem memory.Allocator, snap *deltalog.Snapshot, rows string) arrow.RecordBatch {
	t.Helper()
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	return recordJSON(t, mem, sc, rows)
}

// batches yields recs and releases them after the write consumed them.
func batches(t *testing.T, recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// scanLines reads the table with the options and returns the canonical
// rows, sorted.
func scanLines(t *testing.T, snap *deltalog.Snapshot, opts ...reader.Option) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines
}

func sortedLines(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("rows differ:\n got: %d rows\n%s\nwant: %d rows\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
}
