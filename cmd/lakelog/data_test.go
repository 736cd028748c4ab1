package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/golden"
)

// ok runs the CLI, fails the test unless it exits 0, and returns stdout.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := lakelog(t, args...)
	if code != exitOK {
		t.Fatalf("lakelog %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tableVersion is the table's latest version, from describe.
func tableVersion(t *testing.T, table string) int64 {
	t.Helper()
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	return d.Version
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func wantOutput(t *testing.T, what, got string, want ...string) {
	t.Helper()
	if g := lines(got); !slices.Equal(g, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// parquetFile writes one batch of the given columns as a Parquet file.
func parquetFile(t *testing.T, path string, fields []arrow.Field, cols ...arrow.Array) string {
	t.Helper()
	sc := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(sc, cols, int64(cols[0].Len()))
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func int64s(vals []int64, valid []bool) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func strs(vals ...string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	return b.NewArray()
}

const ordersSchema = "id long not null, customer string, amount decimal(10,2), country string, ts timestamp"

func newOrders(t *testing.T) (dir, table string) {
	t.Helper()
	dir = t.TempDir()
	table = filepath.Join(dir, "orders")
	ok(t, "create", table, "--schema", ordersSchema, "--partition-by", "country")
	return dir, table
}

// JSONL, CSV and Parquet files appended together make one commit, and scan
// prints them back in the canonical encoding.
func TestAppendRoundTrip(t *testing.T) {
	dir, table := newOrders(t)
	jl := writeFile(t, dir, "a.jsonl", `{"id":1,"customer":"ann","amount":12.5,"country":"nl","ts":"2026-03-01T10:00:00+01:00"}
{"ID":2,"Customer":"bob","amount":"0.05","country":"de"}
`)
	cs := writeFile(t, dir, "b.csv", "id,country,amount,customer,ts\n3,nl,99.99,\"c, d\",2026-03-02 08:30:00\n4,,,,\n")
	db := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	db.Append(decimal128.FromI64(700))
	db.AppendNull()
	dec := db.NewArray()
	db.Release()
	pq := parquetFile(t, filepath.Join(dir, "c.parquet"), []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: dec.DataType(), Nullable: true},
		{Name: "country", Type: arrow.BinaryTypes.String, Nullable: true},
	}, int64s([]int64{5, 6}, nil), dec, strs("fr", "nl"))

	out := ok(t, "append", table, jl, cs, pq)
	if !strings.Contains(out, "appended 6 rows from 3 file(s): version 1") {
		t.Fatalf("append output: %q", out)
	}
	if v := tableVersion(t, table); v != 1 {
		t.Fatalf("version %d after one append, want 1", v)
	}
	wantOutput(t, "scan", ok(t, "scan", table, "--format", "jsonl", "--sorted"),
		`{"id":1,"customer":"ann","amount":"12.50","country":"nl","ts":"2026-03-01T09:00:00.000000Z"}`,
		`{"id":2,"customer":"bob","amount":"0.05","country":"de","ts":null}`,
		`{"id":3,"customer":"c, d","amount":"99.99","country":"nl","ts":"2026-03-02T08:30:00.000000Z"}`,
		`{"id":4,"customer":null,"amount":null,"country":null,"ts":null}`,
		`{"id":5,"customer":null,"amount":"7.00","country":"fr","ts":null}`,
		`{"id":6,"customer":null,"amount":null,"country":"nl","ts":null}`,
	)
	if n := strings.TrimSpace(ok(t, "count", table)); n != "6" {
		t.Fatalf("count %s, want 6", n)
	}
	// The CSV form reads back what it prints.
	csvOut := ok(t, "scan", table, "--format", "csv", "--sorted")
	wantOutput(t, "scan csv", csvOut,
		"id,customer,amount,country,ts",
		"1,ann,12.50,nl,2026-03-01T09:00:00.000000Z",
		"2,bob,0.05,de,",
		`3,"c, d",99.99,nl,2026-03-02T08:30:00.000000Z`,
		"4,,,,",
		"5,,7.00,fr,",
		"6,,,nl,",
	)
	again := writeFile(t, dir, "again.csv", csvOut)
	ok(t, "append", table, again)
	if n := strings.TrimSpace(ok(t, "count", table)); n != "12" {
		t.Fatalf("count after appending the CSV output %s, want 12", n)
	}
	if n := strings.TrimSpace(ok(t, "count", table, "--where", "id = 3 AND customer = 'c, d'")); n != "2" {
		t.Fatalf("count of the round-tripped row %s, want 2", n)
	}
}

// Bad input fails with exit 1 and an error naming the file, line (or
// Parquet row) and column, and commits nothing.
func TestAppendBadInput(t *testing.T) {
	dir, table := newOrders(t)
	good := writeFile(t, dir, "good.jsonl", `{"id":1,"country":"nl"}`+"\n")
	ok(t, "append", table, good)
	pqNull := parquetFile(t, filepath.Join(dir, "nullid.parquet"), []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}},
		int64s([]int64{1, 2, 0}, []bool{true, true, false}))
	pqUnknown := parquetFile(t, filepath.Join(dir, "colour.parquet"), []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "colour", Type: arrow.BinaryTypes.String}},
		int64s([]int64{1}, nil), strs("red"))
	pqType := parquetFile(t, filepath.Join(dir, "strid.parquet"), []arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, strs("x"))
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"malformed JSONL line", []string{writeFile(t, dir, "m.jsonl", "{\"id\":1}\n{\"id\":2,\n")}, []string{"m.jsonl:2:", "the line is truncated JSON"}},
		{"wrong type in JSONL", []string{writeFile(t, dir, "w.jsonl", "{\"id\":1}\n{\"id\":2}\n{\"id\":3,\"amount\":\"12,5\"}\n")}, []string{`w.jsonl:3: column "amount": "12,5" is not a decimal(10,2)`}},
		{"unknown column in JSONL", []string{writeFile(t, dir, "u.jsonl", "{\"id\":1,\"colour\":\"red\"}\n")}, []string{`u.jsonl:1: column "colour": is not in the table schema`, "--merge-schema adds it"}},
		{"null in a non-nullable column", []string{writeFile(t, dir, "n.jsonl", "{\"id\":1}\n{\"id\":null}\n")}, []string{`n.jsonl:2: column "id": null in a non-nullable column`}},
		{"CSV with a wrong column count", []string{writeFile(t, dir, "c.csv", "id,country\n1,nl\n2,de,extra\n")}, []string{"c.csv:3:", "wrong number of fields"}},
		{"wrong type in CSV", []string{writeFile(t, dir, "t.csv", "id,ts\n1,\n2,tomorrow\n")}, []string{`t.csv:3: column "ts": "tomorrow" is not a timestamp`}},
		{"unknown column in CSV", []string{writeFile(t, dir, "h.csv", "id,colour\n1,red\n")}, []string{`h.csv:1: column "colour"`}},
		{"null in Parquet", []string{pqNull}, []string{"nullid.parquet: row 3:", `column "id"`, "null in a non-nullable column"}},
		{"unknown column in Parquet", []string{pqUnknown}, []string{"colour.parquet:", `column "colour"`, "not in the table schema"}},
		{"wrong type in Parquet", []string{pqType}, []string{"strid.parquet:", `column "id"`}},
		{"second file bad", []string{good, writeFile(t, dir, "bad2.jsonl", "{\"id\":7}\n{\"id\":\"seven\"}\n")}, []string{`bad2.jsonl:2: column "id": "seven" is not a long`}},
		{"Parquet row counted within its file", []string{good, good, pqNull}, []string{"nullid.parquet: row 3:"}},
		{"not Parquet", []string{writeFile(t, dir, "fake.parquet", "id\n1\n")}, []string{"fake.parquet:", "not a readable Parquet file"}},
		{"unknown extension", []string{writeFile(t, dir, "x.txt", "1\n")}, []string{"x.txt", "unknown input format"}},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, []string{"nope.jsonl: cannot read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := lakelog(t, append([]string{"append", table}, c.files...)...)
			t.Log(strings.TrimSpace(errOut))
			if code != exitError {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitError, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not mention %q", errOut, w)
				}
			}
			if !strings.HasPrefix(errOut, "lakelog append: ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("want one line starting with the verb: %q", errOut)
			}
			if v := tableVersion(t, table); v != 1 {
				t.Fatalf("version %d after a failed append, want 1", v)
			}
		})
	}
	if n := strings.TrimSpace(ok(t, "count", table)); n != "1" {
		t.Fatalf("count %s after failed appends, want 1", n)
	}
}

