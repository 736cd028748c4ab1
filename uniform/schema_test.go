package uniform_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestSchemaChangesReadByIcebergGo: added, renamed and dropped columns
// become new Iceberg schemas with the same field ids; iceberg-go reads
// old files (without the added column: nulls) and new ones under the
// current names, and each snapshot under its own schema.
func TestSchemaChangesReadByIcebergGo(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(9, 9))
	var next int64
	tabletest.AppendTo(t, store, randomRows(r, &next, 10))
	sync(t, store)

	if _, err := schema.AddColumns(ctx, tabletest.Open(t, store), []schema.Column{{Path: "extra", Type: actions.TypeString}}); err != nil {
		t.Fatal(err)
	}
	res := sync(t, store)
	if res.Snapshots != 0 || res.MetadataLocation == "" {
		t.Fatalf("a metadata-only commit: %+v", res)
	}
	rows := strings.ReplaceAll(randomRows(r, &next, 5), `"ok":`, `"extra": "e", "ok":`)
	tabletest.AppendTo(t, store, rows)
	if _, err := schema.RenameColumn(ctx, tabletest.Open(t, store), "name", "label"); err != nil {
		t.Fatal(err)
	}
	snap := tabletest.AppendTo(t, store, strings.ReplaceAll(strings.ReplaceAll(randomRows(r, &next, 5), `"name"`, `"label"`), `"ok":`, `"extra": "f", "ok":`))
	res = sync(t, store)
	got, md := icebergLines(t, res.MetadataLocation, nil)
	tabletest.DiffLines(t, "iceberg-go rows after ADD and RENAME COLUMN", got, tabletest.ScanLines(t, snap))
	sc := md.CurrentSchema()
	f, ok := sc.FindFieldByName("label")
	if !ok {
		t.Fatalf("the current Iceberg schema has no renamed column: %s", sc)
	}
	old, _ := md.Schemas()[0].FindFieldByName("name")
	if f.ID != old.ID {
		t.Fatalf("renamed column has id %d, was %d", f.ID, old.ID)
	}
	if len(md.Schemas()) != 3 {
		t.Fatalf("%d schemas, want 3 (created, added, renamed)", len(md.Schemas()))
	}

	if _, err := schema.DropColumns(ctx, tabletest.Open(t, store), []string{"extra"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.AppendTo(t, store, strings.ReplaceAll(randomRows(r, &next, 3), `"name"`, `"label"`))
	res = sync(t, store)
	got, _ = icebergLines(t, res.MetadataLocation, nil)
	tabletest.DiffLines(t, "iceberg-go rows after DROP COLUMN", got, tabletest.ScanLines(t, snap))
	checkEverySnapshot(t, store)
}
