package writer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

const allTypesDDL = "b boolean, i8 byte, i16 short, i32 int, i64 long, f32 float, f64 double, " +
	"d decimal(10,2), big decimal(38,6), s string, bin binary, day date, ts timestamp, ntz timestamp_ntz, " +
	"st struct<x: int, y: struct<z: string>>, arr array<long>, nested array<array<string>>, " +
	"m map<string, int>, ms map<int, struct<a: double>>"

// allTypesInput is rows in Arrow's JSON form (binary as base64, maps as
// key/value objects) and the same rows in the canonical encoding.
var allTypesInput = `[
 {"b": true, "i8": -128, "i16": 32767, "i32": -2147483648, "i64": 9223372036854775807,
  "f32": 1.5, "f64": 0.1, "d": "-12345678.91", "big": "12345678901234567890123456789012.123456",
  "s": "héllo \"wörld\" <&>", "bin": "AAEC/w==", "day": "2024-02-29",
  "ts": "2021-10-01T08:09:20.123456Z", "ntz": "1969-12-31T23:59:59.999999",
  "st": {"x": 1, "y": {"z": "zz"}}, "arr": [1, null, 3], "nested": [["a"], [], null, ["b", null]],
  "m": [{"key": "k2", "value": 2}, {"key": "k1", "value": null}],
  "ms": [{"key": 7, "value": {"a": 2.5}}]},
 {"b": null, "i8": null, "i16": null, "i32": null, "i64": null, "f32": null, "f64": null, "d": null, "big": null,
  "s": null, "bin": null, "day": null, "ts": null, "ntz": null, "st": null, "arr": null, "nested": null, "m": null, "ms": null},
 {"b": false, "i8": 0, "i16": 0, "i32": 0, "i64": 0, "f32": -0.25, "f64": 1e300, "d": "0.00", "big": "-0.000001",
  "s": "", "bin": "", "day": "1970-01-01", "ts": "1970-01-01T00:00:00Z", "ntz": "2200-01-01T00:00:00",
  "st": {"x": null, "y": null}, "arr": [], "nested": [], "m": [], "ms": [{"key": 1, "value": null}]}
]`

var allTypesCanonical = []string{
	`{"b":true,"i8":-128,"i16":32767,"i32":-2147483648,"i64":9223372036854775807,"f32":1.5,"f64":0.1,"d":"-12345678.91","big":"12345678901234567890123456789012.123456","s":"héllo \"wörld\" <&>","bin":"AAEC/w==","day":"2024-02-29","ts":"2021-10-01T08:09:20.123456Z","ntz":"1969-12-31T23:59:59.999999","st":{"x":1,"y":{"z":"zz"}},"arr":[1,null,3],"nested":[["a"],[],null,["b",null]],"m":[["k1",null],["k2",2]],"ms":[[7,{"a":2.5}]]}`,
	`{"b":null,"i8":null,"i16":null,"i32":null,"i64":null,"f32":null,"f64":null,"d":null,"big":null,"s":null,"bin":null,"day":null,"ts":null,"ntz":null,"st":null,"arr":null,"nested":null,"m":null,"ms":null}`,
	`{"b":false,"i8":0,"i16":0,"i32":0,"i64":0,"f32":-0.25,"f64":1e+300,"d":"0.00","big":"-0.000001","s":"","bin":"","day":"1970-01-01","ts":"1970-01-01T00:00:00.000000Z","ntz":"2200-01-01T00:00:00.000000","st":{"x":null,"y":null},"arr":[],"nested":[],"m":[],"ms":[[1,null]]}`,
}

func TestRoundTripAllTypes(t *testing.T) {
	for _, codec := range []string{"snappy", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, allTypesDDL, nil)
			rec := tabletest.Batch(t, mem, snap, allTypesInput)
			res, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithCompression(codec))
			if err != nil {
				t.Fatal(err)
			}
			if res.Version != 1 {
				t.Fatalf("version %d, want 1", res.Version)
			}
			snap = tabletest.Open(t, store)
			got := tabletest.ScanLines(t, snap, reader.WithAllocator(mem))
			tabletest.DiffLines(t, "rows", got, tabletest.Sorted(allTypesCanonical...))
			for f := range snap.Files() {
				if !strings.HasSuffix(f.Path, "."+codec+".parquet") || !strings.HasPrefix(f.Path, "part-00000-") {
					t.Errorf("file name %q, want part-00000-<uuid>-c000.%s.parquet", f.Path, codec)
				}
			}
		})
	}
}

