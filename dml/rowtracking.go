package dml

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Row tracking in rewrites: on a table with row tracking enabled, the
// rewrite reads each row's ID and commit version (reader.WithRowTracking)
// and writes them into the new files' materialized columns
// (writer.WithMaterializedRowTracking), as Spark does: a copied row keeps
// both, an updated row keeps its ID and takes the new file's commit
// version (a null version), an inserted row gets a fresh ID (nulls). Rows
// a deletion vector drops keep theirs by construction: the file is
// re-added with its baseRowId. The commit is tagged
// delta.rowTracking.preserved=true.

// rowIDs are one read batch's row IDs and commit versions, split off the
// batch so that the rewrite sees the batch it always did (the table's
// columns and the row index).
type rowIDs struct {
	cols    arrow.RecordBatch // the two columns, as the materialized ones are named
	idName  string
	verName string
}

// splitRowIDs splits the trailing _row_id and _row_commit_version of rec
// off: the rest is returned (retained), and the two columns renamed to the
// materialized columns' names.
func (j *job) splitRowIDs(rec arrow.RecordBatch) (arrow.RecordBatch, *rowIDs) {
	k := int(rec.NumCols()) - 2
	base := array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields()[:k], nil), rec.Columns()[:k], rec.NumRows())
	props := j.snap.Properties()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: props.MaterializedRowIDColumnName, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: props.MaterializedRowCommitVersionColumnName, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	cols := array.NewRecordBatch(sc, rec.Columns()[k:], rec.NumRows())
	return base, &rowIDs{cols: cols, idName: props.MaterializedRowIDColumnName, verName: props.MaterializedRowCommitVersionColumnName}
}

func (r *rowIDs) release() { r.cols.Release() }

// attach returns out (released) with the IDs of the rows mask selects
// appended, and their versions when keepVersion, else nulls.
func (j *job) attachRowIDs(r *rowIDs, out arrow.RecordBatch, mask []bool, count int, keepVersion bool) (arrow.RecordBatch, error) {
	defer out.Release()
	sel, err := j.take(r.cols, mask, count, true)
	if err != nil {
		return nil, err
	}
	defer sel.Release()
	if sel.NumRows() != out.NumRows() {
		return nil, fmt.Errorf("dml: %s: row tracking: %d rows out for %d rows in; their row IDs cannot be kept", j.op, out.NumRows(), sel.NumRows())
	}
	fields := append(out.Schema().Fields(), sel.Schema().Fields()...)
	cols := append(append([]arrow.Array{}, out.Columns()...), sel.Column(0))
	if keepVersion {
		cols = append(cols, sel.Column(1))
	} else {
		nulls := array.MakeArrayOfNull(j.mem, arrow.PrimitiveTypes.Int64, int(sel.NumRows()))
		defer nulls.Release()
		cols = append(cols, nulls)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, out.NumRows()), nil
}
