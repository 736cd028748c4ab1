package lakelog_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Example is the README's "Go in ten lines" (TestReadmeSnippet keeps the
// two the same): create a partitioned table, append, delete, upsert with
// MERGE, read with a filter.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "orders")
	check(err)
	defer os.RemoveAll(dir)
	// README begin
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "country", Type: arrow.BinaryTypes.String}}, nil)
	t, err := lakelog.Create(ctx, dir, schema, lakelog.PartitionBy("country")) // or s3://bucket/orders, gs://..., az://...
	check(err)
	batch, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[{"id":1,"country":"nl"},{"id":2,"country":"de"}]`))
	check(err)
	res, err := t.Append(ctx, batch) // version 1
	check(err)
	res, err = t.Delete(ctx, expr.Col("country").Eq("de")) // version 2; res.Metrics["numDeletedRows"] is 1
	check(err)
	res, err = t.Merge(batch).On(expr.Col("t", "id").Eq(expr.Col("s", "id"))).
		WhenMatchedUpdateAll(nil).WhenNotMatchedInsertAll(nil).Execute(ctx) // an upsert: version 3
	check(err)
	for rec, err := range t.Records(ctx, reader.WithFilter(expr.Col("country").Eq("de"))) { // only country=de's files are read
		check(err)
		fmt.Println(res.Version, rec.NumRows(), res.Metrics["numTargetRowsInserted"])
	}
	// README end

	// Output: 3 1 1
}
