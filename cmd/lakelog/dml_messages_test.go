package main

import (
	"strings"
	"testing"
)

// The duplicate-match error of MERGE says "dml: MERGE:" once (it once
// said it twice: dml.ErrDuplicateMatch's text and Merge's wrapping).
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
