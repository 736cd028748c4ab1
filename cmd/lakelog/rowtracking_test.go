package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowTrackingCLI: alter --set-property delta.enableRowTracking=true
// backfills a table that has rows; scan --columns prints
// _metadata.row_id and _metadata.row_commit_version where asked, and
// DELETE keeps the IDs of the rows that stay.
func TestRowTrackingCLI(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, v long")
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", `{"id":1,"v":10}`+"\n"+`{"id":2,"v":20}`+"\n"))
	ok(t, "append", table, writeFile(t, dir, "b.jsonl", `{"id":3,"v":30}`+"\n"))
	if code, _, errOut := lakelog(t, "scan", table, "--columns", "id,_metadata.row_id"); code == 0 || !strings.Contains(errOut, "delta.enableRowTracking") {
		t.Fatalf("row IDs of a table without row tracking: exit %d, %s", code, errOut)
	}
	ok(t, "alter", table, "--set-property", "delta.enableRowTracking=true")
	rowIDs := func(out string, wantVersion bool) map[int64]int64 {
		t.Helper()
		m := map[int64]int64{}
		seen := map[int64]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				ID      int64  `json:"id"`
				RowID   *int64 `json:"_metadata.row_id"`
				Version *int64 `json:"_metadata.row_commit_version"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.RowID == nil || (wantVersion && (r.Version == nil || *r.Version != 4)) {
				t.Fatalf("line %s: %v", l, err)
			}
			if seen[*r.RowID] || *r.RowID < 0 || *r.RowID > 2 {
				t.Fatalf("row ID %d (IDs 0..2 once each): %s", *r.RowID, out)
			}
			seen[*r.RowID] = true
			m[r.ID] = *r.RowID
		}
		return m
	}
	out := ok(t, "scan", table, "--columns", "_metadata.row_id,id,_metadata.row_commit_version", "--format", "jsonl")
	if !strings.HasPrefix(out, `{"_metadata.row_id":`) || !strings.Contains(out, `,"id":`) {
		t.Fatalf("columns not in the order asked: %s", out)
	}
	before := rowIDs(out, true)
	if len(before) != 3 {
		t.Fatalf("%d rows: %s", len(before), out)
	}
	ok(t, "delete", table, "--where", "id = 2")
	after := rowIDs(ok(t, "scan", table, "--columns", "id,_metadata.row_id", "--format", "jsonl"), false)
	if len(after) != 2 || after[1] != before[1] || after[3] != before[3] {
		t.Fatalf("row IDs after DELETE %v, before %v", after, before)
	}
}
