package expr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

func benchBatch(b *testing.B, n int) arrow.RecordBatch {
	b.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "m", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for i := 0; i < n; i++ {
		if i%17 == 0 {
			for j := range 5 {
				rb.Field(j).AppendNull()
			}
			continue
		}
		rb.Field(0).(*array.Int64Builder).Append(int64(r.IntN(1000)))
		rb.Field(1).(*array.StringBuilder).Append(words[r.IntN(len(words))])
		rb.Field(2).(*array.Float64Builder).Append(r.Float64() * 100)
		rb.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(100000))))
		rb.Field(4).(*array.Date32Builder).Append(arrow.Date32(20000 + r.IntN(1000)))
	}
	return rb.NewRecordBatch()
}

func BenchmarkEvalPredicate(b *testing.B) {
	const rows = 1 << 16
	rec := benchBatch(b, rows)
	defer rec.Release()
	schema, _ := actions.FromArrowSchema(rec.Schema())
	mem := memory.NewGoAllocator()
	for _, src := range []string{
		"n > 500",
		"s = 'gamma'",
		"s IN ('alpha', 'beta', 'gamma', 'a', 'b', 'c', 'd', 'e', 'f', 'g')",
		"x < 50.5",
		"m >= 250.00",
		"d >= '2026-01-01'",
		"n > 500 AND s <> 'beta' OR x IS NULL",
		"s LIKE 'ga%'",
		"n * 2 + 1 > 700",
	} {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		bound, err := BindPredicate(e, schema)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(rows)
			for b.Loop() {
				out, err := EvalPredicate(bound, rec, mem)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}

func BenchmarkMayMatch(b *testing.B) {
	st, err := actions.ParseStats(baseStats)
	if err != nil {
		b.Fatal(err)
	}
	pv := map[string]*string{"p": strp("a"), "year": strp("2026"), "day": strp("2026-03-01")}
	for _, src := range []string{"n = 25", "p = 'b' OR s > 'zebra'", "year = 2026 AND ts >= '2026-03-02' AND m < 5"} {
		pr, err := NewPruner(mustParseB(b, src), tableOf(pruneSchema, prunePartitions, "none"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pr.MayMatch(pv, st)
			}
		})
	}
}

func mustParseB(b *testing.B, s string) Expr {
	e, err := Parse(s)
	if err != nil {
		b.Fatal(fmt.Sprint(err))
	}
	return e
}
