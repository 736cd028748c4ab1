package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/test/golden"
)

// TestChangesGolden: `changes --format jsonl` prints the corpus's change
// feeds exactly (the commit timestamp, which depends on file times, cut
// off), the three change columns last.
func TestChangesGolden(t *testing.T) {
	stamp := regexp.MustCompile(`,"_commit_timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"}$`)
	for _, name := range []string{"cdf-table", "cdf-table-with-dv"} {
		c, err := golden.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			NumRows    int    `json:"num_rows"`
			RowsSHA256 string `json:"rows_sha256"`
		}
		if err := json.Unmarshal(c.CDF, &want); err != nil {
			t.Fatal(err)
		}
		out := ok(t, "changes", c.Dir, "--from", "0", "--format", "jsonl")
		var got []string
		for _, l := range lines(out) {
			if !stamp.MatchString(l) {
				t.Fatalf("%s: line without a trailing _commit_timestamp: %s", name, l)
			}
			got = append(got, stamp.ReplaceAllString(l, "}"))
		}
		slices.Sort(got)
		h := sha256.Sum256([]byte(strings.Join(got, "\n") + "\n"))
		if len(got) != want.NumRows || hex.EncodeToString(h[:]) != want.RowsSHA256 {
			t.Fatalf("%s: %d rows, sha %x; want %d, %s\n%s", name, len(got), h, want.NumRows, want.RowsSHA256, strings.Join(got, "\n"))
		}
	}
}

// TestChangesOptions: ranges, --where on table and change columns,
// --columns and the formats; bad invocations exit 2 and errors 1.
func TestChangesOptions(t *testing.T) {
	c, err := golden.Find("cdf-table")
	if err != nil {
		t.Fatal(err)
	}
	out := ok(t, "changes", c.Dir, "--from", "3", "--to", "3", "--columns", "name,id", "--format", "csv")
	if l := lines(out); len(l) != 2 || l[0] != "name,id,_change_type,_commit_version,_commit_timestamp" || !strings.HasPrefix(l[1], "Dennis,7,delete,3,") {
		t.Fatalf("csv:\n%s", out)
	}
	out = ok(t, "changes", c.Dir, "--from", "0", "--where", "_change_type = 'update_postimage' AND id > 4 OR _commit_version = 0 AND id = 1", "--columns", "id", "--format", "jsonl", "--sorted")
	wantLines := []string{`{"id":1,"_change_type":"insert","_commit_version":0,`, `{"id":5,"_change_type":"update_postimage","_commit_version":2,`, `{"id":6,"_change_type":"update_postimage","_commit_version":2,`, `{"id":7,"_change_type":"update_postimage","_commit_version":2,`}
	if l := lines(out); len(l) != len(wantLines) {
		t.Fatalf("--where:\n%s", out)
	} else {
		for i := range l {
			if !strings.HasPrefix(l[i], wantLines[i]) {
				t.Fatalf("--where: line %d is %s, want %s...", i, l[i], wantLines[i])
			}
		}
	}
	out = ok(t, "changes", c.Dir, "--from", "1", "--to", "1")
	if !strings.Contains(out, "(6 rows)") || !strings.HasPrefix(out, "id") {
		t.Fatalf("table:\n%s", out)
	}
	for _, bad := range [][]string{
		{"changes", c.Dir},
		{"changes", c.Dir, "--to", "2"},
		{"changes", c.Dir, "--from", "-1"},
		{"changes", c.Dir, "--from", "2", "--to", "1"},
		{"changes", c.Dir, "--from", "0", "--from-timestamp", "2024-01-01"},
		{"changes", c.Dir, "--from-timestamp", "yesterday"},
		{"changes", c.Dir, "--from", "0", "--format", "xml"},
		{"changes", "--from", "0"},
	} {
		if code, _, _ := lakelog(t, bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
	for _, bad := range []struct {
		args    []string
		mention string
	}{
		{[]string{"changes", c.Dir, "--from", "4"}, "latest version 3"},
		{[]string{"changes", c.Dir, "--from", "0", "--where", "nope = 1"}, "nope"},
		{[]string{"changes", c.Dir, "--from", "0", "--columns", "nope"}, "nope"},
		{[]string{"changes", c.Dir, "--from-timestamp", "2999-01-01"}, "after the latest version"},
	} {
		code, _, errOut := lakelog(t, bad.args...)
		if code != exitError || !strings.Contains(errOut, bad.mention) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q", bad.args, code, errOut, exitError, bad.mention)
		}
	}
	g, err := golden.Find("deltalog-getChanges")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := lakelog(t, "changes", g.Dir, "--from", "0"); code != exitError || !strings.Contains(errOut, "not recorded for version 0") {
		t.Errorf("a table without the feed: exit %d, stderr %q", code, errOut)
	}
}
