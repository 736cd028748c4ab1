package writer

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Dictionary encoding pays when values repeat; for columns whose values
// are mostly distinct (ids, measurements, timestamps) it costs a hash
// lookup per value, a hash table that grows to the dictionary page limit
// (several MB per column per open file), and a dictionary page that
// readers must decode, only for the Parquet writer to give up and fall
// back to plain encoding when the dictionary outgrows its page. So a
// write samples the first sizeable chunk of rows it routes to a file and
// turns dictionary encoding off for the top-level columns in which more
// than half the sampled values are distinct, as ORC writers decide from
// their dictionary key threshold. Nested columns keep the default.
const (
	// dictSampleMin is the fewest rows a sample must have to decide on;
	// smaller chunks keep the default (dictionary) until a larger one
	// comes.
	dictSampleMin = 4096
	// dictSampleMax bounds the rows looked at.
	dictSampleMax = 64 * 1024
	// dictMaxDistinct is the distinct fraction above which a column is
	// written without a dictionary.
	dictMaxDistinct = 0.5
)

// plainColumns returns the names of rec's top-level columns whose sampled
// values are mostly distinct, or ok false when rec is too small to tell.
func plainColumns(rec arrow.RecordBatch) (names []string, ok bool) {
	n := int(rec.NumRows())
	if n < dictSampleMin {
		return nil, false
	}
	n = min(n, dictSampleMax)
	for i, col := range rec.Columns() {
		d, valid, counted := distinctCount(col, n)
		if counted && valid >= dictSampleMin && float64(d) > dictMaxDistinct*float64(valid) {
			names = append(names, rec.Schema().Field(i).Name)
		}
	}
	return names, true
}

// distinctCount counts the distinct non-null values among the first n
// rows of a, and how many non-null values there were. counted is false
// for types it does not sample (nested, boolean), which keep the default.
func distinctCount(a arrow.Array, n int) (distinct, valid int, counted bool) {
	switch a := a.(type) {
	case *array.Int8, *array.Int16, *array.Boolean:
		// Few possible values: a dictionary is always small.
		return 0, 0, false
	case *array.Int32:
		return countKeys(a, n, func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Int64:
		return countKeys(a, n, func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Date32:
		return countKeys(a, n, func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Timestamp:
		return countKeys(a, n, func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Float32:
		return countKeys(a, n, func(i int) uint64 { return uint64(math.Float32bits(a.Value(i))) })
	case *array.Float64:
		return countKeys(a, n, func(i int) uint64 { return math.Float64bits(a.Value(i)) })
	case *array.String:
		return countKeys(a, n, a.Value)
	case *array.Binary:
		return countKeys(a, n, func(i int) string { return string(a.Value(i)) })
	case *array.Decimal128:
		return countKeys(a, n, func(i int) decimal128.Num { return a.Value(i) })
	}
	return 0, 0, false
}

func countKeys[K comparable](a arrow.Array, n int, get func(int) K) (int, int, bool) {
	seen := make(map[K]struct{}, n)
	valid := 0
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			continue
		}
		valid++
		seen[get(i)] = struct{}{}
	}
	return len(seen), valid, true
}
