package deltasql

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// An aggregation groups rows by the GROUP BY keys (each batch's key
// columns dictionary-encoded with arrow-go compute, so that a batch's
// distinct values are looked up once) and folds each aggregate's
// argument into per-group accumulators, one typed loop per batch.
// Types follow Spark: COUNT is a long; SUM of integers a long (an
// overflow is an error, as in ANSI mode), of floats a double, of
// decimal(p,s) a decimal(p+10,s); AVG a double, or for decimal(p,s) a
// decimal(p+4,s+4) rounded half up; MIN and MAX keep the type. SUM, AVG,
// MIN and MAX of no values are NULL.

// aggregation is the state of a grouped query.
type aggregation struct {
	keyTypes []arrow.DataType
	keyCodes []map[string]int32 // per key column: value -> code
	groups   map[string]int     // composite key -> group
	keyVals  [][]any            // per group: its key values
	aggs     []*aggState
}

// aggState is one aggregate's accumulators, one per group.
type aggState struct {
	fn      string
	argType actions.DataType // nil for COUNT(*)
	count   []int64
	ints    []int64
	floats  []float64
	decs    []*big.Int
	vals    []any
	seen    []bool
}

func newAggregation(nkeys int) *aggregation {
	a := &aggregation{keyTypes: make([]arrow.DataType, nkeys), keyCodes: make([]map[string]int32, nkeys), groups: map[string]int{}}
	for i := range a.keyCodes {
		a.keyCodes[i] = map[string]int32{}
	}
	if nkeys == 0 {
		a.group("") // one group, even over no rows
	}
	return a
}

// group returns the group of a composite key, adding it if new.
func (a *aggregation) group(key string) int {
	g, ok := a.groups[key]
	if ok {
		return g
	}
	g = len(a.keyVals)
	a.groups[key] = g
	a.keyVals = append(a.keyVals, nil)
	for _, s := range a.aggs {
		s.grow(g + 1)
	}
	return g
}

func (s *aggState) grow(n int) {
	for len(s.count) < n {
		s.count = append(s.count, 0)
		s.ints = append(s.ints, 0)
		s.floats = append(s.floats, 0)
		s.decs = append(s.decs, nil)
		s.vals = append(s.vals, nil)
		s.seen = append(s.seen, false)
	}
}

// valueKey is a Go value as a map key that tells types and null apart.
func valueKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x00"
	case []byte:
		return "b" + string(x)
	case string:
		return "s" + x
	case actions.Decimal:
		return "d" + x.String()
	}
	return fmt.Sprintf("%T%v", v, v)
}

// groupsOf returns the group of every row of a batch, given its key
// columns.
func (a *aggregation) groupsOf(ctx context.Context, keys []arrow.Array, n int) ([]int, error) {
	out := make([]int, n)
	if len(keys) == 0 {
		return out, nil // all in group 0
	}
	codes := make([][]int32, len(keys))
	vals := make([][]any, len(keys)) // by code: the value
	for k, arr := range keys {
		if a.keyTypes[k] == nil {
			a.keyTypes[k] = arr.DataType()
		}
		c, err := a.encode(ctx, k, arr)
		if err != nil {
			return nil, err
		}
		codes[k] = c
		vals[k] = nil
	}
	var key strings.Builder
	for i := range n {
		key.Reset()
		for k := range keys {
			key.WriteString(strconv.FormatInt(int64(codes[k][i]), 36))
			key.WriteByte(',')
		}
		g := a.group(key.String())
		if a.keyVals[g] == nil {
			kv := make([]any, len(keys))
			for k, arr := range keys {
				v, ok := actions.ArrowValue(arr, i)
				if !ok {
					return nil, fmt.Errorf("GROUP BY a column of type %s is not supported", arr.DataType())
				}
				kv[k] = v
			}
			a.keyVals[g] = kv
		}
		out[i] = g
	}
	return out, nil
}

