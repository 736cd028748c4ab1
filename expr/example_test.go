package expr_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

func Example() {
	schema := &actions.StructType{Fields: []*actions.StructField{
		{Name: "country", Type: actions.TypeString, Nullable: true},
		{Name: "day", Type: actions.TypeDate, Nullable: true},
		{Name: "amount", Type: &actions.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	}}

	// Parse and bind: the string literal meets a date column and becomes
	// a date, the integer meets a decimal column and becomes a decimal.
	e, err := expr.Parse("country IN ('NL', 'BE') AND day >= '2026-03-01' AND amount > 100")
	if err != nil {
		panic(err)
	}
	bound, err := expr.Bind(e, schema)
	if err != nil {
		panic(err)
	}
	fmt.Println(bound)

	// Errors point at the offending token.
	_, err = expr.Parse("country = 'NL' AND (amount > 3")
	fmt.Println(err)

	// Evaluate on a batch.
	mem := memory.NewGoAllocator()
	as, _ := actions.ToArrowSchema(schema, false, "")
	b := array.NewRecordBuilder(mem, as)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"NL", "BE", "DE"}, nil)
	b.Field(1).(*array.Date32Builder).AppendValues([]arrow.Date32{20513, 20500, 20513}, nil)
	amounts := b.Field(2).(*array.Decimal128Builder)
	for _, s := range []string{"150.00", "500.00", "99.99"} {
		d, _ := actions.ParseDecimal(s, 10, 2)
		amounts.Append(decimal128.FromBigInt(d.Unscaled))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	keep, err := expr.EvalPredicate(bound, rec, mem)
	if err != nil {
		panic(err)
	}
	defer keep.Release()
	fmt.Println(keep)

	// Prune a file of the table partitioned by country, from its
	// partition values and stats. A table's configuration comes from its
	// snapshot (deltalog.Snapshot.Config); here it is built by hand.
	text, _ := actions.SchemaString(schema)
	table, err := actions.NewTableConfig(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		&actions.Metadata{SchemaString: text, PartitionColumns: []string{"country"}})
	if err != nil {
		panic(err)
	}
	pruner, err := expr.NewPruner(e, table)
	if err != nil {
		panic(err)
	}
	stats, _ := actions.ParseStats(`{"numRecords":10,"minValues":{"day":"2026-01-01","amount":1.00},"maxValues":{"day":"2026-02-28","amount":900.00},"nullCount":{"day":0,"amount":0}}`)
	nl := "NL"
	fmt.Println(pruner.MayMatch(map[string]*string{"country": &nl}, stats))
	fmt.Println(pruner.MayMatch(map[string]*string{"country": &nl}, nil))

	// Output:
	// country IN ('NL', 'BE') AND day >= DATE '2026-03-01' AND amount > 100.00
	// expr: at column 31: expected ')' but found end of input
	// [true false false]
	// false
	// true
}

// Spark's functions evaluate as Spark does, here in a session time zone.
func Example_functions() {
	e, _ := expr.Parse(`concat_ws(' ', upper(name), date_format(ts, 'yyyy-MM-dd HH:mm'), CAST(size(split(tags, ',')) AS STRING))`)
	e, _ = expr.WithTimeZone(e, "America/Los_Angeles")
	schema, _ := actions.ParseDDL("name string, ts timestamp, tags string")
	b, _ := expr.Bind(e, schema)
	v, err := expr.EvalRow(b, func(col string) (any, bool) {
		return map[string]any{"name": "ann", "ts": actions.Timestamp(1_709_865_000_000_000), "tags": "a,b,c"}[col], true
	})
	fmt.Println(v, err)
	// Output: ANN 2024-03-07 18:30 3 <nil>
}
