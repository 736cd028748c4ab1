package convert

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakelog/lakelog/actions"
)

// Stats from the footer. Per file, numRecords is the footer's row count;
// per leaf column, nullCount is the sum of the row groups' null counts
// and minValues/maxValues the least minimum and greatest maximum, where
// every row group that holds a value has them. What the footer cannot
// give safely is left out, which no reader mistakes for a bound:
//   - float and double bounds: Parquet writers leave NaN out of min and
//     max, but Delta (Spark) orders NaN above every number, so a file
//     holding NaN would be skipped by "x > 5"; the footer cannot tell;
//   - unsigned integers (their Parquet order is not the Delta type's),
//     INT96 timestamps (no defined order; writers give no stats) and
//     strings that are not valid UTF-8;
//   - nullCount of arrays and maps (the footer counts their elements), and
//     of any column a row group has no null count for.
// A column missing from a file (the merged schema has it from other
// files) is null in every row.

// leaf is one column that gets stats.
type leaf struct {
	names []string
	dtype actions.DataType
	count bool // nullCount can come from the footer (not an array or map)
}

// statsLeaves picks the leaf columns of the data schema that get stats,
// per the table's properties (delta.dataSkippingStatsColumns, else the
// first delta.dataSkippingNumIndexedCols leaves), as the writer does.
func statsLeaves(data *actions.StructType, props *actions.TableProperties) []leaf {
	var out []leaf
	var walk func(t actions.DataType, names []string)
	walk = func(t actions.DataType, names []string) {
		if st, ok := t.(*actions.StructType); ok {
			for _, f := range st.Fields {
				walk(f.Type, append(append([]string(nil), names...), f.Name))
			}
			return
		}
		_, arr := t.(*actions.ArrayType)
		_, mp := t.(*actions.MapType)
		out = append(out, leaf{names: names, dtype: t, count: !arr && !mp})
	}
	walk(data, nil)
	if props.DataSkippingStatsColumns != nil {
		var keep []leaf
		for _, l := range out {
			for _, p := range props.DataSkippingStatsColumns {
				if prefixFold(p, l.names) {
					keep = append(keep, l)
					break
				}
			}
		}
		return keep
	}
	if n := props.DataSkippingNumIndexedCols; n >= 0 && int64(len(out)) > n {
		out = out[:n]
	}
	return out
}

func prefixFold(prefix, names []string) bool {
	if len(prefix) > len(names) {
		return false
	}
	for i, p := range prefix {
		if !strings.EqualFold(p, names[i]) {
			return false
		}
	}
	return true
}

// bound is a leaf's running min and max in one file.
type bound struct {
	ok       bool // every row group with values gave min and max
	has      bool
	min, max any // int64, *big.Int (decimal unscaled) or string
}

// fileStats renders one file's stats JSON.
func fileStats(ft *footer, leaves []leaf) (string, error) {
	minV, maxV, nulls := &actions.StatsValues{}, &actions.StatsValues{}, &actions.StatsValues{}
	md := ft.md
	groups := make([]*metadata.RowGroupMetaData, md.NumRowGroups())
	for rg := range groups {
		groups[rg] = md.RowGroup(rg)
	}
	for _, l := range leaves {
		idx, ok := ft.columns[strings.ToLower(strings.Join(l.names, "."))]
		if !ok {
			if l.count && !inFile(ft, l.names) {
				nulls.Set(l.names, json.RawMessage(strconv.FormatInt(md.NumRows, 10)))
			}
			continue
		}
		col := md.Schema.Column(idx)
		var nullCount int64
		countOK := l.count
		b := bound{ok: true}
		for _, g := range groups {
			cc, err := g.ColumnChunk(idx)
			if err != nil {
				return "", err
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				countOK, b.ok = false, false
				continue
			}
			if st.HasNullCount() {
				nullCount += st.NullCount()
			} else {
				countOK = false
			}
			if !st.HasMinMax() {
				if !st.HasNullCount() || st.NullCount() < g.NumRows() {
					b.ok = false
				}
				continue
			}
			lo, hi, ok := typedBounds(st, col, l.dtype)
			if !ok {
				b.ok = false
				continue
			}
			b.fold(lo, hi)
		}
		if countOK {
			nulls.Set(l.names, json.RawMessage(strconv.FormatInt(nullCount, 10)))
		}
		if b.ok && b.has {
			lo, hi := render(b.min, l.dtype, false), render(b.max, l.dtype, true)
			if lo != nil && hi != nil {
				minV.Set(l.names, lo)
				maxV.Set(l.names, hi)
			}
		}
	}
	return actions.RenderStats(md.NumRows, len(leaves) > 0, minV, maxV, nulls), nil
}

