package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// decodeJSONLines decodes each line of jsonl output, numbers as
// json.Number.
func decodeJSONLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range lines(out) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", l, err)
		}
		recs = append(recs, m)
	}
	return recs
}

// decodeJSONDocs decodes a stream of JSON documents (json output of
// several statements), numbers as json.Number.
func decodeJSONDocs(t *testing.T, out string) []any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(out))
	d.UseNumber()
	var docs []any
	for d.More() {
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("output is not a stream of JSON documents: %v\n%s", err, out)
		}
		docs = append(docs, v)
	}
	return docs
}

// wantNumericMetrics fails unless every metric of m is a JSON number.
func wantNumericMetrics(t *testing.T, what string, m any) {
	t.Helper()
	metrics, ok := m.(map[string]any)
	if !ok {
		t.Fatalf("%s: operationMetrics %v is not an object", what, m)
	}
	for k, v := range metrics {
		if _, ok := v.(json.Number); !ok {
			t.Errorf("%s: metric %s = %#v is not a number", what, k, v)
		}
	}
}

// versionOrNone is the table's latest version, -1 when there is no table.
func versionOrNone(t *testing.T, table string) int64 {
	t.Helper()
	if _, err := os.Stat(filepath.Join(table, "_delta_log")); err != nil {
		return -1
	}
	return tableVersion(t, table)
}

// Every statement that changes a table prints, in every script format, a
// record with the version it committed and its metrics as numbers; the
// version is the table's.
func TestSQLCommandsPrintVersionInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	tbl := "delta.`" + filepath.Join(dir, "t") + "`"
	src := "delta.`" + filepath.Join(dir, "src") + "`"
	ok(t, "sql", "CREATE TABLE "+src+" (id BIGINT, s STRING) USING DELTA; INSERT INTO "+src+" VALUES (1, 'one'), (9, 'nine')")
	statements := []struct {
		sql    string
		commit bool // commits a version
		spark  string
	}{
		{"CREATE TABLE " + tbl + " (id BIGINT, s STRING) USING DELTA", true, ""},
		{"INSERT INTO " + tbl + " VALUES (1, 'a'), (2, 'b'), (3, 'c')", true, ""},
		{"UPDATE " + tbl + " SET s = 'B' WHERE id = 2", true, "num_affected_rows"},
		{"DELETE FROM " + tbl + " WHERE id = 3", true, "num_affected_rows"},
		{"DELETE FROM " + tbl + " WHERE id = 42", false, "num_affected_rows"},
		{"MERGE INTO " + tbl + " t USING " + src + " s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *", true, "num_inserted_rows"},
		{"ALTER TABLE " + tbl + " SET TBLPROPERTIES ('x.y' = 'z')", true, ""},
		{"ALTER TABLE " + tbl + " ADD COLUMNS (n INT)", true, ""},
		{"INSERT INTO " + tbl + " VALUES (5, 'e', 5)", true, ""},
		{"INSERT INTO " + tbl + " VALUES (6, 'f', 6)", true, ""},
		{"OPTIMIZE " + tbl, true, "metrics"},
		{"RESTORE TABLE " + tbl + " TO VERSION AS OF 1", true, "num_restored_files"},
		{"CREATE TABLE IF NOT EXISTS " + tbl + " (id BIGINT) USING DELTA", false, ""},
	}
	for _, format := range []string{formatJSONL, formatJSON, formatCSV} {
		for _, st := range statements {
			before := versionOrNone(t, filepath.Join(dir, "t"))
			out := ok(t, "sql", st.sql, "--format", format)
			var rec map[string]any
			switch format {
			case formatCSV:
				rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil || len(rows) != 2 {
					t.Fatalf("%s --format csv: %v\n%s", st.sql, err, out)
				}
				rec = map[string]any{}
				for i, k := range rows[0] {
					rec[k] = rows[1][i]
				}
				var m map[string]any
				d := json.NewDecoder(strings.NewReader(rows[1][slices.Index(rows[0], "operationMetrics")]))
				d.UseNumber()
				if err := d.Decode(&m); err != nil {
					t.Fatalf("%s: operationMetrics is not JSON text: %v", st.sql, err)
				}
				rec["operationMetrics"] = m
				if v := rec["version"].(string); v != "" {
					rec["version"] = json.Number(v)
				} else {
					rec["version"] = nil
				}
			case formatJSON:
				docs := decodeJSONDocs(t, out)
				if len(docs) != 1 {
					t.Fatalf("%s --format json: %d documents\n%s", st.sql, len(docs), out)
				}
				rec = docs[0].(map[string]any)
			default:
				recs := decodeJSONLines(t, out)
				if len(recs) != 1 {
					t.Fatalf("%s --format jsonl: %d records\n%s", st.sql, len(recs), out)
				}
				rec = recs[0]
			}
			what := st.sql + " --format " + format
			after := tableVersion(t, filepath.Join(dir, "t"))
			switch v := rec["version"].(type) {
			case json.Number:
				if !st.commit || v.String() != fmt.Sprint(after) || after != before+1 {
					t.Errorf("%s: version %s; the table went from %d to %d", what, v, before, after)
				}
			case nil:
				if st.commit {
					t.Errorf("%s: version null; the table went from %d to %d", what, before, after)
				}
			default:
				t.Errorf("%s: version %#v is not a number", what, v)
			}
			wantNumericMetrics(t, what, rec["operationMetrics"])
			if st.spark != "" {
				if _, ok := rec[st.spark]; !ok {
					t.Errorf("%s: no %s (Spark's row) in %v", what, st.spark, rec)
				}
			}
		}
		// Start again for the next format.
		if err := os.RemoveAll(filepath.Join(dir, "t")); err != nil {
			t.Fatal(err)
		}
	}
}

