package writer

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/internal/arrowbatch"
)

// Dictionary pass-through. A rewrite reads dictionary-encoded string
// columns as Arrow dictionary arrays (reader.WithDictionaries) and the
// writer hands them to pqarrow's direct dictionary path, which puts the
// dictionary into the column chunk's encoder once and writes the indices,
// instead of hashing every value again (arrow-go's BinaryMemoTable
// allocates per value). pqarrow takes a dictionary array only as the
// chunk's first write or with the dictionary it started with: any other
// dictionary, or one after plain values, makes it fall back to plain
// encoding for the rest of the chunk. So per row group and column
// (dictChunks) the first dictionary is remembered; a batch with that one
// (the same array, or equal values) passes through, any other is decoded
// to plain values here, which the encoder hashes into its dictionary as
// usual. Plain values after the dictionary are fine (they extend it).
//
// TestDictionaryPassThroughDifferential writes random data both ways and
// compares the files' rows and stats.

// passDictionary returns a (retained) when it is a dictionary array of
// int32 indices whose values have the column's Arrow type target and the
// column may keep it; else nil.
func (c *conformer) passDictionary(a arrow.Array, f *actions.StructField, target arrow.DataType) arrow.Array {
	d, ok := a.(*array.Dictionary)
	if !ok || !c.keepDicts || c.partition[lowerName(f.Name)] || isGenerated(f) {
		return nil
	}
	dt := d.DataType().(*arrow.DictionaryType)
	if dt.IndexType.ID() != arrow.INT32 || !arrow.TypeEqual(dt.ValueType, target) ||
		(target.ID() != arrow.STRING && target.ID() != arrow.BINARY) || d.Dictionary().NullN() > 0 || hasEmpty(d.Dictionary()) {
		return nil
	}
	d.Retain()
	return d
}

// hasEmpty reports whether a dictionary (strings or binary) holds an
// empty value. arrow-go v18.8.0's direct dictionary path leaves empty
// values out of the chunk's min and max (a dictionary of "" and "b" gets
// min "b"), which would make the stats taken from the footer wrong; such
// dictionaries are decoded instead.
func hasEmpty(dict arrow.Array) bool {
	var offs []int32
	switch a := dict.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	default:
		return true
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] == offs[i-1] {
			return true
		}
	}
	return false
}

func lowerName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

// dictChunks remembers, per column of the row group being buffered, the
// dictionary its chunk took, or that plain values came first.
type dictChunks struct {
	cols []dictChunk
}

type dictChunk struct {
	dict  arrow.Array // the dictionary the chunk's encoder holds
	plain bool        // plain values came first: no dictionary passes
}

// reset forgets the row group's chunks.
func (dc *dictChunks) reset() {
	for i := range dc.cols {
		if dc.cols[i].dict != nil {
			dc.cols[i].dict.Release()
		}
		dc.cols[i] = dictChunk{}
	}
}

// prepare returns rec as the file writer of schema sc takes it (to be
// released): labelled with sc, each dictionary column passed as it
// is where its chunk can take its dictionary, decoded otherwise.
func (dc *dictChunks) prepare(rec arrow.RecordBatch, sc *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(dc.cols) < int(rec.NumCols()) {
		dc.cols = append(dc.cols, make([]dictChunk, int(rec.NumCols())-len(dc.cols))...)
	}
	var cols []arrow.Array // copies of rec's columns, when one is decoded
	hasDict := false
	for i, col := range rec.Columns() {
		ch := &dc.cols[i]
		d, ok := col.(*array.Dictionary)
		if !ok {
			if ch.dict == nil {
				ch.plain = true
			}
			continue
		}
		switch {
		case ch.plain:
		case ch.dict == nil:
			ch.dict = d.Dictionary()
			ch.dict.Retain()
			hasDict = true
			continue
		case ch.dict == d.Dictionary() || array.Equal(ch.dict, d.Dictionary()):
			hasDict = true
			continue
		}
		taken, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), d.Dictionary(), d.Indices())
		if err != nil {
			for _, c := range cols {
				c.Release()
			}
			return nil, err
		}
		plain := withValueBuffersArray(taken) // Take of only "" has no value buffer
		taken.Release()
		if cols == nil {
			cols = slices.Clone(rec.Columns())
			for _, c := range cols {
				c.Retain()
			}
		}
		cols[i].Release()
		cols[i] = plain
	}
	if cols != nil {
		rec = array.NewRecordBatch(arrowbatch.SchemaOf(sc, cols), cols, rec.NumRows())
		for _, c := range cols {
			c.Release()
		}
	} else {
		rec.Retain()
	}
	if !hasDict {
		return rec, nil // sc's own types
	}
	// pqarrow checks a batch's schema against the file's, though it writes
	// each column by its array's own type: a dictionary column is labelled
	// with the file's (plain) type.
	return labelled{RecordBatch: rec, schema: sc}, nil
}

// labelled is a batch whose Schema is another, equal but for the
// dictionary types of some columns.
type labelled struct {
	arrow.RecordBatch
	schema *arrow.Schema
}

func (l labelled) Schema() *arrow.Schema { return l.schema }
