package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// INSERT ... SELECT matches the query's columns to the table's by
// position, as Spark, whatever the query names them; INSERT ... BY NAME
// matches by name and leaves the table's other columns null.
func TestSQLInsertSelectByPosition(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	tt := "delta.`" + table + "`"
	src := writeFile(t, dir, "src.jsonl", `{"a": 1, "b": 2, "c": "x"}`+"\n")
	ok(t, "sql", "CREATE TABLE "+tt+" (a INT, b INT, c STRING) USING DELTA")
	ok(t, "sql", "INSERT INTO "+tt+" SELECT b AS a, a AS b, c FROM json.`"+src+"`")
	ok(t, "sql", "INSERT INTO "+tt+" BY NAME SELECT b AS a, a AS b FROM json.`"+src+"`")
	ok(t, "sql", "INSERT INTO "+tt+" (c, a) SELECT c, b FROM json.`"+src+"`")
	got := rowsOf(t, table)
	want := []string{`{"a":2,"b":1,"c":"x"}`, `{"a":2,"b":1,"c":null}`, `{"a":2,"b":null,"c":"x"}`}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	big := writeFile(t, dir, "big.jsonl", `{"a": 3000000000}`+"\n")
	q := "SELECT a FROM json.`" + src + "`"
	checkMessages(t, table, []message{
		{"too few columns", []string{"sql", "INSERT INTO " + tt + " " + q}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("INSERT INTO "+tt+" ")+1) + ": the query returns 1 columns for the 3 table columns (a, b, c): INSERT matches them by position (INSERT INTO t BY NAME SELECT ... matches by name)\n" +
				"  INSERT INTO " + tt + " " + q + "\n  " + strings.Repeat(" ", len("INSERT INTO "+tt+" ")) + "^\n"},
		{"a number that does not fit", []string{"sql", "INSERT INTO " + tt + " (b) SELECT a FROM json.`" + big + "`"}, exitError,
			"lakelog sql: line 1, column 13: column b: a int64 value does not fit in integer: integer value 3000000000 not in range: -2147483648 to 2147483647\n" +
				"  INSERT INTO " + tt + " (b) SELECT a FROM json.`" + big + "`\n  " + strings.Repeat(" ", 12) + "^\n"},
		{"by name, unknown column", []string{"sql", "INSERT INTO " + tt + " BY NAME SELECT a AS z FROM json.`" + src + "`"}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("INSERT INTO "+tt+" BY NAME ")+1) + ": INSERT BY NAME: expr: unknown column z (columns: a, b, c)\n" +
				"  INSERT INTO " + tt + " BY NAME SELECT a AS z FROM json.`" + src + "`\n  " + strings.Repeat(" ", len("INSERT INTO "+tt+" BY NAME ")) + "^\n"},
		{"by name, twice", []string{"sql", "INSERT INTO " + tt + " BY NAME SELECT a, b AS A FROM json.`" + src + "`"}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("INSERT INTO "+tt+" BY NAME ")+1) + ": INSERT BY NAME: the query returns column a twice\n" +
				"  INSERT INTO " + tt + " BY NAME SELECT a, b AS A FROM json.`" + src + "`\n  " + strings.Repeat(" ", len("INSERT INTO "+tt+" BY NAME ")) + "^\n"},
		{"by name with values", []string{"sql", "INSERT INTO " + tt + " BY NAME VALUES (1, 2, 'x')"}, exitError,
			"lakelog sql: line 1, column " + strconv.Itoa(len("INSERT INTO "+tt+" ")+1) + ": INSERT BY NAME needs a query whose columns are named (SELECT ... AS name), not VALUES\n" +
				"  INSERT INTO " + tt + " BY NAME VALUES (1, 2, 'x')\n  " + strings.Repeat(" ", len("INSERT INTO "+tt+" ")) + "^\n"},
	})
}
