package dml_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// Replace the rows with amount >= 100 by new ones: the matching rows of
// the files that may hold them are deleted, the others in those files are
// written again, and the new rows are added, in one commit.
func ExampleReplaceWhere() {
	ctx := context.Background()
	store := objstore.NewMem()
	schema, _ := actions.ParseDDL("id long not null, amount long")
	schemaString, _ := actions.SchemaString(schema)
	tx, _ := deltalog.Create(store, "t", &actions.Metadata{SchemaString: schemaString})
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	arrowSchema, _ := actions.ToArrowSchema(schema, false, "")
	batch := func(rows string) func(func(arrow.RecordBatch, error) bool) {
		rec, _, _ := array.RecordFromJSON(memory.DefaultAllocator, arrowSchema, strings.NewReader(rows))
		return func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	}
	snap, _ := deltalog.Open(ctx, store, "t")
	if _, err := writer.Append(ctx, snap, batch(`[{"id": 1, "amount": 50}, {"id": 2, "amount": 150}, {"id": 3, "amount": 300}]`)); err != nil {
		fmt.Println(err)
		return
	}

	snap, _ = deltalog.Open(ctx, store, "t")
	pred, _ := expr.Parse("amount >= 100")
	res, err := dml.ReplaceWhere(ctx, snap, pred, batch(`[{"id": 4, "amount": 999}]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, _ = res.Snapshot()
	sc, _ := reader.NewScan(snap)
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		rows, _ := reader.CanonicalRows(rec)
		for _, r := range rows {
			fmt.Println(string(r))
		}
	}
	// Unordered output:
	// {"id":1,"amount":50}
	// {"id":4,"amount":999}
}
