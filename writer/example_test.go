package writer_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// Append a batch to a new partitioned table and look at what the commit
// recorded.
func ExampleAppend() {
	ctx := context.Background()
	store := objstore.NewMem()

	// Create the table (version 0).
	schema, _ := actions.ParseDDL("id long not null, city string, amount decimal(10,2)")
	schemaString, _ := actions.SchemaString(schema)
	tx, _ := deltalog.Create(store, "sales", &actions.Metadata{SchemaString: schemaString, PartitionColumns: []string{"city"}})
	if _, err := tx.Commit(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// Input: Arrow record batches whose columns match the table by name.
	input := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32}, // widened to long
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	}, nil)
	rec, _, _ := array.RecordFromJSON(memory.DefaultAllocator, input, strings.NewReader(
		`[{"id": 1, "city": "Paris", "amount": "9.99"}, {"id": 2, "city": "Oslo", "amount": null}, {"id": 3, "city": "Paris", "amount": "1.00"}]`))
	defer rec.Release()
	batches := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }

	snap, _ := deltalog.Open(ctx, store, "sales")
	res, err := writer.Append(ctx, snap, batches)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("committed version", res.Version)

	snap, _ = deltalog.Open(ctx, store, "sales")
	for f := range snap.Files() {
		st, _ := actions.ParseStats(f.Stats)
		name := f.Path[:strings.Index(f.Path, "part-")+len("part-00000")] // then -<uuid>-c000.snappy.parquet
		fmt.Printf("%s... city=%s rows=%d\n", name, *f.PartitionValues["city"], st.NumRecords)
	}
	// Output:
	// committed version 1
	// city=Oslo/part-00001... city=Oslo rows=1
	// city=Paris/part-00000... city=Paris rows=2
}
