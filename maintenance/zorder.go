package maintenance

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/internal/arrowbatch"
)

// zorderBatchRows is the size of the batches a Z-ordered bin is written
// in.
const zorderBatchRows = 64 << 10

// checkZOrderColumns resolves the Z-order columns against the schema
// (case-insensitively, as Spark): each must be a top-level column of a
// primitive type, not a partition column (a partition holds one value of
// it), and named once. nil when cols is empty.
func checkZOrderColumns(snap *deltalog.Snapshot, cols []string) ([]string, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	var out []string
	for _, c := range cols {
		f := snap.Schema().FieldFold(c)
		if f == nil {
			return nil, fmt.Errorf("maintenance: optimize: z-order column %q is not in the table's schema", c)
		}
		for _, p := range snap.PartitionColumns() {
			if strings.EqualFold(p, f.Name) {
				return nil, fmt.Errorf("maintenance: optimize: z-order column %q is a partition column; each partition holds one value of it", c)
			}
		}
		switch f.Type.(type) {
		case actions.PrimitiveType, *actions.DecimalType:
		default:
			return nil, fmt.Errorf("maintenance: optimize: z-order column %q is of type %s; only primitive columns can be z-ordered", c, f.Type)
		}
		if slices.Contains(out, f.Name) {
			return nil, fmt.Errorf("maintenance: optimize: z-order column %q is named twice", c)
		}
		out = append(out, f.Name)
	}
	return out, nil
}

// zorderRows yields rows sorted by their Z-order value over cols: each
// column's values are mapped to order-preserving 64-bit keys, scaled to
// the bin's range of them (range normalization) into 64/len(cols) bits,
// and the bits interleaved, the highest of each column first. Rows close
// on the curve are close in every column, so the files written in curve
// order have narrow min/max ranges on each column. Nulls sort first.
//
// It holds the bin's rows in memory: a bin is one partition.
func zorderRows(in iter.Seq2[arrow.RecordBatch, error], cols []string, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var recs []arrow.RecordBatch
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		for rec, err := range in {
			if err != nil {
				yield(nil, err)
				return
			}
			rec.Retain()
			recs = append(recs, rec)
		}
		if len(recs) == 0 {
			return
		}
		all, err := arrowbatch.Concat(recs, mem)
		if err != nil {
			yield(nil, fmt.Errorf("maintenance: z-order: %w", err))
			return
		}
		defer all.Release()
		z, err := zValues(all, cols)
		if err != nil {
			yield(nil, err)
			return
		}
		idx := make([]int64, len(z))
		for i := range idx {
			idx[i] = int64(i)
		}
		slices.SortStableFunc(idx, func(a, b int64) int {
			switch {
			case z[a] < z[b]:
				return -1
			case z[a] > z[b]:
				return 1
			}
			return 0
		})
		ctx := compute.WithAllocator(context.Background(), mem)
		for start := 0; start < len(idx); start += zorderBatchRows {
			b := array.NewInt64Builder(mem)
			b.AppendValues(idx[start:min(start+zorderBatchRows, len(idx))], nil)
			ind := b.NewArray()
			b.Release()
			out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(all), compute.NewDatumWithoutOwning(ind))
			ind.Release()
			if err != nil {
				yield(nil, fmt.Errorf("maintenance: z-order: %w", err))
				return
			}
			rec := out.(*compute.RecordDatum).Value
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				return
			}
		}
	}
}

// zValues computes each row's Z-order value.
func zValues(rec arrow.RecordBatch, cols []string) ([]uint64, error) {
	n := int(rec.NumRows())
	width := 64 / len(cols)
	keys := make([][]uint64, len(cols))
	valid := make([][]bool, len(cols))
	for ci, name := range cols {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("maintenance: z-order: column %q not in the rows read", name)
		}
		k, v, err := orderKeys(rec.Column(idx[0]))
		if err != nil {
			return nil, fmt.Errorf("maintenance: z-order: column %q: %w", name, err)
		}
		keys[ci], valid[ci] = k, v
	}
	z := make([]uint64, n)
	scaled := make([][]uint64, len(cols))
	for ci := range cols {
		scaled[ci] = normalize(keys[ci], valid[ci], width)
	}
	for i := range n {
		var v uint64
		for b := width - 1; b >= 0; b-- {
			for ci := range cols {
				v = v<<1 | (scaled[ci][i]>>uint(b))&1
			}
		}
		z[i] = v
	}
	return z, nil
}

// normalize maps keys onto [0, 2^width) by the range of the valid ones:
// the smallest valid key to 1, the largest to 2^width-1; nulls to 0.
func normalize(keys []uint64, valid []bool, width int) []uint64 {
	out := make([]uint64, len(keys))
	lo, hi, seen := uint64(math.MaxUint64), uint64(0), false
	for i, k := range keys {
		if valid[i] {
			lo, hi, seen = min(lo, k), max(hi, k), true
		}
	}
	if !seen {
		return out
	}
	top := uint64(1)<<uint(width) - 2 // values 1 .. 2^width-1
	span := hi - lo
	for i, k := range keys {
		if !valid[i] {
			continue
		}
		if span == 0 {
			out[i] = 1
			continue
		}
		// (k-lo) * top / span, exactly: the product fits 128 bits and
		// the quotient is at most top.
		h, l := bits.Mul64(k-lo, top)
		q, _ := bits.Div64(h, l, span)
		out[i] = q + 1
	}
	return out
}

// orderKeys maps a column's values to uint64 keys whose order is the
// values' order (strings and binaries by their first 8 bytes).
func orderKeys(a arrow.Array) ([]uint64, []bool, error) {
	n := a.Len()
	keys := make([]uint64, n)
	valid := make([]bool, n)
	signed := func(v int64) uint64 { return uint64(v) ^ (1 << 63) }
	float := func(f float64) uint64 {
		u := math.Float64bits(f)
		if u>>63 == 1 {
			return ^u
		}
		return u | 1<<63
	}
	prefix := func(b []byte) uint64 {
		var buf [8]byte
		copy(buf[:], b)
		var v uint64
		for _, c := range buf {
			v = v<<8 | uint64(c)
		}
		return v
	}
	for i := range n {
		if a.IsNull(i) {
			continue
		}
		valid[i] = true
		switch c := a.(type) {
		case *array.Int8:
			keys[i] = signed(int64(c.Value(i)))
		case *array.Int16:
			keys[i] = signed(int64(c.Value(i)))
		case *array.Int32:
			keys[i] = signed(int64(c.Value(i)))
		case *array.Int64:
			keys[i] = signed(c.Value(i))
		case *array.Date32:
			keys[i] = signed(int64(c.Value(i)))
		case *array.Timestamp:
			keys[i] = signed(int64(c.Value(i)))
		case *array.Float32:
			keys[i] = float(float64(c.Value(i)))
		case *array.Float64:
			keys[i] = float(c.Value(i))
		case *array.Boolean:
			if c.Value(i) {
				keys[i] = 1
			}
		case *array.String:
			keys[i] = prefix([]byte(c.Value(i)))
		case *array.LargeString:
			keys[i] = prefix([]byte(c.Value(i)))
		case *array.Binary:
			keys[i] = prefix(c.Value(i))
		case *array.Decimal128:
			scale := c.DataType().(*arrow.Decimal128Type).Scale
			keys[i] = float(c.Value(i).ToFloat64(scale))
		default:
			return nil, nil, fmt.Errorf("cannot z-order values of type %s", a.DataType())
		}
	}
	return keys, valid, nil
}
