package input_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer/input"
)

func mustDDL(t testing.TB, ddl string) *actions.StructType {
	t.Helper()
	s, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatalf("ParseDDL(%q): %v", ddl, err)
	}
	return s
}

// decode reads data (named name, whose extension selects the format) into
// a table of schema ddl and returns the canonical rows and the number of
// batches. Arrow memory is checked.
func decode(t *testing.T, name, data, ddl string, opts ...input.Option) ([]string, int, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts = append(opts, input.WithAllocator(mem))
	d, err := input.NewDecoder(bytes.NewReader([]byte(data)), name, mustDDL(t, ddl), opts...)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	var lines []string
	batches := 0
	for rec, err := range d.Records(context.Background()) {
		if err != nil {
			return lines, batches, err
		}
		batches++
		if !rec.Schema().Equal(d.Schema()) {
			t.Errorf("batch schema %s, want %s", rec.Schema(), d.Schema())
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	return lines, batches, nil
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const allTypes = "l long, i int, s short, b byte, f float, d double, dec decimal(10,2), str string, ok boolean, bin binary, dt date, ts timestamp, ntz timestamp_ntz, st struct<x:int,y:string>, arr array<int>, m map<string,long>"

func TestJSONLEveryType(t *testing.T) {
	data := `{"l":9007199254740993,"i":-2147483648,"s":32767,"b":-128,"f":1.5,"d":0.1,"dec":"12.30","str":"héllo \"q\" \u00e9\ud83d\ude00","ok":true,"bin":"AQID","dt":"2026-03-01","ts":"2026-03-01T12:30:00.1234567+02:00","ntz":"2026-03-01 12:30:00","st":{"x":1,"y":"a"},"arr":[1,null,3],"m":{"k":1,"j":2}}
{"l":"42","i":3.0,"s":1e2,"b":0,"f":"NaN","d":"-Infinity","dec":12.3,"str":"","ok":false,"bin":"AQI","dt":"1969-12-31","ts":"2026-03-01T12:30:00Z","ntz":"2026-03-01T00:00:00.5","st":{"Y":"b"},"arr":[],"m":[["z",5],["a",null]]}
{}

{"l":null,"dec":-0.05,"d":1e300,"ts":"2026-03-01 12:30:00"}
`
	got, _, err := decode(t, "all.jsonl", data, allTypes)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got,
		`{"l":9007199254740993,"i":-2147483648,"s":32767,"b":-128,"f":1.5,"d":0.1,"dec":"12.30","str":"héllo \"q\" é😀","ok":true,"bin":"AQID","dt":"2026-03-01","ts":"2026-03-01T10:30:00.123456Z","ntz":"2026-03-01T12:30:00.000000","st":{"x":1,"y":"a"},"arr":[1,null,3],"m":[["j",2],["k",1]]}`,
		`{"l":42,"i":3,"s":100,"b":0,"f":"NaN","d":"-Infinity","dec":"12.30","str":"","ok":false,"bin":"AQI=","dt":"1969-12-31","ts":"2026-03-01T12:30:00.000000Z","ntz":"2026-03-01T00:00:00.500000","st":{"x":null,"y":"b"},"arr":[],"m":[["a",null],["z",5]]}`,
		`{"l":null,"i":null,"s":null,"b":null,"f":null,"d":null,"dec":null,"str":null,"ok":null,"bin":null,"dt":null,"ts":null,"ntz":null,"st":null,"arr":null,"m":null}`,
		`{"l":null,"i":null,"s":null,"b":null,"f":null,"d":1e+300,"dec":"-0.05","str":null,"ok":null,"bin":null,"dt":null,"ts":"2026-03-01T12:30:00.000000Z","ntz":null,"st":null,"arr":null,"m":null}`,
	)
}

func TestJSONLNamesIgnoreCaseAndOrder(t *testing.T) {
	got, _, err := decode(t, "x.ndjson", "\ufeff{\"NAME\":\"a\",\"Id\":1}\r\n{\"id\":2}\n", "id long not null, name string")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got, `{"id":1,"name":"a"}`, `{"id":2,"name":null}`)
}

func TestJSONLNestedTypes(t *testing.T) {
	ddl := "a array<struct<k:string,v:array<int>>>, m map<int,map<string,boolean>>, s struct<inner:struct<d:date>>"
	data := `{"a":[{"k":"x","v":[1]},null,{"K":"y"}],"m":{"7":{"t":true}},"s":{"inner":{"d":"2020-02-29"}}}
{"m":[[1,{}],[2,null]],"s":{"inner":null}}
`
	got, _, err := decode(t, "n.jsonl", data, ddl)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got,
		`{"a":[{"k":"x","v":[1]},null,{"k":"y","v":null}],"m":[[7,[["t",true]]]],"s":{"inner":{"d":"2020-02-29"}}}`,
		`{"a":null,"m":[[1,[]],[2,null]],"s":{"inner":null}}`,
	)
}

