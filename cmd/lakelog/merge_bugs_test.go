package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A MERGE that only inserts removes nothing: it runs on an append-only
// table, as Spark allows (it was refused as "merge removes rows"); one
// that can delete is still refused, and the table does not move.
func TestMergeInsertOnlyOnAppendOnlyTable(t *testing.T) {
	dir, table := newPeople(t, "delta.appendOnly=true")
	src := writeFile(t, dir, "src.jsonl", `{"id": 2, "name": "x", "amount": 1, "country": "nl"}
{"id": 6, "name": "fay", "amount": 6, "country": "es"}
`)
	checkMessages(t, table, []message{
		{"a MERGE that deletes", []string{"merge", table, src, "--on", "target.id = source.id", "--when-matched-delete"}, exitError,
			"lakelog merge: dml: deltalog: merge of " + table + ": unsupported table feature: writer feature \"appendOnly\": the table is append-only (delta.appendOnly=true) and merge removes rows\n"},
	})
	out := ok(t, "merge", table, src, "--on", "target.id = source.id", "--when-not-matched-insert-all")
	if !strings.HasPrefix(out, "MERGE: version 2\n") {
		t.Fatalf("insert-only merge: %q", out)
	}
	if got := rowsOf(t, table); len(got) != 6 || got[5] != `{"id":6,"name":"fay","amount":"6.00","country":"es"}` {
		t.Errorf("rows: %v", got)
	}
}

// WHEN MATCHED THEN DELETE alone, unconditional, deletes a target row
// that several source rows match (once), as Spark allows; an update (or
// a conditional delete) of such a row is refused naming the row's key.
func TestMergeDuplicateMatches(t *testing.T) {
	dir, table := newPeople(t)
	dup := writeFile(t, dir, "dup.jsonl", `{"id": 2, "name": "x", "amount": 1, "country": "nl"}
{"id": 1, "name": "y", "amount": 1, "country": "nl"}
{"id": 2, "name": "z", "amount": 1, "country": "nl"}
`)
	for _, args := range [][]string{
		{"merge", table, dup, "--on", "target.id = source.id", "--when-matched-update-all"},
		{"merge", table, dup, "--on", "target.id = source.id", "--when-matched-delete", "--matched-condition", "source.amount > 0"},
	} {
		before := tableVersion(t, table)
		code, _, errOut := lakelog(t, args...)
		if code != exitError || !strings.HasPrefix(errOut, "lakelog merge: "+dup+": dml: MERGE: a target row matched more than one source row: ") ||
			!strings.HasSuffix(errOut, ": the target row with id = 2 (row 2 of the file) is matched by source rows 1 and 3 (counting from 1); deduplicate the source on the join keys\n") {
			t.Errorf("%v: exit %d, %q", args[4:], code, errOut)
		}
		if tableVersion(t, table) != before {
			t.Errorf("%v moved the table", args[4:])
		}
	}
	head, m := metricsOf(t, ok(t, "merge", table, dup, "--on", "target.id = source.id", "--when-matched-delete"))
	if head != "MERGE: version 2" {
		t.Errorf("delete: %q", head)
	}
	wantMetrics(t, "delete", m, map[string]string{"numTargetRowsDeleted": "2", "numSourceRows": "3"})
	if got := rowsOf(t, table); len(got) != 3 || slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, `{"id":1,`) || strings.HasPrefix(r, `{"id":2,`) }) {
		t.Errorf("rows after the delete: %v", got)
	}
}

// An empty source (a header-only CSV, an empty JSONL file) is an empty
// MERGE: nothing to match, nothing committed (it failed: "the source
// yielded no batch"); NOT MATCHED BY SOURCE still sees every target row,
// as in Spark.
func TestMergeEmptySource(t *testing.T) {
	dir, table := newPeople(t)
	for _, src := range []string{writeFile(t, dir, "header.csv", "id,name,amount,country\n"), writeFile(t, dir, "empty.jsonl", "")} {
		out := ok(t, "merge", table, src, "--on", "target.id = source.id", "--when-matched-update-all", "--when-not-matched-insert-all")
		if !strings.HasPrefix(out, "MERGE: nothing matched; no version was committed\n") {
			t.Errorf("%s: %q", filepath.Base(src), out)
		}
		if v := tableVersion(t, table); v != 1 {
			t.Fatalf("%s: version %d", filepath.Base(src), v)
		}
	}
	ok(t, "merge", table, filepath.Join(dir, "empty.jsonl"), "--on", "target.id = source.id", "--when-not-matched-by-source", "AND target.country = 'de' THEN DELETE")
	if got := rowsOf(t, table); len(got) != 3 {
		t.Errorf("rows after deleting de by source: %v", got)
	}
}

// --with-schema-evolution: UPDATE SET * and INSERT * add the source's new
// column (tier) in the MERGE's commit; without the flag the column is
// ignored and the schema stays.
func TestMergeWithSchemaEvolution(t *testing.T) {
	dir, table := newPeople(t)
	src := writeFile(t, dir, "src.jsonl", `{"id": 2, "name": "bo", "amount": "21.00", "country": "nl", "tier": "gold"}
{"id": 6, "name": "fay", "amount": "6.00", "country": "es", "tier": "new"}
`)
	args := []string{"merge", table, src, "--on", "target.id = source.id", "--when-matched-update-all", "--when-not-matched-insert-all"}
	ok(t, args...)
	if got := rowsOf(t, table); len(got) != 6 || strings.Contains(strings.Join(got, "\n"), "tier") {
		t.Fatalf("without the flag: rows %v", got)
	}
	out := ok(t, append(args, "--with-schema-evolution")...)
	if !strings.HasPrefix(out, "MERGE: version 3\n") {
		t.Fatalf("merge output %q", out)
	}
	got := rowsOf(t, table)
	want := []string{
		`{"id":1,"name":"ann","amount":"10.00","country":"nl","tier":null}`,
		`{"id":2,"name":"bo","amount":"21.00","country":"nl","tier":"gold"}`,
		`{"id":3,"name":"cat","amount":"30.00","country":"de","tier":null}`,
		`{"id":4,"name":"dan","amount":"40.00","country":"de","tier":null}`,
		`{"id":5,"name":"eve","amount":"50.00","country":"fr","tier":null}`,
		`{"id":6,"name":"fay","amount":"6.00","country":"es","tier":"new"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
