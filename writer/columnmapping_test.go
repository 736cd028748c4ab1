package writer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestColumnMappedWrites: in a column-mapped table (modes name and id)
// the writer names data file columns (nested fields too) by their
// physical names with their ids as Parquet field ids, keys stats and
// partitionValues by physical names, puts files in random-prefix folders
// (as Spark does), and the reader reads the rows back under the logical
// names. Columns merge-schema adds get the next ids and new physical
// names, and maxColumnId follows.
func TestColumnMappedWrites(t *testing.T) {
	for _, mode := range []string{actions.ColumnMappingName, actions.ColumnMappingID} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			mem := tabletest.CheckedMem(t)
			snap := tabletest.Create(t, store, "id long, p string, s struct<a:int,b:string>, l array<struct<x:long>>, m map<string,struct<y:int>>",
				map[string]string{"delta.columnMapping.mode": mode}, "p")
			if got := snap.Protocol(); got.MinReaderVersion != 2 || got.MinWriterVersion != 7 || !slices.Contains(got.WriterFeatures, "columnMapping") {
				t.Fatalf("protocol %+v, want (2, 7) listing columnMapping", got)
			}
			if snap.Properties().ColumnMappingMaxColumnID != 9 {
				t.Fatalf("maxColumnId %d, want 9", snap.Properties().ColumnMappingMaxColumnID)
			}
			schema := snap.Schema()
			for _, f := range schema.Fields {
				if !strings.HasPrefix(f.PhysicalName(mode), "col-") {
					t.Fatalf("column %s: physical name %q", f.Name, f.PhysicalName(mode))
				}
			}
			rows := `[{"id":1,"p":"x","s":{"a":1,"b":"q"},"l":[{"x":5}],"m":[{"key":"k","value":{"y":3}}]},
				{"id":2,"p":"y","s":null,"l":null,"m":null},
				{"id":3,"p":"x","s":{"a":null,"b":"r"},"l":[],"m":[]}]`
			if _, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, mem, snap, rows))); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)
			want := scanLinesOf(t, mem, snap, rows)
			tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), want)
			phys := actions.PhysicalSchema(schema, mode)
			pPhys := schema.Field("p").PhysicalName(mode)
			prefix := regexp.MustCompile(`^[A-Za-z0-9]{2}/part-`)
			for f := range snap.Files() {
				if !prefix.MatchString(f.Path) {
					t.Errorf("file %s is not in a random-prefix folder", f.Path)
				}
				if _, ok := f.PartitionValues[pPhys]; !ok || len(f.PartitionValues) != 1 {
					t.Errorf("partitionValues %v, want the key %s", f.PartitionValues, pPhys)
				}
				var stats struct {
					MinValues map[string]any `json:"minValues"`
					NullCount map[string]any `json:"nullCount"`
				}
				if err := json.Unmarshal([]byte(f.Stats), &stats); err != nil {
					t.Fatal(err)
				}
				idPhys, sPhys := phys.Fields[0].Name, phys.Fields[2].Name
				if _, ok := stats.MinValues[idPhys]; !ok {
					t.Errorf("stats %s lack the key %s", f.Stats, idPhys)
				}
				if s, ok := stats.NullCount[sPhys].(map[string]any); !ok || s[phys.Fields[2].Type.(*actions.StructType).Fields[0].Name] == nil {
					t.Errorf("stats %s lack the nested null count of s.a under physical names", f.Stats)
				}
				for k := range stats.NullCount {
					if !strings.HasPrefix(k, "col-") {
						t.Errorf("stats key %q is not a physical name", k)
					}
				}
				checkFileSchema(t, store, "tbl/"+f.Path, phys, 1)
			}

			// merge-schema: new columns, nested and top-level, are mapped.
			in := `[{"id":4,"p":"z","s":{"a":2,"b":"w","c":7},"n":"new"}]`
			rec := tabletest.RecordJSON(t, mem, arrowSchemaOf(t, "id long, p string, s struct<a:int,b:string,c:long>, n string"), in)
			if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithMergeSchema()); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)
			if got := snap.Properties().ColumnMappingMaxColumnID; got != 11 {
				t.Errorf("maxColumnId after merge %d, want 11", got)
			}
			n := snap.Schema().Field("n")
			c := snap.Schema().Field("s").Type.(*actions.StructType).Field("c")
			if id, _ := c.FieldID(); id != 10 || !strings.HasPrefix(c.PhysicalName(mode), "col-") {
				t.Errorf("s.c: id %d physical %q, want 10 and a new name", id, c.PhysicalName(mode))
			}
			if id, _ := n.FieldID(); id != 11 || !strings.HasPrefix(n.PhysicalName(mode), "col-") {
				t.Errorf("n: id %d physical %q, want 11 and a new name", id, n.PhysicalName(mode))
			}
			got := tabletest.ScanLines(t, snap)
			if len(got) != 4 || !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, `"n":"new"`) && strings.Contains(l, `"c":7`) }) {
				t.Errorf("after merge-schema: %s", strings.Join(got, "\n"))
			}
		})
	}
}

