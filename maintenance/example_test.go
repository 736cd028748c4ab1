package maintenance_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// Auto compaction: a table with delta.autoOptimize.autoCompact=true is
// compacted by the writes themselves once a partition holds enough small
// files (50 by default; 3 here, registered for the process).
func ExampleAutoCompactHook() {
	deltalog.RegisterHook(maintenance.AutoCompactHook(maintenance.AutoCompactMinFiles(3)))
	defer deltalog.RegisterHook(maintenance.AutoCompactHook())
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "autocompact")
	defer os.RemoveAll(dir)
	store, _ := objstore.NewLocal(dir)
	tx, _ := deltalog.Create(store, "", &actions.Metadata{
		SchemaString:  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		Configuration: map[string]string{actions.PropAutoCompact: "true"},
	})
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	for i := range 3 {
		snap, _ := deltalog.Open(ctx, store, "")
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		rec := b.NewRecordBatch()
		res, err := writer.Append(ctx, snap, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
		rec.Release()
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := res.WaitHooks(); err != nil { // the compaction's outcome
			fmt.Println(err)
		}
	}
	snap, _ := deltalog.Open(ctx, store, "")
	hist, _ := deltalog.History(ctx, store, "", 1)
	fmt.Println(snap.NumFiles(), "file;", hist[0].Info.Operation, hist[0].Info.OperationParameters["auto"])
	// Output: 1 file; OPTIMIZE true
}
