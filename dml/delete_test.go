package dml_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
)

func TestDeleteAndUpdateCopyOnWrite(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	createTable(t, store, "id long not null, v long, p string", map[string]string{"delta.enableChangeDataFeed": "true"}, "p")
	appendRows(t, store, `[{"id":1,"v":10,"p":"a"},{"id":2,"v":20,"p":"a"},{"id":3,"v":30,"p":"b"}]`)
	snap := appendRows(t, store, `[{"id":4,"v":40,"p":"b"},{"id":5,"v":null,"p":"c"}]`)

	res, err := dml.Delete(ctx, snap, mustParse(t, "v >= 20 AND v < 40"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numDeletedRows"] != 2 {
		t.Errorf("metrics %v, want numDeletedRows 2", res.Metrics)
	}
	snap = openTable(t, store)
	diffLines(t, "after delete", scanLines(t, snap), sortedLines(
		`{"id":1,"v":10,"p":"a"}`, `{"id":4,"v":40,"p":"b"}`, `{"id":5,"v":null,"p":"c"}`))
	diffLines(t, "delete changes", changeLines(t, store, res.Version), sortedLines(
		`{"id":2,"v":20,"p":"a","_change_type":"delete"}`, `{"id":3,"v":30,"p":"b","_change_type":"delete"}`))

	res, err = dml.Update(ctx, snap, mustParse(t, "p <> 'a' OR v IS NULL"), mustSet(t, "v = v + 1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numUpdatedRows"] != 2 {
		t.Errorf("metrics %v, want numUpdatedRows 2", res.Metrics)
	}
	snap = openTable(t, store)
	diffLines(t, "after update", scanLines(t, snap), sortedLines(
		`{"id":1,"v":10,"p":"a"}`, `{"id":4,"v":41,"p":"b"}`, `{"id":5,"v":null,"p":"c"}`))
	diffLines(t, "update changes", changeLines(t, store, res.Version), sortedLines(
		`{"id":4,"v":40,"p":"b","_change_type":"update_preimage"}`, `{"id":4,"v":41,"p":"b","_change_type":"update_postimage"}`,
		`{"id":5,"v":null,"p":"c","_change_type":"update_preimage"}`, `{"id":5,"v":null,"p":"c","_change_type":"update_postimage"}`))
}