// Every kind of bad value or line is an *Error naming the file, the line
// and (where there is one) the column.
func TestJSONLBadInput(t *testing.T) {
	const ddl = "id long not null, amount decimal(10,2), b byte, f float, name string, dt date, ts timestamp, ntz timestamp_ntz, ok boolean, bin binary, st struct<x:int not null>, tags array<string>, m map<string,int>"
	for _, c := range []struct {
		name   string
		line   string
		column string
		msg    string
	}{
		{"decimal with a comma", `{"id":1,"amount":"12,5"}`, "amount", `"12,5" is not a decimal(10,2)`},
		{"decimal too precise", `{"id":1,"amount":1.005}`, "amount", "more than 2 digits after the point"},
		{"decimal too large", `{"id":1,"amount":123456789}`, "amount", "too many digits for decimal(10,2)"},
		{"string for a long", `{"id":"abc"}`, "id", `"abc" is not a long`},
		{"fraction for a long", `{"id":1.5}`, "id", "1.5 is not a long"},
		{"long out of range", `{"id":9223372036854775808}`, "id", "out of range for long"},
		{"byte out of range", `{"id":1,"b":128}`, "b", "128 is out of range for byte"},
		{"float out of range", `{"id":1,"f":1e39}`, "f", "out of range for float"},
		{"bool for a long", `{"id":true}`, "id", "true is not a long"},
		{"object for a string", `{"id":1,"name":{"a":1}}`, "name", "an object is not a string"},
		{"number for a string", `{"id":1,"name":12}`, "name", "12 is not a string"},
		{"bad date", `{"id":1,"dt":"2026-02-30"}`, "dt", "is not a date"},
		{"bad timestamp", `{"id":1,"ts":"yesterday"}`, "ts", "is not a timestamp"},
		{"zone on ntz", `{"id":1,"ntz":"2026-01-01T00:00:00Z"}`, "ntz", "is not a timestamp_ntz"},
		{"string for a boolean", `{"id":1,"ok":"yes"}`, "ok", `"yes" is not a boolean`},
		{"bad base64", `{"id":1,"bin":"!!"}`, "bin", "is not base64"},
		{"unknown column", `{"id":1,"colour":"red"}`, "colour", "is not in the table schema (columns: id, amount,"},
		{"unknown struct field", `{"id":1,"st":{"x":1,"z":2}}`, "st.z", `is not a field of struct "st"`},
		{"missing non-nullable", `{"amount":1}`, "id", "is missing, and the column is not nullable"},
		{"null in non-nullable", `{"id":null}`, "id", "null in a non-nullable column"},
		{"missing nested non-nullable", `{"id":1,"st":{}}`, "st.x", "is missing, and the column is not nullable"},
		{"duplicate key", `{"id":1,"ID":2}`, "id", "appears twice"},
		{"duplicate map key", `{"id":1,"m":{"a":1,"a":2}}`, "m", `duplicate map key "a"`},
		{"array for a map pair", `{"id":1,"m":[1]}`, "m", "a number is not a [key, value] pair"},
		{"element type", `{"id":1,"tags":["a",2]}`, "tags.element", "2 is not a string"},
		{"malformed in a column", `{"id":1,"name":"abc}`, "", "the line is truncated JSON: unterminated string (byte 16)"},
		{"malformed", `{"id":1,}`, "", "the line is not valid JSON: invalid character '}' where an object key should be (byte 9)"},
		{"truncated", `{"id":1`, "", "the line is truncated JSON: unexpected end of input after an object element (byte 8)"},
		{"truncated in a number", `{"id":1,"name":"a","amount":-`, "", "the line is truncated JSON: unexpected end of input in a number (byte 30)"},
		{"bad literal where a number goes", `{"id":tr}`, "", "the line is not valid JSON: invalid character 't' in a literal (want true) (byte 7)"},
		{"trailing garbage", `{"id":1} x`, "", "the line is not valid JSON: invalid character 'x' after the end of the value (byte 10)"},
		{"not an object", `[1,2]`, "", "want a JSON object, got an array"},
		{"bare word", `hello`, "", "the line is not valid JSON: invalid character 'h' in a number (byte 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := "{\"id\":0}\n\n" + c.line + "\n{\"id\":3}\n"
			_, _, err := decode(t, "orders.jsonl", data, ddl)
			var ie *input.Error
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *input.Error", err, err)
			}
			if ie.File != "orders.jsonl" || ie.Line != 3 || ie.Column != c.column || !strings.Contains(ie.Msg, c.msg) {
				t.Fatalf("got %+v\nwant line 3, column %q, message containing %q", ie, c.column, c.msg)
			}
			if unknown := strings.HasPrefix(c.name, "unknown"); errors.Is(err, input.ErrUnknownColumn) != unknown {
				t.Errorf("errors.Is(err, ErrUnknownColumn) = %v, want %v", !unknown, unknown)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	_, _, err := decode(t, "orders.jsonl", "{\"amount\":1}\n{}\n{\"amount\":\"12,5\"}\n", "amount decimal(10,2)")
	if err == nil || err.Error() != `orders.jsonl:3: column "amount": "12,5" is not a decimal(10,2)` {
		t.Fatalf("error %v", err)
	}
	for _, c := range []struct {
		e    input.Error
		want string
	}{
		{input.Error{File: "a.csv", Line: 7, Msg: "wrong number of fields"}, "a.csv:7: wrong number of fields"},
		{input.Error{File: "b.parquet", Row: 17, Column: "id", Msg: "null in a non-nullable column"}, `b.parquet: row 17: column "id": null in a non-nullable column`},
		{input.Error{File: "c.jsonl", Msg: "open: no such file"}, "c.jsonl: open: no such file"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

func TestCSV(t *testing.T) {
	data := "\ufeffID, Name ,amount,tags,ts,ok\n" +
		"1,alice,12.50,\"[\"\"a\"\",\"\"b\"\"]\",2026-03-01T12:00:00Z,TRUE\n" +
		"2,\"multi\nline\", 3 ,,,\n" +
		"3,,,[],2026-03-01 12:00:00,false\n"
	got, _, err := decode(t, "orders.csv", data, "id long not null, name string, amount decimal(10,2), tags array<string>, ts timestamp, ok boolean, extra int")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got,
		`{"id":1,"name":"alice","amount":"12.50","tags":["a","b"],"ts":"2026-03-01T12:00:00.000000Z","ok":true,"extra":null}`,
		`{"id":2,"name":"multi\nline","amount":"3.00","tags":null,"ts":null,"ok":null,"extra":null}`,
		`{"id":3,"name":null,"amount":null,"tags":[],"ts":"2026-03-01T12:00:00.000000Z","ok":false,"extra":null}`,
	)
	got, _, err = decode(t, "empty.csv", "", "id long not null")
	if err != nil || len(got) != 0 {
		t.Fatalf("empty file: %v %v", got, err)
	}
	got, _, err = decode(t, "tabs.csv", "a\tb\n1\tx\n", "a int, b string", input.WithComma('\t'))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got, `{"a":1,"b":"x"}`)
}

func TestCSVBadInput(t *testing.T) {
	const ddl = "id long not null, amount decimal(10,2), tags array<string>, name string"
	for _, c := range []struct {
		name   string
		data   string
		line   int64
		column string
		msg    string
	}{
		{"too few fields", "id,amount\n1,2\n3\n", 3, "", "wrong number of fields, the header has 2"},
		{"too many fields", "id,amount\n1,2\n3,4,5\n", 3, "", "wrong number of fields, the header has 2"},
		{"bad value", "id,amount\n1,2\n2,\"12,5\"\n", 3, "amount", `"12,5" is not a decimal(10,2)`},
		{"bad value after a multi-line field", "id,name,amount\n1,\"a\nb\",2\n2,x,zz\n", 4, "amount", `"zz" is not a decimal(10,2)`},
		{"empty in non-nullable", "id,amount\n1,2\n,3\n", 3, "id", "empty (null) in a non-nullable column"},
		{"unknown column", "id,colour\n1,red\n", 1, "colour", "is not in the table schema"},
		{"repeated column", "id,ID\n1,2\n", 1, "id", "appears twice in the header"},
		{"missing non-nullable", "amount\n1\n", 1, "id", "is missing from the header"},
		{"bad JSON cell", "id,tags\n1,\"[\"\"a\"\"\"\n", 2, "tags", "the cell is truncated JSON: unexpected end of input after an array element (byte 5)"},
		{"bare quote", "id,name\n1,a\"b\n", 2, "", "malformed CSV"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := decode(t, "orders.csv", c.data, ddl)
			var ie *input.Error
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *input.Error", err, err)
			}
			if ie.File != "orders.csv" || ie.Line != c.line || ie.Column != c.column || !strings.Contains(ie.Msg, c.msg) {
				t.Fatalf("got %+v (%v)\nwant line %d, column %q, message containing %q", ie, ie, c.line, c.column, c.msg)
			}
			if unknown := strings.HasPrefix(c.name, "unknown"); errors.Is(err, input.ErrUnknownColumn) != unknown {
				t.Errorf("errors.Is(err, ErrUnknownColumn) = %v, want %v", !unknown, unknown)
			}
		})
	}
}

func TestBatching(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "{\"id\":%d}\n", i)
	}
	got, batches, err := decode(t, "x.jsonl", b.String(), "id long", input.WithBatchSize(4))
	if err != nil || len(got) != 10 || batches != 3 {
		t.Fatalf("%d rows in %d batches, err %v; want 10 in 3", len(got), batches, err)
	}
	got, batches, err = decode(t, "x.jsonl", b.String(), "id long", input.WithBatchBytes(20))
	if err != nil || len(got) != 10 || batches != 4 { // 8 bytes a line: 3 lines a batch
		t.Fatalf("%d rows in %d batches, err %v; want 10 in 4", len(got), batches, err)
	}
	csvData := "id\n" + strings.Repeat("1\n", 10)
	got, batches, err = decode(t, "x.csv", csvData, "id long", input.WithBatchSize(3))
	if err != nil || len(got) != 10 || batches != 4 {
		t.Fatalf("csv: %d rows in %d batches, err %v; want 10 in 4", len(got), batches, err)
	}
}