// inFile reports whether the file has the column at all (maybe as a
// nested or repeated one, which gets no stats): a column it lacks is all
// null.
func inFile(ft *footer, names []string) bool {
	st := ft.schema
	for i, n := range names {
		f := st.FieldFold(n)
		if f == nil {
			return false
		}
		if i == len(names)-1 {
			return true
		}
		s, ok := f.Type.(*actions.StructType)
		if !ok {
			return true
		}
		st = s
	}
	return true
}

func (b *bound) fold(lo, hi any) {
	if !b.has {
		b.min, b.max, b.has = lo, hi, true
		return
	}
	if less(lo, b.min) {
		b.min = lo
	}
	if less(b.max, hi) {
		b.max = hi
	}
}

func less(a, b any) bool {
	switch x := a.(type) {
	case int64:
		return x < b.(int64)
	case *big.Int:
		return x.Cmp(b.(*big.Int)) < 0
	case string:
		return x < b.(string)
	}
	return false
}

// typedBounds reads one row group's min and max as the Delta type wants
// them: int64 for integers, dates and timestamps (microseconds), the
// unscaled *big.Int of a decimal, the string of a string.
func typedBounds(st metadata.TypedStatistics, col *schema.Column, t actions.DataType) (lo, hi any, ok bool) {
	if it, isInt := col.LogicalType().(interface{ IsSigned() bool }); isInt && !it.IsSigned() {
		return nil, nil, false
	}
	switch t := t.(type) {
	case *actions.DecimalType:
		switch s := st.(type) {
		case *metadata.Int32Statistics:
			return big.NewInt(int64(s.Min())), big.NewInt(int64(s.Max())), true
		case *metadata.Int64Statistics:
			return big.NewInt(s.Min()), big.NewInt(s.Max()), true
		case *metadata.FixedLenByteArrayStatistics:
			return signedBig(s.Min()), signedBig(s.Max()), true
		case *metadata.ByteArrayStatistics:
			return signedBig(s.Min()), signedBig(s.Max()), true
		}
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong, actions.TypeDate:
			switch s := st.(type) {
			case *metadata.Int32Statistics:
				return int64(s.Min()), int64(s.Max()), true
			case *metadata.Int64Statistics:
				return s.Min(), s.Max(), true
			}
		case actions.TypeTimestamp, actions.TypeTimestampNTZ:
			s, isI64 := st.(*metadata.Int64Statistics)
			ts, isTS := col.LogicalType().(interface{ TimeUnit() schema.TimeUnitType })
			if !isI64 || !isTS {
				return nil, nil, false
			}
			switch ts.TimeUnit() {
			case schema.TimeUnitMillis:
				return s.Min() * 1000, s.Max() * 1000, true
			case schema.TimeUnitMicros:
				return s.Min(), s.Max(), true
			}
		case actions.TypeString:
			s, isBA := st.(*metadata.ByteArrayStatistics)
			if !isBA || !utf8.Valid(s.Min()) || !utf8.Valid(s.Max()) {
				return nil, nil, false
			}
			return string(s.Min()), string(s.Max()), true
		}
	}
	return nil, nil, false
}

// signedBig reads a big-endian two's complement integer.
func signedBig(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// render is a bound as add.stats holds it; nil when it has none.
func render(v any, t actions.DataType, upper bool) any {
	switch t := t.(type) {
	case *actions.DecimalType:
		return json.RawMessage(decimalText(v.(*big.Int), t.Scale))
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
			return json.RawMessage(strconv.FormatInt(v.(int64), 10))
		case actions.TypeDate:
			return actions.FormatStatsDate(v.(int64))
		case actions.TypeTimestamp:
			return actions.FormatStatsTimestamp(v.(int64), true, upper)
		case actions.TypeTimestampNTZ:
			return actions.FormatStatsTimestamp(v.(int64), false, upper)
		case actions.TypeString:
			if upper {
				return actions.TruncateStatsMax(v.(string))
			}
			return actions.TruncateStatsMin(v.(string))
		}
	}
	return nil
}

// decimalText renders an unscaled value with scale digits after the
// point: 12345 at scale 2 is 123.45.
func decimalText(v *big.Int, scale int) string {
	s := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}