func TestAppendOverwrite(t *testing.T) {
	dir, table := newOrders(t)
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"))
	out := ok(t, "append", table, writeFile(t, dir, "b.csv", "id,country\n10,nl\n11,de\n"), "--mode", "overwrite")
	if !strings.Contains(out, "overwrote the table with 2 rows from 1 file(s): version 2") {
		t.Fatalf("overwrite output %q", out)
	}
	wantOutput(t, "after overwrite", ok(t, "scan", table, "--format", "jsonl", "--columns", "id", "--sorted"), `{"id":10}`, `{"id":11}`)
	if n := strings.TrimSpace(ok(t, "count", table, "--version", "1")); n != "3" {
		t.Fatalf("count at version 1: %s, want 3", n)
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(lines(ok(t, "history", table, "--format", "jsonl", "--limit", "1"))[0]), &h); err != nil {
		t.Fatal(err)
	}
	if params, _ := h["operationParameters"].(map[string]any); params["mode"] != "Overwrite" {
		t.Fatalf("history: %v", h)
	}
	code, _, errOut := lakelog(t, "append", table, filepath.Join(dir, "a.jsonl"), "--mode", "upsert")
	if code != exitUsage || !strings.Contains(errOut, "--mode") {
		t.Fatalf("bad mode: exit %d %s", code, errOut)
	}
}

