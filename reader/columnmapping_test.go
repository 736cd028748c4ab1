package reader_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestColumnMappingName: in name mode columns, nested struct fields,
// partition values and stats are found by physical name, never by logical
// name, even where a logical name is another column's physical name; the
// batches carry logical names; a column the files lack reads as nulls.
func TestColumnMappingName(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "a string, b string, n long, st struct<x: int, y: string>, p string", nil, "p")
	tabletest.AppendTo(t, store, `[{"a":"a1","b":"b1","n":1,"st":{"x":10,"y":"y1"},"p":"eu"},{"a":"a2","b":"b2","n":2,"st":null,"p":"eu"}]`)
	tabletest.AppendTo(t, store, `[{"a":"a3","b":"b3","n":30,"st":{"x":30,"y":null},"p":"us"}]`)
	// a and b swap names; x and y too: a reader that fell back to logical
	// names would read the wrong column.
	snap := mapColumns(t, store, tabletest.Open(t, store), "name", map[string]string{"a": "b", "b": "a", "n": "num", "st": "info", "x": "y", "y": "x", "p": "region"})
	if m := snap.Config().ColumnMappingMode(); m != "name" {
		t.Fatalf("mode %q", m)
	}
	mem := tabletest.CheckedMem(t)
	all := collect(t, mustScan(t, snap, reader.WithAllocator(mem), reader.WithParallelism(1)))
	tabletest.DiffLines(t, "rows", tabletest.Sorted((all)...), []string{
		`{"b":"a1","a":"b1","num":1,"info":{"y":10,"x":"y1"},"region":"eu"}`,
		`{"b":"a2","a":"b2","num":2,"info":null,"region":"eu"}`,
		`{"b":"a3","a":"b3","num":30,"info":{"y":30,"x":null},"region":"us"}`,
	})

	// Filters bind to logical names; pruning reads partition values and
	// stats by physical names.
	for _, tc := range []struct {
		where               string
		cols                []string
		want                []string
		pruned, skipped, rd int64
	}{
		{"region = 'us'", []string{"b"}, []string{`{"b":"a3"}`}, 1, 0, 1},
		{"num > 5", []string{"a", "num"}, []string{`{"a":"b3","num":30}`}, 0, 1, 1},
		{"info.y = 10", []string{"b"}, []string{`{"b":"a1"}`}, 0, 1, 1},
		{"a = 'b2'", nil, []string{`{"b":"a2","a":"b2","num":2,"info":null,"region":"eu"}`}, 0, 1, 1},
	} {
		opts := []reader.Option{reader.WithFilter(mustParse(t, tc.where)), reader.WithAllocator(mem)}
		if tc.cols != nil {
			opts = append(opts, reader.WithColumns(tc.cols...))
		}
		sc := mustScan(t, snap, opts...)
		tabletest.DiffLines(t, "rows", tabletest.Sorted((collect(t, sc))...), tc.want)
		m := sc.Metrics()
		if m.FilesPrunedByPartition != tc.pruned || m.FilesSkippedByStats != tc.skipped || m.FilesRead != tc.rd {
			t.Errorf("%s: metrics %+v, want %d pruned by partition, %d skipped by stats, %d read", tc.where, m, tc.pruned, tc.skipped, tc.rd)
		}
		n, err := mustScan(t, snap, reader.WithFilter(mustParse(t, tc.where))).Count(ctx)
		if err != nil || n != int64(len(tc.want)) {
			t.Errorf("%s: Count %d, %v; want %d", tc.where, n, err, len(tc.want))
		}
	}
	if n, err := mustScan(t, snap).Count(ctx); err != nil || n != 3 {
		t.Errorf("Count %d, %v; want 3", n, err)
	}
	tabletest.DiffLines(t, "rows", tabletest.Sorted((collect(t, mustScan(t, snap, reader.WithColumns("a"), reader.WithRowIndex(), reader.WithAllocator(mem))))...),
		[]string{`{"a":"b1","_row_index":0}`, `{"a":"b2","_row_index":1}`, `{"a":"b3","_row_index":0}`})

	// Drop a and info.x, add c (physical name absent from every file):
	// the dropped columns are gone, c and a re-added info.z are nulls.
	md := *snap.Metadata()
	schema := snap.Schema()
	var fields []*actions.StructField
	for _, f := range schema.Fields {
		switch f.Name {
		case "a":
			continue
		case "info":
			g := *f
			st := f.Type.(*actions.StructType)
			g.Type = &actions.StructType{Fields: []*actions.StructField{st.Fields[0],
				{Name: "x", Type: actions.TypeString, Nullable: true, Metadata: map[string]any{actions.MetaColumnMappingPhysical: "col-z", actions.MetaColumnMappingID: 9}}}}
			f = &g
		}
		fields = append(fields, f)
	}
	fields = append(fields, &actions.StructField{Name: "c", Type: actions.TypeString, Nullable: true,
		Metadata: map[string]any{actions.MetaColumnMappingPhysical: "col-c", actions.MetaColumnMappingID: 10}})
	s, err := actions.SchemaString(&actions.StructType{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	md.SchemaString = s
	commitRaw(t, store, snap.Version()+1, actions.Action{Metadata: &md})
	later := tabletest.Open(t, store)
	tabletest.DiffLines(t, "rows", tabletest.Sorted((collect(t, mustScan(t, later, reader.WithAllocator(mem))))...), []string{
		`{"b":"a1","num":1,"info":{"y":10,"x":null},"region":"eu","c":null}`,
		`{"b":"a2","num":2,"info":null,"region":"eu","c":null}`,
		`{"b":"a3","num":30,"info":{"y":30,"x":null},"region":"us","c":null}`,
	})
	// Time travel to before the drop reads the old schema.
	old := tabletest.Open(t, store, deltalog.AtVersion(snap.Version()))
	if got := collect(t, mustScan(t, old, reader.WithColumns("a"), reader.WithFilter(mustParse(t, "num = 1")))); len(got) != 1 || got[0] != `{"a":"b1"}` {
		t.Errorf("time travel before the drop: %v", got)
	}
}

// writeParquet writes rows (JSON) of an Arrow schema to key and returns
// the file's size.
func writeParquet(t *testing.T, store objstore.Store, key string, sc *arrow.Schema, rows string) int64 {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return int64(buf.Len())
}

func fid(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

// TestColumnMappingID: in id mode columns and nested fields (in structs,
// arrays and maps) are found by Parquet field id, whatever the file names
// them; ids the file lacks read as nulls; a file without field ids is
// refused, naming it.
func TestColumnMappingID(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	meta := func(phys string, id int) map[string]any {
		return map[string]any{actions.MetaColumnMappingPhysical: phys, actions.MetaColumnMappingID: id}
	}
	elem := &actions.StructType{Fields: []*actions.StructField{{Name: "e", Type: actions.TypeLong, Nullable: true, Metadata: meta("col-e", 5)}}}
	schema := &actions.StructType{Fields: []*actions.StructField{
		{Name: "id", Type: actions.TypeLong, Nullable: true, Metadata: meta("col-id", 1)},
		{Name: "info", Type: &actions.StructType{Fields: []*actions.StructField{
			{Name: "k", Type: actions.TypeString, Nullable: true, Metadata: meta("col-k", 3)},
			{Name: "gone", Type: actions.TypeInteger, Nullable: true, Metadata: meta("col-g", 4)},
		}}, Nullable: true, Metadata: meta("col-info", 2)},
		{Name: "arr", Type: &actions.ArrayType{ElementType: elem, ContainsNull: true}, Nullable: true, Metadata: meta("col-arr", 6)},
		{Name: "m", Type: &actions.MapType{KeyType: actions.TypeString, ValueType: elem, ValueContainsNull: true}, Nullable: true, Metadata: meta("col-m", 7)},
		{Name: "absent", Type: actions.TypeString, Nullable: true, Metadata: meta("col-absent", 8)},
	}}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	// The file's names are neither logical nor physical: only ids match.
	elemT := arrow.StructOf(arrow.Field{Name: "whatever", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fid(5)})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "f1", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fid(1)},
		{Name: "f2", Type: arrow.StructOf(
			arrow.Field{Name: "other", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: fid(40)},
			arrow.Field{Name: "f3", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fid(3)},
		), Nullable: true, Metadata: fid(2)},
		{Name: "f6", Type: arrow.ListOf(elemT), Nullable: true, Metadata: fid(6)},
		{Name: "f7", Type: arrow.MapOf(arrow.BinaryTypes.String, elemT), Nullable: true, Metadata: fid(7)},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fid(99)},
	}, nil)
	size := writeParquet(t, store, "tbl/ids.parquet", sc,
		`[{"f1":1,"f2":{"other":7,"f3":"k1"},"f6":[{"whatever":5},null],"f7":[{"key":"a","value":{"whatever":6}}],"id":-1},
		  {"f1":2,"f2":null,"f6":null,"f7":null,"id":-2}]`)
	md := &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"}, SchemaString: s,
		Configuration: map[string]string{actions.PropColumnMappingMode: "id"}}
	p := &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"}, WriterFeatures: []string{"columnMapping"}}
	commitRaw(t, store, 0, actions.Action{Protocol: p}, actions.Action{Metadata: md},
		actions.Action{Add: &actions.Add{Path: "ids.parquet", Size: size, PartitionValues: map[string]*string{}, DataChange: true}})
	snap := tabletest.Open(t, store)
	mem := tabletest.CheckedMem(t)
	tabletest.DiffLines(t, "rows", collect(t, mustScan(t, snap, reader.WithAllocator(mem))), []string{
		`{"id":1,"info":{"k":"k1","gone":null},"arr":[{"e":5},null],"m":[["a",{"e":6}]],"absent":null}`,
		`{"id":2,"info":null,"arr":null,"m":null,"absent":null}`,
	})
	tabletest.DiffLines(t, "rows", collect(t, mustScan(t, snap, reader.WithFilter(mustParse(t, "info.k = 'k1'")), reader.WithColumns("id"), reader.WithAllocator(mem))),
		[]string{`{"id":1}`})

	// A file without field ids cannot be read in id mode.
	plain := arrow.NewSchema([]arrow.Field{{Name: "col-id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	size = writeParquet(t, store, "tbl/noids.parquet", plain, `[{"col-id":3}]`)
	commitRaw(t, store, 1, actions.Action{Add: &actions.Add{Path: "noids.parquet", Size: size, PartitionValues: map[string]*string{}, DataChange: true}})
	var scanErr error
	for _, err := range mustScan(t, tabletest.Open(t, store), reader.WithParallelism(1)).Records(ctx) {
		if err != nil {
			scanErr = err
		}
	}
	if scanErr == nil || !strings.Contains(scanErr.Error(), "noids.parquet") || !strings.Contains(scanErr.Error(), "no Parquet field ids") {
		t.Errorf("file without field ids: %v", scanErr)
	}
}

// TestColumnMappingSchema: a column-mapped schema whose field lacks its
// physical name (or, in id mode, its id) is refused when the scan is
// planned, naming the column; writes to such a table are refused.
func TestColumnMappingSchema(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		store := objstore.NewMem()
		fields := []*actions.StructField{{Name: "st", Type: &actions.StructType{Fields: []*actions.StructField{{Name: "x", Type: actions.TypeLong, Nullable: true,
			Metadata: map[string]any{actions.MetaColumnMappingID: 2}}}}, Nullable: true,
			Metadata: map[string]any{actions.MetaColumnMappingPhysical: "col-st", actions.MetaColumnMappingID: 1}}}
		s, err := actions.SchemaString(&actions.StructType{Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		commitRaw(t, store, 0, actions.Action{Protocol: &actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
			actions.Action{Metadata: &actions.Metadata{ID: "t", Format: actions.Format{Provider: "parquet"}, SchemaString: s, Configuration: map[string]string{actions.PropColumnMappingMode: mode}}})
		snap := tabletest.Open(t, store)
		if _, err := reader.NewScan(snap); err == nil || !strings.Contains(err.Error(), `"st.x"`) || !strings.Contains(err.Error(), "physicalName") {
			t.Errorf("mode %s: NewScan: %v", mode, err)
		}
		if err := snap.Supports(deltalog.OpAppend); !errors.Is(err, reader.ErrUnsupported) {
			t.Errorf("mode %s: append: %v", mode, err)
		}
	}
}