// The verbs that commit print their metrics as numbers in json, the same
// as their SQL statements; RESTORE once printed strings where DELETE
// printed numbers.
func TestVerbsPrintMetricsAsNumbers(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, s string")
	rows := writeFile(t, dir, "rows.jsonl", "{\"id\": 1, \"s\": \"a\"}\n{\"id\": 2, \"s\": \"b\"}\n")
	for _, args := range [][]string{
		{"append", table, rows},
		{"append", table, rows},
		{"delete", table, "--where", "id = 1"},
		{"update", table, "--set", "s = 'x'", "--where", "id = 2"},
		{"optimize", table},
		{"restore", table, "--version", "1"},
		{"vacuum", table, "--retain", "200h"},
	} {
		out := ok(t, append(args, "--format", "json")...)
		docs := decodeJSONDocs(t, out)
		if len(docs) != 1 {
			t.Fatalf("%v: %d documents\n%s", args, len(docs), out)
		}
		rec := docs[0].(map[string]any)
		wantNumericMetrics(t, args[0], rec["operationMetrics"])
	}
	// History's operationMetrics too.
	for _, rec := range decodeJSONLines(t, ok(t, "history", table, "--format", "jsonl")) {
		wantNumericMetrics(t, fmt.Sprint("history version ", rec["version"]), rec["operationMetrics"])
	}
}

// A verb's records have the same column names in every format: the
// table's header names are the JSON keys and the CSV header.
func TestRecordColumnsSameInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, p string", "--partition-by", "p")
	ok(t, "append", table, writeFile(t, dir, "rows.jsonl", "{\"id\": 1, \"p\": \"a\"}\n{\"id\": 2, \"p\": null}\n"))
	for _, verb := range []string{"files", "history"} {
		header, _, _ := parseTextTable(t, ok(t, verb, table))
		csvHeader, err := csv.NewReader(strings.NewReader(ok(t, verb, table, "--format", "csv"))).Read()
		if err != nil {
			t.Fatal(err)
		}
		jsonKeys := decodeJSONLines(t, ok(t, verb, table, "--format", "jsonl"))[0]
		for _, h := range header {
			if !slices.Contains(csvHeader, h) {
				t.Errorf("%s: the table's column %q is not in the CSV header %v", verb, h, csvHeader)
			}
			if _, ok := jsonKeys[h]; !ok {
				t.Errorf("%s: the table's column %q is not a JSON key", verb, h)
			}
		}
	}
}

// Maps print as JSON objects in every format: a SELECT's map column and
// DESCRIBE DETAIL's properties.
func TestMapsPrintAsObjects(t *testing.T) {
	dir := t.TempDir()
	tbl := "delta.`" + filepath.Join(dir, "t") + "`"
	ok(t, "sql", "CREATE TABLE "+tbl+" (id INT, m MAP<STRING, INT>, k MAP<INT, STRING>) USING DELTA TBLPROPERTIES ('a.b' = 'c')")
	ok(t, "sql", "INSERT INTO "+tbl+" VALUES (1, map('x', 1, 'y', NULL), map(2, 'two'))")
	recs := decodeJSONLines(t, ok(t, "sql", "SELECT m, k FROM "+tbl, "--format", "jsonl"))
	if got, _ := json.Marshal(recs[0]); string(got) != `{"k":{"2":"two"},"m":{"x":1,"y":null}}` {
		t.Errorf("jsonl: %s", got)
	}
	rows, err := csv.NewReader(strings.NewReader(ok(t, "sql", "SELECT m FROM "+tbl, "--format", "csv"))).ReadAll()
	if err != nil || rows[1][0] != `{"x":1,"y":null}` {
		t.Errorf("csv: %q %v", rows, err)
	}
	_, trows, _ := parseTextTable(t, ok(t, "sql", "SELECT m FROM "+tbl))
	if trows[0][0] != `{"x":1,"y":null}` {
		t.Errorf("table: %q", trows)
	}
	docs := decodeJSONDocs(t, ok(t, "sql", "DESCRIBE DETAIL "+tbl, "--format", "json"))
	props := docs[0].([]any)[0].(map[string]any)["properties"]
	if p, ok := props.(map[string]any); !ok || p["a.b"] != "c" {
		t.Errorf("DESCRIBE DETAIL properties: %#v, want an object", props)
	}
}