// encode gives each row of arr the code of its value in key column k
// (-1 for null): the batch's distinct values come from arrow-go's
// dictionary encoding, each looked up once.
func (a *aggregation) encode(ctx context.Context, k int, arr arrow.Array) ([]int32, error) {
	codes := make([]int32, arr.Len())
	codeOf := func(v any) int32 {
		key := valueKey(v)
		c, ok := a.keyCodes[k][key]
		if !ok {
			c = int32(len(a.keyCodes[k]))
			a.keyCodes[k][key] = c
		}
		return c
	}
	d, err := compute.DictionaryEncodeArray(ctx, compute.DictionaryEncodeOptions{NullEncoding: compute.NullEncodingMask}, arr)
	if err != nil {
		// A type the hash kernels lack: value by value.
		for i := range codes {
			if arr.IsNull(i) {
				codes[i] = -1
				continue
			}
			v, ok := actions.ArrowValue(arr, i)
			if !ok {
				return nil, fmt.Errorf("GROUP BY a column of type %s is not supported", arr.DataType())
			}
			codes[i] = codeOf(v)
		}
		return codes, nil
	}
	defer d.Release()
	dict := d.(*array.Dictionary)
	values := dict.Dictionary()
	byEntry := make([]int32, values.Len())
	for j := range byEntry {
		v, ok := actions.ArrowValue(values, j)
		if !ok {
			return nil, fmt.Errorf("GROUP BY a column of type %s is not supported", arr.DataType())
		}
		byEntry[j] = codeOf(v)
	}
	for i := range codes {
		if dict.IsNull(i) {
			codes[i] = -1
			continue
		}
		codes[i] = byEntry[dict.GetValueIndex(i)]
	}
	return codes, nil
}

// add folds a batch's argument values (nil for COUNT(*)) into the
// accumulators of their rows' groups.
func (s *aggState) add(arg arrow.Array, groups []int) error {
	if arg == nil {
		for _, g := range groups {
			s.count[g]++
		}
		return nil
	}
	switch arr := arg.(type) {
	case *array.Int8:
		return s.addInts(arr, groups, func(i int) int64 { return int64(arr.Value(i)) })
	case *array.Int16:
		return s.addInts(arr, groups, func(i int) int64 { return int64(arr.Value(i)) })
	case *array.Int32:
		return s.addInts(arr, groups, func(i int) int64 { return int64(arr.Value(i)) })
	case *array.Int64:
		return s.addInts(arr, groups, func(i int) int64 { return arr.Value(i) })
	case *array.Float32:
		return s.addFloats(arr, groups, func(i int) float64 { return float64(arr.Value(i)) })
	case *array.Float64:
		return s.addFloats(arr, groups, func(i int) float64 { return arr.Value(i) })
	case *array.Decimal128:
		if s.fn == "SUM" || s.fn == "AVG" {
			for i, g := range groups {
				if arr.IsNull(i) {
					continue
				}
				if s.decs[g] == nil {
					s.decs[g] = new(big.Int)
				}
				s.decs[g].Add(s.decs[g], arr.Value(i).BigInt())
				s.count[g]++
				s.seen[g] = true
			}
			return nil
		}
	}
	switch s.fn {
	case "COUNT":
		for i, g := range groups {
			if !arg.IsNull(i) {
				s.count[g]++
			}
		}
		return nil
	case "MIN", "MAX":
		for i, g := range groups {
			if arg.IsNull(i) {
				continue
			}
			v, ok := actions.ArrowValue(arg, i)
			if !ok {
				return fmt.Errorf("%s of type %s is not supported", s.fn, arg.DataType())
			}
			if s.vals[g] == nil {
				s.vals[g] = v
				continue
			}
			c, err := actions.CompareValues(v, s.vals[g])
			if err != nil {
				return err
			}
			if (s.fn == "MIN" && c < 0) || (s.fn == "MAX" && c > 0) {
				s.vals[g] = v
			}
		}
		return nil
	}
	return fmt.Errorf("%s of type %s is not supported (numbers only)", s.fn, arg.DataType())
}

func (s *aggState) addInts(arr arrow.Array, groups []int, at func(int) int64) error {
	switch s.fn {
	case "MIN", "MAX":
		for i, g := range groups {
			if arr.IsNull(i) {
				continue
			}
			v := at(i)
			if !s.seen[g] || (s.fn == "MIN" && v < s.ints[g]) || (s.fn == "MAX" && v > s.ints[g]) {
				s.ints[g] = v
			}
			s.seen[g] = true
		}
		return nil
	}
	for i, g := range groups {
		if arr.IsNull(i) {
			continue
		}
		v := at(i)
		sum := s.ints[g] + v
		if (v > 0 && sum < s.ints[g]) || (v < 0 && sum > s.ints[g]) {
			return fmt.Errorf("%s overflows a long: arithmetic overflow", s.fn)
		}
		s.ints[g] = sum
		s.count[g]++
		s.seen[g] = true
	}
	return nil
}

