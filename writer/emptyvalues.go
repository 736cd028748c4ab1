package writer

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A string or binary array whose values are all empty (or null) may have
// no value bytes at all: arrow-go's own kernels make such arrays (Take,
// as a dictionary is decoded; Filter, as DML keeps some rows) with a nil
// value buffer. arrow-go v18.8.0's Parquet writer reads each value as a
// slice of that buffer, and a slice of nil is nil, which its statistics
// take for "no value": the empty strings are left out of the chunk's min
// and max. A chunk of only such values gets no bounds (the file's stats
// then have none for the column), and a chunk that also holds other
// values gets a min above "" (the file's stats would then let a scan skip
// the file for s = ''). withValueBuffers gives every such array (at any
// depth) an empty, non-nil value buffer before the batch is encoded.

// withValueBuffers returns rec (retained) when none of its string or
// binary arrays lacks a value buffer, else a copy whose arrays have one.
func withValueBuffers(rec arrow.RecordBatch) arrow.RecordBatch {
	var cols []arrow.Array
	for i, c := range rec.Columns() {
		d, changed := fillValueBuffers(c.Data())
		if !changed {
			continue
		}
		if cols == nil {
			cols = make([]arrow.Array, rec.NumCols())
			for j, c := range rec.Columns() {
				c.Retain()
				cols[j] = c
			}
		}
		cols[i].Release()
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	if cols == nil {
		rec.Retain()
		return rec
	}
	out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

// withValueBuffersArray is withValueBuffers for one array.
func withValueBuffersArray(a arrow.Array) arrow.Array {
	d, changed := fillValueBuffers(a.Data())
	if !changed {
		a.Retain()
		return a
	}
	defer d.Release()
	return array.MakeFromData(d)
}

// fillValueBuffers returns d's data with a value buffer for every string
// or binary array in it, and whether it had to add one (the returned
// data is then a new reference the caller releases).
func fillValueBuffers(d arrow.ArrayData) (arrow.ArrayData, bool) {
	switch d.DataType().ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		bufs := d.Buffers()
		if d.Len() == 0 || len(bufs) < 3 || (bufs[2] != nil && bufs[2].Bytes() != nil) {
			return d, false
		}
		nb := []*memory.Buffer{bufs[0], bufs[1], memory.NewBufferBytes([]byte{})}
		return array.NewData(d.DataType(), d.Len(), nb, d.Children(), d.NullN(), d.Offset()), true
	case arrow.DICTIONARY:
		return d, false // the dictionary path keeps dictionaries without empty values (hasEmpty)
	}
	children := d.Children()
	var fixed []arrow.ArrayData
	for i, c := range children {
		nc, changed := fillValueBuffers(c)
		if !changed {
			continue
		}
		if fixed == nil {
			fixed = slices.Clone(children)
		}
		defer nc.Release()
		fixed[i] = nc
	}
	if fixed == nil {
		return d, false
	}
	return array.NewData(d.DataType(), d.Len(), d.Buffers(), fixed, d.NullN(), d.Offset()), true
}
