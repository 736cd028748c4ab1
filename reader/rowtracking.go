package reader

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/internal/arrowbatch"
)

// Row tracking's columns: Spark's _metadata.row_id and
// _metadata.row_commit_version.
const (
	RowIDColumn            = "_row_id"
	RowCommitVersionColumn = "_row_commit_version"
)

// WithRowTracking adds two last columns (long): RowIDColumn, each row's
// stable row ID, and RowCommitVersionColumn, the version that last
// committed the row (PROTOCOL.md "Row Tracking": the file's materialized
// column where it holds a value, else baseRowId + the row's index in the
// file and the add's defaultRowCommitVersion). The table must have row
// tracking enabled (delta.enableRowTracking=true), as Spark requires.
func WithRowTracking() Option { return func(c *config) { c.rowTracking = true } }

// rowTracking is a scan's plan for WithRowTracking: the materialized
// columns are read as file columns after the output, with the row index,
// and replaced by the two result columns.
type rowTracking struct {
	idName, versionName string
	keepRowIndex        bool // the caller asked for WithRowIndex too
}

func planRowTracking(snap *deltalog.Snapshot, cfg config) (*rowTracking, error) {
	if !cfg.rowTracking {
		return nil, nil
	}
	if !snap.Config().RowTracking() {
		return nil, fmt.Errorf("reader: row IDs are not available: the table does not have row tracking enabled (%s=true)", actions.PropEnableRowTracking)
	}
	p := snap.Properties()
	if p.MaterializedRowIDColumnName == "" || p.MaterializedRowCommitVersionColumnName == "" {
		return nil, fmt.Errorf("reader: row tracking is enabled but %s or %s is not set", actions.PropMaterializedRowIDName, actions.PropMaterializedRowCommitVersionName)
	}
	for _, n := range []string{RowIDColumn, RowCommitVersionColumn} {
		if snap.Schema().FieldFold(n) != nil {
			return nil, fmt.Errorf("reader: the table has a column %q, which WithRowTracking would shadow", n)
		}
	}
	return &rowTracking{idName: p.MaterializedRowIDColumnName, versionName: p.MaterializedRowCommitVersionColumnName, keepRowIndex: cfg.rowIndex}, nil
}

// fileFields are the materialized columns, read from each file by name.
func (rt *rowTracking) fileFields() []*actions.StructField {
	return []*actions.StructField{
		{Name: rt.idName, Type: actions.TypeLong, Nullable: true},
		{Name: rt.versionName, Type: actions.TypeLong, Nullable: true},
	}
}

// schema is the scan's output schema from the assembled one, whose last
// columns are the two materialized ones and the row index.
func (rt *rowTracking) schema(assembled *arrow.Schema) *arrow.Schema {
	fs := assembled.Fields()
	out := slices.Clone(fs[:len(fs)-3])
	if rt.keepRowIndex {
		out = append(out, fs[len(fs)-1])
	}
	out = append(out, arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: RowCommitVersionColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	return arrow.NewSchema(out, nil)
}

// apply turns an assembled batch of f into the output batch: row IDs and
// versions from the materialized columns where set, else from the add.
// A file without baseRowId (written before row tracking, not backfilled)
// gives nulls.
func (rt *rowTracking) apply(rec arrow.RecordBatch, f *ScanFile, out *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	defer rec.Release()
	n := int(rec.NumRows())
	nc := int(rec.NumCols())
	matID := rec.Column(nc - 3).(*array.Int64)
	matVer := rec.Column(nc - 2).(*array.Int64)
	index := rec.Column(nc - 1).(*array.Int64)
	ids, vers := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	defer ids.Release()
	defer vers.Release()
	ids.Reserve(n)
	vers.Reserve(n)
	for i := range n {
		switch {
		case matID.IsValid(i):
			ids.UnsafeAppend(matID.Value(i))
		case f.Add.BaseRowID != nil:
			ids.UnsafeAppend(*f.Add.BaseRowID + index.Value(i))
		default:
			ids.UnsafeAppendBoolToBitmap(false)
		}
		switch {
		case matVer.IsValid(i):
			vers.UnsafeAppend(matVer.Value(i))
		case f.Add.DefaultRowCommitVersion != nil:
			vers.UnsafeAppend(*f.Add.DefaultRowCommitVersion)
		default:
			vers.UnsafeAppendBoolToBitmap(false)
		}
	}
	cols := make([]arrow.Array, 0, out.NumFields())
	for i := range nc - 3 {
		cols = append(cols, rec.Column(i))
	}
	if rt.keepRowIndex {
		cols = append(cols, index)
	}
	out = arrowbatch.SchemaOf(out, cols) // dictionary columns (WithDictionaries) keep their type
	idArr, verArr := ids.NewArray(), vers.NewArray()
	defer idArr.Release()
	defer verArr.Release()
	cols = append(cols, idArr, verArr)
	return array.NewRecordBatch(out, cols, int64(n))
}
