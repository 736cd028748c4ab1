package reader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// trackedRow is one row of a row-tracking scan.
type trackedRow struct {
	ID       int64  `json:"id"`
	RowID    *int64 `json:"_row_id"`
	Version  *int64 `json:"_row_commit_version"`
	RowIndex *int64 `json:"_row_index"`
}

func trackedRows(t *testing.T, sc *reader.Scan) map[int64]trackedRow {
	t.Helper()
	out := map[int64]trackedRow{}
	for _, line := range collect(t, sc) {
		var r trackedRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out[r.ID] = r
	}
	return out
}

// TestRowTrackingColumns: _row_id is baseRowId + the row's index in its
// file, or the file's materialized value where it holds one;
// _row_commit_version likewise from defaultRowCommitVersion. Through
// small batches, a filter, a projection and WithRowIndex.
func TestRowTrackingColumns(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	st := objstore.NewMem()
	schema, _ := actions.ParseDDL("id long")
	text, _ := actions.SchemaString(schema)
	tx, err := deltalog.Create(st, "tbl", &actions.Metadata{SchemaString: text, Configuration: map[string]string{"delta.enableRowTracking": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	appendIDs := func(from, to int) {
		var ids []string
		for i := from; i < to; i++ {
			ids = append(ids, fmt.Sprintf(`{"id":%d}`, i))
		}
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, in, strings.NewReader("["+strings.Join(ids, ",")+"]"))
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		snap, err := deltalog.Open(ctx, st, "tbl")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.Append(ctx, snap, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	appendIDs(0, 10)  // version 1: row IDs 0..9
	appendIDs(10, 15) // version 2: row IDs 10..14
	snap, err := deltalog.Open(ctx, st, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	// Version 3: a file as a rewrite leaves it, with materialized columns
	// holding the IDs and versions of moved rows (null for a new row).
	props := snap.Properties()
	fileSchema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: props.MaterializedRowIDColumnName, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: props.MaterializedRowCommitVersionColumnName, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, fileSchema, strings.NewReader(fmt.Sprintf(
		`[{"id":100,%q:3,%q:1},{"id":101,%q:null,%q:null},{"id":102,%q:12,%q:null}]`,
		props.MaterializedRowIDColumnName, props.MaterializedRowCommitVersionColumnName,
		props.MaterializedRowIDColumnName, props.MaterializedRowCommitVersionColumnName,
		props.MaterializedRowIDColumnName, props.MaterializedRowCommitVersionColumnName)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(fileSchema, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "tbl/moved.parquet", bytes.NewReader(buf.Bytes()), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mtx := snap.NewTransaction()
	mtx.Add(actions.Action{Add: &actions.Add{Path: "moved.parquet", PartitionValues: map[string]*string{}, Size: int64(buf.Len()), DataChange: true, Stats: `{"numRecords":3}`}})
	if _, err := mtx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err = deltalog.Open(ctx, st, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][2]int64{}
	for i := range int64(10) {
		want[i] = [2]int64{i, 1}
	}
	for i := int64(10); i < 15; i++ {
		want[i] = [2]int64{i, 2}
	}
	want[100] = [2]int64{3, 1}
	want[101] = [2]int64{16, 3} // baseRowId 15 + index 1
	want[102] = [2]int64{12, 3}
	check := func(name string, got map[int64]trackedRow, ids func(int64) bool, index bool) {
		t.Helper()
		n := 0
		for id, w := range want {
			if !ids(id) {
				continue
			}
			n++
			r, ok := got[id]
			switch {
			case !ok:
				t.Errorf("%s: row %d missing", name, id)
			case r.RowID == nil || r.Version == nil || *r.RowID != w[0] || *r.Version != w[1]:
				t.Errorf("%s: row %d: _row_id %v _row_commit_version %v, want %v", name, id, r.RowID, r.Version, w)
			case index != (r.RowIndex != nil):
				t.Errorf("%s: row %d: _row_index %v", name, id, r.RowIndex)
			}
		}
		if len(got) != n {
			t.Errorf("%s: %d rows, want %d", name, len(got), n)
		}
	}
	all := func(int64) bool { return true }
	check("plain", trackedRows(t, mustScan(t, snap, reader.WithRowTracking(), reader.WithAllocator(mem))), all, false)
	check("batches of 4", trackedRows(t, mustScan(t, snap, reader.WithRowTracking(), reader.WithBatchSize(4), reader.WithAllocator(mem))), all, false)
	check("row index", trackedRows(t, mustScan(t, snap, reader.WithRowTracking(), reader.WithRowIndex(), reader.WithAllocator(mem))), all, true)
	check("filter", trackedRows(t, mustScan(t, snap, reader.WithRowTracking(), reader.WithFilter(mustParse(t, "id % 2 = 1")), reader.WithColumns("id"), reader.WithAllocator(mem))),
		func(id int64) bool { return id%2 == 1 }, false)
	check("parallel", trackedRows(t, mustScan(t, snap, reader.WithRowTracking(), reader.WithParallelism(3), reader.WithAllocator(mem))), all, false)
	sc := mustScan(t, snap, reader.WithRowTracking())
	if got := sc.Schema().String(); !strings.Contains(got, "_row_id: type=int64") || strings.Contains(got, "_row-id-col") {
		t.Errorf("schema %s", got)
	}
}

func TestRowTrackingColumnsRefused(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	schema, _ := actions.ParseDDL("id long")
	text, _ := actions.SchemaString(schema)
	tx, _ := deltalog.Create(st, "tbl", &actions.Metadata{SchemaString: text})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.NewScan(snap, reader.WithRowTracking()); err == nil || !strings.Contains(err.Error(), "delta.enableRowTracking") {
		t.Fatalf("row IDs of a table without row tracking: %v", err)
	}
}
