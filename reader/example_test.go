package reader_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// Scan a table with a filter and a projection, and print the rows in the
// canonical encoding.
func ExampleScan() {
	ctx := context.Background()
	store := objstore.NewMem()

	// A small partitioned table, written by the writer package.
	schema, _ := actions.ParseDDL("id long, city string, amount double")
	schemaString, _ := actions.SchemaString(schema)
	sc, _ := actions.ToArrowSchema(schema, false, "")
	rec, _, _ := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(
		`[{"id": 1, "city": "Paris", "amount": 9.5}, {"id": 2, "city": "Oslo", "amount": 20}, {"id": 3, "city": "Paris", "amount": 31}]`))
	defer rec.Release()
	md := &actions.Metadata{SchemaString: schemaString, PartitionColumns: []string{"city"}}
	if _, err := writer.CreateTable(ctx, store, "sales", md, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }); err != nil {
		fmt.Println(err)
		return
	}

	snap, err := deltalog.Open(ctx, store, "sales")
	if err != nil {
		fmt.Println(err)
		return
	}
	filter, _ := expr.Parse("city = 'Paris' AND amount > 10")
	scan, err := reader.NewScan(snap, reader.WithFilter(filter), reader.WithColumns("id", "amount"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for batch, err := range scan.Records(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		rows, _ := reader.CanonicalRows(batch)
		for _, r := range rows {
			fmt.Println(string(r))
		}
	}
	m := scan.Metrics()
	fmt.Printf("files: %d considered, %d pruned by partition, %d read\n", m.FilesConsidered, m.FilesPrunedByPartition, m.FilesRead)
	// Output:
	// {"id":3,"amount":31}
	// files: 2 considered, 1 pruned by partition, 1 read
}