func TestAppendMergeSchema(t *testing.T) {
	dir, table := newOrders(t)
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", "{\"id\":1}\n"))
	newCols := writeFile(t, dir, "b.jsonl", "{\"id\":2,\"qty\":3,\"note\":null}\n{\"id\":3,\"qty\":4.5,\"gift\":true}\n")
	code, _, errOut := lakelog(t, "append", table, newCols)
	if code != exitError || !strings.Contains(errOut, `b.jsonl:1: column "qty"`) {
		t.Fatalf("without --merge-schema: exit %d: %s", code, errOut)
	}
	withCSV := writeFile(t, dir, "c.csv", "id,Channel\n4,web\n")
	ok(t, "append", table, newCols, withCSV, "--merge-schema")
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Columns, ","); got != "id,customer,amount,country,ts,qty,note,gift,Channel" || d.Version != 2 {
		t.Fatalf("version %d columns %s", d.Version, got)
	}
	if !strings.Contains(string(d.Schema), `{"name":"qty","type":"double","nullable":true`) || !strings.Contains(string(d.Schema), `{"name":"Channel","type":"string"`) {
		t.Fatalf("schema %s", d.Schema)
	}
	wantOutput(t, "merged", ok(t, "scan", table, "--columns", "id,qty,note,gift,channel", "--format", "jsonl", "--sorted"),
		`{"id":1,"qty":null,"note":null,"gift":null,"Channel":null}`,
		`{"id":2,"qty":3,"note":null,"gift":null,"Channel":null}`,
		`{"id":3,"qty":4.5,"note":null,"gift":true,"Channel":null}`,
		`{"id":4,"qty":null,"note":null,"gift":null,"Channel":"web"}`,
	)
	// Arrays and objects are inferred as arrays and structs.
	nested := writeFile(t, dir, "d.jsonl", "{\"id\":5,\"tags\":[\"a\"],\"addr\":{\"city\":\"Oslo\",\"zip\":150}}\n")
	ok(t, "append", table, nested, "--merge-schema")
	wantOutput(t, "nested merge", ok(t, "scan", table, "--where", "id = 5", "--columns", "id,tags,addr", "--format", "jsonl"),
		`{"id":5,"tags":["a"],"addr":{"city":"Oslo","zip":150}}`)
	// Parquet columns are added by the writer, with the file's types.
	pq := parquetFile(t, filepath.Join(dir, "e.parquet"), []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "weight", Type: arrow.PrimitiveTypes.Int64}},
		int64s([]int64{6}, nil), int64s([]int64{70}, nil))
	ok(t, "append", table, pq, "--merge-schema")
	wantOutput(t, "parquet merge", ok(t, "scan", table, "--where", "id = 6", "--columns", "id,weight", "--format", "jsonl"), `{"id":6,"weight":70}`)
}

