package expr

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// Shared test fixtures: rows of Go values, batches built from them, and
// value comparison.

func strp(s string) *string { return &s }

func dec(unscaled int64, scale int) actions.Decimal { return actions.NewDecimal(unscaled, scale) }

// sampleRows are rows for fuzzSchema with nulls, NaN and extremes.
func sampleRows() []map[string]any {
	return []map[string]any{
		{"a": "x", "s": "apple", "n": int64(1), "i": int32(2), "x": 1.5, "f": float32(0.5), "d": actions.Date(20500),
			"ts": actions.Timestamp(1_771_000_000_000_000), "b": []byte{0, 1}, "flag": true, "m": dec(150, 2)},
		{"a": "y", "s": "banana", "n": int64(-7), "i": int32(0), "x": math.NaN(), "f": float32(math.Inf(1)), "d": actions.Date(0),
			"ts": actions.Timestamp(0), "b": []byte{}, "flag": false, "m": dec(-99999, 2)},
		{"a": nil, "s": nil, "n": nil, "i": nil, "x": nil, "f": nil, "d": nil, "ts": nil, "b": nil, "flag": nil, "m": nil},
		{"a": "", "s": "Åland", "n": int64(math.MaxInt64), "i": int32(math.MinInt32), "x": -0.0, "f": float32(-1), "d": actions.Date(-1),
			"ts": actions.Timestamp(-1), "b": []byte{0xff}, "flag": true, "m": dec(0, 2)},
		{"a": "x", "s": "a%b_c", "n": int64(3), "i": int32(3), "x": math.Inf(-1), "f": float32(math.NaN()), "d": actions.Date(20515),
			"ts": actions.Timestamp(1_772_323_200_000_000), "b": []byte("apple"), "flag": nil, "m": dec(99999999, 2)},
	}
}

func rowFunc(row map[string]any) func(string) (any, bool) {
	return func(col string) (any, bool) {
		v, ok := row[col]
		return v, ok
	}
}

// buildBatch builds a record batch of schema's Arrow form from rows.
func buildBatch(t testing.TB, mem memory.Allocator, schema *actions.StructType, rows []map[string]any) arrow.RecordBatch {
	t.Helper()
	as, err := actions.ToArrowSchema(schema, false, "")
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(mem, as)
	defer b.Release()
	for _, row := range rows {
		for i, f := range schema.Fields {
			if err := appendValue(b.Field(i), row[f.Name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.NewRecordBatch()
}

// sameValue compares Go values as SQL would group them: NaN equals NaN,
// decimals by value, byte slices by content.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || x != x && y != y)
	case float32:
		y, ok := b.(float32)
		return ok && (x == y && math.Signbit(float64(x)) == math.Signbit(float64(y)) || x != x && y != y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case actions.Decimal:
		y, ok := b.(actions.Decimal)
		return ok && x.Cmp(y) == 0
	}
	return a == b
}

// sampleStats are stats for fuzzSchema.
func sampleStats() *actions.Stats {
	st, err := actions.ParseStats(`{"numRecords":5,
		"minValues":{"s":"apple","n":-7,"i":-2147483648,"x":-1.5,"f":-1,"d":"1969-12-31","ts":"1969-12-31T23:59:59.999Z","m":-999.99},
		"maxValues":{"s":"banana","n":9223372036854775807,"i":3,"x":1.5,"f":0.5,"d":"2026-03-03","ts":"2026-03-01T00:00:00.000Z","m":999999.99},
		"nullCount":{"s":1,"n":1,"i":1,"x":1,"f":1,"d":1,"ts":1,"m":1,"flag":2}}`)
	if err != nil {
		panic(err)
	}
	return st
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