// checkFileSchema checks that the Parquet file's columns (nested ones
// too) are named as the physical schema names them and carry the ids.
func checkFileSchema(t *testing.T, store objstore.Store, key string, phys *actions.StructType, partitions int) {
	t.Helper()
	body, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	root := pr.MetaData().Schema.Root()
	var check func(g *schema.GroupNode, st *actions.StructType, path string)
	check = func(g *schema.GroupNode, st *actions.StructType, path string) {
		for i := 0; i < g.NumFields(); i++ {
			n := g.Field(i)
			f := st.Field(n.Name())
			if f == nil {
				t.Errorf("%s: file column %s%s is not a physical name", key, path, n.Name())
				continue
			}
			if id, _ := f.FieldID(); int64(n.FieldID()) != id {
				t.Errorf("%s: column %s%s has field id %d, want %d", key, path, n.Name(), n.FieldID(), id)
			}
			if sub, ok := f.Type.(*actions.StructType); ok {
				check(n.(*schema.GroupNode), sub, path+n.Name()+".")
			}
		}
	}
	// The partition columns are not in the file.
	data := &actions.StructType{}
	for _, f := range phys.Fields {
		if root.FieldIndexByName(f.Name) >= 0 {
			data.Fields = append(data.Fields, f)
		}
	}
	if root.NumFields() != len(phys.Fields)-partitions {
		t.Errorf("%s: %d columns, want %d", key, root.NumFields(), len(phys.Fields)-partitions)
	}
	check(root, data, "")
}

// scanLinesOf is the canonical rows, sorted, of a JSON array of rows in
// the table's schema.
func scanLinesOf(t *testing.T, mem memory.Allocator, snap *deltalog.Snapshot, rows string) []string {
	t.Helper()
	rec := tabletest.Batch(t, mem, snap, rows)
	defer rec.Release()
	lines, err := reader.CanonicalRows(rec)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	slices.Sort(out)
	return out
}

// arrowSchemaOf is the Arrow schema of a DDL column list.
func arrowSchemaOf(t *testing.T, ddl string) *arrow.Schema {
	t.Helper()
	st, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := actions.ToArrowSchema(st, false, "")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestColumnMappedCheckpoint: a checkpoint of a column-mapped table
// carries stats and partition values under physical names, and a
// snapshot read from it prunes files by them.
func TestColumnMappedCheckpoint(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	mem := tabletest.CheckedMem(t)
	snap := tabletest.Create(t, store, "id long, p string", map[string]string{"delta.columnMapping.mode": "id", "delta.checkpoint.writeStatsAsStruct": "true"}, "p")
	for i := range 11 {
		rows := fmt.Sprintf(`[{"id":%d,"p":%q}]`, i, []string{"x", "y"}[i%2])
		if _, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, mem, snap, rows)), writer.WithCommitOptions(deltalog.WithPostCommit(deltalog.PostCommitSync))); err != nil {
			t.Fatal(err)
		}
		snap = tabletest.Open(t, store)
	}
	var keys []string
	for info, err := range store.List(ctx, "tbl/_delta_log/00000000000000000010.checkpoint", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	if len(keys) == 0 {
		t.Fatal("no checkpoint at version 10")
	}
	snap = tabletest.Open(t, store)
	for _, c := range []struct {
		where string
		files int
	}{{"id > 7", 3}, {"p = 'x'", 6}, {"p = 'y' and id < 4", 2}} {
		e, err := expr.Parse(c.where)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := reader.NewScan(snap, reader.WithFilter(e))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range sc.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != c.files {
			t.Errorf("%s: %d files planned, want %d", c.where, n, c.files)
		}
	}
}

// TestCreateTableColumnMapped: CREATE TABLE AS SELECT of a column-mapped
// table writes its files under the physical names Create assigns.
func TestCreateTableColumnMapped(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	mem := tabletest.CheckedMem(t)
	schema, err := actions.ParseDDL("id long, s struct<a:string>")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := actions.SchemaString(schema)
	md := &actions.Metadata{SchemaString: text, Configuration: map[string]string{"delta.columnMapping.mode": "id"}}
	rows := `[{"id":1,"s":{"a":"x"}},{"id":2,"s":null}]`
	rec := tabletest.RecordJSON(t, mem, arrowSchemaOf(t, "id long, s struct<a:string>"), rows)
	if _, err := writer.CreateTable(ctx, store, "tbl", md, tabletest.Batches(t, rec)); err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Open(t, store)
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(`{"id":1,"s":{"a":"x"}}`, `{"id":2,"s":null}`))
	for f := range snap.Files() {
		checkFileSchema(t, store, "tbl/"+f.Path, actions.PhysicalSchema(snap.Schema(), "id"), 0)
	}
}