// TestAppendOverwriteSchema: --overwrite-schema with --mode overwrite
// replaces the columns and partitioning with the input's; without
// --mode overwrite, and --partition-by without it, are usage errors that
// commit nothing.
func TestAppendOverwriteSchema(t *testing.T) {
	dir, table := newOrders(t)
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", "{\"id\":1,\"customer\":\"ann\"}\n"))
	next := writeFile(t, dir, "b.jsonl", "{\"sku\":\"x\",\"qty\":3,\"region\":\"eu\"}\n{\"sku\":\"y\",\"qty\":4,\"region\":\"us\"}\n")
	for _, args := range [][]string{{"--overwrite-schema"}, {"--mode", "overwrite", "--partition-by", "region"}} {
		code, _, errOut := lakelog(t, append([]string{"append", table, next}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "needs --") {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	ok(t, "append", table, next, "--mode", "overwrite", "--overwrite-schema", "--partition-by", "region")
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Columns, ","); got != "sku,qty,region" || d.Version != 2 {
		t.Fatalf("version %d columns %s", d.Version, got)
	}
	if got := strings.Join(d.PartitionColumns, ","); got != "region" {
		t.Fatalf("partition columns %q", got)
	}
	wantOutput(t, "overwritten", ok(t, "scan", table, "--format", "jsonl", "--sorted"),
		`{"sku":"x","qty":3,"region":"eu"}`, `{"sku":"y","qty":4,"region":"us"}`)
	wantOutput(t, "version 1", ok(t, "scan", table, "--version", "1", "--columns", "id,customer", "--format", "jsonl"), `{"id":1,"customer":"ann"}`)
}

func TestScanOptions(t *testing.T) {
	dir, table := newOrders(t)
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", `{"id":1,"customer":"ann","amount":10,"country":"nl"}
{"id":2,"customer":"bob","amount":20,"country":"de"}
{"id":3,"customer":"cy","amount":30,"country":"nl"}
`))
	time.Sleep(20 * time.Millisecond)
	ok(t, "append", table, writeFile(t, dir, "b.jsonl", `{"id":4,"customer":"dee","amount":40,"country":"fr"}`+"\n"))

	wantOutput(t, "where+columns", ok(t, "scan", table, "--where", "country = 'nl' AND amount >= 15", "--columns", "customer,ID", "--format", "jsonl"),
		`{"customer":"cy","id":3}`)
	if got := lines(ok(t, "scan", table, "--limit", "2", "--format", "jsonl")); len(got) != 2 {
		t.Fatalf("--limit 2: %d lines", len(got))
	}
	if got := lines(ok(t, "scan", table, "--limit", "0", "--format", "csv")); len(got) != 1 || got[0] != "id,customer,amount,country,ts" {
		t.Fatalf("--limit 0 csv: %q", got)
	}
	if got := lines(ok(t, "scan", table, "--version", "1", "--format", "jsonl")); len(got) != 3 {
		t.Fatalf("--version 1: %d rows", len(got))
	}
	// --timestamp: the time of version 1 reads version 1.
	var hist []map[string]any
	for _, l := range lines(ok(t, "history", table, "--format", "jsonl")) {
		var h map[string]any
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		hist = append(hist, h)
	}
	ts1 := hist[len(hist)-2]["timestamp"].(string)
	if n := strings.TrimSpace(ok(t, "count", table, "--timestamp", ts1)); n != "3" {
		t.Fatalf("count --timestamp %s: %s, want 3", ts1, n)
	}
	if got := lines(ok(t, "scan", table, "--timestamp", ts1, "--format", "jsonl")); len(got) != 3 {
		t.Fatalf("scan --timestamp: %d rows", len(got))
	}

	tbl := ok(t, "scan", table, "--where", "id <= 2", "--sorted")
	wantOutput(t, "table format", tbl,
		"id  customer  amount  country  ts",
		"--  --------  ------  -------  ----",
		" 1  ann        10.00  nl       NULL",
		" 2  bob        20.00  de       NULL",
		"(2 rows)")

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"scan", table, "--where", "amount >"}, exitError, "--where: expr: at column 9"},
		{[]string{"scan", table, "--where", "colour = 'red'"}, exitError, "colour"},
		{[]string{"count", table, "--where", "id = = 3"}, exitError, "at column 6"},
		{[]string{"scan", table, "--columns", "id,colour"}, exitError, `column "colour" is not in the table`},
		{[]string{"scan", table, "--format", "xml"}, exitUsage, "--format"},
		{[]string{"scan", table, "--limit", "-5"}, exitUsage, "--limit"},
		{[]string{"scan", table, "--version", "9"}, exitError, "9"},
		{[]string{"scan"}, exitUsage, "want one TABLE"},
		{[]string{"count", table, "extra"}, exitUsage, "want one TABLE"},
		{[]string{"append", table}, exitUsage, "at least one FILE"},
	} {
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// count without a filter trusts numRecords only where a file has it and
// reads the files that do not.
func TestCountReadsFilesWithoutStats(t *testing.T) {
	dir, table := newOrders(t)
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", "{\"id\":1,\"country\":\"nl\"}\n{\"id\":2,\"country\":\"nl\"}\n"))
	ctx := context.Background()
	st, err := objstore.NewLocal(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	var add actions.Add
	for f := range snap.Files() {
		add = *f
	}
	// Commit a copy of the file under another name, without stats.
	src := filepath.Join(table, filepath.FromSlash(add.Path))
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	add.Path = strings.Replace(add.Path, "part-", "copy-", 1)
	if err := os.WriteFile(filepath.Join(table, filepath.FromSlash(add.Path)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	add.Stats = ""
	tx := snap.NewTransaction()
	tx.Add(actions.Action{Add: &add})
	tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(ok(t, "count", table)); n != "4" {
		t.Fatalf("count %s, want 4", n)
	}
	if n := strings.TrimSpace(ok(t, "count", table, "--where", "id = 2")); n != "2" {
		t.Fatalf("count --where %s, want 2", n)
	}
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		mode              string
		rows, read, total int64
		el                time.Duration
		want              string
	}{
		{"append", 1200000, 123_400_000, 456_100_000, 12400 * time.Millisecond, "appending: 1200000 rows (117.7 MiB of 435.0 MiB, 27%), 12s"},
		{"overwrite", 10, 2048, -1, 3 * time.Second, "overwriting: 10 rows (2.0 KiB), 3s"},
		{"append", 5, 900, 800, time.Minute + 500*time.Millisecond, "appending: 5 rows (900 B of 800 B, 100%), 1m1s"},
	} {
		if got := progressLine(c.mode, c.rows, c.read, c.total, c.el); got != c.want {
			t.Errorf("progressLine = %q, want %q", got, c.want)
		}
	}
	if isTerminal(&strings.Builder{}) {
		t.Error("a strings.Builder is not a terminal")
	}
}

func TestSplitCanonical(t *testing.T) {
	row := []byte(`{"a":1,"b\"":"x,\"y\"]}","c":null,"d":{"k":[1,{"z":"}"}]},"e":[["k","v"]],"f":"NaN","g":-1.5e+300}`)
	vals, err := splitCanonical(row, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vals {
		s, isNull := cellText(v)
		if isNull {
			s = "<null>"
		}
		got = append(got, s)
	}
	want := []string{"1", `x,"y"]}`, "<null>", `{"k":[1,{"z":"}"}]}`, `[["k","v"]]`, "NaN", "-1.5e+300"}
	if !slices.Equal(got, want) {
		t.Fatalf("cells %q, want %q", got, want)
	}
	if _, err := splitCanonical([]byte(`{"a":1}`), 2); err == nil {
		t.Fatal("too few columns: want an error")
	}
}

// goldenUnsupported lists the corpus tables whose rows `scan` cannot read
// yet because the reader refuses a feature (an error wrapping
// reader.ErrUnsupported, never wrong rows). count needs only the log and
// the files' numRecords (less deletion-vector cardinalities), so it reads
// them all. The test fails when one of these starts to scan, so that the
// list stays honest.
var goldenUnsupported = map[string]string{}

// Every data table of the conformance corpus: `count` equals num_rows,
// `scan --format jsonl --sorted` hashes to rows_sha256 and equals rows,
// and count at each listed version equals the stated row count.
func TestGoldenTablesCountAndScan(t *testing.T) {
	cases, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Name] = true
		if c.ExpectError || c.MetadataOnly {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			if c.NumRows != nil {
				if n := strings.TrimSpace(ok(t, "count", c.Dir)); n != strconv.FormatInt(*c.NumRows, 10) {
					t.Errorf("count %s, want %d", n, *c.NumRows)
				}
			}
			for vs, want := range c.Versions {
				if n := strings.TrimSpace(ok(t, "count", c.Dir, "--version", vs)); n != strconv.FormatInt(want, 10) {
					t.Errorf("count --version %s: %s, want %d", vs, n, want)
				}
			}
			if testing.Short() && c.NumRows != nil && *c.NumRows > 100_000 {
				t.Skipf("-short: not scanning %d rows", *c.NumRows)
			}
			code, out, errOut := lakelog(t, "scan", c.Dir, "--format", "jsonl", "--sorted")
			if reason, listed := goldenUnsupported[c.Name]; listed {
				if code == exitOK {
					t.Errorf("listed as unsupported (%s) but scan now succeeds; remove it from goldenUnsupported", reason)
				} else if !strings.Contains(errOut, "unsupported table feature") {
					t.Errorf("listed as unsupported (%s) but scan fails otherwise: %s", reason, errOut)
				}
				return
			}
			if code != exitOK {
				t.Fatalf("scan: exit %d: %s", code, errOut)
			}
			if canonical, objects, hasMaps := libraryRows(t, c.Dir); hasMaps {
				// The CLI prints maps as JSON objects where the canonical
				// encoding the golden hashes hold has arrays of pairs: the
				// library's rows hash as the golden case's, and the CLI
				// prints the library's rows.
				if out != objects {
					t.Errorf("scan prints other rows than the library's:\n got %.400s\nwant %.400s", out, objects)
				}
				out = canonical
			}
			sum := sha256.Sum256([]byte(out))
			got := hex.EncodeToString(sum[:])
			if want := goldenRowsSHA256(t, c); want != nil && got != *want {
				t.Errorf("rows_sha256 %s, want %s", got, *want)
			}
			if c.Rows != nil {
				want := make([]string, len(c.Rows))
				for i, r := range c.Rows {
					want[i] = string(r)
				}
				if c.Name == "data-reader-partition-values" {
					return // rows are Spark's session-time-zone reading; see goldenRowsSHA256
				}
				got := lines(out)
				for i := 0; i < max(len(got), len(want)); i++ {
					var g, w string
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						w = want[i]
					}
					if g != w {
						t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
						break
					}
				}
			}
		})
	}
	for name := range goldenUnsupported {
		if !seen[name] {
			t.Errorf("goldenUnsupported names %q, which is not in the corpus", name)
		}
	}
}

// goldenRowsSHA256 is the hash the case's rows must have. In
// data-reader-partition-values the zone-less timestamp partition values
// were written by Spark in its session time zone; lakelog reads them as
// UTC (actions.ParseTimestamp), so the hash to compare is the case's
// rows_sha256_utc_partition_timestamps (see its caveats).
// libraryRows scans a table whose columns hold a map with the library:
// its rows in the canonical encoding and as the CLI prints them (maps as
// objects), each sorted and newline-terminated. hasMaps is false (and
// nothing is scanned) for a table without maps.
func libraryRows(t *testing.T, dir string) (canonical, objects string, hasMaps bool) {
	t.Helper()
	ctx := context.Background()
	st, err := objstore.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(st)
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(snap.Schema().String()), "map<") {
		return "", "", false
	}
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	var cl, ol []string
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			c, err := reader.AppendCanonicalRow(nil, rec, i)
			if err != nil {
				t.Fatal(err)
			}
			o, err := reader.AppendJSONRow(nil, rec, i)
			if err != nil {
				t.Fatal(err)
			}
			cl, ol = append(cl, string(c)+"\n"), append(ol, string(o)+"\n")
		}
	}
	slices.Sort(cl)
	slices.Sort(ol)
	return strings.Join(cl, ""), strings.Join(ol, ""), true
}

func goldenRowsSHA256(t *testing.T, c *golden.Case) *string {
	t.Helper()
	if c.Name != "data-reader-partition-values" {
		return c.RowsSHA256
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(c.Dir), "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		UTC *string `json:"rows_sha256_utc_partition_timestamps"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.UTC == nil {
		t.Fatalf("%s: no rows_sha256_utc_partition_timestamps (%v)", c.Name, err)
	}
	return e.UTC
}

