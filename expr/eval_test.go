package expr

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// column is one column of a hand-built test batch.
type column struct {
	name string
	arr  arrow.Array
}

// batchOf makes a record batch of the given columns (taking ownership).
func batchOf(t *testing.T, cols ...column) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arr.DataType(), Nullable: true}
		arrs[i] = c.arr
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// build makes an array with a builder of type dt; nil values are nulls.
func build(mem memory.Allocator, dt arrow.DataType, vals ...any) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(int8(v.(int)))
		case *array.Int16Builder:
			b.Append(int16(v.(int)))
		case *array.Int32Builder:
			b.Append(int32(v.(int)))
		case *array.Int64Builder:
			b.Append(int64(v.(int)))
		case *array.Uint8Builder:
			b.Append(uint8(v.(int)))
		case *array.Uint64Builder:
			b.Append(uint64(v.(int)))
		case *array.Float16Builder:
			b.Append(float16.New(float32(v.(float64))))
		case *array.Float32Builder:
			b.Append(float32(v.(float64)))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.LargeStringBuilder:
			b.Append(v.(string))
		case *array.StringViewBuilder:
			b.Append(v.(string))
		case *array.BinaryBuilder:
			b.Append([]byte(v.(string)))
		case *array.BinaryViewBuilder:
			b.Append([]byte(v.(string)))
		case *array.FixedSizeBinaryBuilder:
			b.Append([]byte(v.(string)))
		case *array.Date32Builder:
			d, err := actions.ParseDate(v.(string))
			if err != nil {
				panic(err)
			}
			b.Append(arrow.Date32(d))
		case *array.Date64Builder:
			d, err := actions.ParseDate(v.(string))
			if err != nil {
				panic(err)
			}
			b.Append(arrow.Date64(int64(d) * 86_400_000))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(int)))
		case *array.Decimal128Builder:
			d, err := actions.ParseDecimal(v.(string), 38, int(b.Type().(*arrow.Decimal128Type).Scale))
			if err != nil {
				panic(err)
			}
			b.Append(decimal128.FromBigInt(d.Unscaled))
		case *array.Decimal64Builder:
			d, err := actions.ParseDecimal(v.(string), 18, int(b.Type().(*arrow.Decimal64Type).Scale))
			if err != nil {
				panic(err)
			}
			b.Append(decimal.Decimal64(d.Unscaled.Int64()))
		default:
			panic(fmt.Sprintf("build: %T", b))
		}
	}
	return b.NewArray()
}

// boolsOf renders a boolean result as "T F N" for comparison.
func boolsOf(a *array.Boolean) string {
	var parts []string
	for i := 0; i < a.Len(); i++ {
		switch {
		case a.IsNull(i):
			parts = append(parts, "N")
		case a.Value(i):
			parts = append(parts, "T")
		default:
			parts = append(parts, "F")
		}
	}
	return strings.Join(parts, " ")
}

type predCase struct{ pred, want string }

func checkPredicates(t *testing.T, mem *memory.CheckedAllocator, rec arrow.RecordBatch, cases []predCase) {
	t.Helper()
	for _, tc := range cases {
		e, err := Parse(tc.pred)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.pred, err)
		}
		got, err := EvalPredicate(e, rec, mem)
		if err != nil {
			t.Errorf("%s: %v", tc.pred, err)
			continue
		}
		if s := boolsOf(got); s != tc.want {
			t.Errorf("%s = %s, want %s", tc.pred, s, tc.want)
		}
		if got.Len() != int(rec.NumRows()) {
			t.Errorf("%s: %d values for %d rows", tc.pred, got.Len(), rec.NumRows())
		}
		got.Release()
	}
}

func newMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func TestEvalIntegers(t *testing.T) {
	mem := newMem(t)
	rec := batchOf(t,
		column{"b", build(mem, arrow.PrimitiveTypes.Int8, -128, 0, nil, 127)},
		column{"s", build(mem, arrow.PrimitiveTypes.Int16, -1, 0, 5, nil)},
		column{"i", build(mem, arrow.PrimitiveTypes.Int32, 1, 2, 3, 4)},
		column{"n", build(mem, arrow.PrimitiveTypes.Int64, math.MinInt64, 0, nil, math.MaxInt64)},
		column{"u", build(mem, arrow.PrimitiveTypes.Uint8, 0, 200, 255, nil)},
	)
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{
		{"b > 0", "F F N T"},
		{"b = -128", "T F N F"},
		{"b < 1000", "T T N T"},
		{"s <= 0", "T T F N"},
		{"i <> 2", "T F T T"},
		{"i >= 3", "F F T T"},
		{"n < 0", "T F N F"},
		{"n = 9223372036854775807", "F F N T"},
		{"u > 199", "F T T N"},
		{"i = s", "F F F N"},
		{"i > b", "T T N F"},
		{"i IN (1, 4)", "T F F T"},
		{"i NOT IN (1, 4)", "F T T F"},
		{"i IN (1, NULL)", "T N N N"},
		{"i NOT IN (1, NULL)", "F N N N"},
		{"i IN (1,2,3,5,6,7,8,9,10,11)", "T T T F"},
		{"i IN (1,2,5,6,7,8,9,10,11,NULL)", "T T N N"},
		{"i NOT IN (1,2,5,6,7,8,9,10,11,NULL)", "F F N N"},
		{"s IN (0,1,2,3,4,5,6,7,8,9,10)", "F T T N"},
		{"i BETWEEN 2 AND 3", "F T T F"},
		{"i > 2.5", "F F T T"},
		{"i + 1 > 3", "F F T T"},
		{"i % 2 = 0", "F T F T"},
		{"i / 2 >= 1.5", "F F T T"},
		{"-i < -2", "F F T T"},
		{"b IS NULL", "F F T F"},
		{"n IS NOT NULL", "T T F T"},
		{"n <=> NULL", "F F T F"},
		{"b <=> s", "F T F F"},
		{"I > 2", "F F T T"},
	})
}

func TestEvalFloats(t *testing.T) {
	mem := newMem(t)
	nan := math.NaN()
	rec := batchOf(t,
		column{"x", build(mem, arrow.PrimitiveTypes.Float64, -1.5, 0.0, nan, math.Inf(1), nil, math.Copysign(0, -1))},
		column{"f", build(mem, arrow.PrimitiveTypes.Float32, 1.1, nan, 2.0, -3.0, 0.0, nil)},
		column{"h", build(mem, arrow.FixedWidthTypes.Float16, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)},
	)
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{
		{"x > 0", "F F T T N F"},
		{"x = 0", "F T F F N T"},
		{"x = CAST('NaN' AS double)", "F F T F N F"},
		{"x = 'NaN'", "F F T F N F"},
		{"x > CAST('Infinity' AS double)", "F F T F N F"},
		{"x < CAST('NaN' AS double)", "T T F T N T"},
		{"x <> x", "F F F F N F"},
		{"x IN (0, CAST('NaN' AS double))", "F T T F N T"},
		{"f = 1.1", "T F F F F N"},
		{"f > 1.5", "F T T F F N"},
		{"f = f", "T T T T T N"},
		{"h >= 3", "F F T T T T"},
		{"x + 1 > 0", "F T T T N T"},
		{"x * 2 = -3", "T F F F N F"},
		{"f > x", "T T F F N N"},
	})
}

func TestEvalDecimals(t *testing.T) {
	mem := newMem(t)
	m := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	rec := batchOf(t,
		column{"m", build(mem, m, "1.50", "-2.25", nil, "99999999.99", "0.00")},
		column{"m4", build(mem, &arrow.Decimal128Type{Precision: 12, Scale: 4}, "1.5000", "-2.2501", "1", nil, "0.0001")},
		column{"m64", build(mem, &arrow.Decimal64Type{Precision: 10, Scale: 2}, "1.50", "2", "3", "4", "5")},
	)
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{
		{"m = 1.5", "T F N F F"},
		{"m = '1.50'", "T F N F F"},
		{"m > 1", "T F N T F"},
		{"m < 1.505", "T T N F T"},
		{"m >= -2.25", "T T N T T"},
		{"m = m4", "T F N N F"},
		{"m > m4", "F T N N F"},
		{"m < m4", "F F N N T"},
		{"m IN (1.5, 0)", "T F N F T"},
		{"m IN (1,2,3,4,5,6,7,8,9,1.5)", "T F N F F"},
		{"m + 1 = 2.5", "T F N F F"},
		{"m * 2 = 3", "T F N F F"},
		{"m / 3 > 0.4", "T F N T F"},
		{"m - m4 = 0", "T F N N F"},
		{"m64 = 1.5", "T F F F F"},
		{"m > 1.0D", "T F N T F"},
	})
}