func TestRoundTripPartitioned(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, p string, d date, v double", nil, "p", "d")
	rec := tabletest.Batch(t, mem, snap, `[
		{"id": 1, "p": "a", "d": "2024-01-01", "v": 1.5},
		{"id": 2, "p": "b/c d%", "d": "2024-01-02", "v": null},
		{"id": 3, "p": null, "d": null, "v": 3},
		{"id": 4, "p": "a", "d": "2024-01-01", "v": 4},
		{"id": 5, "p": "", "d": "2024-01-01", "v": 5}
	]`)
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	got := tabletest.ScanLines(t, snap, reader.WithAllocator(mem))
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted(
		`{"id":1,"p":"a","d":"2024-01-01","v":1.5}`,
		`{"id":2,"p":"b/c d%","d":"2024-01-02","v":null}`,
		`{"id":3,"p":null,"d":null,"v":3}`,
		`{"id":4,"p":"a","d":"2024-01-01","v":4}`,
		`{"id":5,"p":null,"d":"2024-01-01","v":5}`,
	))
	paths := map[string]map[string]*string{}
	for f := range snap.Files() {
		paths[f.Path] = f.PartitionValues
	}
	if len(paths) != 4 {
		t.Fatalf("%d files, want one per partition (4): %v", len(paths), paths)
	}
	var sawEscaped, sawNull bool
	for p, pv := range paths {
		switch {
		case strings.HasPrefix(p, "p=b%252Fc%20d%2525/d=2024-01-02/part-"):
			sawEscaped = true
			if v := pv["p"]; v == nil || *v != "b/c d%" {
				t.Errorf("partition value %v, want b/c d%%", v)
			}
		case strings.HasPrefix(p, "p=__HIVE_DEFAULT_PARTITION__/d=__HIVE_DEFAULT_PARTITION__/part-"):
			sawNull = true
			if v, ok := pv["p"]; !ok || v != nil {
				t.Errorf("null partition value %v, want JSON null", v)
			}
		}
		if len(pv) != 2 {
			t.Errorf("%s: partitionValues %v, want both columns", p, pv)
		}
	}
	if !sawEscaped || !sawNull {
		t.Errorf("paths %v: want a Hive-escaped, URI-encoded folder and a null folder", keys(paths))
	}
	// The data files hold only the data columns.
	for f := range snap.Files() {
		var st actions.Stats
		s, err := actions.ParseStats(f.Stats)
		if err != nil || s == nil {
			t.Fatalf("stats %q: %v", f.Stats, err)
		}
		st = *s
		if _, ok := st.NullCount["p"]; ok {
			t.Errorf("stats %s name a partition column", f.Stats)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAllColumnsPartitioned writes a table whose every column is a
// partition column: the data files hold no columns, only row counts.
// Create refuses such a table, as Spark does, but other engines' tables
// can be so; this one is made by writing its first commit directly.
func TestAllColumnsPartitioned(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	if _, err := deltalog.Create(store, "tbl", &actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"p","type":"string","nullable":true,"metadata":{}}]}`, PartitionColumns: []string{"p"}}); err == nil {
		t.Fatal("Create of a table whose every column is a partition column: no error")
	}
	first := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"a1","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},{\"name\":\"q\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p","q"],"configuration":{},"createdTime":1}}
`
	if err := store.Put(ctx, "tbl/_delta_log/00000000000000000000.json", strings.NewReader(first), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Open(t, store)
	rec := tabletest.Batch(t, mem, snap, `[{"p": "a", "q": 1}, {"p": "a", "q": 1}, {"p": "b", "q": null}]`)
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	got := tabletest.ScanLines(t, tabletest.Open(t, store))
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted(`{"p":"a","q":1}`, `{"p":"a","q":1}`, `{"p":"b","q":null}`))
}

// TestPartitionValueTypes partitions by a column of every partitionable
// type and reads the values back from partitionValues.
func TestPartitionValueTypes(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	parts := []string{"b", "i8", "i16", "i32", "i64", "f32", "f64", "d", "s", "bin", "day", "ts", "ntz"}
	snap := tabletest.Create(t, store, "v int, b boolean, i8 byte, i16 short, i32 int, i64 long, f32 float, f64 double, "+
		"d decimal(7,3), s string, bin binary, day date, ts timestamp, ntz timestamp_ntz", nil, parts...)
	rec := tabletest.Batch(t, mem, snap, `[
		{"v": 1, "b": true, "i8": -1, "i16": 300, "i32": -70000, "i64": 9007199254740993, "f32": 1.25, "f64": -0.1,
		 "d": "-1.500", "s": "a=b/c", "bin": "aGk=", "day": "2024-02-29", "ts": "2021-10-01T08:09:20.123456Z", "ntz": "2021-10-01T08:09:20.5"},
		{"v": 2, "b": null, "i8": null, "i16": null, "i32": null, "i64": null, "f32": null, "f64": null,
		 "d": null, "s": null, "bin": null, "day": null, "ts": null, "ntz": null},
		{"v": 3, "b": false, "i8": 0, "i16": 0, "i32": 0, "i64": 0, "f32": "NaN", "f64": "-Inf",
		 "d": "0.000", "s": " ", "bin": "", "day": "1970-01-01", "ts": "1969-12-31T23:59:59.999999Z", "ntz": "1970-01-01T00:00:00"}
	]`)
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if snap.NumFiles() != 3 {
		t.Errorf("%d files, want 3", snap.NumFiles())
	}
	got := tabletest.ScanLines(t, snap, reader.WithAllocator(mem))
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted(
		`{"v":1,"b":true,"i8":-1,"i16":300,"i32":-70000,"i64":9007199254740993,"f32":1.25,"f64":-0.1,"d":"-1.500","s":"a=b/c","bin":"aGk=","day":"2024-02-29","ts":"2021-10-01T08:09:20.123456Z","ntz":"2021-10-01T08:09:20.500000"}`,
		`{"v":2,"b":null,"i8":null,"i16":null,"i32":null,"i64":null,"f32":null,"f64":null,"d":null,"s":null,"bin":null,"day":null,"ts":null,"ntz":null}`,
		// The empty binary is stored as null, as Spark stores empty
		// partition values.
		`{"v":3,"b":false,"i8":0,"i16":0,"i32":0,"i64":0,"f32":"NaN","f64":"-Infinity","d":"0.000","s":" ","bin":null,"day":"1970-01-01","ts":"1969-12-31T23:59:59.999999Z","ntz":"1970-01-01T00:00:00.000000"}`,
	))
}
