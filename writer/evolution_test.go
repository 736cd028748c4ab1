package writer_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

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
	if err := tx.SetMetadata(&md); err != nil {
		t.Fatal(err)
	}
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

// TestOverwriteSchema replaces a table's schema and partitioning with an
// overwrite (none, name and id mode): the new columns (mapped ones with
// new ids above the old maxColumnId and new physical names), the new
// partitioning, only the new rows; the old version still reads its own.
// An overwrite whose input has the table's columns commits no metadata.
func TestOverwriteSchema(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			store := objstore.NewMem()
			props := map[string]string{}
			if mode != "none" {
				props[actions.PropColumnMappingMode] = mode
			}
			tabletest.Create(t, store, "id long, name string", props)
			old := tabletest.AppendTo(t, store, `[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]`)
			sc := arrow.NewSchema([]arrow.Field{
				{Name: "key", Type: arrow.BinaryTypes.String, Nullable: false},
				{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
				{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
			}, nil)
			rec := tabletest.RecordJSON(t, mem, sc, `[{"key": "x", "n": 1, "p": "u"}, {"key": "y", "n": 2, "p": "v"}]`)
			if _, err := writer.Overwrite(ctx, old, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithOverwriteSchema("P")); err != nil {
				t.Fatal(err)
			}
			snap := tabletest.Open(t, store)
			if got, want := actions.FormatDDL(snap.Schema()), "key string, n integer, p string"; got != want {
				t.Errorf("schema %s, want %s", got, want)
			}
			if got := snap.PartitionColumns(); len(got) != 1 || got[0] != "p" {
				t.Errorf("partition columns %v, want [p]", got)
			}
			tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(`{"key":"x","n":1,"p":"u"}`, `{"key":"y","n":2,"p":"v"}`))
			tabletest.DiffLines(t, "old version", tabletest.ScanLines(t, tabletest.Open(t, store, deltalog.AtVersion(old.Version()))),
				tabletest.Sorted(`{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`))
			if mode != "none" {
				oldMax := old.Properties().ColumnMappingMaxColumnID
				for _, f := range snap.Schema().Fields {
					id, ok := f.FieldID()
					if !ok || id <= oldMax {
						t.Errorf("column %s: id %d (%v), want one above the old maxColumnId %d", f.Name, id, ok, oldMax)
					}
					if p := f.PhysicalName(mode); p == f.Name || p == "" {
						t.Errorf("column %s: physical name %q, want a new col- name", f.Name, p)
					}
				}
				if got := snap.Properties().ColumnMappingMaxColumnID; got != oldMax+3 {
					t.Errorf("maxColumnId %d, want %d", got, oldMax+3)
				}
			}
			// The same columns again: no metadata in the commit.
			rec2 := tabletest.RecordJSON(t, mem, sc, `[{"key": "z", "n": 3, "p": "u"}]`)
			if _, err := writer.Overwrite(ctx, snap, tabletest.Batches(t, rec2), writer.WithAllocator(mem), writer.WithOverwriteSchema("p")); err != nil {
				t.Fatal(err)
			}
			if _, as := lastCommit(t, store); slices.ContainsFunc(as, func(a actions.Action) bool { return a.Metadata != nil }) {
				t.Error("an overwrite with the table's own columns committed metadata")
			}
			tabletest.DiffLines(t, "rows after the second overwrite", tabletest.ScanLines(t, tabletest.Open(t, store)), []string{`{"key":"z","n":3,"p":"u"}`})
		})
	}
}

// TestOverwriteSchemaRefused: overwrite-schema on an append, a partition
// column the input lacks, and a CHECK constraint on a column the new
// schema drops are refused with the reason, and nothing is committed.
func TestOverwriteSchemaRefused(t *testing.T) {
	ctx := context.Background()
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	for _, tc := range []struct {
		name string
		run  func(snap *deltalog.Snapshot, rec arrow.RecordBatch) error
		want []string
	}{
		{name: "append", want: []string{"an append cannot overwrite the schema"}, run: func(snap *deltalog.Snapshot, rec arrow.RecordBatch) error {
			_, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithOverwriteSchema())
			return err
		}},
		{name: "partition column", want: []string{`"nope"`, "partition column is not in the input (columns: k)"}, run: func(snap *deltalog.Snapshot, rec arrow.RecordBatch) error {
			_, err := writer.Overwrite(ctx, snap, tabletest.Batches(t, rec), writer.WithOverwriteSchema("nope"))
			return err
		}},
		{name: "constraint", want: []string{"CHECK constraint pos (id > 0)"}, run: func(snap *deltalog.Snapshot, rec arrow.RecordBatch) error {
			snap = setProperties(t, snap, map[string]string{"delta.constraints.pos": "id > 0"})
			_, err := writer.Overwrite(ctx, snap, tabletest.Batches(t, rec), writer.WithOverwriteSchema())
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := objstore.NewMem()
			tabletest.Create(t, store, "id long", nil)
			snap := tabletest.AppendTo(t, store, `[{"id": 1}]`)
			rec := tabletest.RecordJSON(t, memory.DefaultAllocator, sc, `[{"k": "a"}]`)
			err := tc.run(snap, rec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			after := tabletest.Open(t, store)
			if after.Schema().Field("id") == nil || after.NumFiles() != 1 {
				t.Errorf("the table changed: schema %s, %d files", actions.FormatDDL(after.Schema()), after.NumFiles())
			}
		})
	}
}