func TestEvalStringsAndBinaries(t *testing.T) {
	mem := newMem(t)
	vals := []any{"apple", "", nil, "Åland", "banana", "a%b"}
	dict := func() arrow.Array {
		b := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String})
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else if err := b.(*array.BinaryDictionaryBuilder).AppendString(v.(string)); err != nil {
				t.Fatal(err)
			}
		}
		return b.NewArray()
	}()
	rec := batchOf(t,
		column{"s", build(mem, arrow.BinaryTypes.String, vals...)},
		column{"ls", build(mem, arrow.BinaryTypes.LargeString, vals...)},
		column{"vs", build(mem, arrow.BinaryTypes.StringView, vals...)},
		column{"ds", dict},
		column{"b", build(mem, arrow.BinaryTypes.Binary, vals...)},
		column{"vb", build(mem, arrow.BinaryTypes.BinaryView, vals...)},
		column{"fb", build(mem, &arrow.FixedSizeBinaryType{ByteWidth: 1}, "a", "b", "c", nil, "e", "f")},
	)
	defer rec.Release()
	var cases []predCase
	for _, c := range []string{"s", "ls", "vs", "ds"} {
		cases = append(cases,
			predCase{c + " = 'apple'", "T F N F F F"},
			predCase{c + " <> ''", "T F N T T T"},
			predCase{c + " < 'b'", "T T N F F T"},
			predCase{c + " > 'Z'", "T F N T T T"},
			predCase{c + " >= 'banana'", "F F N T T F"},
			predCase{c + " IN ('', 'banana')", "F T N F T F"},
			predCase{c + " IN ('1','2','3','4','5','6','7','8','apple','Åland')", "T F N T F F"},
			predCase{c + " LIKE 'a%'", "T F N F F T"},
			predCase{c + " LIKE '%an%'", "F F N T T F"},
			predCase{c + " LIKE '_land'", "F F N T F F"},
			predCase{c + " NOT LIKE 'a\\%b'", "T T N T T F"},
			predCase{c + " LIKE ''", "F T N F F F"},
			predCase{c + " = s", "T T N T T T"},
			predCase{c + " IS NULL", "F F T F F F"},
		)
	}
	for _, c := range []string{"b", "vb"} {
		cases = append(cases,
			predCase{c + " = X'6170706C65'", "T F N F F F"},
			predCase{c + " = 'apple'", "T F N F F F"},
			predCase{c + " < X'62'", "T T N F F T"},
		)
	}
	cases = append(cases, predCase{"fb > X'62'", "F F T N T T"})
	checkPredicates(t, mem, rec, cases)
}

func TestEvalDatesAndTimestamps(t *testing.T) {
	mem := newMem(t)
	ts := func(s string) int {
		v, err := actions.ParseTimestamp(s)
		if err != nil {
			panic(err)
		}
		return int(v)
	}
	us := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	rec := batchOf(t,
		column{"d", build(mem, arrow.FixedWidthTypes.Date32, "2026-02-28", "2026-03-01", nil, "1969-12-31")},
		column{"d64", build(mem, arrow.FixedWidthTypes.Date64, "2026-02-28", "2026-03-01", "2026-03-02", "1969-12-31")},
		column{"ts", build(mem, us, ts("2026-03-01 00:00:00"), ts("2026-02-28 23:59:59.999999"), nil, ts("1969-12-31 23:59:59.5"))},
		column{"tsns", build(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"},
			ts("2026-03-01 00:00:00")*1000, ts("2026-02-28 23:59:59.999999")*1000+999, 0, -1)},
		column{"tsms", build(mem, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "+02:00"}, 1000, 0, -1, nil)},
		column{"tss", build(mem, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, 1, 0, -1, nil)},
		column{"ntz", build(mem, &arrow.TimestampType{Unit: arrow.Microsecond}, ts("2026-03-01 10:00:00"), 0, nil, 1)},
	)
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{
		{"d >= '2026-03-01'", "F T N F"},
		{"d = DATE '2026-02-28'", "T F N F"},
		{"d < '1970-01-01'", "F F N T"},
		{"d64 >= '2026-03-01'", "F T T F"},
		{"d64 = d", "T T N T"},
		{"d < '2026-02-28 12:00:00'", "T F N T"},
		{"d + 1 = DATE '2026-03-01'", "T F N F"},
		{"d - 1 < '2026-02-28'", "T F N T"},
		{"d IN ('2026-03-01', '1969-12-31')", "F T N T"},
		{"ts >= '2026-03-01'", "T F N F"},
		{"ts < '2026-03-01T01:00:00+01:00'", "F T N T"},
		{"ts > TIMESTAMP '2026-02-28 23:59:59.999998'", "T T N F"},
		{"ts = d", "F F N F"},
		{"ts = d + 1", "T F N F"},
		{"ts < '1970-01-01'", "F F N T"},
		{"tsns = ts", "T T N F"},
		{"tsns > '2026-02-28 23:59:59.999999'", "T F F F"},
		{"tsns < '1970-01-01'", "F F F T"},
		{"tsms > '1970-01-01'", "T F F N"},
		{"tss = '1970-01-01 00:00:01'", "T F F N"},
		{"tss < '1970-01-01'", "F F T N"},
		{"ntz = '2026-03-01 10:00:00'", "T F N F"},
		{"ntz = ts", "F F N F"},
		{"ntz < ts", "F T N F"},
	})
}