// TestFilteredScanOfUnevenStrings: filtered scans of string columns whose
// values are of very uneven length return every byte of every value
// (they once came back with zeroed tails, or panicked in arrow-go's
// filter kernels, when the scans' pooled allocator handed out buffers
// with capacity past their length).
func TestFilteredScanOfUnevenStrings(t *testing.T) {
	dir := t.TempDir()

	// The report: one long value among short ones.
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long not null, s string")
	var in strings.Builder
	for id := 1; id <= 200; id++ {
		s := "aaaaaaaaaa"
		if id == 100 {
			s = strings.Repeat("b", 3000)
		}
		fmt.Fprintf(&in, "{\"id\": %d, \"s\": %q}\n", id, s)
	}
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", in.String()))
	out := ok(t, "scan", table, "--where", "id <= 100", "--format", "jsonl")
	rows := lines(out)
	if len(rows) != 100 {
		t.Fatalf("scan --where 'id <= 100': %d rows, want 100", len(rows))
	}
	for _, line := range rows {
		var r struct {
			ID int64
			S  string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		want := "aaaaaaaaaa"
		if r.ID == 100 {
			want = strings.Repeat("b", 3000)
		}
		if r.S != want {
			t.Errorf("row %d: s has %d bytes (%d zero bytes), want %q...", r.ID, len(r.S), strings.Count(r.S, "\x00"), want[:10])
			break
		}
	}

	// 2,100 rows in 3 files, strings of 0 to 9,000 characters, some
	// unicode, some empty, some null; ten filtered scans, with and
	// without a projection, against the rows filtered here.
	table = filepath.Join(dir, "u")
	ok(t, "create", table, "--schema", "id long not null, n long, s string, p string", "--partition-by", "p")
	type row struct {
		id, n int64
		s     *string
		p     string
	}
	var all []row
	for f := range 3 {
		var in strings.Builder
		for k := range 700 {
			id := int64(f*700 + k)
			r := row{id: id, n: (id*7919)%201 - 100, p: fmt.Sprintf("p%d", id%3)}
			if id%13 != 0 {
				length := int((id * 104729) % 9001)
				if id%17 == 0 {
					length = 0
				}
				unit := []string{"a", "é", "日", "b"}[id%4]
				s := strings.Repeat(unit, length/len(unit))
				r.s = &s
			}
			all = append(all, r)
			s, _ := json.Marshal(r.s)
			fmt.Fprintf(&in, "{\"id\": %d, \"n\": %d, \"s\": %s, \"p\": %q}\n", r.id, r.n, s, r.p)
		}
		ok(t, "append", table, writeFile(t, dir, fmt.Sprintf("u%d.jsonl", f), in.String()))
	}
	filters := []struct {
		where string
		keep  func(row) bool
	}{
		{"n > 0", func(r row) bool { return r.n > 0 }},
		{"p = 'p1' AND id > 300", func(r row) bool { return r.p == "p1" && r.id > 300 }},
		{"s IS NOT NULL AND n < 0", func(r row) bool { return r.s != nil && r.n < 0 }},
		{"id BETWEEN 650 AND 1450", func(r row) bool { return r.id >= 650 && r.id <= 1450 }},
		{"s LIKE 'b%' OR id < 5", func(r row) bool { return (r.s != nil && strings.HasPrefix(*r.s, "b")) || r.id < 5 }},
	}
	for _, f := range filters {
		for _, cols := range [][]string{nil, {"s", "id"}} {
			args := []string{"scan", table, "--where", f.where, "--format", "jsonl", "--sorted"}
			if cols != nil {
				args = append(args, "--columns", strings.Join(cols, ","))
			}
			var want []string
			for _, r := range all {
				if !f.keep(r) {
					continue
				}
				s, _ := json.Marshal(r.s)
				if cols == nil {
					want = append(want, fmt.Sprintf(`{"id":%d,"n":%d,"s":%s,"p":%q}`, r.id, r.n, s, r.p))
				} else {
					want = append(want, fmt.Sprintf(`{"s":%s,"id":%d}`, s, r.id))
				}
			}
			slices.Sort(want)
			got := lines(ok(t, args...))
			if !slices.Equal(got, want) {
				t.Errorf("scan --where %q --columns %v: %d rows, want %d (first difference: %s)", f.where, cols, len(got), len(want), firstDifference(got, want))
			}
		}
	}
}

// firstDifference names the first line at which got and want differ,
// shortened.
func firstDifference(got, want []string) string {
	short := func(s string) string {
		if len(s) > 120 {
			return s[:120] + "..."
		}
		return s
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return "missing " + short(want[i])
		case i >= len(want):
			return "extra " + short(got[i])
		case got[i] != want[i]:
			return fmt.Sprintf("line %d: got %s, want %s", i, short(got[i]), short(want[i]))
		}
	}
	return "none"
}