// In the table format a null and the string "NULL" look different, and
// each control character shows as its own visible symbol.
func TestTableShowsNullsAndControlCharacters(t *testing.T) {
	dir := t.TempDir()
	tbl := "delta.`" + filepath.Join(dir, "t") + "`"
	ok(t, "sql", "CREATE TABLE "+tbl+" (id INT, s STRING) USING DELTA")
	ok(t, "sql", `INSERT INTO `+tbl+` VALUES (1, NULL), (2, 'NULL'), (3, 'null'), (4, 'a\nb'), (5, 'a\tb'), (6, 'a\rb'), (7, "'q'"), (8, ''), (9, 'a\u0001b')`)
	_, rows, _ := parseTextTable(t, ok(t, "sql", "SELECT id, s FROM "+tbl+" ORDER BY id"))
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	shown := map[string]bool{}
	for id, s := range got {
		if shown[s] {
			t.Errorf("two different values show as %q: %v", s, got)
		}
		shown[s] = true
		if strings.ContainsFunc(s, isControl) {
			t.Errorf("row %s shows a control character: %q", id, s)
		}
	}
	if got["1"] != "NULL" || got["2"] != "'NULL'" || got["3"] != "'null'" || got["7"] != `'\'q\''` {
		t.Errorf("null and strings shown as %v", got)
	}
	for id, want := range map[string]string{"4": "a␊b", "5": "a␉b", "6": "a␍b", "9": "a␁b"} {
		if got[id] != want {
			t.Errorf("row %s shows as %q, want %q", id, got[id], want)
		}
	}
}

// Columns stay aligned with CJK characters and emoji, which take two
// columns on a terminal, and combining marks, which take none: every
// row's second column starts at the same display column.
func TestTableAlignsWideCharacters(t *testing.T) {
	dir := t.TempDir()
	tbl := "delta.`" + filepath.Join(dir, "t") + "`"
	ok(t, "sql", "CREATE TABLE "+tbl+" (s STRING, n INT) USING DELTA")
	values := []string{"abc", "日本語テキスト", "😀x", "👍🏽ok", "éé", "한국어", "x"}
	var ins []string
	for i, v := range values {
		ins = append(ins, fmt.Sprintf("('%s', %d)", v, i))
	}
	ok(t, "sql", "INSERT INTO "+tbl+" VALUES "+strings.Join(ins, ", "))
	out := ok(t, "sql", "SELECT s, n FROM "+tbl)
	var ends []int
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "(") {
			continue
		}
		ends = append(ends, uniseg.StringWidth(l))
	}
	// Every line (header, rule, rows) ends at the same column: the
	// numbers are right-aligned in the last column.
	for _, e := range ends {
		if e != ends[0] {
			t.Fatalf("lines end at columns %v:\n%s", ends, out)
		}
	}
	_, rows, _ := parseTextTable(t, out)
	for i, r := range rows {
		if r[0] != values[i] || r[1] != fmt.Sprint(i) {
			t.Errorf("row %d read back as %q", i, r)
		}
	}
}

// Wrapping counts display columns and never splits a character.
func TestWrapByDisplayWidth(t *testing.T) {
	for _, s := range []string{strings.Repeat("日本", 30), strings.Repeat("👍🏽", 30), strings.Repeat("e\u0301", 50), strings.Repeat("a", 45)} {
		parts := wrap(s, 10)
		if strings.Join(parts, "") != s {
			t.Fatalf("wrap lost text of %q", s)
		}
		for _, p := range parts {
			if w := uniseg.StringWidth(p); w > 10 {
				t.Errorf("piece %q is %d columns wide", p, w)
			}
			if !bytes.Equal([]byte(p), []byte(strings.ToValidUTF8(p, "?"))) {
				t.Errorf("piece %q splits a character", p)
			}
		}
	}
}
