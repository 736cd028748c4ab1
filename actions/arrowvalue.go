package actions

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AppendArrowValue appends v, a value of the Go type that values.go gives
// a Delta type (nil for NULL), to b, a builder of that type's Arrow form
// (ArrowType). A Decimal is rescaled to the column's scale; it fails when
// that would drop non-zero digits or the value has more than
// MaxDecimalPrecision digits. A []byte or string goes to a binary
// builder. Any other pairing of value and builder is an error, and b is
// left unchanged.
func AppendArrowValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			b.Append(x)
			return nil
		}
	case *array.Int8Builder:
		if x, ok := v.(int8); ok {
			b.Append(x)
			return nil
		}
	case *array.Int16Builder:
		if x, ok := v.(int16); ok {
			b.Append(x)
			return nil
		}
	case *array.Int32Builder:
		if x, ok := v.(int32); ok {
			b.Append(x)
			return nil
		}
	case *array.Int64Builder:
		if x, ok := v.(int64); ok {
			b.Append(x)
			return nil
		}
	case *array.Float32Builder:
		if x, ok := v.(float32); ok {
			b.Append(x)
			return nil
		}
	case *array.Float64Builder:
		if x, ok := v.(float64); ok {
			b.Append(x)
			return nil
		}
	case *array.StringBuilder:
		if x, ok := v.(string); ok {
			b.Append(x)
			return nil
		}
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			b.Append(x)
			return nil
		case string:
			b.AppendString(x)
			return nil
		}
	case *array.Date32Builder:
		if x, ok := v.(Date); ok {
			b.Append(arrow.Date32(x))
			return nil
		}
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case Timestamp:
			b.Append(arrow.Timestamp(x))
			return nil
		case TimestampNTZ:
			b.Append(arrow.Timestamp(x))
			return nil
		}
	case *array.Decimal128Builder:
		if x, ok := v.(Decimal); ok {
			n, err := decimal128At(x, int(b.Type().(*arrow.Decimal128Type).Scale))
			if err != nil {
				return err
			}
			b.Append(n)
			return nil
		}
	}
	return fmt.Errorf("actions: cannot append %T to %s", v, b.Type())
}

// decimal128At converts d to a decimal128 at the given scale.
func decimal128At(d Decimal, scale int) (decimal128.Num, error) {
	u := d.unscaled()
	if d.Scale != scale {
		r, err := d.Rescale(scale)
		if err != nil {
			return decimal128.Num{}, err
		}
		u = r.Unscaled
	}
	if new(big.Int).Abs(u).Cmp(pow10(MaxDecimalPrecision)) >= 0 {
		return decimal128.Num{}, fmt.Errorf("actions: decimal %s has more than %d digits", d, MaxDecimalPrecision)
	}
	return decimal128.FromBigInt(u), nil
}

// ArrowValue reads row i of arr, an array of a Delta type's Arrow form
// (ArrowType; string and binary also in their large and view forms), as
// the Go value values.go gives that type: nil for NULL. Strings and bytes
// are copied, so the value outlives the array. ok is false for an array
// of another type. It is AppendArrowValue's inverse, and the one reader of
// Arrow values into Go values.
func ArrowValue(arr arrow.Array, i int) (v any, ok bool) {
	if arr.IsNull(i) {
		return nil, true
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i), true
	case *array.Int8:
		return a.Value(i), true
	case *array.Int16:
		return a.Value(i), true
	case *array.Int32:
		return a.Value(i), true
	case *array.Int64:
		return a.Value(i), true
	case *array.Float32:
		return a.Value(i), true
	case *array.Float64:
		return a.Value(i), true
	case *array.String:
		return strings.Clone(a.Value(i)), true
	case *array.LargeString:
		return strings.Clone(a.Value(i)), true
	case *array.StringView:
		return strings.Clone(a.Value(i)), true
	case *array.Binary:
		return bytes.Clone(a.Value(i)), true
	case *array.LargeBinary:
		return bytes.Clone(a.Value(i)), true
	case *array.BinaryView:
		return bytes.Clone(a.Value(i)), true
	case *array.Date32:
		return Date(a.Value(i)), true
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).TimeZone == "" {
			return TimestampNTZ(a.Value(i)), true
		}
		return Timestamp(a.Value(i)), true
	case *array.Decimal128:
		return Decimal{Unscaled: a.Value(i).BigInt(), Scale: int(a.DataType().(*arrow.Decimal128Type).Scale)}, true
	}
	return nil, false
}
