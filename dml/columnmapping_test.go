package dml_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestReplaceWhereColumnMapped: replaceWhere on column-mapped tables,
// by a partition predicate (files matched by their physical-name
// partition values) and by a data predicate (touched files rewritten).
func TestReplaceWhereColumnMapped(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			tabletest.Create(t, store, "id long, p string, v long", map[string]string{"delta.columnMapping.mode": mode}, "p")
			tabletest.AppendTo(t, store, `[{"id":1,"p":"a","v":10},{"id":2,"p":"b","v":20}]`)
			snap := tabletest.AppendTo(t, store, `[{"id":3,"p":"a","v":30},{"id":4,"p":"b","v":40}]`)
			if _, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "p = 'a'"), tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":5,"p":"a","v":50}]`))); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)
			tabletest.DiffLines(t, "partition replaceWhere", tabletest.ScanLines(t, snap), tabletest.Sorted(
				`{"id":2,"p":"b","v":20}`, `{"id":4,"p":"b","v":40}`, `{"id":5,"p":"a","v":50}`))
			if _, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "v > 30"), tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":6,"p":"c","v":60}]`))); err != nil {
				t.Fatal(err)
			}
			tabletest.DiffLines(t, "data replaceWhere", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(
				`{"id":2,"p":"b","v":20}`, `{"id":6,"p":"c","v":60}`))
		})
	}
}
