package maintenance

import (
	"encoding/json"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// OPTIMIZE on a table with row tracking enabled keeps every row's ID and
// commit version, as Spark does: the bin is read with reader.WithRowTracking
// and the two columns are written into the new files' materialized
// columns (writer.WithMaterializedRowTracking), renamed; the commit is
// tagged delta.rowTracking.preserved=true.

// rowTrackingPreservedTag is the commitInfo tag of commits that keep row IDs.
const rowTrackingPreservedTag = "delta.rowTracking.preserved"

// rowTrackingOptions are the scan and write options of a rewrite of snap.
func rowTrackingOptions(snap *deltalog.Snapshot) ([]reader.Option, []writer.Option) {
	if !snap.RowTrackingEnabled() {
		return nil, nil
	}
	return []reader.Option{reader.WithRowTracking()}, []writer.Option{writer.WithMaterializedRowTracking()}
}

// materializedRows renames the scan's trailing _row_id and
// _row_commit_version to the table's materialized column names. Each
// renamed batch is released when the consumer's yield returns.
func materializedRows(snap *deltalog.Snapshot, rows iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	if !snap.RowTrackingEnabled() {
		return rows
	}
	props := snap.Properties()
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range rows {
			if err != nil {
				yield(nil, err)
				return
			}
			fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
			k := len(fields)
			fields[k-2].Name = props.MaterializedRowIDColumnName
			fields[k-1].Name = props.MaterializedRowCommitVersionColumnName
			out := array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns(), rec.NumRows())
			ok := yield(out, nil)
			out.Release()
			if !ok {
				return
			}
		}
	}
}

// tagRowTrackingPreserved adds Spark's tag to the commit when snap tracks rows.
func tagRowTrackingPreserved(snap *deltalog.Snapshot, tx *deltalog.Transaction) {
	if !snap.RowTrackingEnabled() {
		return
	}
	tags, _ := json.Marshal(map[string]string{rowTrackingPreservedTag: "true"})
	tx.Add(actions.Action{CommitInfo: &actions.CommitInfo{Extra: map[string]json.RawMessage{"tags": tags}}})
}
