package main

import (
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/reader"
)

// scan --columns also takes row tracking's metadata columns, as Spark
// spells them: _metadata.row_id and _metadata.row_commit_version.
var rowTrackingColumns = map[string]string{
	"_metadata.row_id":             reader.RowIDColumn,
	"_metadata.row_commit_version": reader.RowCommitVersionColumn,
}

// splitMetadataColumns separates the table's columns from the metadata
// columns in cols: table columns for WithColumns, and whether any
// metadata column was asked for.
func splitMetadataColumns(cols []string) (table []string, meta bool) {
	for _, c := range cols {
		if _, ok := rowTrackingColumns[strings.ToLower(c)]; ok {
			meta = true
			continue
		}
		table = append(table, c)
	}
	return table, meta
}

// orderColumns projects a scan's batches (the table columns asked for,
// then the reader's _row_id and _row_commit_version) to the order of cols,
// the metadata columns named as the user spelled them.
func orderColumns(sc *arrow.Schema, cols []string, recs iter.Seq2[arrow.RecordBatch, error]) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error]) {
	idx := make([]int, len(cols))
	fields := make([]arrow.Field, len(cols))
	next := 0
	for i, c := range cols {
		if name, ok := rowTrackingColumns[strings.ToLower(c)]; ok {
			idx[i] = sc.FieldIndices(name)[0]
			fields[i] = sc.Field(idx[i])
			fields[i].Name = c
			continue
		}
		idx[i] = next
		fields[i] = sc.Field(next)
		next++
	}
	out := arrow.NewSchema(fields, nil)
	return out, func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range recs {
			if err != nil {
				yield(nil, err)
				return
			}
			arrs := make([]arrow.Array, len(idx))
			for i, k := range idx {
				arrs[i] = rec.Column(k)
			}
			p := array.NewRecordBatch(out, arrs, rec.NumRows())
			ok := yield(p, nil)
			p.Release()
			if !ok {
				return
			}
		}
	}
}