func TestLongLine(t *testing.T) {
	long := `{"s":"` + strings.Repeat("x", 3000) + `"}`
	got, _, err := decode(t, "x.jsonl", long+"\n"+long, "s string")
	if err != nil || len(got) != 2 {
		t.Fatalf("long lines: %d rows, %v", len(got), err)
	}
	_, _, err = decode(t, "x.jsonl", "{}\n"+long+"\n", "s string", input.WithMaxLineSize(1000))
	var ie *input.Error
	if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(ie.Msg, "longer than 1000 bytes") {
		t.Fatalf("error %v", err)
	}
}

// writeParquet writes rec to a Parquet file in dir and returns its path.
func writeParquet(t *testing.T, dir, name string, rec arrow.RecordBatch) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func int64Record(t *testing.T, name string, vals ...int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(vals)))
}

func TestParquet(t *testing.T) {
	dir := t.TempDir()
	rec := int64Record(t, "n", 1, 2, 3, 4, 5)
	defer rec.Release()
	p := writeParquet(t, dir, "nums.parquet", rec)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d, err := input.Open(p, mustDDL(t, "n long"), input.WithBatchSize(2), input.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Format() != input.Parquet || d.Size() <= 0 {
		t.Fatalf("format %v size %d", d.Format(), d.Size())
	}
	var rows, batches int64
	for rec, err := range d.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		batches++
	}
	if rows != 5 || batches != 3 || d.BytesRead() != d.Size() {
		t.Fatalf("%d rows in %d batches, %d of %d bytes", rows, batches, d.BytesRead(), d.Size())
	}

	notParquet := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(notParquet, []byte("{\"n\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = input.Open(notParquet, mustDDL(t, "n long"))
	var ie *input.Error
	if !errors.As(err, &ie) || ie.File != notParquet || !strings.Contains(ie.Msg, "not a readable Parquet file") {
		t.Fatalf("error %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	schema := mustDDL(t, "n long")
	if _, err := input.Open("data.txt", schema); err == nil || !strings.Contains(err.Error(), "unknown input format") {
		t.Errorf("unknown extension: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	_, err := input.Open(missing, schema)
	var ie *input.Error
	if !errors.As(err, &ie) || ie.File != missing || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := input.NewDecoder(strings.NewReader(""), "x.parquet", schema); err == nil {
		t.Error("Parquet from a plain reader: want an error")
	}
	if _, err := input.NewDecoder(strings.NewReader(""), "x.jsonl", mustDDL(t, "v variant")); err == nil || !strings.Contains(err.Error(), "variant") {
		t.Errorf("variant column: %v", err)
	}
}

func TestReadFileChains(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(p, []byte("{\"n\":1}\n{\"n\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var n int64
	for rec, err := range input.ReadFile(context.Background(), p, mustDDL(t, "n long")) {
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
	}
	if n != 2 {
		t.Fatalf("%d rows", n)
	}
}

func TestMergeSchema(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	table := mustDDL(t, "id long")
	ctx := context.Background()

	a := write("a.jsonl", `{"id":1,"n":1,"flag":true,"s":"x","nothing":null,"Later":null}`+"\n"+`{"id":2,"N":2.5,"later":7}`+"\n")
	b := write("b.csv", "id,S,c\n1,x,y\n")
	rec := int64Record(t, "p", 1)
	defer rec.Release()
	pq := writeParquet(t, dir, "c.parquet", rec)
	got, err := input.MergeSchema(ctx, table, []string{a, b, pq})
	if err != nil {
		t.Fatal(err)
	}
	want := "struct<id:long,n:double,flag:boolean,s:string,nothing:string,Later:long,c:string,p:long>"
	if got.String() != want {
		t.Fatalf("merged %s\nwant   %s", got, want)
	}
	for _, f := range got.Fields[1:] {
		if !f.Nullable {
			t.Errorf("new column %s is not nullable", f.Name)
		}
	}
	// The merged schema decodes the file.
	rows, _, err := decode(t, "a.jsonl", `{"id":1,"n":1,"flag":true,"s":"x","nothing":null,"Later":null}`, mustString(t, got))
	if err != nil || len(rows) != 1 {
		t.Fatalf("decode with merged schema: %v %v", rows, err)
	}

	if same, err := input.MergeSchema(ctx, table, []string{write("d.jsonl", `{"ID":3}`)}); err != nil || same != table {
		t.Fatalf("no new columns: %v %v", same, err)
	}
	_, err = input.MergeSchema(ctx, table, []string{write("e.jsonl", "{\"x\":1}\n{\"x\":true}\n")})
	var ie *input.Error
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Column != "x" || !strings.Contains(ie.Msg, "a boolean here but a long at") {
		t.Fatalf("conflict: %v", err)
	}
	// Objects are structs (fields in order of first appearance, unified
	// over the rows), arrays arrays; what only nulls fill is a string.
	nested, err := input.MergeSchema(ctx, table, []string{write("f.jsonl",
		"{\"x\":{\"a\":1,\"l\":[1,2]}}\n{\"x\":{\"b\":\"s\",\"a\":2.5,\"l\":[]},\"y\":[{\"k\":null}],\"z\":{}}\n{\"x\":null,\"y\":[]}\n")})
	if err != nil || nested.String() != "struct<id:long,x:struct<a:double,l:array<long>,b:string>,y:array<struct<k:string>>,z:string>" {
		t.Fatalf("nested: %v %v", nested, err)
	}
	rows, _, err = decode(t, "f.jsonl", "{\"x\":{\"b\":\"s\",\"a\":2.5,\"l\":[]},\"y\":[{\"k\":null}]}", mustString(t, nested))
	if err != nil || len(rows) != 1 || rows[0] != `{"id":null,"x":{"a":2.5,"l":[],"b":"s"},"y":[{"k":null}],"z":null}` {
		t.Fatalf("decode nested: %v %v", rows, err)
	}
	_, err = input.MergeSchema(ctx, table, []string{write("f2.jsonl", "{\"x\":{\"a\":1}}\n{\"x\":{\"a\":true}}\n")})
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Column != "x" {
		t.Fatalf("nested conflict: %v", err)
	}
	_, err = input.MergeSchema(ctx, table, []string{write("g.jsonl", "{\"id\":1}\n{\"id\":\n")})
	if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(ie.Msg, "the line is truncated JSON") {
		t.Fatalf("malformed: %v", err)
	}
}

// mustString renders a schema as DDL for decode.
func mustString(t *testing.T, s *actions.StructType) string {
	t.Helper()
	return actions.FormatDDL(s)
}

func TestDecimalMessages(t *testing.T) {
	for _, c := range []struct{ v, msg string }{
		{"1.005", "1.005 has more than 2 digits after the point"},
		{"1.5e-3", "has more than 2 digits after the point"},
		{"1e50", "1e50 has too many digits for decimal(10,2)"},
		{"123456789.5", "has too many digits"},
		{`"1.2.3"`, `"1.2.3" is not a decimal(10,2)`},
		{`"-1e-99999999999"`, "more than 2 digits after the point"},
	} {
		_, _, err := decode(t, "d.jsonl", `{"d":`+c.v+`}`, "d decimal(10,2)")
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.v, err, c.msg)
		}
	}
	got, _, err := decode(t, "d.jsonl", `{"d":1.2300}`+"\n"+`{"d":"15e2"}`+"\n"+`{"d":-0.0e5}`, "d decimal(10,2)")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, got, `{"d":"1.23"}`, `{"d":"1500.00"}`, `{"d":"0.00"}`)
}

// The fast decimal path agrees with the general one.
func TestDecimalPaths(t *testing.T) {
	for _, ddl := range []string{"d decimal(10,2)", "d decimal(18,0)", "d decimal(18,18)", "d decimal(38,2)", "d decimal(5,3)"} {
		for _, v := range []string{"0", "-0", "+1", "1.5", "1.500", "1.505", "0.05", "-0.05", "00012.30", ".5", "5.", "99999999.99", "100000000.00",
			"999999999999999999", "1000000000000000000", "0.123456789012345678", "-99.999", "99.9995", "12,5", "", "-", "1.2.3"} {
			line := `{"d":"` + v + `"}`
			fast, _, ferr := decode(t, "d.jsonl", line, ddl)
			general, _, gerr := decode(t, "d.jsonl", `{"d":"`+v+`e0"}`, ddl) // an exponent takes the general path
			if (ferr == nil) != (gerr == nil) || (ferr == nil && fast[0] != general[0]) {
				t.Errorf("%s %q: fast %v %v, general %v %v", ddl, v, fast, ferr, general, gerr)
			}
		}
	}
}

// CSV columns a table lacks get the types Spark's CSV inference gives
// them; the differential test against Spark is
// test/interop.TestCSVInferenceAgainstSpark.
func TestMergeSchemaInfersCSV(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.csv")
	data := "i,l,dec,d,dt,ts,b,s,late,n,mixed\n" +
		"1,3000000000,12345678901234567890,1.5,2024-01-15,2024-01-15 10:00:00,true,a,2024-01-15,,1\n" +
		"-2,4,1,1e3,2024-02-29,2024-01-15T10:00:00Z,FALSE,1x,2024-01-15 10:30,,true\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := input.MergeSchema(ctx, &actions.StructType{}, []string{p})
	if err != nil {
		t.Fatal(err)
	}
	want := "struct<i:integer,l:long,dec:decimal(20,0),d:double,dt:date,ts:timestamp,b:boolean,s:string,late:timestamp,n:string,mixed:string>"
	if got.String() != want {
		t.Fatalf("inferred %s\nwant     %s", got, want)
	}
	rows, _, err := decode(t, "x.csv", data, mustString(t, got))
	if err != nil || len(rows) != 2 {
		t.Fatalf("decode: %v %v", rows, err)
	}
	if want := `{"i":-2,"l":4,"dec":"1","d":1000,"dt":"2024-02-29","ts":"2024-01-15T10:00:00.000000Z","b":false,"s":"1x","late":"2024-01-15T10:30:00.000000Z","n":null,"mixed":"true"}`; rows[1] != want {
		t.Errorf("row 2:\n got %s\nwant %s", rows[1], want)
	}
	// inferSchema false: strings. No header: _c0, _c1, ..., and the
	// first row is data.
	got, err = input.MergeSchema(ctx, &actions.StructType{}, []string{p}, input.WithInferSchema(false))
	if err != nil || got.String() != "struct<i:string,l:string,dec:string,d:string,dt:string,ts:string,b:string,s:string,late:string,n:string,mixed:string>" {
		t.Fatalf("inferSchema false: %v %v", got, err)
	}
	got, err = input.MergeSchema(ctx, &actions.StructType{}, []string{p}, input.WithHeader(false))
	if err != nil || !strings.HasPrefix(got.String(), "struct<_c0:string,_c1:string,") {
		t.Fatalf("no header: %v %v", got, err)
	}
	rows, _, err = decode(t, "x.csv", data, mustString(t, got), input.WithHeader(false))
	if err != nil || len(rows) != 3 || !strings.HasPrefix(rows[0], `{"_c0":"i","_c1":"l",`) {
		t.Fatalf("decode without a header: %v %v", rows, err)
	}
}
