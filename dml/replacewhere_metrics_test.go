package dml_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestReplaceWhereMetrics: the commit carries Spark's operationMetrics
// of a replaceWhere: the write's, and the delete half's numDeletedRows
// (the matched rows, deletion vectors applied), numCopiedRows (the rows
// kept from rewritten files) and numAddedChangeFiles.
func TestReplaceWhereMetrics(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, p string, v long", map[string]string{"delta.enableDeletionVectors": "true"}, "p")
	tabletest.AppendTo(t, store, `[{"id":1,"p":"a","v":10},{"id":2,"p":"a","v":20},{"id":3,"p":"b","v":30}]`)
	snap := tabletest.AppendTo(t, store, `[{"id":4,"p":"b","v":40},{"id":5,"p":"b","v":50}]`)
	// One row of the second file goes by a deletion vector first.
	if _, err := dml.Delete(ctx, snap, mustParse(t, "id = 5")); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	res, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "v >= 20 AND v < 45"), tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":9,"p":"c","v":25}]`)))
	if err != nil {
		t.Fatal(err)
	}
	m := res.CommitInfo().OperationMetrics
	want := map[string]string{"numDeletedRows": "3", "numCopiedRows": "1", "numAddedChangeFiles": "0", "numRemovedFiles": "3"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %s (metrics %v)", k, m[k], v, m)
		}
	}
	tabletest.DiffLines(t, "replaced", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(
		`{"id":1,"p":"a","v":10}`, `{"id":9,"p":"c","v":25}`))
}
