package uniform

import (
	"encoding/json"

	"github.com/apache/iceberg-go"
	"github.com/lakelog/lakelog/actions"
)

// columnStats gives a data file the column metrics Iceberg readers prune
// with, from the Delta add's stats, for top-level columns: null counts,
// and lower and upper bounds of the types whose Delta bounds are exact
// (byte, short, integer, long, date). String bounds are truncated in
// Delta's stats and timestamps rounded to milliseconds, so neither is a
// sound Iceberg upper bound; floats and decimals are left out too. A
// bound that does not read as its type is left out, never guessed.
func columnStats(b *iceberg.DataFileBuilder, table *actions.TableConfig, st *actions.Stats) {
	nulls := map[int]int64{}
	lower, upper := map[int][]byte{}, map[int][]byte{}
	for _, f := range table.Schema().Fields {
		id, ok := f.FieldID()
		if !ok {
			continue
		}
		key := table.PhysicalName(f)
		if n, ok := statInt(st.NullCount[key]); ok {
			nulls[int(id)] = n
		}
		if lo, ok := bound(f.Type, st.MinValues[key]); ok {
			if hi, ok := bound(f.Type, st.MaxValues[key]); ok {
				lower[int(id)], upper[int(id)] = lo, hi
			}
		}
	}
	if len(nulls) > 0 {
		b.NullValueCounts(nulls)
	}
	if len(lower) > 0 {
		b.LowerBoundValues(lower)
		b.UpperBoundValues(upper)
	}
}

func statInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// bound is a Delta stats bound in Iceberg's single-value binary form,
// read by actions' one stats parser (a value out of its type's range is
// refused there).
func bound(t actions.DataType, v any) ([]byte, bool) {
	switch t {
	case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong, actions.TypeDate:
	default:
		return nil, false
	}
	tv, err := actions.ParseStatValue(t, v)
	if err != nil {
		return nil, false
	}
	var lit iceberg.Literal
	switch x := tv.(type) {
	case int8:
		lit = iceberg.Int32Literal(x)
	case int16:
		lit = iceberg.Int32Literal(x)
	case int32:
		lit = iceberg.Int32Literal(x)
	case int64:
		lit = iceberg.Int64Literal(x)
	case actions.Date:
		lit = iceberg.DateLiteral(x)
	default: // nil: no bound
		return nil, false
	}
	b, err := lit.MarshalBinary()
	return b, err == nil
}
