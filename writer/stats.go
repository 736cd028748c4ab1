package writer

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// Statistics follow Spark's StatisticsCollection, so that Spark, delta-rs
// and our own planner skip files the same way:
//
//   - numRecords, and per leaf column nullCount; minValues and maxValues
//     only for byte, short, integer, long, float, double, decimal, date,
//     timestamp, timestamp_ntz and string. Binary, boolean, array and map
//     columns get a nullCount only. Struct columns nest.
//   - Only the first delta.dataSkippingNumIndexedCols (default 32) leaf
//     columns of the data schema (partition columns excluded) are
//     collected, or the columns named in delta.dataSkippingStatsColumns.
//     A negative count means all.
//   - A nested field counts as null when it or any enclosing struct is.
//   - Strings are truncated to 32 characters; a truncated max gets Spark's
//     tie-breaker so that it stays an upper bound (see truncateMax).
//   - Timestamps are written with millisecond precision, as Spark does
//     ("2021-10-01T08:09:20.123Z"; timestamp_ntz without the Z). Spark
//     truncates both bounds, which makes its max too low when there are
//     microseconds; we round the max up to the next millisecond instead,
//     so that it stays an upper bound.
//   - Decimals are JSON numbers with the column's scale.
//   - Where Spark would record NaN as a float column's max (Spark orders
//     NaN above every number) we record no min or max at all for the
//     column: readers disagree on how a NaN bound compares, and a missing
//     bound is never wrong.

// statsLeaf accumulates one leaf column's statistics.
type statsLeaf struct {
	path      []int    // indices from the data record's column through struct children
	names     []string // physical names along the path
	dtype     actions.DataType
	minMax    bool // the type gets min and max
	nulls     int64
	has       bool // some non-null value was seen
	nan       bool
	floatSeen bool
	minI      int64
	maxI      int64
	minF      float64
	maxF      float64
	minS      string
	maxS      string
	minD      decimal128.Num
	maxD      decimal128.Num
	decScale  int32

	// Where the bounds and null count come from (footerstats.go): col is
	// the leaf's Parquet column when the Parquet writer's own statistics
	// supply them (-1: this collector's pass over the rows), from its row
	// groups before row ownFrom (-1: all of them); from row ownFrom on
	// the rows are observed here. ownFrom counts rows, as a row group
	// can be cut where the Parquet writer decides. maxStats is the Parquet writer's limit on
	// an encoded bound: a longer string makes it drop the chunk's bounds.
	col      int
	ownFrom  int64
	maxStats int64
	// unknown: a chunk's statistics lacked what the leaf needs, so the
	// file gets no bounds (noBounds) or no null count for it.
	noBounds    bool
	nullUnknown bool
}

// statsCollector collects statistics for one data file.
type statsCollector struct {
	rows   int64
	leaves []*statsLeaf
}

// statsColumns picks the leaf columns of the data schema (the table
// schema without partition columns) that get statistics, per the table's
// properties.
func statsColumns(props *actions.TableProperties, data *actions.StructType) ([]*statsLeaf, error) {
	if props.DataSkippingStatsColumns != nil {
		return namedStatsColumns(data, props.DataSkippingStatsColumns)
	}
	n := props.DataSkippingNumIndexedCols
	var out []*statsLeaf
	remaining := int(n)
	var walk func(st *actions.StructType, path []int, names []string)
	walk = func(st *actions.StructType, path []int, names []string) {
		for i, f := range st.Fields {
			if n >= 0 && remaining <= 0 {
				return
			}
			p := append(append([]int(nil), path...), i)
			nm := append(append([]string(nil), names...), f.Name)
			if s, ok := f.Type.(*actions.StructType); ok {
				walk(s, p, nm)
				continue
			}
			remaining--
			out = append(out, newStatsLeaf(p, nm, f.Type))
		}
	}
	walk(data, nil, nil)
	return out, nil
}

