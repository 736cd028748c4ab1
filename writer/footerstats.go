package writer

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakelog/lakelog/actions"
)

// Stats from the footer. The Parquet writer computes every column chunk's
// min, max and null count as it encodes (WithStats(true)), on the values
// it encodes (for a dictionary chunk, on the dictionary's referenced
// entries), so the stats collector takes them from the file's footer
// instead of a second pass over the rows. Where Delta's rules differ from
// Parquet's the rows are still looked at, cheaply:
//
//   - floats: Parquet's bounds skip NaN, Delta's stats have no bounds for
//     a column with a NaN (see stats.go), so the rows are scanned for
//     NaN (no comparisons);
//   - strings: the footer holds whole values; truncation to 32 characters
//     is applied to its bounds as to the collector's. A chunk with a
//     value longer than the writer's statistics limit (4 KiB) has no
//     bounds, so before writing a batch holding one the open row group is
//     flushed, and from that row on the leaf's rows are observed here
//     (ownFrom);
//   - a nested leaf under structs: Parquet counts a value null when it or
//     an enclosing struct is, as Delta does;
//   - array and map columns (a nullCount only) and tables with statistics
//     turned off for a column are observed here throughout.
//
// The differential test TestFooterStatsDifferential compares both paths
// over random data.

// useFooter sets, for every leaf of c whose statistics the footer can
// supply, its Parquet column: the data columns are dataSchema's, written
// with props.
func (c *statsCollector) useFooter(dataSchema *arrow.Schema, props *parquet.WriterProperties, pqSchema *schema.Schema) {
	for _, l := range c.leaves {
		if !footerType(l.dtype) {
			continue
		}
		col, ok := leafColumn(dataSchema, l.path)
		if !ok || col >= pqSchema.NumColumns() {
			continue
		}
		path := pqSchema.Column(col).ColumnPath().String()
		if !props.StatisticsEnabledFor(path) {
			continue
		}
		l.col, l.maxStats = col, props.MaxStatsSizeFor(path)
	}
}

// footerType reports whether a leaf of Delta type t gets its stats from
// the footer: every primitive type; arrays and maps are counted here.
func footerType(t actions.DataType) bool {
	_, prim := t.(actions.PrimitiveType)
	_, dec := t.(*actions.DecimalType)
	return prim || dec
}

// leafColumn is the index of the Parquet leaf column of the field at path
// (indexes through structs) of s.
func leafColumn(s *arrow.Schema, path []int) (int, bool) {
	col := 0
	fields := s.Fields()
	for depth, k := range path {
		if k >= len(fields) {
			return 0, false
		}
		for _, f := range fields[:k] {
			col += leafCount(f.Type)
		}
		if depth == len(path)-1 {
			return col, true
		}
		st, ok := fields[k].Type.(*arrow.StructType)
		if !ok {
			return 0, false
		}
		fields = st.Fields()
	}
	return 0, false
}

// leafCount is the number of Parquet leaf columns of an Arrow type.
func leafCount(t arrow.DataType) int {
	switch t := t.(type) {
	case *arrow.DictionaryType:
		return leafCount(t.ValueType)
	case *arrow.StructType:
		n := 0
		for _, f := range t.Fields() {
			n += leafCount(f.Type)
		}
		return n
	case *arrow.MapType:
		return leafCount(t.KeyType()) + leafCount(t.ItemType())
	case arrow.ListLikeType:
		return leafCount(t.Elem())
	}
	return 1
}

// needsOwn reports whether rec holds, for a leaf still taking its bounds
// from the footer, a string longer than the Parquet writer's statistics
// limit; the caller then flushes the row group and calls switchOwn.
func (c *statsCollector) needsOwn(rec arrow.RecordBatch) bool {
	for _, l := range c.leaves {
		if l.own() || !l.minMax {
			continue
		}
		if longest(leafArray(rec, l.path)) >= l.maxStats {
			return true
		}
	}
	return false
}

// switchOwn makes every footer leaf with a string too long for the
// footer's bounds in rec observe its rows from rec on: the rows written so
// far are in flushed row groups, whose footer statistics are kept.
func (c *statsCollector) switchOwn(rec arrow.RecordBatch) {
	for _, l := range c.leaves {
		if l.own() || !l.minMax {
			continue
		}
		if longest(leafArray(rec, l.path)) >= l.maxStats {
			l.ownFrom = c.rows
		}
	}
}

// leafArray is the array at path of rec (through struct children).
func leafArray(rec arrow.RecordBatch, path []int) arrow.Array {
	arr := rec.Column(path[0])
	for _, idx := range path[1:] {
		arr = arr.(*array.Struct).Field(idx)
	}
	return arr
}

