package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// lastCommit is the newest history entry of a table.
func lastCommit(t *testing.T, table string) historyEntry {
	t.Helper()
	var h historyEntry
	if err := json.Unmarshal([]byte(ok(t, "history", table, "--limit", "1", "--format", "jsonl")), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// copyTable copies a table's folder.
func copyTable(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// A statement and its verb do the same: the same rows after, and the
// same operation with the same parameter and metric names in history.
func TestSQLMatchesVerbs(t *testing.T) {
	dir, a := newPeople(t, "delta.enableChangeDataFeed=true")
	b := filepath.Join(dir, "b")
	copyTable(t, a, b)
	src := writeFile(t, dir, "src.jsonl", `{"id": 2, "name": "BOB", "amount": "21.00", "country": "nl"}
{"id": 7, "name": "gus", "amount": "70.00", "country": "de"}
`)
	more := writeFile(t, dir, "more.jsonl", `{"id": 8, "name": "hal", "amount": "8.00", "country": "fr"}`+"\n")
	ta := "delta.`" + a + "`"
	for _, c := range []struct {
		sql  string
		verb []string
	}{
		{"INSERT INTO " + ta + " SELECT * FROM read_files('" + more + "')", []string{"append", b, more}},
		{"DELETE FROM " + ta + " WHERE amount > 45", []string{"delete", b, "--where", "amount > 45"}},
		{"UPDATE " + ta + " SET name = 'X', amount = amount * 2 WHERE id = 3", []string{"update", b, "--set", "name = 'X'", "--set", "amount = amount * 2", "--where", "id = 3"}},
		{"MERGE INTO " + ta + " AS target USING json.`" + src + "` AS source ON target.id = source.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
			[]string{"merge", b, src, "--on", "target.id = source.id", "--when-matched-update-all", "--when-not-matched-insert-all"}},
		{"ALTER TABLE " + ta + " SET TBLPROPERTIES ('owner' = 'ops')", []string{"alter", b, "--set-property", "owner=ops"}},
		{"OPTIMIZE " + ta + " ZORDER BY (id)", []string{"optimize", b, "--zorder-by", "id"}},
		{"RESTORE TABLE " + ta + " TO VERSION AS OF 3", []string{"restore", b, "--version", "3"}},
	} {
		ok(t, "sql", c.sql)
		ok(t, c.verb...)
		if ra, rb := rowsOf(t, a), rowsOf(t, b); !slices.Equal(ra, rb) {
			t.Fatalf("%s: rows differ from %s's:\n%s\n%s", c.sql, c.verb[0], strings.Join(ra, "\n"), strings.Join(rb, "\n"))
		}
		ha, hb := lastCommit(t, a), lastCommit(t, b)
		if ha.Version != hb.Version || ha.Operation != hb.Operation ||
			!slices.Equal(slices.Sorted(maps.Keys(ha.OperationMetrics)), slices.Sorted(maps.Keys(hb.OperationMetrics))) ||
			!slices.Equal(slices.Sorted(maps.Keys(ha.OperationParameters)), slices.Sorted(maps.Keys(hb.OperationParameters))) {
			t.Errorf("%s: commit %+v\n%s: commit %+v", c.sql, ha, c.verb[0], hb)
		}
	}
	// The change feeds agree too.
	fa := ok(t, "sql", "SELECT id, name, _change_type, _commit_version FROM table_changes_by_path('"+a+"', 1) ORDER BY _commit_version, id, _change_type", "--format", "jsonl")
	fb := ok(t, "changes", b, "--from", "1", "--columns", "id,name", "--format", "jsonl", "--sorted")
	strip := func(s string) []string {
		var out []string
		for _, l := range lines(s) {
			i := strings.Index(l, `,"_commit_timestamp"`)
			if i > 0 {
				l = l[:i] + "}"
			}
			out = append(out, l)
		}
		slices.Sort(out)
		return out
	}
	if ga, gb := strip(fa), strip(fb); !slices.Equal(ga, gb) || len(ga) == 0 {
		t.Errorf("table_changes:\n%s\nchanges:\n%s", strings.Join(ga, "\n"), strings.Join(gb, "\n"))
	}
}

// SELECT with WHERE, GROUP BY, aggregates, ORDER BY and LIMIT, and time
// travel, on a small table whose answers are known.
func TestSQLSelect(t *testing.T) {
	_, table := newPeople(t)
	tt := "delta.`" + table + "`"
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT id, name FROM " + tt + " WHERE amount >= 30 ORDER BY id DESC", []string{`{"id":5,"name":"eve"}`, `{"id":4,"name":"dan"}`, `{"id":3,"name":"cat"}`}},
		{"SELECT country, COUNT(*) AS n, SUM(amount), MIN(name), MAX(id), AVG(amount) FROM " + tt + " GROUP BY country ORDER BY n DESC, country",
			[]string{`{"country":"de","n":2,"sum(amount)":"70.00","min(name)":"cat","max(id)":4,"avg(amount)":"35.000000"}`,
				`{"country":"nl","n":2,"sum(amount)":"30.00","min(name)":"ann","max(id)":2,"avg(amount)":"15.000000"}`,
				`{"country":"fr","n":1,"sum(amount)":"50.00","min(name)":"eve","max(id)":5,"avg(amount)":"50.000000"}`}},
		{"SELECT COUNT(*), SUM(id), AVG(id) FROM " + tt + " WHERE id > 100", []string{`{"count(1)":0,"sum(id)":null,"avg(id)":null}`}},
		{"SELECT id * 10 AS x, t.name FROM " + tt + " AS t ORDER BY t.amount LIMIT 2", []string{`{"x":10,"name":"ann"}`, `{"x":20,"name":"bob"}`}},
		{"SELECT COUNT(*) FROM " + tt + " VERSION AS OF 0", []string{`{"count(1)":0}`}},
	} {
		got := lines(ok(t, "sql", c.sql, "--format", "jsonl"))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n%s\nwant:\n%s", c.sql, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// Tables by name in a catalog file: CREATE TABLE registers, the other
// statements find it.
func TestSQLCatalog(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.json")
	ok(t, "sql", "--catalog", cat, "CREATE TABLE Orders (id BIGINT NOT NULL, amount DECIMAL(10,2)) USING DELTA; INSERT INTO orders VALUES (1, 2.5), (2, NULL)")
	if out := ok(t, "sql", "--catalog", cat, "SELECT SUM(amount) AS s FROM ORDERS", "--format", "csv"); out != "s\n2.50\n" {
		t.Errorf("sum: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders", "_delta_log")); err != nil {
		t.Errorf("the table is not under the catalog's directory: %v", err)
	}
	code, _, errOut := lakelog(t, "sql", "--catalog", cat, "CREATE TABLE orders (id BIGINT) USING DELTA")
	if code != exitError || !strings.Contains(errOut, "table orders already exists in the catalog") {
		t.Errorf("second create: exit %d, %s", code, errOut)
	}
	ok(t, "sql", "--catalog", cat, "CREATE TABLE IF NOT EXISTS orders (id BIGINT) USING DELTA")
}

// A statement's error names the statement, its line and column, shows
// the place, and leaves the table as it was; statements after it do not
// run, and nothing runs when any statement does not parse.
func TestSQLErrors(t *testing.T) {
	dir, table := newPeople(t)
	tt := "delta.`" + table + "`"
	cat := filepath.Join(dir, "catalog.json")
	checkMessages(t, table, []message{
		{"unknown column", []string{"sql", "DELETE FROM " + tt + " WHERE nosuch = 1"}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("DELETE FROM "+tt+" WHERE ")+1) + ": dml: DELETE: expr: unknown column nosuch (columns: id, name, amount, country)\n" +
				"  DELETE FROM " + tt + " WHERE nosuch = 1\n  " + strings.Repeat(" ", len("DELETE FROM "+tt+" WHERE ")) + "^\n"},
		{"a syntax error in the second statement", []string{"sql", "DELETE FROM " + tt + " WHERE id = 1;\nSELECT * FORM " + tt}, exitError,
			"lakelog sql: line 2, column 10: expected FROM or the end of the statement but found 'FORM'\n  SELECT * FORM " + tt + "\n           ^\n"},
		{"a failing second statement", []string{"sql", "--catalog", cat, "SELECT COUNT(*) FROM " + tt + ";\nUPDATE nope SET a = 1"}, exitError,
			"lakelog sql: statement 2 of 2 (those before it ran): line 2, column 8: table nope is not in the catalog " + cat + " (it has none); CREATE TABLE nope registers one, or name a table by its path: delta.`path`\n  UPDATE nope SET a = 1\n         ^\n"},
		{"an ALTER form lakelog lacks", []string{"sql", "ALTER TABLE " + tt + " SET OWNER TO ops"}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("ALTER TABLE "+tt+" ")+1) + ": ALTER TABLE SET OWNER TO ops is not supported: lakelog runs SET/UNSET TBLPROPERTIES, ADD COLUMNS, REPLACE COLUMNS, RENAME COLUMN, DROP COLUMNS, ALTER COLUMN (TYPE, DROP NOT NULL, COMMENT, FIRST, AFTER), ADD CONSTRAINT and DROP CONSTRAINT\n" +
				"  ALTER TABLE " + tt + " SET OWNER TO ops\n  " + strings.Repeat(" ", len("ALTER TABLE "+tt+" ")) + "^\n"},
		{"no statement", []string{"sql"}, exitUsage,
			"lakelog sql: give a statement (\"SELECT * FROM delta.`./t`\") or -f FILE\nusage: lakelog " + verbs["sql"].synopsis() + "\n(lakelog sql --help lists every flag)\n"},
	})
}