// TestCountPlansAsScan: count --where plans its files exactly as scan
// does. On a table whose float column was widened to double, the older
// files' stats hold float bounds whose text means another double, so
// stats must not skip them; count once dropped that rule and printed 0.
func TestCountPlansAsScan(t *testing.T) {
	c, err := golden.Find("type-widening")
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir
	const where = "float_double = 3.4000000953674316"
	rows := lines(ok(t, "scan", dir, "--where", where, "--format", "jsonl"))
	if len(rows) != 1 {
		t.Fatalf("scan --where %q: %d rows, want 1", where, len(rows))
	}
	if n := strings.TrimSpace(ok(t, "count", dir, "--where", where)); n != "1" {
		t.Errorf("count --where %q: %s, want 1 (as scan)", where, n)
	}
}

// TestAppendEmptyFileCommitsNothing: appending a file without rows says
// so and commits no version.
func TestAppendEmptyFileCommitsNothing(t *testing.T) {
	dir, table := newOrders(t)
	before := tableVersion(t, table)
	out := ok(t, "append", table, writeFile(t, dir, "empty.jsonl", ""))
	if !strings.Contains(out, "nothing to append") {
		t.Errorf("append of an empty file printed %q, want it to say nothing was appended", out)
	}
	if v := tableVersion(t, table); v != before {
		t.Errorf("append of an empty file moved the table from version %d to %d", before, v)
	}
}