// namedStatsColumns resolves delta.dataSkippingStatsColumns, column
// paths matched case-insensitively.
func namedStatsColumns(data *actions.StructType, paths [][]string) ([]*statsLeaf, error) {
	var out []*statsLeaf
	seen := map[string]bool{}
	for _, parts := range paths {
		item := strings.Join(parts, ".")
		st := data
		var path []int
		var names []string
		var field *actions.StructField
		for k, part := range parts {
			idx := st.IndexFold(part)
			if idx < 0 {
				return nil, fmt.Errorf("writer: delta.dataSkippingStatsColumns names %q, which is not a data column", item)
			}
			field = st.Fields[idx]
			path = append(path, idx)
			names = append(names, field.Name)
			if k < len(parts)-1 {
				s, ok := field.Type.(*actions.StructType)
				if !ok {
					return nil, fmt.Errorf("writer: delta.dataSkippingStatsColumns names %q, but %q is not a struct", item, field.Name)
				}
				st = s
			}
		}
		// A struct names all its leaves.
		var add func(p []int, nm []string, t actions.DataType)
		add = func(p []int, nm []string, t actions.DataType) {
			if s, ok := t.(*actions.StructType); ok {
				for i, f := range s.Fields {
					add(append(append([]int(nil), p...), i), append(append([]string(nil), nm...), f.Name), f.Type)
				}
				return
			}
			key := strings.Join(nm, "\x00")
			if !seen[key] {
				seen[key] = true
				out = append(out, newStatsLeaf(p, nm, t))
			}
		}
		add(path, names, field.Type)
	}
	return out, nil
}

func newStatsLeaf(path []int, names []string, t actions.DataType) *statsLeaf {
	l := &statsLeaf{path: path, names: names, dtype: t, col: -1, ownFrom: -1}
	switch t := t.(type) {
	case *actions.DecimalType:
		l.minMax = true
		l.decScale = int32(t.Scale)
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong,
			actions.TypeFloat, actions.TypeDouble, actions.TypeDate,
			actions.TypeTimestamp, actions.TypeTimestampNTZ, actions.TypeString:
			l.minMax = true
		}
	}
	return l
}

func newStatsCollector(leaves []*statsLeaf) *statsCollector {
	c := &statsCollector{leaves: make([]*statsLeaf, len(leaves))}
	for i, l := range leaves {
		c.leaves[i] = newStatsLeaf(l.path, l.names, l.dtype)
	}
	return c
}

// own reports whether the leaf's rows are observed by update (rather than
// taken from the footer) from now on.
func (l *statsLeaf) own() bool { return l.col < 0 || l.ownFrom >= 0 }

// update adds a batch of the data file's record (the data schema's
// logical Arrow types).
func (c *statsCollector) update(rec arrow.RecordBatch) {
	c.rows += rec.NumRows()
	n := int(rec.NumRows())
	for _, l := range c.leaves {
		arr := rec.Column(l.path[0])
		var parentNull []bool // rows where an enclosing struct is null
		for _, idx := range l.path[1:] {
			st := arr.(*array.Struct)
			parentNull = orNulls(parentNull, st, n)
			arr = st.Field(idx)
		}
		if !l.own() {
			l.observeFooterLeaf(arr, parentNull, n)
			continue
		}
		l.observeArray(arr, parentNull, n)
	}
}

// present reports whether row i holds a value (neither it nor an
// enclosing struct is null).
func present(arr arrow.Array, parentNull []bool, i int) bool {
	return (parentNull == nil || !parentNull[i]) && arr.IsValid(i)
}

// observeArray counts the nulls of arr's first n rows and folds its
// values into the bounds, switching on the type once per batch.
func (l *statsLeaf) observeArray(arr arrow.Array, parentNull []bool, n int) {
	if parentNull == nil && arr.NullN() == 0 && !l.minMax {
		return
	}
	if !l.minMax {
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
			}
		}
		return
	}
	ints := func(get func(i int) int64) {
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
				continue
			}
			l.observeInt(get(i), !l.has)
			l.has = true
		}
	}
	switch a := arr.(type) {
	case *array.Int8:
		ints(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int16:
		ints(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int32:
		ints(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int64:
		ints(a.Value)
	case *array.Date32:
		ints(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Timestamp:
		ints(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Float32, *array.Float64:
		get := func(i int) float64 {
			if f, ok := a.(*array.Float32); ok {
				return float64(f.Value(i))
			}
			return a.(*array.Float64).Value(i)
		}
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
				continue
			}
			l.observeFloat(get(i))
			l.has = true
		}
	case *array.String:
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
				continue
			}
			v := a.Value(i)
			if !l.has || v < l.minS {
				l.minS = strings.Clone(v)
			}
			if !l.has || v > l.maxS {
				l.maxS = strings.Clone(v)
			}
			l.has = true
		}
	case *array.Dictionary:
		dict, ok := a.Dictionary().(*array.String)
		if !ok {
			l.minMax = false
			l.observeArray(arr, parentNull, n) // nulls only
			return
		}
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) || dict.IsNull(a.GetValueIndex(i)) {
				l.nulls++
				continue
			}
			v := dict.Value(a.GetValueIndex(i))
			if !l.has || v < l.minS {
				l.minS = strings.Clone(v)
			}
			if !l.has || v > l.maxS {
				l.maxS = strings.Clone(v)
			}
			l.has = true
		}
	case *array.Decimal128:
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
				continue
			}
			v := a.Value(i)
			if !l.has || v.Less(l.minD) {
				l.minD = v
			}
			if !l.has || v.Greater(l.maxD) {
				l.maxD = v
			}
			l.has = true
		}
	default:
		// Not reached for the table's own types; count nulls only.
		l.minMax = false
		for i := 0; i < n; i++ {
			if !present(arr, parentNull, i) {
				l.nulls++
			}
		}
	}
}

