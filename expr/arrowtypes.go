package expr

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// arrowTypeOf is the Arrow form of a Delta type that the evaluator
// computes with and EvalScalar returns: actions.ArrowType's (Int64 for
// long, Timestamp(µs, "UTC") for timestamp, Decimal128 for decimals...),
// and Null for an untyped NULL. Input columns may come in other Arrow
// encodings of the same type (large or view strings and binaries, other
// timestamp units, dictionaries, other integer or decimal widths);
// normalize converts them, except that large and view strings are
// computed with as they are.
func arrowTypeOf(t actions.DataType) (arrow.DataType, error) {
	if t == nil {
		return arrow.Null, nil
	}
	if isInterval(t) {
		return arrow.FixedWidthTypes.MonthDayNanoInterval, nil
	}
	at, err := actions.ArrowType(t)
	if err != nil {
		return nil, fmt.Errorf("expr: no Arrow form for type %s", t)
	}
	return at, nil
}

// deltaSchemaOf derives a Delta schema from an Arrow schema, for binding
// an expression to a batch. Fields of types with no Delta counterpart are
// left out.
func deltaSchemaOf(s *arrow.Schema) *actions.StructType {
	st := &actions.StructType{}
	for _, f := range s.Fields() {
		if t, err := actions.FromArrowType(f.Type); err == nil {
			st.Fields = append(st.Fields, &actions.StructField{Name: f.Name, Type: t, Nullable: f.Nullable})
		}
	}
	return st
}

// normalize returns arr (retained) or a converted copy in the Arrow form
// of Delta type t; see arrowTypeOf.
func normalize(arr arrow.Array, t actions.DataType, mem memory.Allocator) (arrow.Array, error) {
	dt := arr.DataType()
	switch dt.ID() {
	case arrow.DICTIONARY:
		d := arr.(*array.Dictionary)
		ctx := exec.WithAllocator(context.Background(), mem)
		plain, err := compute.TakeArray(ctx, d.Dictionary(), d.Indices())
		if err != nil {
			return nil, fmt.Errorf("decode dictionary: %w", err)
		}
		defer plain.Release()
		return normalize(plain, t, mem)
	case arrow.NULL:
		at, err := arrowTypeOf(t)
		if err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, at, arr.Len()), nil
	}
	mismatch := func() (arrow.Array, error) {
		return nil, fmt.Errorf("Arrow type %s does not hold Delta type %s", dt, t)
	}
	switch t := t.(type) {
	case *actions.DecimalType:
		switch a := arr.(type) {
		case *array.Decimal128:
			if int(a.DataType().(*arrow.Decimal128Type).Scale) == t.Scale {
				arr.Retain()
				return arr, nil
			}
		case *array.Decimal32, *array.Decimal64, *array.Decimal256:
		default:
			if !isArrowInt(dt.ID()) {
				return mismatch()
			}
		}
		return convertByValue(arr, t, mem)
	case actions.PrimitiveType:
		want, err := arrowTypeOf(t)
		if err != nil {
			return nil, err
		}
		switch t {
		case actions.TypeString, actions.TypeBinary:
			switch dt.ID() {
			case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
				arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
				arr.Retain()
				return arr, nil
			case arrow.FIXED_SIZE_BINARY:
				return convertByValue(arr, t, mem)
			}
			return mismatch()
		case actions.TypeTimestamp, actions.TypeTimestampNTZ:
			ts, ok := dt.(*arrow.TimestampType)
			if !ok {
				return mismatch()
			}
			if ts.Unit == arrow.Microsecond {
				arr.Retain()
				return arr, nil
			}
			return rescaleTimestamps(arr.(*array.Timestamp), ts.Unit, want, mem)
		case actions.TypeDate:
			switch dt.ID() {
			case arrow.DATE32:
				arr.Retain()
				return arr, nil
			case arrow.DATE64:
				src := arrow.GetValues[arrow.Date64](arr.Data(), 1)
				return buildFixed(mem, want, arr.Len(), validOf(arr), func(out []arrow.Date32) error {
					for i, v := range src {
						out[i] = arrow.Date32(floorDiv(int64(v), 86_400_000))
					}
					return nil
				})
			}
			return mismatch()
		}
		if arrow.TypeEqual(dt, want) {
			arr.Retain()
			return arr, nil
		}
		if (isIntegral(t) || isFloating(t)) && (isArrowInt(dt.ID()) || dt.ID() == arrow.FLOAT16 || dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64) {
			return convertByValue(arr, t, mem)
		}
		return mismatch()
	}
	// Nested types are passed through for IS NULL and plain references.
	arr.Retain()
	return arr, nil
}