// scan --explain says what planning and reading did: files pruned by
// partition, skipped by stats, planned, deletion vectors, rows.
func TestScanExplain(t *testing.T) {
	_, table := newPeople(t, "delta.enableDeletionVectors=true")
	ok(t, "delete", table, "--where", "id = 1")
	var e explanation
	if err := json.Unmarshal([]byte(ok(t, "scan", table, "--where", "country = 'nl' OR id > 4", "--explain", "--format", "json")), &e); err != nil {
		t.Fatal(err)
	}
	want := explanation{FilesTotal: 3, FilesPrunedByPartition: 0, FilesSkippedByStats: 1, FilesPlanned: 2, FilesRead: 2, RowsDecoded: 3, RowsReturned: 2, FilesWithDVs: 1, RowsDeletedByDVs: 1}
	e.BytesTotal, e.BytesPlanned = 0, 0
	if e != want {
		t.Errorf("explain %+v\nwant     %+v", e, want)
	}
	if err := json.Unmarshal([]byte(ok(t, "scan", table, "--where", "country = 'de'", "--explain", "--format", "json")), &e); err != nil {
		t.Fatal(err)
	}
	if e.FilesPrunedByPartition != 2 || e.FilesPlanned != 1 || e.RowsReturned != 2 {
		t.Errorf("partition pruning: %+v", e)
	}
	if out := ok(t, "scan", table, "--explain"); !strings.Contains(out, "pruned by partition values: 0") || !strings.Contains(out, "1 with deletion vectors deleting 1 rows") {
		t.Errorf("table form:\n%s", out)
	}
}

