package metamorphic

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// The model's values, one Go type per kind of Delta type, independent of
// lakelog's own value codecs:
//
//	long, integer, short, date (days), timestamp, timestamp_ntz (micros): int64
//	string: string; binary: []byte; double: float64; boolean: bool
//	decimal(p,s): int64, the unscaled value (p <= 18)
//	struct: []any in field order; array: []any; map: []kv in entry order
//
// nil is NULL.
type kv struct{ k, v any }

// render is a value in a canonical text form: equal values (in the
// model's sense: -0 and 0 differ, NaNs are equal) render equally.
func render(t actions.DataType, v any) string {
	if v == nil {
		return "null"
	}
	switch t := t.(type) {
	case *actions.DecimalType:
		return decimalString(v.(int64), t.Scale)
	case *actions.StructType:
		var b strings.Builder
		b.WriteString("{")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s:%s", f.Name, render(f.Type, v.([]any)[i]))
		}
		b.WriteString("}")
		return b.String()
	case *actions.ArrayType:
		parts := make([]string, len(v.([]any)))
		for i, e := range v.([]any) {
			parts[i] = render(t.ElementType, e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *actions.MapType:
		parts := make([]string, len(v.([]kv)))
		for i, e := range v.([]kv) {
			parts[i] = render(t.KeyType, e.k) + "=>" + render(t.ValueType, e.v)
		}
		return "map{" + strings.Join(parts, ",") + "}"
	}
	switch t {
	case actions.TypeDouble:
		f := v.(float64)
		switch {
		case math.IsNaN(f):
			return "NaN"
		case f == 0 && math.Signbit(f):
			return "-0"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case actions.TypeDate:
		return "date " + dateString(v.(int64))
	case actions.TypeTimestamp:
		return "ts " + tsString(v.(int64)) + "Z"
	case actions.TypeTimestampNTZ:
		return "ntz " + tsString(v.(int64))
	case actions.TypeBinary:
		return "x'" + hex.EncodeToString(v.([]byte)) + "'"
	case actions.TypeString:
		return strconv.Quote(v.(string))
	}
	return fmt.Sprint(v)
}

func decimalString(unscaled int64, scale int) string {
	r := new(big.Rat).SetFrac(big.NewInt(unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return r.FloatString(scale)
}

var epoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

func dateString(days int64) string { return epoch.AddDate(0, 0, int(days)).Format("2006-01-02") }

func tsString(micros int64) string {
	return time.UnixMicro(micros).UTC().Format("2006-01-02 15:04:05.000000")
}

func mustDate(s string) int64 {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return int64(math.Floor(d.Sub(epoch).Hours() / 24))
}

func mustMicros(s string) int64 {
	d, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return d.UnixMicro()
}

// sqlLiteral is v as a Spark SQL literal of type t (what both lakelog's
// expression parser and deltasql read).
func sqlLiteral(t actions.DataType, v any) string {
	if v == nil {
		return "NULL"
	}
	switch t := t.(type) {
	case *actions.DecimalType:
		return fmt.Sprintf("CAST('%s' AS DECIMAL(%d,%d))", decimalString(v.(int64), t.Scale), t.Precision, t.Scale)
	case *actions.StructType:
		parts := make([]string, 0, 2*len(t.Fields))
		for i, f := range t.Fields {
			lit := sqlLiteral(f.Type, v.([]any)[i])
			if lit == "NULL" {
				// lakelog types a bare NULL in named_struct as a string
				// (Spark as void, which any field type takes)
				lit = "CAST(NULL AS " + ddlType(f.Type) + ")"
			}
			parts = append(parts, "'"+f.Name+"'", lit)
		}
		return "named_struct(" + strings.Join(parts, ", ") + ")"
	case *actions.ArrayType:
		parts := make([]string, len(v.([]any)))
		for i, e := range v.([]any) {
			parts[i] = sqlLiteral(t.ElementType, e)
		}
		return fmt.Sprintf("CAST(array(%s) AS %s)", strings.Join(parts, ", "), t)
	case *actions.MapType:
		parts := make([]string, 0, 2*len(v.([]kv)))
		for _, e := range v.([]kv) {
			parts = append(parts, sqlLiteral(t.KeyType, e.k), sqlLiteral(t.ValueType, e.v))
		}
		return fmt.Sprintf("CAST(map(%s) AS %s)", strings.Join(parts, ", "), t)
	}
	switch t {
	case actions.TypeLong:
		return strconv.FormatInt(v.(int64), 10) + "L"
	case actions.TypeInteger:
		if v.(int64) == math.MinInt32 {
			return "CAST('-2147483648' AS INT)"
		}
		return strconv.FormatInt(v.(int64), 10)
	case actions.TypeShort:
		return strconv.FormatInt(v.(int64), 10) + "S"
	case actions.TypeDouble:
		f := v.(float64)
		switch {
		case math.IsNaN(f):
			return "CAST('NaN' AS DOUBLE)"
		case math.IsInf(f, 1):
			return "CAST('Infinity' AS DOUBLE)"
		case math.IsInf(f, -1):
			return "CAST('-Infinity' AS DOUBLE)"
		case f == 0 && math.Signbit(f):
			return "-0.0D"
		}
		return strconv.FormatFloat(f, 'E', -1, 64) + "D"
	case actions.TypeDate:
		return "DATE'" + dateString(v.(int64)) + "'"
	case actions.TypeTimestamp:
		return "TIMESTAMP'" + tsString(v.(int64)) + "Z'"
	case actions.TypeTimestampNTZ:
		return "TIMESTAMP_NTZ'" + tsString(v.(int64)) + "'"
	case actions.TypeBinary:
		return "X'" + strings.ToUpper(hex.EncodeToString(v.([]byte))) + "'"
	case actions.TypeBoolean:
		return strconv.FormatBool(v.(bool))
	case actions.TypeString:
		return sqlString(v.(string))
	}
	panic(fmt.Sprintf("metamorphic: no literal of type %s", t))
}

// sqlString quotes s as Spark does, with backslash escapes.
func sqlString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// compare orders two non-null values of type t as Spark does: strings
// by their UTF-8 bytes, NaN equal to itself and above every other
// double, -0 equal to 0, false before true.
func compare(t actions.DataType, a, b any) int {
	if _, ok := t.(*actions.DecimalType); ok {
		return cmpInt(a.(int64), b.(int64))
	}
	switch t {
	case actions.TypeString:
		return strings.Compare(a.(string), b.(string))
	case actions.TypeDouble:
		x, y := a.(float64), b.(float64)
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return 1
		case math.IsNaN(y):
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case actions.TypeBoolean:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case actions.TypeBinary:
		return strings.Compare(string(a.([]byte)), string(b.([]byte)))
	}
	return cmpInt(a.(int64), b.(int64))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isPrimitive reports whether t is compared and used in predicates.
func isPrimitive(t actions.DataType) bool {
	switch t.(type) {
	case *actions.StructType, *actions.ArrayType, *actions.MapType:
		return false
	}
	return t != actions.TypeBinary
}

// appendValue appends v (of Delta type t) to b.
func appendValue(b array.Builder, t actions.DataType, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int16Builder:
		b.Append(int16(v.(int64)))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v.(int64)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int64)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.StructBuilder:
		b.Append(true)
		st := t.(*actions.StructType)
		for i, f := range st.Fields {
			appendValue(b.FieldBuilder(i), f.Type, v.([]any)[i])
		}
	case *array.MapBuilder:
		b.Append(true)
		mt := t.(*actions.MapType)
		for _, e := range v.([]kv) {
			appendValue(b.KeyBuilder(), mt.KeyType, e.k)
			appendValue(b.ItemBuilder(), mt.ValueType, e.v)
		}
	case *array.ListBuilder:
		b.Append(true)
		at := t.(*actions.ArrayType)
		for _, e := range v.([]any) {
			appendValue(b.ValueBuilder(), at.ElementType, e)
		}
	default:
		panic(fmt.Sprintf("metamorphic: no builder for %T", b))
	}
}

// decode reads row i of a (any Arrow representation a reader may give
// of Delta type t) as a model value.
func decode(t actions.DataType, a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.StringView:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte{}, a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte{}, a.Value(i)...), nil
	case *array.BinaryView:
		return append([]byte{}, a.Value(i)...), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Date32:
		return int64(a.Value(i)), nil
	case *array.Decimal128:
		dt := t.(*actions.DecimalType)
		n := a.Value(i)
		if s := a.DataType().(*arrow.Decimal128Type).Scale; s != int32(dt.Scale) {
			var err error
			if n, err = n.Rescale(s, int32(dt.Scale)); err != nil {
				return nil, err
			}
		}
		if !n.BigInt().IsInt64() {
			return nil, fmt.Errorf("decimal %s beyond the model's range", n.BigInt())
		}
		return n.BigInt().Int64(), nil
	case *array.Timestamp:
		v := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			v *= 1e6
		case arrow.Millisecond:
			v *= 1e3
		case arrow.Nanosecond:
			v /= 1e3
		}
		return v, nil
	case *array.Struct:
		st := t.(*actions.StructType)
		out := make([]any, len(st.Fields))
		sa := a.DataType().(*arrow.StructType)
		for j, f := range st.Fields {
			k := -1
			for x := range sa.NumFields() {
				if strings.EqualFold(sa.Field(x).Name, f.Name) {
					k = x
				}
			}
			if k < 0 {
				return nil, fmt.Errorf("struct has no field %s", f.Name)
			}
			v, err := decode(f.Type, a.Field(k), i)
			if err != nil {
				return nil, err
			}
			out[j] = v
		}
		return out, nil
	case *array.Map:
		mt := t.(*actions.MapType)
		start, end := a.ValueOffsets(i)
		out := []kv{}
		for j := start; j < end; j++ {
			k, err := decode(mt.KeyType, a.Keys(), int(j))
			if err != nil {
				return nil, err
			}
			v, err := decode(mt.ValueType, a.Items(), int(j))
			if err != nil {
				return nil, err
			}
			out = append(out, kv{k, v})
		}
		return out, nil
	case array.ListLike:
		at := t.(*actions.ArrayType)
		start, end := a.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			v, err := decode(at.ElementType, a.ListValues(), int(j))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *array.Dictionary:
		return decode(t, a.Dictionary(), a.GetValueIndex(i))
	}
	return nil, fmt.Errorf("no decoding of %s as %s", a.DataType(), t)
}
