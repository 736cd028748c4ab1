package convert_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/convert"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer"
)

// wide is the schema of the randomized files: every type with stats,
// and the nested ones.
var wide = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "b", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "sh", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "ntz", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	{Name: "arr", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

// randomRows is n rows of wide as a JSON array.
func randomRows(r *rand.Rand, n int) string {
	maybe := func(v any) any {
		if r.IntN(6) == 0 {
			return nil
		}
		return v
	}
	str := func() string {
		alpha := []string{"a", "b", "z", "é", "中", "\U0001F600", " ", "~"}
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	rows := make([]map[string]any, n)
	for k := range rows {
		rows[k] = map[string]any{
			"id":   maybe(r.Int64N(1<<40) - 1<<39),
			"b":    maybe(r.IntN(256) - 128),
			"sh":   maybe(r.IntN(65536) - 32768),
			"i":    maybe(r.Int32() - 1<<30),
			"f":    maybe(r.NormFloat64() * 1e3),
			"s":    maybe(str()),
			"d":    maybe(r.IntN(40000) - 10000),
			"ts":   maybe(r.Int64N(4e15) - 1e15),
			"ntz":  maybe(r.Int64N(4e15) - 1e15),
			"dec":  maybe(fmt.Sprintf("%d.%03d", r.IntN(2e6)-1e6, r.IntN(1000))),
			"bin":  maybe("aGVsbG8="),
			"flag": maybe(r.IntN(2) == 0),
			"st":   maybe(map[string]any{"x": maybe(r.IntN(100)), "y": maybe(str())}),
			"arr":  maybe([]any{maybe(r.IntN(9)), r.IntN(9)}),
			"m":    maybe([]any{map[string]any{"key": str() + "k", "value": maybe(r.IntN(5))}}),
		}
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

// writeParquet writes rec to path with row groups of rowGroup rows.
func writeParquet(t testing.TB, path string, rec arrow.RecordBatch, rowGroup int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeParquetTo(t, f, rec, rowGroup)
}

// writeParquetTo writes rec as Parquet to w with row groups of rowGroup
// rows.
func writeParquetTo(t testing.TB, w io.Writer, rec arrow.RecordBatch, rowGroup int64) {
	t.Helper()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup))
	pw, err := pqarrow.NewFileWriter(rec.Schema(), w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}

func record(t testing.TB, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func localStore(t testing.TB, dir string) objstore.Store {
	t.Helper()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestConvertRandomDifferential writes random Parquet files (random
// rows, nulls, row groups, partitions), converts the folder and checks
// against lakelog's writer given the same rows, an independent path:
// the converted table's rows are the written table's, and each file's
// stats from the footer agree with the stats the writer computes from
// the values (nullCount and every bound the footer gives; only float
// bounds may be missing).
func TestConvertRandomDifferential(t *testing.T) {
	seed := testseed.From(t, "CONVERT_SEED")
	r := rand.New(rand.NewPCG(seed, 7))
	for round := range 6 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			partitioned := round%2 == 1
			var recs []arrow.RecordBatch
			var rels []string
			for k := range 1 + r.IntN(4) {
				rec := record(t, wide, randomRows(r, r.IntN(120)))
				defer rec.Release()
				rel := fmt.Sprintf("part-%05d.parquet", k)
				if partitioned {
					rel = fmt.Sprintf("p=%s/%s", []string{"a%20b", "x", "__HIVE_DEFAULT_PARTITION__"}[r.IntN(3)], rel)
				}
				writeParquet(t, filepath.Join(dir, rel), rec, 1+r.Int64N(50))
				recs, rels = append(recs, rec), append(rels, rel)
			}
			// Hidden files Spark skips.
			os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, ".part-00000.parquet.crc"), []byte("crc"), 0o644)
			var opts []convert.Option
			if partitioned {
				opts = append(opts, convert.PartitionBy(mustDDL(t, "p string")))
			}
			store := localStore(t, dir)
			res, err := convert.ToDelta(ctx, store, "", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != len(recs) || res.Version != 0 || res.Skipped != 2 {
				t.Fatalf("result %+v, want %d files at version 0, 2 skipped", res, len(recs))
			}
			snap, err := deltalog.Open(ctx, store, "", deltalog.WithStats())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*actions.Add{}
			for a := range snap.Files() {
				got[actions.CanonicalPath(a.Path)] = a
			}
			for k, rec := range recs {
				add := got[rels[k]]
				if add == nil {
					t.Fatalf("no add for %s (have %v)", rels[k], got)
				}
				// The same rows through lakelog's writer: one table per file.
				md := snap.Metadata()
				dataMD := *md
				dataMD.PartitionColumns = nil
				if partitioned {
					sc := snap.Schema()
					dataMD.SchemaString, _ = actions.SchemaString(&actions.StructType{Fields: sc.Fields[:len(sc.Fields)-1]})
				}
				dataMD.ID = ""
				ws := objstore.NewMem()
				wres, err := writer.CreateTable(ctx, ws, "", &dataMD, tabletest.Batches(t, rec))
				if err != nil {
					t.Fatal(err)
				}
				_ = wres
				wsnap, err := deltalog.Open(ctx, ws, "", deltalog.WithStats())
				if err != nil {
					t.Fatal(err)
				}
				var wstats string
				n := 0
				for a := range wsnap.Files() {
					wstats, n = a.Stats, n+1
				}
				if rec.NumRows() == 0 {
					checkEmpty(t, add.Stats)
					continue
				}
				if n != 1 {
					t.Fatalf("writer wrote %d files", n)
				}
				compareStats(t, rels[k], add.Stats, wstats)
			}
			checkRows(t, snap, store, recs, rels, partitioned)
		})
	}
}

func checkEmpty(t *testing.T, stats string) {
	t.Helper()
	s, err := actions.ParseStats(stats)
	if err != nil || s.NumRecords != 0 {
		t.Fatalf("stats of an empty file: %s (%v)", stats, err)
	}
}

// checkRows compares the converted table's rows with the input records
// (with their partition value), all read through the reader.
func checkRows(t *testing.T, snap *deltalog.Snapshot, store objstore.Store, recs []arrow.RecordBatch, rels []string, partitioned bool) {
	t.Helper()
	ctx := context.Background()
	// The expected rows: every input record appended to a fresh table of
	// the converted schema, partition value included.
	ws := objstore.NewMem()
	md := *snap.Metadata()
	md.ID = ""
	tx, err := deltalog.Create(ws, "", &md)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for k, rec := range recs {
		in := rec
		if partitioned {
			v := strings.TrimPrefix(strings.Split(rels[k], "/")[0], "p=")
			b := array.NewStringBuilder(memory.DefaultAllocator)
			for range rec.NumRows() {
				switch v {
				case "__HIVE_DEFAULT_PARTITION__":
					b.AppendNull()
				default:
					u, _ := actions.UnescapePartitionPath(v)
					b.Append(u)
				}
			}
			col := b.NewArray()
			fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), arrow.Field{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true})
			cols := append(append([]arrow.Array(nil), rec.Columns()...), col)
			in = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
			defer in.Release()
			col.Release()
		}
		s, err := deltalog.Open(ctx, ws, "")
		if err != nil {
			t.Fatal(err)
		}
		// An empty file adds no rows; the writer commits nothing for it.
		if _, err := writer.Append(ctx, s, tabletest.Batches(t, in)); err != nil && !(rec.NumRows() == 0 && errors.Is(err, writer.ErrEmptyInput)) {
			t.Fatal(err)
		}
	}
	wsnap, err := deltalog.Open(ctx, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	want := tabletest.ScanLines(t, wsnap)
	got := tabletest.ScanLines(t, snap)
	tabletest.DiffLines(t, "converted table rows", got, want)
}

// compareStats checks the footer's stats against the writer's.
func compareStats(t *testing.T, file, conv, wrote string) {
	t.Helper()
	c, err := actions.ParseStats(conv)
	if err != nil {
		t.Fatal(err)
	}
	w, err := actions.ParseStats(wrote)
	if err != nil {
		t.Fatal(err)
	}
	if c.NumRecords != w.NumRecords {
		t.Errorf("%s: numRecords %d, writer %d", file, c.NumRecords, w.NumRecords)
	}
	// nullCount: every column the footer can count (not arrays, maps).
	for _, col := range []string{"id", "b", "sh", "i", "f", "s", "d", "ts", "ntz", "dec", "bin", "flag", "st"} {
		if fmt.Sprint(c.NullCount[col]) != fmt.Sprint(w.NullCount[col]) {
			t.Errorf("%s: nullCount.%s %v, writer %v\nconvert %s\nwriter  %s", file, col, c.NullCount[col], w.NullCount[col], conv, wrote)
		}
	}
	for _, col := range []string{"id", "b", "sh", "i", "s", "d", "ts", "ntz", "dec", "st"} {
		for _, side := range []struct {
			name string
			c, w map[string]any
		}{{"minValues", c.MinValues, w.MinValues}, {"maxValues", c.MaxValues, w.MaxValues}} {
			if fmt.Sprint(side.c[col]) != fmt.Sprint(side.w[col]) {
				t.Errorf("%s: %s.%s %v, writer %v", file, side.name, col, side.c[col], side.w[col])
			}
		}
	}
	for _, col := range []string{"f", "bin", "flag", "arr", "m"} {
		if _, ok := c.MinValues[col]; ok {
			t.Errorf("%s: minValues.%s given; the footer cannot give it safely", file, col)
		}
	}
}

func mustDDL(t testing.TB, ddl string) *actions.StructType {
	t.Helper()
	s, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConvertRefuses: bad input is refused naming the file, and nothing
// is written.
func TestConvertRefuses(t *testing.T) {
	ctx := context.Background()
	good := `[{"id":1,"b":1,"sh":1,"i":1,"f":1,"s":"a","d":1,"ts":1,"ntz":1,"dec":"1.000","bin":null,"flag":true,"st":null,"arr":null,"m":null}]`
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	cases := []struct {
		name  string
		setup func(dir string)
		opts  []convert.Option
		is    error
		names []string
	}{
		{"mixed schemas", func(dir string) {
			writeParquet(t, filepath.Join(dir, "a.parquet"), record(t, wide, good), 10)
			writeParquet(t, filepath.Join(dir, "b.parquet"), record(t, other, `[{"id":"x"}]`), 10)
		}, nil, convert.ErrSchemaConflict, []string{"a.parquet", "b.parquet", "id"}},
		{"not parquet", func(dir string) {
			writeParquet(t, filepath.Join(dir, "a.parquet"), record(t, wide, good), 10)
			os.WriteFile(filepath.Join(dir, "notes.csv"), []byte("id\n1\n2\n"), 0o644)
		}, nil, convert.ErrNotParquet, []string{"notes.csv"}},
		{"truncated parquet", func(dir string) {
			writeParquet(t, filepath.Join(dir, "a.parquet"), record(t, wide, good), 10)
			b, _ := os.ReadFile(filepath.Join(dir, "a.parquet"))
			os.WriteFile(filepath.Join(dir, "b.parquet"), b[:len(b)/2], 0o644)
		}, nil, convert.ErrNotParquet, []string{"b.parquet"}},
		{"partition folder without partition columns", func(dir string) {
			writeParquet(t, filepath.Join(dir, "p=1", "a.parquet"), record(t, wide, good), 10)
		}, nil, convert.ErrPartition, []string{"p=1/a.parquet"}},
		{"wrong partition column", func(dir string) {
			writeParquet(t, filepath.Join(dir, "q=1", "a.parquet"), record(t, wide, good), 10)
		}, []convert.Option{convert.PartitionBy(mustDDL(t, "p int"))}, convert.ErrPartition, []string{"q=1/a.parquet", `"p"`}},
		{"partition value of the wrong type", func(dir string) {
			writeParquet(t, filepath.Join(dir, "p=abc", "a.parquet"), record(t, wide, good), 10)
		}, []convert.Option{convert.PartitionBy(mustDDL(t, "p int"))}, convert.ErrPartition, []string{"p=abc/a.parquet", "int"}},
		{"empty folder", func(dir string) {
			os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
		}, nil, convert.ErrNoFiles, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			before := listing(t, dir)
			_, err := convert.ToDelta(ctx, localStore(t, dir), "", c.opts...)
			if err == nil {
				t.Fatal("converted")
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
			if after := listing(t, dir); after != before {
				t.Errorf("files changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func listing(t testing.TB, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			out = append(out, fmt.Sprintf("%s:%d", strings.TrimPrefix(p, dir), info.Size()))
		}
		return nil
	})
	return strings.Join(out, " ")
}

// TestConvertTwice: the second run finds a Delta table and writes
// nothing, as Spark's CONVERT on a Delta table does.
func TestConvertTwice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "a.parquet"), record(t, wide, randomRows(rand.New(rand.NewPCG(1, 2)), 10)), 4)
	st := localStore(t, dir)
	if _, err := convert.ToDelta(ctx, st, ""); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	res, err := convert.ToDelta(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.AlreadyDelta || res.Version != 0 || res.Commit != nil {
		t.Fatalf("second run: %+v", res)
	}
	if after := listing(t, dir); after != before {
		t.Errorf("files changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestConvertMergesSchemas: files with different but compatible
// schemas (a new column, int widened from short) merge as Spark merges
// them; rows of a file without a column read as null.
func TestConvertMergesSchemas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s1 := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int16}, {Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true}}, nil)
	s2 := arrow.NewSchema([]arrow.Field{{Name: "ID", Type: arrow.PrimitiveTypes.Int32}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "st", Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true}}, nil)
	writeParquet(t, filepath.Join(dir, "a.parquet"), record(t, s1, `[{"id":1,"st":{"x":5}}]`), 10)
	writeParquet(t, filepath.Join(dir, "b.parquet"), record(t, s2, `[{"ID":70000,"name":"n","st":{"y":"w"}}]`), 10)
	st := localStore(t, dir)
	res, err := convert.ToDelta(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := actions.SchemaString(res.Schema)
	want, _ := actions.SchemaString(mustDDL(t, "id int, st struct<x: int, y: string>, name string"))
	if got != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}
	snap, err := deltalog.Open(ctx, st, "", deltalog.WithStats())
	if err != nil {
		t.Fatal(err)
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(
		`{"id":1,"st":{"x":5,"y":null},"name":null}`,
		`{"id":70000,"st":{"x":null,"y":"w"},"name":"n"}`))
	for a := range snap.Files() {
		if a.Path == "a.parquet" && !strings.Contains(a.Stats, `"name":1`) {
			t.Errorf("a.parquet has no name column: its nullCount is its row count; stats %s", a.Stats)
		}
	}
}
