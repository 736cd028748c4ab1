package reader_test

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestCanonicalValues checks each value encoding of the corpus README's
// canonical row format.
func TestCanonicalValues(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	f32 := array.NewFloat32Builder(mem)
	defer f32.Release()
	f32.AppendValues([]float32{0.1, 3.4, float32(math.NaN()), float32(math.Inf(1)), 1e21, float32(math.Copysign(0, -1))}, nil)
	f64 := array.NewFloat64Builder(mem)
	defer f64.Release()
	f64.AppendValues([]float64{0.1, 5, math.Inf(-1), math.NaN(), 1e21, 1e-7}, nil)
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	defer dec.Release()
	for _, v := range []int64{100, -50, 5, -5, 0, 123456} {
		dec.Append(decimal128.FromI64(v))
	}
	dec0 := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 5, Scale: 0})
	defer dec0.Release()
	for _, v := range []int64{123, -1, 0, 7, 8, 9} {
		dec0.Append(decimal128.FromI64(v))
	}
	str := array.NewStringBuilder(mem)
	defer str.Release()
	str.AppendValues([]string{"<a&b>", "é\"\\\n", "\u2028", "😀", "", "tab\t"}, nil)
	bin := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer bin.Release()
	bin.AppendValues([][]byte{{0, 1, 2}, {0xff}, {}, []byte("hi"), nil, {1}}, []bool{true, true, true, true, false, true})
	date := array.NewDate32Builder(mem)
	defer date.Release()
	date.AppendValues([]arrow.Date32{0, -1, 19782, -719162, 2932896, 1}, nil)
	ts := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer ts.Release()
	ts.AppendValues([]arrow.Timestamp{0, -1, 1633075760123456, 253402214400000000, -62135596800000000, 1}, nil)
	ntz := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer ntz.Release()
	ntz.AppendValues([]arrow.Timestamp{0, -1, 1633075760123456, 1, 2, 3}, nil)

	cols := []arrow.Array{f32.NewArray(), f64.NewArray(), dec.NewArray(), dec0.NewArray(), str.NewArray(), bin.NewArray(), date.NewArray(), ts.NewArray(), ntz.NewArray()}
	names := []string{"f", "d", "dec", "dec0", "s", "bin", "day", "ts", "ntz"}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 6)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	got, err := reader.CanonicalRows(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"f":0.1,"d":0.1,"dec":"1.00","dec0":"123","s":"<a&b>","bin":"AAEC","day":"1970-01-01","ts":"1970-01-01T00:00:00.000000Z","ntz":"1970-01-01T00:00:00.000000"}`,
		`{"f":3.4,"d":5,"dec":"-0.50","dec0":"-1","s":"é\"\\\n","bin":"/w==","day":"1969-12-31","ts":"1969-12-31T23:59:59.999999Z","ntz":"1969-12-31T23:59:59.999999"}`,
		`{"f":"NaN","d":"-Infinity","dec":"0.05","dec0":"0","s":"\u2028","bin":"","day":"2024-02-29","ts":"2021-10-01T08:09:20.123456Z","ntz":"2021-10-01T08:09:20.123456"}`,
		`{"f":"Infinity","d":"NaN","dec":"-0.05","dec0":"7","s":"😀","bin":"aGk=","day":"0001-01-01","ts":"9999-12-31T00:00:00.000000Z","ntz":"1970-01-01T00:00:00.000001"}`,
		`{"f":1e+21,"d":1e+21,"dec":"0.00","dec0":"8","s":"","bin":null,"day":"9999-12-31","ts":"0001-01-01T00:00:00.000000Z","ntz":"1970-01-01T00:00:00.000002"}`,
		`{"f":-0,"d":1e-7,"dec":"1234.56","dec0":"9","s":"tab\t","bin":"AQ==","day":"1970-01-02","ts":"1970-01-01T00:00:00.000001Z","ntz":"1970-01-01T00:00:00.000003"}`,
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestCanonicalNested checks structs, lists and maps (sorted by the key's
// canonical text, so 10 sorts before 2).
func TestCanonicalNested(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String), Nullable: true},
		{Name: "ms", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Int8)), Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[
		{"st": {"a": 1, "l": ["x", null]}, "m": [{"key": 2, "value": "two"}, {"key": 10, "value": null}, {"key": -1, "value": "m"}],
		 "ms": [{"key": "b", "value": [1]}, {"key": "a", "value": null}]},
		{"st": null, "m": null, "ms": []},
		{"st": {"a": null, "l": []}, "m": [], "ms": null}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	got, err := reader.CanonicalRows(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"st":{"a":1,"l":["x",null]},"m":[[-1,"m"],[10,null],[2,"two"]],"ms":[["a",null],["b",[1]]]}`,
		`{"st":null,"m":null,"ms":[]}`,
		`{"st":{"a":null,"l":[]},"m":[],"ms":null}`,
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if _, err := reader.AppendCanonicalRow(nil, rec, 3); err == nil {
		t.Error("row out of range accepted")
	}
	// The JSON row encoding differs only in maps, which are objects.
	wantJSON := []string{
		`{"st":{"a":1,"l":["x",null]},"m":{"-1":"m","10":null,"2":"two"},"ms":{"a":null,"b":[1]}}`,
		`{"st":null,"m":null,"ms":{}}`,
		`{"st":{"a":null,"l":[]},"m":{},"ms":null}`,
	}
	for i := range wantJSON {
		got, err := reader.AppendJSONRow(nil, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != wantJSON[i] {
			t.Errorf("JSON row %d:\n got %s\nwant %s", i, got, wantJSON[i])
		}
	}
}