func isArrowInt(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// rescaleTimestamps converts timestamps of another unit to microseconds,
// rounding down (nanoseconds are truncated, as Spark reads them).
func rescaleTimestamps(a *array.Timestamp, unit arrow.TimeUnit, want arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	src := a.TimestampValues()
	return buildFixed(mem, want, a.Len(), validOf(a), func(out []arrow.Timestamp) error {
		switch unit {
		case arrow.Nanosecond:
			for i, v := range src {
				out[i] = arrow.Timestamp(floorDiv(int64(v), 1000))
			}
		default:
			m := int64(1_000_000)
			if unit == arrow.Millisecond {
				m = 1000
			}
			for i, v := range src {
				out[i] = arrow.Timestamp(satMul(int64(v), m))
			}
		}
		return nil
	})
}

// satMul is a*b clamped to the int64 range.
func satMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	if a < math.MinInt64/b {
		return math.MinInt64
	}
	return a * b
}

// convertByValue converts an array value by value through the Go values
// of actions/values.go. It is the slow path, for encodings that rarely
// occur (unsigned integers, odd decimal widths, fixed-size binary).
func convertByValue(arr arrow.Array, t actions.DataType, mem memory.Allocator) (arrow.Array, error) {
	at, err := arrowTypeOf(t)
	if err != nil {
		return nil, err
	}
	b := array.NewBuilder(mem, at)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		v, err := rawValueAt(arr, i)
		if err != nil {
			return nil, err
		}
		c, err := castValue(v, t)
		if err != nil {
			return nil, err
		}
		if err := appendValue(b, c); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// rawValueAt reads row i of any supported Arrow array as a Go value of
// actions/values.go, by its Arrow type alone.
func rawValueAt(arr arrow.Array, i int) (any, error) {
	switch a := arr.(type) {
	case *array.Uint8:
		return int64(a.Value(i)), nil
	case *array.Uint16:
		return int64(a.Value(i)), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		return actions.Decimal{Unscaled: new(big.Int).SetUint64(a.Value(i))}, nil
	case *array.Float16:
		return a.Value(i).Float32(), nil
	case *array.Decimal32:
		return actions.Decimal{Unscaled: big.NewInt(int64(a.Value(i))), Scale: int(a.DataType().(*arrow.Decimal32Type).Scale)}, nil
	case *array.Decimal64:
		return actions.Decimal{Unscaled: big.NewInt(int64(a.Value(i))), Scale: int(a.DataType().(*arrow.Decimal64Type).Scale)}, nil
	case *array.Decimal256:
		return actions.Decimal{Unscaled: a.Value(i).BigInt(), Scale: int(a.DataType().(*arrow.Decimal256Type).Scale)}, nil
	case *array.FixedSizeBinary:
		return bytes.Clone(a.Value(i)), nil
	case *array.Timestamp:
		return actions.Timestamp(a.Value(i)), nil
	}
	return valueAt(arr, i), nil
}

// valueAt reads row i of an array in the evaluator's Arrow form (see
// arrowTypeOf) as a Go value of actions/values.go; nil for NULL.
func valueAt(arr arrow.Array, i int) any {
	v, ok := actions.ArrowValue(arr, i)
	if !ok {
		return nestedValueAt(arr, i)
	}
	return v
}

// appendValue appends a Go value of actions/values.go (nil for NULL) to a
// builder of the matching Arrow form.
func appendValue(b array.Builder, v any) error { return appendNested(b, v) }

// decimalToNum converts a decimal to a decimal128 at the given scale.
func decimalToNum(d actions.Decimal, scale int) (decimal128.Num, error) {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	if d.Scale != scale {
		r, err := d.Rescale(scale)
		if err != nil {
			return decimal128.Num{}, err
		}
		u = r.Unscaled
	}
	if !fitsPrecision(u, actions.MaxDecimalPrecision) {
		return decimal128.Num{}, fmt.Errorf("decimal %s has more than 38 digits: %w", d, errOverflow)
	}
	return decimal128.FromBigInt(u), nil
}
