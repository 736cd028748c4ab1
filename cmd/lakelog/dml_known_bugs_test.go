package main

import (
	"strings"
	"testing"
)

// The duplicate-match error of MERGE says "dml: MERGE:" once. It fails
// today: dml.ErrDuplicateMatch's text starts with "dml: MERGE:" and Merge
// wraps it in another "dml: MERGE: %w" (dml/merge.go), so the message
// reads "dml: MERGE: dml: MERGE: a target row matched ...". A dml bug,
// for the lead: the CLI only adds the file name.
func TestMergeDuplicateMatchMessageSaysOperationOnce(t *testing.T) {
	dir, table := newPeople(t)
	dup := writeFile(t, dir, "dup.jsonl", `{"id": 2, "name": "x", "amount": 1, "country": "nl"}
{"id": 2, "name": "z", "amount": 1, "country": "nl"}
`)
	code, _, errOut := lakelog(t, "merge", table, dup, "--on", "target.id = source.id", "--when-matched-update-all")
	if code != exitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "dml: MERGE:"); n != 1 {
		t.Errorf("the message says \"dml: MERGE:\" %d times: %s", n, errOut)
	}
}
