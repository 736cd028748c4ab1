package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// Values of nested types, in EvalRow's rows and results:
//
//	array<T>     []any, the elements as values of T (nil for NULL)
//	map<K,V>     *MapValue
//	struct<...>  StructValue, one value per field in the type's order
//
// and actions.Interval for the interval types of INTERVAL literals.

// MapValue is a map's entries in order; keys are unique and never nil.
type MapValue struct {
	Keys, Values []any
}

// StructValue is a struct's field values in the order of its type.
type StructValue []any

// nestedValueAt reads row i of a list, map or struct array (any depth)
// as a Go value; nil for NULL.
func nestedValueAt(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		m := &MapValue{}
		for j := int(start); j < int(end); j++ {
			m.Keys = append(m.Keys, valueAt(keys, j))
			m.Values = append(m.Values, valueAt(items, j))
		}
		return m
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, valueAt(vals, j))
		}
		return out
	case *array.Struct:
		out := make(StructValue, a.NumField())
		for j := range out {
			out[j] = valueAt(a.Field(j), i)
		}
		return out
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		return actions.Interval{Months: v.Months, Days: 0, Micros: int64(v.Days)*microsPerDay + v.Nanoseconds/1000}
	}
	v, _ := actions.ArrowValue(arr, i)
	return v
}

// appendNested appends a nested Go value (or a scalar) to a builder of
// its Arrow form.
func appendNested(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.MapBuilder:
		m, ok := v.(*MapValue)
		if !ok {
			return fmt.Errorf("expr: a %T is not a map", v)
		}
		bb.Append(true)
		kb, ib := bb.KeyBuilder(), bb.ItemBuilder()
		for j := range m.Keys {
			if err := appendValue(kb, m.Keys[j]); err != nil {
				return err
			}
			if err := appendValue(ib, m.Values[j]); err != nil {
				return err
			}
		}
		return nil
	case *array.ListBuilder:
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("expr: a %T is not an array", v)
		}
		bb.Append(true)
		vb := bb.ValueBuilder()
		for _, x := range l {
			if err := appendValue(vb, x); err != nil {
				return err
			}
		}
		return nil
	case *array.StructBuilder:
		s, ok := v.(StructValue)
		if !ok || len(s) != bb.NumField() {
			return fmt.Errorf("expr: a %T is not a struct of %d fields", v, bb.NumField())
		}
		bb.Append(true)
		for j, x := range s {
			if err := appendValue(bb.FieldBuilder(j), x); err != nil {
				return err
			}
		}
		return nil
	case *array.MonthDayNanoIntervalBuilder:
		iv, ok := v.(actions.Interval)
		if !ok {
			return fmt.Errorf("expr: a %T is not an interval", v)
		}
		bb.Append(arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Micros * 1000})
		return nil
	}
	return actions.AppendArrowValue(b, v)
}

// formatNested prints a nested value as Spark casts one to string:
// [1, 2], {a -> 1}, {1, x}.
func formatNested(v any, t actions.DataType) string {
	if v == nil {
		return "null"
	}
	switch x := v.(type) {
	case []any:
		var et actions.DataType
		if at, ok := t.(*actions.ArrayType); ok {
			et = at.ElementType
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatNested(e, et)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *MapValue:
		var kt, vt actions.DataType
		if mt, ok := t.(*actions.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = formatNested(x.Keys[i], kt) + " -> " + formatNested(x.Values[i], vt)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case StructValue:
		st, _ := t.(*actions.StructType)
		parts := make([]string, len(x))
		for i, e := range x {
			var ft actions.DataType
			if st != nil && i < len(st.Fields) {
				ft = st.Fields[i].Type
			}
			parts[i] = formatNested(e, ft)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case actions.Interval:
		return formatInterval(x, t)
	}
	return castToString(v)
}

// equalValues reports whether two non-nil values of one type are equal
// (NaN equals NaN), nested values element by element.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if (x[i] == nil) != (y[i] == nil) || x[i] != nil && !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case StructValue:
		y, ok := b.(StructValue)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if (x[i] == nil) != (y[i] == nil) || x[i] != nil && !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case *MapValue:
		y, ok := b.(*MapValue)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i := range x.Keys {
			if !equalValues(x.Keys[i], y.Keys[i]) || (x.Values[i] == nil) != (y.Values[i] == nil) ||
				x.Values[i] != nil && !equalValues(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	case actions.Interval:
		y, ok := b.(actions.Interval)
		return ok && x == y
	}
	c, err := compareScalar(a, b)
	return err == nil && c == 0
}

// compareAny orders two non-nil values of one type in Spark's order;
// arrays and structs compare element by element.
func compareAny(a, b any) (int, error) {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok {
			return 0, fmt.Errorf("cannot compare an array with %T", b)
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if c, err := compareNullsFirst(x[i], y[i]); err != nil || c != 0 {
				return c, err
			}
		}
		return len(x) - len(y), nil
	case StructValue:
		y, ok := b.(StructValue)
		if !ok {
			return 0, fmt.Errorf("cannot compare a struct with %T", b)
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if c, err := compareNullsFirst(x[i], y[i]); err != nil || c != 0 {
				return c, err
			}
		}
		return len(x) - len(y), nil
	case actions.Interval:
		y, ok := b.(actions.Interval)
		if !ok {
			return 0, fmt.Errorf("cannot compare an interval with %T", b)
		}
		switch {
		case x.Months != y.Months:
			return cmpInt(int64(x.Months), int64(y.Months)), nil
		}
		return cmpInt(x.Micros, y.Micros), nil
	}
	return compareScalar(a, b)
}

func compareNullsFirst(a, b any) (int, error) {
	switch {
	case a == nil && b == nil:
		return 0, nil
	case a == nil:
		return -1, nil
	case b == nil:
		return 1, nil
	}
	return compareAny(a, b)
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