// longest is the length of the longest string or binary value of a (for
// a dictionary, of its dictionary), 0 for other types.
func longest(a arrow.Array) int64 {
	if d, ok := a.(*array.Dictionary); ok {
		a = d.Dictionary()
	}
	var offs []int32
	switch a := a.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	default:
		return 0
	}
	var m int32
	for i := 1; i < len(offs); i++ {
		m = max(m, offs[i]-offs[i-1])
	}
	return int64(m)
}

// observeFooterLeaf is update's work for a leaf whose stats come from the
// footer: only a float column is looked at, for NaN.
func (l *statsLeaf) observeFooterLeaf(arr arrow.Array, parentNull []bool, n int) {
	if l.nan {
		return
	}
	switch a := arr.(type) {
	case *array.Float64:
		vs := a.Float64Values()
		for i := 0; i < n; i++ {
			if vs[i] != vs[i] && present(arr, parentNull, i) {
				l.nan = true
				return
			}
		}
	case *array.Float32:
		vs := a.Float32Values()
		for i := 0; i < n; i++ {
			if vs[i] != vs[i] && present(arr, parentNull, i) {
				l.nan = true
				return
			}
		}
	}
}

// fromFooter folds the statistics of the file's column chunks into the
// leaves that take them from the footer (row groups before ownFrom, or
// all).
func (c *statsCollector) fromFooter(md *metadata.FileMetaData) error {
	for _, l := range c.leaves {
		if l.col < 0 {
			continue
		}
		var start int64 // the file row the row group begins at
		for rg := range md.NumRowGroups() {
			rows := md.RowGroup(rg).NumRows()
			start += rows
			if l.ownFrom >= 0 && start > l.ownFrom {
				break // observed by update
			}
			cc, err := md.RowGroup(rg).ColumnChunk(l.col)
			if err != nil {
				return err
			}
			ok, err := cc.StatsSet()
			if err != nil {
				return err
			}
			if !ok {
				l.noBounds, l.nullUnknown = true, true
				continue
			}
			st, err := cc.Statistics()
			if err != nil {
				return err
			}
			if st == nil || !st.HasNullCount() {
				l.nullUnknown = true
			} else {
				l.nulls += st.NullCount()
			}
			if !l.minMax {
				continue
			}
			if st == nil || !st.HasMinMax() {
				// No bounds: the chunk is all nulls, or the writer
				// left them out.
				if st == nil || !st.HasNullCount() || cc.NumValues() > st.NullCount() {
					l.noBounds = true
				}
				continue
			}
			if !l.observeBounds(st) {
				l.noBounds = true
			}
		}
	}
	return nil
}

// observeBounds folds a chunk's min and max into the leaf, reporting
// false for a physical type the leaf's type does not expect.
func (l *statsLeaf) observeBounds(st metadata.TypedStatistics) bool {
	if dt, ok := l.dtype.(*actions.DecimalType); ok {
		var lo, hi decimal128.Num
		switch s := st.(type) {
		case *metadata.Int32Statistics:
			lo, hi = decimal128.FromI64(int64(s.Min())), decimal128.FromI64(int64(s.Max()))
		case *metadata.Int64Statistics:
			lo, hi = decimal128.FromI64(s.Min()), decimal128.FromI64(s.Max())
		case *metadata.FixedLenByteArrayStatistics:
			var ok1, ok2 bool
			lo, ok1 = decimalFromBigEndian(s.Min())
			hi, ok2 = decimalFromBigEndian(s.Max())
			if !ok1 || !ok2 {
				return false
			}
		default:
			return false
		}
		_ = dt
		if !l.has || lo.Less(l.minD) {
			l.minD = lo
		}
		if !l.has || hi.Greater(l.maxD) {
			l.maxD = hi
		}
		l.has = true
		return true
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		l.observeInt(int64(s.Min()), !l.has)
		l.observeInt(int64(s.Max()), false)
	case *metadata.Int64Statistics:
		l.observeInt(s.Min(), !l.has)
		l.observeInt(s.Max(), false)
	case *metadata.Float32Statistics:
		l.observeFloat(float64(s.Min()))
		l.observeFloat(float64(s.Max()))
	case *metadata.Float64Statistics:
		l.observeFloat(s.Min())
		l.observeFloat(s.Max())
	case *metadata.ByteArrayStatistics:
		lo, hi := string(s.Min()), string(s.Max())
		if !l.has || lo < l.minS {
			l.minS = lo
		}
		if !l.has || hi > l.maxS {
			l.maxS = hi
		}
	default:
		return false
	}
	l.has = true
	return true
}

// decimalFromBigEndian reads a two's complement big-endian decimal of at
// most 16 bytes.
func decimalFromBigEndian(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 || len(b) > 16 {
		return decimal128.Num{}, false
	}
	var buf [16]byte
	if b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(b):], b)
	hi := int64(binary.BigEndian.Uint64(buf[:8]))
	lo := binary.BigEndian.Uint64(buf[8:])
	return decimal128.New(hi, lo), true
}
