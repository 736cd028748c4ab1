package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// physicalName is a column's physical name in a schema's JSON: random
// for each added column, so two tables changed alike differ there.
var physicalName = regexp.MustCompile(`"delta\.columnMapping\.physicalName":"[^"]*"`)

// shapeOf is what the columns of a table are: its schema (without
// physical names), properties and protocol, as `describe` prints them.
func shapeOf(t *testing.T, table string) string {
	t.Helper()
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	props, _ := json.Marshal(d.Properties)
	return physicalName.ReplaceAllString(string(d.Schema), "") + "\n" + string(props) + "\n" +
		strings.Join(d.ReaderFeatures, ",") + " " + strings.Join(d.WriterFeatures, ",")
}

// ALTER TABLE's column and constraint forms do what `lakelog alter` does
// (the same schema package call): the same schema, properties and
// protocol after, and the same commit.
func TestSQLAlterColumnsMatchVerb(t *testing.T) {
	dir, a := newPeople(t, "delta.columnMapping.mode=name", "delta.enableTypeWidening=true")
	b := filepath.Join(dir, "b")
	copyTable(t, a, b)
	ta := "delta.`" + a + "`"
	for _, c := range []struct {
		sql  string
		verb []string
	}{
		{"ALTER TABLE " + ta + " ADD COLUMNS (note STRING COMMENT 'free, text', score INT AFTER id, tags ARRAY<STRUCT<k: STRING, v: INT>>)",
			[]string{"--add-column", "note string COMMENT 'free, text'", "--add-column", "score int AFTER id", "--add-column", "tags array<struct<k: string, v: int>>"}},
		{"ALTER TABLE " + ta + " ADD COLUMN tags.element.w LONG FIRST", []string{"--add-column", "tags.element.w long FIRST"}},
		{"ALTER TABLE " + ta + " ALTER COLUMN score TYPE BIGINT", []string{"--change-type", "score:bigint"}},
		{"ALTER TABLE " + ta + " CHANGE COLUMN Name COMMENT 'who'", []string{"--comment", "Name:who"}},
		{"ALTER TABLE " + ta + " ALTER id DROP NOT NULL", []string{"--set-nullable", "id"}},
		{"ALTER TABLE " + ta + " RENAME COLUMN note TO `re mark`", []string{"--rename-column", "note:`re mark`"}},
		{"ALTER TABLE " + ta + " DROP COLUMNS (`re mark`, tags.element.k)", []string{"--drop-column", "`re mark`", "--drop-column", "tags.element.k"}},
		{"ALTER TABLE " + ta + " ADD CONSTRAINT positive CHECK (amount > 0 AND name <> 'x, y')", []string{"--add-constraint", "positive:amount > 0 AND name <> 'x, y'"}},
		{"ALTER TABLE " + ta + " DROP CONSTRAINT positive", []string{"--drop-constraint", "positive"}},
		{"ALTER TABLE " + ta + " DROP CONSTRAINT IF EXISTS positive", []string{"--drop-constraint", "positive", "--if-exists"}},
	} {
		ok(t, "sql", c.sql)
		ok(t, append([]string{"alter", b}, c.verb...)...)
		if sa, sb := shapeOf(t, a), shapeOf(t, b); sa != sb {
			t.Fatalf("%s: the table is\n%s\nalter %v made\n%s", c.sql, sa, c.verb, sb)
		}
		ha, hb := lastCommit(t, a), lastCommit(t, b)
		if ha.Version != hb.Version || ha.Operation != hb.Operation ||
			!slices.Equal(slices.Sorted(maps.Keys(ha.OperationParameters)), slices.Sorted(maps.Keys(hb.OperationParameters))) {
			t.Errorf("%s: commit %+v\nalter %v: commit %+v", c.sql, ha, c.verb, hb)
		}
	}
	if ra, rb := rowsOf(t, a), rowsOf(t, b); !slices.Equal(ra, rb) || len(ra) != 5 {
		t.Errorf("rows differ:\n%s\n%s", strings.Join(ra, "\n"), strings.Join(rb, "\n"))
	}
	// DROP COLUMN IF EXISTS of a column the table lacks commits nothing.
	before := tableVersion(t, a)
	ok(t, "sql", "ALTER TABLE "+ta+" DROP COLUMN IF EXISTS nosuch")
	if v := tableVersion(t, a); v != before {
		t.Errorf("DROP COLUMN IF EXISTS nosuch committed version %d", v)
	}
}