func (s *aggState) addFloats(arr arrow.Array, groups []int, at func(int) float64) error {
	for i, g := range groups {
		if arr.IsNull(i) {
			continue
		}
		v := at(i)
		switch s.fn {
		case "MIN":
			if !s.seen[g] || floatLess(v, s.floats[g]) {
				s.floats[g] = v
			}
		case "MAX":
			if !s.seen[g] || floatLess(s.floats[g], v) {
				s.floats[g] = v
			}
		default:
			s.floats[g] += v
		}
		s.count[g]++
		s.seen[g] = true
	}
	return nil
}

// floatLess orders floats as Spark does: NaN above every other value.
func floatLess(a, b float64) bool {
	return !math.IsNaN(a) && (math.IsNaN(b) || a < b)
}

// resultType is the aggregate's Delta type.
func (s *aggState) resultType() (actions.DataType, error) {
	switch s.fn {
	case "COUNT":
		return actions.TypeLong, nil
	case "MIN", "MAX":
		return s.argType, nil
	}
	switch t := s.argType.(type) {
	case *actions.DecimalType:
		if s.fn == "SUM" {
			return &actions.DecimalType{Precision: min(actions.MaxDecimalPrecision, t.Precision+10), Scale: t.Scale}, nil
		}
		return &actions.DecimalType{Precision: min(actions.MaxDecimalPrecision, t.Precision+4), Scale: min(actions.MaxDecimalPrecision, t.Scale+4)}, nil
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
			if s.fn == "SUM" {
				return actions.TypeLong, nil
			}
			return actions.TypeDouble, nil
		case actions.TypeFloat, actions.TypeDouble:
			return actions.TypeDouble, nil
		}
	}
	return nil, fmt.Errorf("%s of type %s is not supported (numbers only)", s.fn, s.argType)
}

// value is group g's result as a Go value of resultType (nil: NULL).
func (s *aggState) value(g int) (any, error) {
	rt, err := s.resultType()
	if err != nil {
		return nil, err
	}
	if s.fn == "COUNT" {
		return s.count[g], nil
	}
	dec, isDec := s.argType.(*actions.DecimalType)
	switch {
	case s.fn == "MIN" || s.fn == "MAX":
		if !s.seen[g] && s.vals[g] == nil {
			return nil, nil
		}
		if s.vals[g] != nil {
			return s.vals[g], nil
		}
		switch s.argType {
		case actions.TypeByte:
			return int8(s.ints[g]), nil
		case actions.TypeShort:
			return int16(s.ints[g]), nil
		case actions.TypeInteger:
			return int32(s.ints[g]), nil
		case actions.TypeLong:
			return s.ints[g], nil
		case actions.TypeFloat:
			return float32(s.floats[g]), nil
		}
		return s.floats[g], nil
	case !s.seen[g]:
		return nil, nil
	case isDec:
		out := rt.(*actions.DecimalType)
		sum := actions.Decimal{Unscaled: s.decs[g], Scale: dec.Scale}
		if s.fn == "SUM" {
			if !sum.Fits(out.Precision) {
				return nil, fmt.Errorf("SUM overflows %s", out)
			}
			return sum, nil
		}
		// AVG: sum / count at the result's scale, half up.
		num := new(big.Int).Mul(s.decs[g], new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(out.Scale-dec.Scale)), nil))
		den := big.NewInt(s.count[g])
		q, r := new(big.Int).QuoRem(num, den, new(big.Int))
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(den) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		return actions.Decimal{Unscaled: q, Scale: out.Scale}, nil
	case s.fn == "SUM" && rt == actions.TypeLong:
		return s.ints[g], nil
	case s.fn == "SUM":
		return s.floats[g], nil
	}
	// AVG of integers or floats.
	if s.argType == actions.TypeFloat || s.argType == actions.TypeDouble {
		return s.floats[g] / float64(s.count[g]), nil
	}
	return float64(s.ints[g]) / float64(s.count[g]), nil
}

// build is a column of Delta type t from Go values.
func build(t actions.DataType, vals []any) (arrow.Array, error) {
	at, err := actions.ArrowType(t)
	if err != nil {
		return nil, err
	}
	b := array.NewBuilder(memory.DefaultAllocator, at)
	defer b.Release()
	for _, v := range vals {
		if err := actions.AppendArrowValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
