package writer_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestMergeSchemaWidens appends, with merge-schema, input whose types are
// wider than the table's: on a table with delta.enableTypeWidening the
// columns (top-level and in a struct) widen, the change is recorded in
// delta.typeChanges, and the old rows read widened; a column mapping
// table keeps its ids.
func TestMergeSchemaWidens(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			store := objstore.NewMem()
			props := map[string]string{actions.PropEnableTypeWidening: "true"}
			if mode != "none" {
				props[actions.PropColumnMappingMode] = mode
			}
			tabletest.Create(t, store, "id int, s struct<a: short, b: string>, v decimal(5,2), f float", props)
			tabletest.AppendTo(t, store, `[{"id": 1, "s": {"a": 1, "b": "x"}, "v": "1.25", "f": 1.5}]`)
			before := tabletest.Open(t, store)
			sc := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
				{Name: "v", Type: &arrow.Decimal128Type{Precision: 8, Scale: 3}, Nullable: true},
				{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			}, nil)
			rec := tabletest.RecordJSON(t, mem, sc, `[{"id": 5000000000, "s": {"a": 100000}, "v": "12345.125", "f": 0.1}]`)
			if _, err := writer.Append(ctx, before, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithMergeSchema()); err != nil {
				t.Fatal(err)
			}
			snap := tabletest.Open(t, store)
			if got, want := actions.FormatDDL(snap.Schema()), "id long, s struct<a:integer,b:string>, v decimal(8,3), f double"; got != want {
				t.Errorf("schema %s, want %s", got, want)
			}
			changes := func(name string) string {
				f := snap.Schema().Field(name)
				if name == "a" {
					f = snap.Schema().Field("s").Type.(*actions.StructType).Field("a")
				}
				return actions.JSONText(f.Metadata[actions.MetaTypeChanges])
			}
			for name, want := range map[string]string{
				"id": `[{"fromType":"integer","toType":"long"}]`,
				"a":  `[{"fromType":"short","toType":"integer"}]`,
				"v":  `[{"fromType":"decimal(5,2)","toType":"decimal(8,3)"}]`,
				"f":  `[{"fromType":"float","toType":"double"}]`,
			} {
				if got := changes(name); got != want {
					t.Errorf("%s: delta.typeChanges %s, want %s", name, got, want)
				}
			}
			if mode != "none" {
				for _, name := range []string{"id", "v"} {
					if a, b := before.Schema().Field(name).Metadata[actions.MetaColumnMappingID], snap.Schema().Field(name).Metadata[actions.MetaColumnMappingID]; actions.JSONText(a) != actions.JSONText(b) {
						t.Errorf("%s: column id %v became %v", name, a, b)
					}
				}
			}
			if !snap.Protocol().HasWriterFeature("typeWidening") {
				t.Errorf("protocol %+v lacks typeWidening", snap.Protocol())
			}
			tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(
				`{"id":1,"s":{"a":1,"b":"x"},"v":"1.250","f":1.5}`,
				`{"id":5000000000,"s":{"a":100000,"b":null},"v":"12345.125","f":0.1}`))
		})
	}
}

// TestMergeSchemaWideningRefused: a wider input type is refused, naming
// the column, both types and the reason, and nothing is committed, when
// the table does not enable type widening, when the widening is not one
// schema evolution makes (int to double), when a CHECK constraint or a
// generated column reads the column, and for an incompatible type.
func TestMergeSchemaWideningRefused(t *testing.T) {
	i64 := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	for _, tc := range []struct {
		name  string
		ddl   string
		props map[string]string
		later map[string]string // set after the create (constraints)
		field arrow.Field
		row   string
		want  []string
	}{
		{name: "not enabled", ddl: "id int", field: i64, row: `[{"id": 1}]`,
			want: []string{`"id"`, "int64", "integer", "delta.enableTypeWidening=true"}},
		{name: "int to double", ddl: "id int", props: map[string]string{actions.PropEnableTypeWidening: "true"},
			field: arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, row: `[{"id": 1.5}]`,
			want: []string{`"id"`, "float64", "integer"}},
		{name: "constraint", ddl: "id int", props: map[string]string{actions.PropEnableTypeWidening: "true"}, later: map[string]string{"delta.constraints.pos": "id > 0"},
			field: i64, row: `[{"id": 1}]`, want: []string{`"id"`, "CHECK constraint pos (id > 0)"}},
		{name: "generated column", ddl: "id int, g bigint GENERATED ALWAYS AS (id + 1)", props: map[string]string{actions.PropEnableTypeWidening: "true"},
			field: i64, row: `[{"id": 1}]`, want: []string{`"id"`, "generated column g"}},
		{name: "string for long", ddl: "id long", props: map[string]string{actions.PropEnableTypeWidening: "true"},
			field: arrow.Field{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true}, row: `[{"id": "1"}]`,
			want: []string{`"id"`, "utf8", "long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, tc.ddl, tc.props)
			if tc.later != nil {
				snap = setProperties(t, snap, tc.later)
			}
			rec := tabletest.RecordJSON(t, mem, arrow.NewSchema([]arrow.Field{tc.field}, nil), tc.row)
			_, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithMergeSchema())
			if !errors.Is(err, writer.ErrSchemaMismatch) {
				t.Fatalf("error %v, want a schema mismatch", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if v := tabletest.Open(t, store).Version(); v != snap.Version() {
				t.Errorf("version %d, want %d", v, snap.Version())
			}
		})
	}
}

// setProperties commits the table properties props on snap, with the
// protocol they need, and returns the new snapshot.
func setProperties(t *testing.T, snap *deltalog.Snapshot, props map[string]string) *deltalog.Snapshot {
	t.Helper()
	md := *snap.Metadata()
	md.Configuration = maps.Clone(md.Configuration)
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	maps.Copy(md.Configuration, props)
	tx := snap.NewTransaction()
	tx.SetMetadata(&md)
	tx.SetProtocol(actions.MergeProtocols(deltalog.MinimalProtocol(&md, snap.Schema()), snap.Protocol()))
	res, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
