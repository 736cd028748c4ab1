package dml_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
)

// TestReplaceWhereColumnMapped: replaceWhere on column-mapped tables,
// by a partition predicate (files matched by their physical-name
// partition values) and by a data predicate (touched files rewritten).
func TestReplaceWhereColumnMapped(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			createTable(t, store, "id long, p string, v long", map[string]string{"delta.columnMapping.mode": mode}, "p")
			appendRows(t, store, `[{"id":1,"p":"a","v":10},{"id":2,"p":"b","v":20}]`)
			snap := appendRows(t, store, `[{"id":3,"p":"a","v":30},{"id":4,"p":"b","v":40}]`)
			if _, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "p = 'a'"), one(t, tableRows(t, snap, `[{"id":5,"p":"a","v":50}]`))); err != nil {
				t.Fatal(err)
			}
			snap = openTable(t, store)
			diffLines(t, "partition replaceWhere", scanLines(t, snap), sortedLines(
				`{"id":2,"p":"b","v":20}`, `{"id":4,"p":"b","v":40}`, `{"id":5,"p":"a","v":50}`))
			if _, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "v > 30"), one(t, tableRows(t, snap, `[{"id":6,"p":"c","v":60}]`))); err != nil {
				t.Fatal(err)
			}
			diffLines(t, "data replaceWhere", scanLines(t, openTable(t, store)), sortedLines(
				`{"id":2,"p":"b","v":20}`, `{"id":6,"p":"c","v":60}`))
		})
	}
}