func orNulls(acc []bool, a arrow.Array, n int) []bool {
	if a.NullN() == 0 {
		return acc
	}
	if acc == nil {
		acc = make([]bool, n)
	}
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			acc[i] = true
		}
	}
	return acc
}

func (l *statsLeaf) observeInt(v int64, first bool) {
	if first || v < l.minI {
		l.minI = v
	}
	if first || v > l.maxI {
		l.maxI = v
	}
}

func (l *statsLeaf) observeFloat(v float64) {
	if math.IsNaN(v) {
		l.nan = true
		return
	}
	if !l.floatSeen || v < l.minF {
		l.minF = v
	}
	if !l.floatSeen || v > l.maxF {
		l.maxF = v
	}
	l.floatSeen = true
}

// json renders the stats object, keys in schema order.
func (c *statsCollector) json() (string, error) {
	minV, maxV, nulls := &actions.StatsValues{}, &actions.StatsValues{}, &actions.StatsValues{}
	for _, l := range c.leaves {
		if !l.nullUnknown {
			nulls.Set(l.names, l.nulls)
		}
		if !l.minMax || !l.has || l.nan || l.noBounds {
			continue
		}
		lo, hi, ok := l.bounds()
		if !ok {
			continue
		}
		minV.Set(l.names, lo)
		maxV.Set(l.names, hi)
	}
	return actions.RenderStats(c.rows, len(c.leaves) > 0, minV, maxV, nulls), nil
}

// bounds returns the leaf's min and max as JSON-ready values
// (json.RawMessage or string).
func (l *statsLeaf) bounds() (lo, hi any, ok bool) {
	switch t := l.dtype.(type) {
	case *actions.DecimalType:
		return json.RawMessage(decimalJSON(l.minD, t.Scale)), json.RawMessage(decimalJSON(l.maxD, t.Scale)), true
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
			return json.RawMessage(strconv.FormatInt(l.minI, 10)), json.RawMessage(strconv.FormatInt(l.maxI, 10)), true
		case actions.TypeFloat, actions.TypeDouble:
			if !l.floatSeen || math.IsInf(l.minF, 0) || math.IsInf(l.maxF, 0) {
				// JSON has no infinities; Spark writes them as strings,
				// which not every reader parses. Leave the bounds out.
				return nil, nil, false
			}
			bits := 64
			if t == actions.TypeFloat {
				bits = 32
			}
			return json.RawMessage(strconv.FormatFloat(l.minF, 'g', -1, bits)), json.RawMessage(strconv.FormatFloat(l.maxF, 'g', -1, bits)), true
		case actions.TypeDate:
			return actions.FormatStatsDate(l.minI), actions.FormatStatsDate(l.maxI), true
		case actions.TypeTimestamp:
			return actions.FormatStatsTimestamp(l.minI, true, false), actions.FormatStatsTimestamp(l.maxI, true, true), true
		case actions.TypeTimestampNTZ:
			return actions.FormatStatsTimestamp(l.minI, false, false), actions.FormatStatsTimestamp(l.maxI, false, true), true
		case actions.TypeString:
			return truncateMin(l.minS), truncateMax(l.maxS), true
		}
	}
	return nil, nil, false
}

// truncateMin and truncateMax are the stats' string bounds
// (actions.TruncateStatsMin, actions.TruncateStatsMax: Spark's
// truncation to 32 characters, the max with its tie-breaker).
func truncateMin(s string) string { return actions.TruncateStatsMin(s) }

func truncateMax(s string) string { return actions.TruncateStatsMax(s) }

func decimalJSON(v decimal128.Num, scale int) string {
	return v.ToString(int32(scale))
}