// scan --explain counts the rows the page index rules out: a file of
// sorted ids over several pages, a filter that keeps the file (its
// min/max hold the range) but only the first page's rows.
func TestScanExplainPageIndex(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	const rows = 100000
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, "{\"id\": %d}\n", i)
	}
	ok(t, "create", table, "--schema", "id long")
	ok(t, "append", table, writeFile(t, dir, "ids.jsonl", b.String()))
	var e explanation
	if err := json.Unmarshal([]byte(ok(t, "scan", table, "--where", "id < 1000", "--explain", "--format", "json")), &e); err != nil {
		t.Fatal(err)
	}
	if e.FilesPlanned != 1 || e.FilesUsingPageIndex != 1 || e.RowsSkippedByPageIndex == 0 || e.RowsSkippedByPageIndex+e.RowsDecoded != rows || e.RowsReturned != 1000 {
		t.Errorf("explain %+v: want one file planned, rows skipped by its page index, and skipped + decoded = %d", e, rows)
	}
	if out := ok(t, "scan", table, "--where", "id < 1000", "--explain"); !strings.Contains(out, fmt.Sprintf("page index: %d rows skipped in 1 files; %d rows decoded, 1000 returned", e.RowsSkippedByPageIndex, e.RowsDecoded)) {
		t.Errorf("table form:\n%s", out)
	}
}

// append --merge-schema gives a CSV file's new columns the types Spark's
// CSV inference gives them; --no-header and --delimiter read files
// without a header row or with another delimiter.
func TestAppendInfersCSVTypes(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long")
	ok(t, "append", table, writeFile(t, dir, "a.csv", "id,day,amount,big,ok\n1,2024-01-15,1.5,12345678901234567890,true\n2,2024-02-29,,1,false\n"), "--merge-schema")
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	schema, err := actions.ParseSchema(string(d.Schema))
	if err != nil {
		t.Fatal(err)
	}
	if got := schema.String(); got != "struct<id:long,day:date,amount:double,big:decimal(20,0),ok:boolean>" {
		t.Errorf("schema: %s", got)
	}
	ok(t, "append", table, writeFile(t, dir, "b.csv", "3;2024-03-01;2.5;7;true\n"), "--no-header", "--delimiter", ";", "--mode", "overwrite", "--overwrite-schema")
	wantOutput(t, "scan", ok(t, "scan", table, "--format", "jsonl"), `{"_c0":3,"_c1":"2024-03-01","_c2":2.5,"_c3":7,"_c4":true}`)
	code, _, errOut := lakelog(t, "append", table, writeFile(t, dir, "c.csv", "1\n"), "--delimiter", ";;")
	if code != exitUsage || !strings.Contains(errOut, "--delimiter") {
		t.Errorf("--delimiter ';;': exit %d: %s", code, errOut)
	}
}