func TestEvalBooleansAndNulls(t *testing.T) {
	mem := newMem(t)
	rec := batchOf(t,
		column{"p", build(mem, arrow.FixedWidthTypes.Boolean, true, true, true, false, false, false, nil, nil, nil)},
		column{"q", build(mem, arrow.FixedWidthTypes.Boolean, true, false, nil, true, false, nil, true, false, nil)},
		column{"z", array.NewNull(9)},
	)
	defer rec.Release()
	// An all-null Arrow column has no Delta type of its own: bind first.
	zs := &actions.StructType{Fields: []*actions.StructField{{Name: "z", Type: actions.TypeLong, Nullable: true}}}
	for _, src := range []string{"z IS NULL", "z = 1 OR z IS NULL"} {
		b, err := Bind(mustParse(t, src), zs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EvalPredicate(b, rec, mem)
		if err != nil {
			t.Fatal(err)
		}
		if s := boolsOf(got); s != "T T T T T T T T T" {
			t.Errorf("%s = %s", src, s)
		}
		got.Release()
	}
	checkPredicates(t, mem, rec, []predCase{
		{"p", "T T T F F F N N N"},
		{"p AND q", "T F N F F F N F N"},
		{"p OR q", "T T T T F N T N N"},
		{"NOT p", "F F F T T T N N N"},
		{"NOT (p AND q)", "F T N T T T N T N"},
		{"p = q", "T F N F T N N N N"},
		{"p <> q", "F T N T F N N N N"},
		{"p > q", "F T N F F N N N N"},
		{"p <=> q", "T F F F T F F F T"},
		{"p = TRUE", "T T T F F F N N N"},
		{"p IS NULL", "F F F F F F T T T"},
		{"(p AND q) IS NULL", "F F T F F F T F T"},
		{"p AND NULL", "N N N F F F N N N"},
		{"p OR NULL", "T T T N N N N N N"},
		{"TRUE", "T T T T T T T T T"},
		{"NULL", "N N N N N N N N N"},
		{"1 = 1 AND p", "T T T F F F N N N"},
		{"p = (q = TRUE)", "T F N F T N N N N"},
	})
}

func TestEvalNestedColumns(t *testing.T) {
	mem := newMem(t)
	// Rows: {1, {a}}, {2, null}, null (with child values 3 and {c}
	// underneath, which must read as null), {null, {null}}, {5, {e}}.
	withNulls := func(cols []arrow.Array, names []string, valid ...bool) arrow.Array {
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(1)
		nulls := 0
		for i, v := range valid {
			if v {
				buf.Bytes()[0] |= 1 << i
			} else {
				nulls++
			}
		}
		st, err := array.NewStructArrayWithNulls(cols, names, buf, nulls, 0)
		if err != nil {
			t.Fatal(err)
		}
		buf.Release()
		for _, c := range cols {
			c.Release()
		}
		return st
	}
	inner := withNulls([]arrow.Array{build(mem, arrow.BinaryTypes.String, "a", nil, "c", nil, "e")}, []string{"z"},
		true, false, true, true, true)
	outer := withNulls([]arrow.Array{build(mem, arrow.PrimitiveTypes.Int32, 1, 2, 3, nil, 5), inner}, []string{"x", "Inner"},
		true, true, false, true, true)
	rec := batchOf(t, column{"s", outer})
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{
		{"s.x > 1", "F T N N T"},
		{"s.x IS NULL", "F F T T F"},
		{"s.inner.z = 'c'", "F N N N F"},
		{"s.Inner.z IS NOT NULL", "T F F F T"},
		{"s.inner IS NULL", "F T T F F"},
		{"s IS NULL", "F F T F F"},
		{"S.X + 1 = 6", "F F N N T"},
	})
	// A slice keeps the offsets right.
	sliced := rec.NewSlice(1, 4)
	defer sliced.Release()
	checkPredicates(t, mem, sliced, []predCase{
		{"s.x > 1", "T N N"},
		{"s.inner.z IS NULL", "T T T"},
	})
}

