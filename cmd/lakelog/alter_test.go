package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// alter is one commit or none: a set with a bad unset commits nothing
// (it once committed the set and then failed), and a set with an unset
// is one version.
func TestAlterIsAtomic(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long", "--property", "team=ops")

	code, out, errOut := lakelog(t, "alter", table, "--set-property", "owner2=x", "--unset-property", "nosuch")
	if want := "lakelog alter: maintenance: ALTER TABLE: the table does not set \"nosuch\"; nothing was committed\n"; code != exitError || errOut != want || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, want)
	}
	if v := tableVersion(t, table); v != 0 {
		t.Fatalf("the failed alter committed version %d", v)
	}

	out = ok(t, "alter", table, "--set-property", "owner2=x", "--unset-property", "team")
	if out != "version 1: set 1 and unset 1 properties\n" {
		t.Errorf("alter printed %q", out)
	}
	if v := tableVersion(t, table); v != 1 {
		t.Fatalf("set and unset made version %d, want one commit (1)", v)
	}
	var d description
	if err := json.Unmarshal([]byte(ok(t, "describe", table, "--format", "json")), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Properties) != 1 || d.Properties["owner2"] != "x" {
		t.Errorf("properties after alter: %v", d.Properties)
	}
	h := ok(t, "history", table, "--limit", "1", "--format", "jsonl")
	if !strings.Contains(h, `"operation":"SET TBLPROPERTIES"`) || !strings.Contains(h, `"unsetProperties":"[\"team\"]"`) {
		t.Errorf("history: %s", h)
	}

	code, _, errOut = lakelog(t, "alter", table, "--set-property", "a=1", "--unset-property", "a")
	if want := "lakelog alter: maintenance: ALTER TABLE: \"a\" is both set and unset; nothing was committed\n"; code != exitError || errOut != want {
		t.Errorf("set and unset of one key: exit %d, stderr %q; want %q", code, errOut, want)
	}
	if v := tableVersion(t, table); v != 1 {
		t.Fatalf("a failed alter committed version %d", v)
	}
}

// commitInfo.operationParameters hold predicates as Spark writes them,
// without Go's HTML escaping: history (and Spark's DESCRIBE HISTORY)
// once showed predicate=["age \u003e 40"].
func TestHistoryShowsParametersAsWritten(t *testing.T) {
	_, table := newPeople(t)
	ok(t, "delete", table, "--where", "id > 4 AND name <> 'x' OR name < '&'")
	out := ok(t, "history", table, "--limit", "1")
	want := `predicate=["id > 4 AND name <> 'x' OR name < '&'"]`
	if !strings.Contains(out, want) {
		t.Errorf("history lacks %s:\n%s", want, out)
	}
	log, err := os.ReadFile(filepath.Join(table, "_delta_log", "00000000000000000002.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(log, []byte(`\u003`)) || bytes.Contains(log, []byte(`\u0026`)) || !bytes.Contains(log, []byte(`id > 4 AND name <> 'x' OR name < '&'`)) {
		t.Errorf("the commit escapes HTML characters:\n%s", log)
	}
}
