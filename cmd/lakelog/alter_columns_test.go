package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// alter's column changes: each one commit with its report; a column
// change with properties, or two column changes, are usage errors; every
// refusal exits 1 naming what is in the way, and commits nothing.
func TestAlterColumns(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, name string, s struct<a:int>", "--property", "delta.columnMapping.mode=name")
	rows := writeFile(t, dir, "rows.jsonl", `{"id":1,"name":"one","s":{"a":1}}`+"\n"+`{"id":2,"name":"two","s":null}`+"\n")
	ok(t, "append", table, rows)
	for _, step := range []struct {
		args []string
		out  string
	}{
		{[]string{"--add-column", "score double COMMENT 'points' AFTER id", "--add-column", "s.b string"}, "version 2: added 2 columns\n"},
		{[]string{"--rename-column", "name:title"}, "version 3: renamed name to title\n"},
		{[]string{"--rename-column", "s.a:`alpha beta`"}, "version 4: renamed s.a to alpha beta\n"},
		{[]string{"--drop-column", "s.b"}, "version 5: dropped s.b\n"},
		{[]string{"--set-property", "delta.enableTypeWidening=true"}, "version 6: set 1 properties\n"},
		{[]string{"--change-type", "s.`alpha beta`:long"}, "version 7: changed the type of s.`alpha beta` to long\n"},
		{[]string{"--comment", "id:the key"}, "version 8: set the comment of id\n"},
		{[]string{"--add-constraint", "positive: id > 0"}, "version 9: added CHECK constraint positive\n"},
		{[]string{"--set-nullable", "id"}, "version 10: id is nullable\n"},
		// Nothing to drop: nothing is committed, and the output says so.
		{[]string{"--drop-constraint", "gone", "--if-exists"}, "the table has no CHECK constraint gone; nothing was committed\n"},
	} {
		if out := ok(t, append([]string{"alter", table}, step.args...)...); out != step.out {
			t.Errorf("alter %v printed %q, want %q", step.args, out, step.out)
		}
	}
	got := ok(t, "scan", table, "--format", "jsonl", "--sorted")
	want := `{"id":1,"score":null,"title":"one","s":{"alpha beta":1}}` + "\n" + `{"id":2,"score":null,"title":"two","s":null}` + "\n"
	if got != want {
		t.Errorf("scan:\n%s\nwant\n%s", got, want)
	}
	h := ok(t, "history", table, "--limit", "1", "--format", "jsonl")
	if !strings.Contains(h, `"version":10`) {
		t.Errorf("history: %s; DROP CONSTRAINT IF EXISTS of a constraint the table lacks committed a version", h)
	}
	bad := writeFile(t, dir, "bad.jsonl", `{"id":-3,"title":"neg"}`+"\n")
	code, _, errOut := lakelog(t, "append", table, bad)
	if code != exitError || !strings.Contains(errOut, "CHECK constraint positive (id > 0) violated by row 1 with values: id = -3") {
		t.Errorf("a violating append: exit %d, stderr %q", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--rename-column", "title:id"}, exitError, "a column id already exists"},
		{[]string{"--drop-column", "nope"}, exitError, "column nope does not exist"},
		{[]string{"--change-type", "title:long"}, exitError, "cannot change type string to long"},
		{[]string{"--add-constraint", "big: id > 1"}, exitError, "1 existing rows violate the new CHECK constraint (id > 1), for one the row with id = 1"},
		{[]string{"--drop-constraint", "nope"}, exitError, "the table has no CHECK constraint nope (it has positive)"},
		{[]string{"--drop-column", "id"}, exitError, "CHECK constraint positive (id > 0)"},
		{[]string{"--add-column", "x int NOT NULL"}, exitError, "a NOT NULL column can only be added to a table without rows"},
		{[]string{"--add-column", "x lung"}, exitUsage, `unknown type "lung"`},
		{[]string{"--rename-column", "title"}, exitUsage, "--rename-column takes old:new"},
		{[]string{"--rename-column", "title:a.b"}, exitUsage, "the new name is one name"},
		{[]string{"--rename-column", "title:x", "--drop-column", "id"}, exitUsage, "not both"},
		{[]string{"--rename-column", "title:x", "--set-property", "a=b"}, exitUsage, "a column change is its own commit"},
		{[]string{"--if-exists"}, exitUsage, "--if-exists needs --drop-constraint"},
	} {
		before := tableVersion(t, table)
		code, _, errOut := lakelog(t, append([]string{"alter", table}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("alter %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
		if v := tableVersion(t, table); v != before {
			t.Errorf("alter %v moved the table to version %d", tc.args, v)
		}
	}
	plain := filepath.Join(dir, "plain")
	ok(t, "create", plain, "--schema", "id long, v long")
	code, _, errOut = lakelog(t, "alter", plain, "--drop-column", "v")
	if code != exitError || !strings.Contains(errOut, "delta.columnMapping.mode=name (lakelog alter TABLE --set-property)") {
		t.Errorf("drop without column mapping: exit %d, stderr %q", code, errOut)
	}
}
