// Package arrowbatch holds the operations on whole Arrow record batches
// that the operations packages (dml, maintenance), the reader and the
// writer share.
package arrowbatch

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Concat joins batches of one schema into one batch, allocated from mem,
// with the first batch's schema.
// One batch is returned itself, retained. The result is the caller's to
// release; the inputs stay the caller's.
func Concat(batches []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch len(batches) {
	case 0:
		return nil, fmt.Errorf("arrowbatch: no batch to concatenate")
	case 1:
		batches[0].Retain()
		return batches[0], nil
	}
	schema := batches[0].Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer Release(cols)
	var n int64
	for _, b := range batches {
		if !sameColumns(schema, b.Schema()) {
			return nil, fmt.Errorf("arrowbatch: batches of different columns: %s and %s", schema, b.Schema())
		}
		n += b.NumRows()
	}
	parts := make([]arrow.Array, len(batches))
	for i := range cols {
		for k, b := range batches {
			parts[k] = b.Column(i)
		}
		var err error
		if cols[i], err = array.Concatenate(parts, mem); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// sameColumns reports whether b has a's column types (names and metadata
// aside), so that their columns concatenate.
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// Release releases every non-nil array of as.
func Release(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// Bytes is the size of the buffers rec references, children and
// dictionaries included (a buffer shared by columns counts once per use):
// what holding rec keeps in memory, about.
func Bytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// SchemaOf is sc, or, when a column of cols is a dictionary array where
// sc names the plain type (the reader's WithDictionaries, the writer's
// dictionary pass-through), a copy of sc naming the dictionary type.
func SchemaOf(sc *arrow.Schema, cols []arrow.Array) *arrow.Schema {
	var fields []arrow.Field
	for i, c := range cols {
		if c.DataType().ID() != arrow.DICTIONARY || sc.Field(i).Type.ID() == arrow.DICTIONARY {
			continue
		}
		if fields == nil {
			fields = slices.Clone(sc.Fields())
		}
		fields[i].Type = c.DataType()
	}
	if fields == nil {
		return sc
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

// ShareDictionaries prepares rec to be read by several goroutines at
// once: arrow-go makes a Dictionary array's values array on first use,
// without a lock, so each dictionary column's is made here, by the one
// goroutine that holds rec before it is shared.
func ShareDictionaries(rec arrow.RecordBatch) {
	for _, c := range rec.Columns() {
		if d, ok := c.(*array.Dictionary); ok {
			d.Dictionary()
		}
	}
}
