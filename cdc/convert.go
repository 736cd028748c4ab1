package cdc

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// fitValue converts v (a Value form) to the form of Delta type to, for a
// column that bronze or silver holds at another width than the event: an
// integer of any width into another that holds it, float into double,
// any integer or a float into double, a date into timestamp_ntz, a
// decimal (AppendValue rescales it exactly, or fails). Anything that
// would change the value is an error.
func fitValue(v any, to actions.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	if n, ok := intOf(v); ok {
		switch to {
		case actions.TypeByte:
			if n >= math.MinInt8 && n <= math.MaxInt8 {
				return int8(n), nil
			}
		case actions.TypeShort:
			if n >= math.MinInt16 && n <= math.MaxInt16 {
				return int16(n), nil
			}
		case actions.TypeInteger:
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				return int32(n), nil
			}
		case actions.TypeLong:
			return n, nil
		case actions.TypeDouble:
			if f := float64(n); int64(f) == n {
				return f, nil
			}
		default:
			if _, ok := to.(*actions.DecimalType); ok {
				return actions.NewDecimal(n, 0), nil
			}
		}
		return nil, fmt.Errorf("%d does not fit %s", n, to)
	}
	switch x := v.(type) {
	case float32:
		if to == actions.TypeDouble {
			return float64(x), nil
		}
	case actions.Date:
		if to == actions.TypeTimestampNTZ {
			return actions.TimestampNTZ(int64(x) * 86400 * 1e6), nil
		}
	}
	return v, nil
}

func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// arrowValue reads row i of arr (a Delta type's Arrow form) as a Value
// form: nested arrays, maps and structs too.
func arrowValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, arrowValue(a.ListValues(), int(j)))
		}
		return out
	case *array.Map:
		start, end := a.ValueOffsets(i)
		out := make(MapValue, 0, end-start)
		for j := start; j < end; j++ {
			k, _ := actions.ArrowValue(a.Keys(), int(j))
			ks, _ := k.(string)
			out = append(out, MapEntry{Key: ks, Value: arrowValue(a.Items(), int(j))})
		}
		return out
	case *array.Struct:
		out := make([]any, a.NumField())
		for f := range a.NumField() {
			out[f] = arrowValue(a.Field(f), i)
		}
		return out
	}
	v, _ := actions.ArrowValue(arr, i)
	return v
}

// unionType is the narrowest type that holds every value of a and of b
// and that a widens to (a itself when a holds b's values), or nil when
// there is none: bronze keeps a column at this type as the source's
// changes.
func unionType(a, b actions.DataType) actions.DataType {
	if a.String() == b.String() {
		return a
	}
	if actions.CanWidenType(b, a) && holdsExactly(a, b) {
		return a
	}
	if actions.CanWidenType(a, b) && holdsExactly(b, a) {
		return b
	}
	da, okA := a.(*actions.DecimalType)
	db, okB := b.(*actions.DecimalType)
	if okA && okB {
		s := max(da.Scale, db.Scale)
		p := max(da.Precision-da.Scale, db.Precision-db.Scale) + s
		if p <= actions.MaxDecimalPrecision {
			u := &actions.DecimalType{Precision: p, Scale: s}
			if actions.CanWidenType(a, u) {
				return u
			}
		}
	}
	return nil
}

// holdsExactly reports whether every value of from is a value of to
// (CanWidenType allows integers into double, which loses long's digits
// but not int's, and ints into decimals of enough digits).
func holdsExactly(to, from actions.DataType) bool {
	if to == actions.TypeDouble && from == actions.TypeLong {
		return false
	}
	return true
}
