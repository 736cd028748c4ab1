package cdf_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
)

// mappedFeedLines reads the feed of the table at tabletest.Root over b as
// lines "col=value ... _change_type _commit_version", sorted.
func mappedFeedLines(t *testing.T, store objstore.Store, b cdf.Bounds) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	f, err := cdf.Open(ctx, store, tabletest.Root, b)
	if err != nil {
		return nil, err
	}
	var out []string
	for rec, err := range f.Records(ctx) {
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			var parts []string
			for k, fld := range rec.Schema().Fields() {
				if fld.Name == "_commit_timestamp" {
					continue
				}
				parts = append(parts, fld.Name+"="+rec.Column(k).ValueStr(i))
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestColumnMappedFeed reads the change data feed of name- and id-mode
// tables (partitioned, with and without deletion vectors) written by
// lakelog's append, UPDATE, DELETE and MERGE: cdc files (whose
// _change_type has no field id), adds, removes and vector differences,
// partition values by physical name. A range across an added column
// reads under the end schema; a range across a rename, or a drop and
// re-add of a name, fails naming the version and the column, and the
// ranges on either side read.
func TestColumnMappedFeed(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		for _, dv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dv=%v", mode, dv), func(t *testing.T) {
				ctx := context.Background()
				store := objstore.NewMem()
				props := map[string]string{actions.PropColumnMappingMode: mode, "delta.enableChangeDataFeed": "true"}
				if dv {
					props["delta.enableDeletionVectors"] = "true"
				}
				tabletest.Create(t, store, "id long, v string, p string", props, "p")
				snap := tabletest.AppendTo(t, store, `[{"id":1,"v":"a","p":"x"},{"id":2,"v":"b","p":"x"},{"id":3,"v":"c","p":"y"}]`)                       // 1
				if _, err := dml.Update(ctx, snap, mustExpr(t, "id = 2"), []*expr.Assignment{{Column: expr.Col("v"), Value: expr.Lit("B")}}); err != nil { // 2
					t.Fatal(err)
				}
				snap = tabletest.Open(t, store)
				if _, err := dml.Delete(ctx, snap, mustExpr(t, "id = 3")); err != nil { // 3
					t.Fatal(err)
				}
				snap = tabletest.Open(t, store)
				src := tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":1,"v":"A","p":"x"},{"id":4,"v":"d","p":"y"}]`)
				if _, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustExpr(t, "target.id = source.id"),
					[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}); err != nil { // 4
					t.Fatal(err)
				}
				got, err := mappedFeedLines(t, store, cdf.Versions(1, 4))
				if err != nil {
					t.Fatal(err)
				}
				tabletest.DiffLines(t, "feed 1-4", got, tabletest.Sorted(
					"id=1 v=a p=x _change_type=insert _commit_version=1",
					"id=2 v=b p=x _change_type=insert _commit_version=1",
					"id=3 v=c p=y _change_type=insert _commit_version=1",
					"id=2 v=b p=x _change_type=update_preimage _commit_version=2",
					"id=2 v=B p=x _change_type=update_postimage _commit_version=2",
					"id=3 v=c p=y _change_type=delete _commit_version=3",
					"id=1 v=a p=x _change_type=update_preimage _commit_version=4",
					"id=1 v=A p=x _change_type=update_postimage _commit_version=4",
					"id=4 v=d p=y _change_type=insert _commit_version=4"))

				// An added column: the range reads under the end schema.
				snap = tabletest.Open(t, store)
				if _, err := schema.AddColumns(ctx, snap, []schema.Column{{Path: "w", Type: actions.TypeLong}}); err != nil { // 5
					t.Fatal(err)
				}
				snap = tabletest.AppendTo(t, store, `[{"id":5,"v":"e","p":"x","w":50}]`) // 6
				got, err = mappedFeedLines(t, store, cdf.Versions(3, 6))
				if err != nil {
					t.Fatal(err)
				}
				tabletest.DiffLines(t, "feed 3-6", got, tabletest.Sorted(
					"id=3 v=c p=y w=(null) _change_type=delete _commit_version=3",
					"id=1 v=a p=x w=(null) _change_type=update_preimage _commit_version=4",
					"id=1 v=A p=x w=(null) _change_type=update_postimage _commit_version=4",
					"id=4 v=d p=y w=(null) _change_type=insert _commit_version=4",
					"id=5 v=e p=x w=50 _change_type=insert _commit_version=6"))

				// A rename: ranges across it fail; after it they read.
				if _, err := schema.RenameColumn(ctx, snap, "v", "val"); err != nil { // 7
					t.Fatal(err)
				}
				snap = tabletest.AppendTo(t, store, `[{"id":6,"val":"f","p":"y","w":60}]`) // 8
				_, err = mappedFeedLines(t, store, cdf.Versions(6, 8))
				wantErr(t, err, cdf.ErrSchemaChange, "version 6", "column v")
				got, err = mappedFeedLines(t, store, cdf.Versions(7, 8))
				if err != nil {
					t.Fatal(err)
				}
				tabletest.DiffLines(t, "feed 7-8", got, []string{"id=6 val=f p=y w=60 _change_type=insert _commit_version=8"})

				// A drop and a re-add of the same name: a different column.
				if _, err := schema.DropColumns(ctx, snap, []string{"w"}); err != nil { // 9
					t.Fatal(err)
				}
				snap = tabletest.Open(t, store)
				if _, err := schema.AddColumns(ctx, snap, []schema.Column{{Path: "w", Type: actions.TypeLong}}); err != nil { // 10
					t.Fatal(err)
				}
				tabletest.AppendTo(t, store, `[{"id":7,"val":"g","p":"x","w":70}]`) // 11
				_, err = mappedFeedLines(t, store, cdf.Versions(8, 11))
				wantErr(t, err, cdf.ErrSchemaChange, "version 8", "column w", "physical name")
				got, err = mappedFeedLines(t, store, cdf.Versions(10, 11))
				if err != nil {
					t.Fatal(err)
				}
				tabletest.DiffLines(t, "feed 10-11", got, []string{"id=7 val=g p=x w=70 _change_type=insert _commit_version=11"})
				if v := tabletest.Open(t, store, deltalog.AtVersion(11)).Version(); v != 11 {
					t.Fatalf("version %d, want 11", v)
				}
			})
		}
	}
}

func mustExpr(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
