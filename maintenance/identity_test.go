package maintenance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
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

// vacuumProtocolCheck: VACUUM checks the whole write protocol, so a table
// that also lists a writer feature lakelog does not know is refused;
// without it VACUUM runs.
func TestVacuumProtocolCheck(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		writer []string
		ok     bool
	}{
		{[]string{"vacuumProtocolCheck"}, true},
		{[]string{"vacuumProtocolCheck", "someFutureWriterFeature"}, false},
	} {
		store := objstore.NewMem()
		schema, _ := actions.ParseDDL("id long")
		s, _ := actions.SchemaString(schema)
		body, err := actions.MarshalCommit([]actions.Action{
			{Protocol: &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"vacuumProtocolCheck"}, WriterFeatures: c.writer}},
			{Metadata: &actions.Metadata{ID: "x", SchemaString: s, Format: actions.Format{Provider: "parquet"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, tabletest.Root+"/_delta_log/00000000000000000000.json", strings.NewReader(string(body)), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = maintenance.Vacuum(ctx, tabletest.Open(t, store))
		if c.ok && err != nil {
			t.Errorf("%v: %v", c.writer, err)
		}
		if !c.ok && (!errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "someFutureWriterFeature")) {
			t.Errorf("%v: %v, want unsupported someFutureWriterFeature", c.writer, err)
		}
	}
}
