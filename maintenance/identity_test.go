package maintenance_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// RESTORE to a version before values were generated keeps the current
// high-water mark (Spark's rule): the next append does not hand out the
// values the restored-away rows had.
func TestRestoreKeepsIdentityHighWaterMark(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long generated always as identity, v string", nil)
	vOnly := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	appendV := func(rows string) {
		t.Helper()
		mem := tabletest.CheckedMem(t)
		if _, err := writer.Append(ctx, tabletest.Open(t, store), tabletest.Batches(t, tabletest.RecordJSON(t, mem, vOnly, rows)), writer.WithAllocator(mem)); err != nil {
			t.Fatal(err)
		}
	}
	appendV(`[{"v":"a"}]`)
	appendV(`[{"v":"b"},{"v":"c"}]`)
	if _, err := maintenance.Restore(ctx, tabletest.Open(t, store), maintenance.ToVersion(1)); err != nil {
		t.Fatal(err)
	}
	s := tabletest.Open(t, store).Schema()
	if id, _, _ := actions.IdentityOf(s.Fields[0]); id.HighWaterMark != 3 {
		t.Fatalf("high-water mark after RESTORE %d, want 3", id.HighWaterMark)
	}
	appendV(`[{"v":"d"}]`)
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(`{"id":1,"v":"a"}`, `{"id":4,"v":"d"}`))

}
