// Command partitioned creates a table partitioned by day, appends a
// day's orders at a time and reads one day back with a filter: only that
// day's files are read.
//
//	go run ./examples/partitioned /tmp/orders   # or s3://bucket/orders
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

var orders = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
}, nil)

func run(ctx context.Context, uri string, out io.Writer) error {
	t, err := lakelog.Create(ctx, uri, orders, lakelog.PartitionBy("day"))
	if err != nil {
		return err
	}
	for day := range 3 {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, orders, strings.NewReader(fmt.Sprintf(
			`[{"id":%d,"day":"2026-12-0%d","amount":"9.99"},{"id":%d,"day":"2026-12-0%d","amount":null}]`, 2*day, day+1, 2*day+1, day+1)))
		if err != nil {
			return err
		}
		res, err := t.Append(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "version %d: %d rows\n", res.Version, res.Metrics["numOutputRows"])
	}
	day := actions.DateOf(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	scan, err := t.Scan(reader.WithFilter(expr.Col("day").Eq(day)))
	if err != nil {
		return err
	}
	for rec, err := range scan.Records(ctx) {
		if err != nil {
			return err
		}
		for i := range int(rec.NumRows()) {
			row, err := reader.AppendJSONRow(nil, rec, i)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s\n", row)
		}
	}
	m := scan.Metrics()
	fmt.Fprintf(out, "files read: %d of %d\n", m.FilesRead, m.FilesConsidered)
	return nil
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: partitioned TABLE_URI")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout); err != nil {
		log.Fatal(err)
	}
}