func TestEvalScalar(t *testing.T) {
	mem := newMem(t)
	rec := batchOf(t,
		column{"i", build(mem, arrow.PrimitiveTypes.Int32, 1, nil, 3, 0)},
		column{"n", build(mem, arrow.PrimitiveTypes.Int64, 10, 20, nil, 40)},
		column{"x", build(mem, arrow.PrimitiveTypes.Float64, 0.5, 1.5, 2.5, nil)},
		column{"m", build(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2}, "1.50", "2.25", nil, "-0.01")},
		column{"d", build(mem, arrow.FixedWidthTypes.Date32, "2026-03-01", nil, "2026-12-31", "1970-01-01")},
		column{"s", build(mem, arrow.BinaryTypes.String, "a", "b", nil, "d")},
	)
	defer rec.Release()
	for _, tc := range []struct {
		in, typ, want string
	}{
		{"i + 1", "int32", "[2 null 4 1]"},
		{"i * n", "int64", "[10 null null 0]"},
		{"n / 4", "float64", "[2.5 5 null 10]"},
		{"n % 3", "int64", "[1 2 null 1]"},
		{"-n", "int64", "[-10 -20 null -40]"},
		{"x * 2 + i", "float64", "[2 null 8 null]"},
		{"m + 1", "decimal(11, 2)", "[2.50 3.25 null 0.99]"},
		{"m * m", "decimal(21, 4)", "[2.2500 5.0625 null 0.0001]"},
		{"m / 2", "decimal(14, 6)", "[0.750000 1.125000 null -0.005000]"},
		{"m / i", "decimal(23, 13)", "[1.5000000000000 null null DIV0]"},
		{"m + i", "decimal(13, 2)", "[2.50 null null -0.01]"},
		{"m % 1", "decimal(3, 2)", "[0.50 0.25 null -0.01]"},
		{"-m", "decimal(10, 2)", "[-1.50 -2.25 null 0.01]"},
		{"d + 1", "date32", "[2026-03-02 null 2027-01-01 1970-01-02]"},
		{"d - i", "date32", "[2026-02-28 null 2026-12-28 1970-01-01]"},
		{"CAST(d AS timestamp)", "timestamp[us, tz=UTC]", "[2026-03-01T00:00:00.000000Z null 2026-12-31T00:00:00.000000Z 1970-01-01T00:00:00.000000Z]"},
		{"CAST(i AS string)", "utf8", "[1 null 3 0]"},
		{"CAST(n AS short)", "int16", "[10 20 null 40]"},
		{"CAST(i AS double)", "float64", "[1 null 3 0]"},
		{"CAST(m AS decimal(5,1))", "decimal(5, 1)", "[1.5 2.3 null 0.0]"},
		{"s", "utf8", "[a b null d]"},
		{"42", "int32", "[42 42 42 42]"},
		{"'x'", "utf8", "[x x x x]"},
		{"NULL", "null", "[null null null null]"},
		{"i > 1", "bool", "[false null true false]"},
		{"n = 0 OR 100 / n > 4", "bool", "[true true null false]"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EvalScalar(e, rec, mem)
		if strings.Contains(tc.want, "DIV0") {
			if !errors.Is(err, errDivideByZero) {
				t.Errorf("%s: %v, want division by zero", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		var vals []string
		for i := 0; i < got.Len(); i++ {
			v := valueAt(got, i)
			if v == nil {
				vals = append(vals, "null")
			} else {
				vals = append(vals, fmt.Sprint(v))
			}
		}
		if s := "[" + strings.Join(vals, " ") + "]"; got.DataType().String() != tc.typ || s != tc.want {
			t.Errorf("%s = %s %s, want %s %s", tc.in, got.DataType(), s, tc.typ, tc.want)
		}
		if got.Len() != int(rec.NumRows()) {
			t.Errorf("%s: %d values", tc.in, got.Len())
		}
		got.Release()
	}
}

func TestEvalErrorsOnlyForRowsThatMatter(t *testing.T) {
	mem := newMem(t)
	rec := batchOf(t,
		column{"i", build(mem, arrow.PrimitiveTypes.Int32, 1, 0, nil, 2147483647)},
		column{"n", build(mem, arrow.PrimitiveTypes.Int64, math.MaxInt64, 1, 2, nil)},
	)
	defer rec.Release()
	for _, tc := range []struct {
		in   string
		err  error
		want string
	}{
		{"10 / i > 1", errDivideByZero, ""},
		{"i <> 0 AND 10 / i > 1", nil, "T F N F"},
		{"i = 0 OR 10 / i > 1", nil, "T T N F"},
		{"i IS NULL OR i = 0 OR 10 % i = 0", nil, "T T T F"},
		{"i + 1 > 0", errOverflow, ""},
		{"i < 100 AND i + 1 > 0", nil, "T T N F"},
		{"n + 1 > 0", errOverflow, ""},
		{"n < 100 AND n + 1 > 0", nil, "F T T N"},
		{"CAST(n AS int) > 0", errOverflow, ""},
		{"n < 100 AND CAST(n AS int) > 0", nil, "F T T N"},
		{"n < 100 AND CAST(n AS byte) > 0", nil, "F T T N"},
		{"-CAST(i AS byte) > 0", errOverflow, ""},
	} {
		e, _ := Parse(tc.in)
		got, err := EvalPredicate(e, rec, mem)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.in, err, tc.err)
			}
			if got != nil {
				got.Release()
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if s := boolsOf(got); s != tc.want {
			t.Errorf("%s = %s, want %s", tc.in, s, tc.want)
		}
		got.Release()
	}
}

func TestEvalBoundAgainstTableSchema(t *testing.T) {
	mem := newMem(t)
	// The table says short and decimal(10,2); the batch carries other
	// encodings of them.
	schema := &actions.StructType{Fields: []*actions.StructField{
		{Name: "sh", Type: actions.TypeShort, Nullable: true},
		{Name: "m", Type: &actions.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "ts", Type: actions.TypeTimestamp, Nullable: true},
	}}
	rec := batchOf(t,
		column{"SH", build(mem, arrow.PrimitiveTypes.Int32, 1, 2, nil)},
		column{"m", build(mem, &arrow.Decimal128Type{Precision: 12, Scale: 3}, "1.500", "2.250", "3")},
		column{"ts", build(mem, &arrow.TimestampType{Unit: arrow.Nanosecond}, 1500, 2000, 0)},
	)
	defer rec.Release()
	e, _ := Parse("sh > 1 OR m = 1.5 OR ts = TIMESTAMP '1970-01-01 00:00:00.000002'")
	b, err := Bind(e, schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EvalPredicate(b, rec, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if s := boolsOf(got); s != "T T N" {
		t.Errorf("got %s", s)
	}
	// A column missing from the batch is an error naming it.
	e, _ = Parse("nope = 1")
	b, _ = Bind(e, &actions.StructType{Fields: []*actions.StructField{{Name: "nope", Type: actions.TypeLong}}})
	if _, err := EvalPredicate(b, rec, mem); err == nil || !strings.Contains(err.Error(), "column nope is not in the batch") {
		t.Errorf("got %v", err)
	}
	// A predicate must be boolean.
	e, _ = Parse("sh + 1")
	if _, err := EvalPredicate(e, rec, mem); err == nil {
		t.Error("no error for a non-boolean predicate")
	}
}

func TestEvalEmptyBatch(t *testing.T) {
	mem := newMem(t)
	rec := batchOf(t, column{"i", build(mem, arrow.PrimitiveTypes.Int32)}, column{"s", build(mem, arrow.BinaryTypes.String)})
	defer rec.Release()
	checkPredicates(t, mem, rec, []predCase{{"i > 1 AND s LIKE 'a%' OR i IN (1, 2)", ""}})
	got, err := EvalScalar(mustParse(t, "i * 2 + 1"), rec, mem)
	if err != nil {
		t.Fatal(err)
	}
	got.Release()
}

func mustParse(t *testing.T, s string) Expr {
	t.Helper()
	e, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
