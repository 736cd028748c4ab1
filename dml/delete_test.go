package dml_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

func TestDeleteAndUpdateCopyOnWrite(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long not null, v long, p string", map[string]string{"delta.enableChangeDataFeed": "true"}, "p")
	tabletest.AppendTo(t, store, `[{"id":1,"v":10,"p":"a"},{"id":2,"v":20,"p":"a"},{"id":3,"v":30,"p":"b"}]`)
	snap := tabletest.AppendTo(t, store, `[{"id":4,"v":40,"p":"b"},{"id":5,"v":null,"p":"c"}]`)

	res, err := dml.Delete(ctx, snap, mustParse(t, "v >= 20 AND v < 40"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numDeletedRows"] != 2 {
		t.Errorf("metrics %v, want numDeletedRows 2", res.Metrics)
	}
	snap = tabletest.Open(t, store)
	tabletest.DiffLines(t, "after delete", tabletest.ScanLines(t, snap), tabletest.Sorted(
		`{"id":1,"v":10,"p":"a"}`, `{"id":4,"v":40,"p":"b"}`, `{"id":5,"v":null,"p":"c"}`))
	tabletest.DiffLines(t, "delete changes", changeLines(t, store, res.Version), tabletest.Sorted(
		`{"id":2,"v":20,"p":"a","_change_type":"delete"}`, `{"id":3,"v":30,"p":"b","_change_type":"delete"}`))

	res, err = dml.Update(ctx, snap, mustParse(t, "p <> 'a' OR v IS NULL"), mustSet(t, "v = v + 1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numUpdatedRows"] != 2 {
		t.Errorf("metrics %v, want numUpdatedRows 2", res.Metrics)
	}
	snap = tabletest.Open(t, store)
	tabletest.DiffLines(t, "after update", tabletest.ScanLines(t, snap), tabletest.Sorted(
		`{"id":1,"v":10,"p":"a"}`, `{"id":4,"v":41,"p":"b"}`, `{"id":5,"v":null,"p":"c"}`))
	tabletest.DiffLines(t, "update changes", changeLines(t, store, res.Version), tabletest.Sorted(
		`{"id":4,"v":40,"p":"b","_change_type":"update_preimage"}`, `{"id":4,"v":41,"p":"b","_change_type":"update_postimage"}`,
		`{"id":5,"v":null,"p":"c","_change_type":"update_preimage"}`, `{"id":5,"v":null,"p":"c","_change_type":"update_postimage"}`))
}

// An operation that changes nothing still records its app transaction,
// so an ingestor knows the batch landed; without one, nothing is
// committed.
func TestNoopRecordsAppTransaction(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v long", nil)
	snap := tabletest.AppendTo(t, store, `[{"id":1,"v":1}]`)
	res, err := dml.Delete(ctx, snap, mustParse(t, "id = 99"))
	if err != nil || res.CommitResult != nil {
		t.Fatalf("delete of nothing: %v, committed %v", err, res.CommitResult)
	}
	res, err = dml.Delete(ctx, snap, mustParse(t, "id = 99"), dml.WithCommitOptions(deltalog.WithAppTransaction("ingest", 7)))
	if err != nil || res.CommitResult == nil {
		t.Fatalf("delete of nothing with an app transaction: %v, committed %v", err, res)
	}
	after := tabletest.Open(t, store)
	if _, done := after.AlreadyApplied("ingest", 7); !done {
		t.Errorf("the table does not hold txn ingest=7 after the no-op delete")
	}
	res, err = dml.Delete(ctx, after, mustParse(t, "id = 1"), dml.WithCommitOptions(deltalog.WithAppTransaction("ingest", 7)))
	if err != nil || !res.AlreadyApplied {
		t.Fatalf("a repeated batch: %v, result %+v", err, res)
	}
	if got := tabletest.ScanLines(t, tabletest.Open(t, store)); len(got) != 1 {
		t.Errorf("the repeated batch deleted rows: %v", got)
	}
}
