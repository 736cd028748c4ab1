package dml_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestMergeSchemaEvolution: MERGE with schema evolution (UPDATE SET *,
// INSERT *) adds the source's new columns to the table in its commit, in
// every mode (none, name and id mapping; copy-on-write and deletion
// vectors; with the change data feed): updated and inserted rows carry
// them, other rows read NULL; a target column the source lacks is kept by
// the update and NULL in the insert. Without the option a target column
// the source lacks is an error for UPDATE SET *, and nothing changes.
func TestMergeSchemaEvolution(t *testing.T) {
	srcSchema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "Extra", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: false}), Nullable: true},
	}, nil)
	const source = `[{"id": 2, "v": "B", "Extra": 20, "s": {"a": 1}}, {"id": 4, "v": "D", "Extra": 40, "s": null}]`
	for _, mode := range []string{"none", "name", "id"} {
		for _, dv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dv=%v", mode, dv), func(t *testing.T) {
				ctx := context.Background()
				store := objstore.NewMem()
				props := map[string]string{"delta.enableChangeDataFeed": "true"}
				if mode != "none" {
					props[actions.PropColumnMappingMode] = mode
				}
				if dv {
					props["delta.enableDeletionVectors"] = "true"
				}
				tabletest.Create(t, store, "id long, v string, w string", props)
				snap := tabletest.AppendTo(t, store, `[{"id": 1, "v": "a", "w": "x"}, {"id": 2, "v": "b", "w": "y"}, {"id": 3, "v": "c", "w": "z"}]`)
				before := snap.Properties().ColumnMappingMaxColumnID

				// Without schema evolution the extra columns are not written.
				src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, source)
				clauses := []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}
				if _, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"), clauses); err == nil {
					t.Fatal("MERGE without schema evolution of a source lacking w: no error")
				} else if !strings.Contains(err.Error(), `the source has no column "w"`) {
					t.Fatalf("error %v, want one naming w", err)
				}

				src = tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, source)
				res, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"), clauses, dml.WithSchemaEvolution())
				if err != nil {
					t.Fatal(err)
				}
				after := tabletest.Open(t, store)
				if after.Version() != res.Version {
					t.Fatalf("version %d, want %d", after.Version(), res.Version)
				}
				if got, want := actions.FormatDDL(after.Schema()), "id long, v string, w string, Extra long, s struct<a:integer>"; got != want {
					t.Errorf("schema %s, want %s", got, want)
				}
				if mode != "none" {
					for _, name := range []string{"Extra", "s"} {
						if id, ok := after.Schema().Field(name).FieldID(); !ok || id <= before {
							t.Errorf("column %s: id %d %v, want a new one above %d", name, id, ok, before)
						}
					}
				}
				tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, after), tabletest.Sorted(
					`{"id":1,"v":"a","w":"x","Extra":null,"s":null}`,
					`{"id":2,"v":"B","w":"y","Extra":20,"s":{"a":1}}`,
					`{"id":3,"v":"c","w":"z","Extra":null,"s":null}`,
					`{"id":4,"v":"D","w":null,"Extra":40,"s":null}`))
				if mode == "none" {
					got := changeLines(t, store, res.Version)
					// changeLines renders no struct values (s is "null"
					// throughout); the scan above checks them.
					want := []string{
						`{"id":2,"v":"b","w":"y","Extra":null,"s":null,"_change_type":"update_preimage"}`,
						`{"id":2,"v":"B","w":"y","Extra":20,"s":null,"_change_type":"update_postimage"}`,
						`{"id":4,"v":"D","w":null,"Extra":40,"s":null,"_change_type":"insert"}`,
					}
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Errorf("change rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
				}
			})
		}
	}
}

// TestMergeSchemaEvolutionOnlyForStar: with schema evolution but no
// UPDATE SET * or INSERT * clause, the schema does not change.
func TestMergeSchemaEvolutionOnlyForStar(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v string", nil)
	snap := tabletest.AppendTo(t, store, `[{"id": 1, "v": "a"}]`)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String}, {Name: "extra", Type: arrow.PrimitiveTypes.Int64}}, nil)
	src := tabletest.RecordJSON(t, memory.DefaultAllocator, sc, `[{"id": 1, "v": "b", "extra": 5}]`)
	if _, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"),
		[]dml.Clause{dml.WhenMatchedUpdate(nil, mustSet(t, "v = source.v")...)}, dml.WithSchemaEvolution()); err != nil {
		t.Fatal(err)
	}
	after := tabletest.Open(t, store)
	if got := actions.FormatDDL(after.Schema()); got != "id long, v string" {
		t.Errorf("schema %s, want it unchanged", got)
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, after), []string{`{"id":1,"v":"b"}`})
}
