package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// merge takes every clause Spark's MERGE has, with aliases, in the order
// given; the verb and the SQL statement give the same rows.
func TestMergeEveryClause(t *testing.T) {
	dir, table := newPeople(t)
	copyOf := filepath.Join(dir, "copy")
	copyTable(t, table, copyOf)
	src := writeFile(t, dir, "changes.jsonl", `{"op": "delete", "id": 1, "name": null, "amount": null, "country": "nl"}
{"op": "update", "id": 3, "name": "CAT", "amount": 3, "country": "de"}
{"op": "insert", "id": 6, "name": "fay", "amount": "60.5", "country": "es"}
{"op": "delete", "id": 9, "name": "zed", "amount": 1, "country": "xx"}
`)
	out := ok(t, "merge", table, src, "--on", "t.id = s.id", "--target-alias", "t", "--source-alias", "s",
		"--when-matched", "AND s.op = 'delete' THEN DELETE",
		"--when-matched", "UPDATE SET t.name = s.name, amount = t.amount + s.amount",
		"--when-not-matched", "AND s.op <> 'delete' THEN INSERT (id, name, amount, country) VALUES (s.id, s.name, s.amount * 2, s.country)",
		"--when-not-matched-by-source", "AND t.country = 'fr' THEN UPDATE SET name = 'gone'",
		"--when-not-matched-by-source", "DELETE")
	if !strings.HasPrefix(out, "MERGE: version 2\n") {
		t.Fatalf("merge printed %q", out)
	}
	want := []string{
		`{"id":3,"name":"CAT","amount":"33.00","country":"de"}`,
		`{"id":5,"name":"gone","amount":"50.00","country":"fr"}`,
		`{"id":6,"name":"fay","amount":"121.00","country":"es"}`,
	}
	if got := rowsOf(t, table); !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ok(t, "sql", "MERGE INTO delta.`"+copyOf+"` t USING json.`"+src+"` s ON t.id = s.id "+
		"WHEN MATCHED AND s.op = 'delete' THEN DELETE WHEN MATCHED THEN UPDATE SET t.name = s.name, amount = t.amount + s.amount "+
		"WHEN NOT MATCHED AND s.op <> 'delete' THEN INSERT (id, name, amount, country) VALUES (s.id, s.name, s.amount * 2, s.country) "+
		"WHEN NOT MATCHED BY SOURCE AND t.country = 'fr' THEN UPDATE SET name = 'gone' WHEN NOT MATCHED BY SOURCE THEN DELETE")
	if got := rowsOf(t, copyOf); !slices.Equal(got, want) {
		t.Errorf("the SQL statement's rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkMessages(t, table, []message{
		{"a clause of the wrong kind", []string{"merge", table, src, "--on", "target.id = source.id", "--when-matched", "INSERT *"}, exitError,
			"lakelog merge: --when-matched \"INSERT *\": line 1, column 1: WHEN MATCHED THEN INSERT: a matched row is updated or deleted\n"},
		{"a syntax error in a clause", []string{"merge", table, src, "--on", "target.id = source.id", "--when-not-matched", "AND source.op = = 1 THEN INSERT *"}, exitError,
			"lakelog merge: --when-not-matched \"AND source.op = = 1 THEN INSERT *\": line 1, column 17: expected an expression but found '='\n"},
	})
}