// A refused ALTER names the column or constraint and commits nothing.
func TestSQLAlterColumnsRefused(t *testing.T) {
	_, table := newPeople(t)
	tt := "delta.`" + table + "`"
	at := func(stmt, from string) string {
		i := strings.Index(stmt, from)
		return "lakelog sql: line 1, column " + strconv.Itoa(i+1) + ": "
	}
	caret := func(stmt, from string) string {
		return "  " + stmt + "\n  " + strings.Repeat(" ", strings.Index(stmt, from)) + "^\n"
	}
	setNotNull := "ALTER TABLE " + tt + " ALTER COLUMN name SET NOT NULL"
	rename := "ALTER TABLE " + tt + " RENAME COLUMN name TO who"
	violated := "ALTER TABLE " + tt + " ADD CONSTRAINT big CHECK (amount > 25)"
	dup := "ALTER TABLE " + tt + " ADD COLUMNS (x INT, NAME STRING)"
	badType := "ALTER TABLE " + tt + " ALTER COLUMN id TYPE INT"
	reorder := "ALTER TABLE " + tt + " ALTER COLUMN id AFTER nosuch"
	checkMessages(t, table, []message{
		{"set not null", []string{"sql", setNotNull}, exitError,
			at(setNotNull, "SET NOT NULL") + "ALTER COLUMN name SET NOT NULL is not supported: Delta does not tighten a nullable column (Spark refuses it too); ADD CONSTRAINT name CHECK (name IS NOT NULL) checks the rows and every later write\n" + caret(setNotNull, "SET NOT NULL")},
		{"rename without column mapping", []string{"sql", rename}, exitError,
			at(rename, "RENAME") + "schema: RENAME COLUMN name: RENAME COLUMN needs column mapping, which the table does not use: data files name their columns, so only a mapped table can rename a column without rewriting them; enable it with delta.columnMapping.mode=name (ALTER TABLE ... SET TBLPROPERTIES), as Spark requires; nothing was committed" + "\n" + caret(rename, "RENAME")},
		{"constraint the rows violate", []string{"sql", violated}, exitError,
			at(violated, "ADD") + "schema: ADD CONSTRAINT big: 2 existing rows violate the new CHECK constraint (amount > 25), for one the row with amount = 10.00; nothing was committed" + "\n" + caret(violated, "ADD")},
		{"a column that exists", []string{"sql", dup}, exitError,
			at(dup, "NAME") + "schema: ADD COLUMNS NAME: a column name already exists (names are compared ignoring case); nothing was committed" + "\n" + caret(dup, "NAME")},
		{"narrowing a type", []string{"sql", badType}, exitError,
			at(badType, "ALTER COLUMN") + "schema: CHANGE COLUMN id: cannot change type long to integer: the typeWidening feature widens byte, short, int to long, double or a wide enough decimal, float to double, decimals to more digits, and date to timestamp_ntz (other changes rewrite the data, which ALTER does not); nothing was committed" + "\n" + caret(badType, "ALTER COLUMN")},
		{"moving a column after one that does not exist", []string{"sql", reorder}, exitError,
			at(reorder, "ALTER COLUMN") + "schema: CHANGE COLUMN id: AFTER nosuch: no such column in the table (it holds id, name, amount, country); nothing was committed\n" + caret(reorder, "ALTER COLUMN")},
	})
}
