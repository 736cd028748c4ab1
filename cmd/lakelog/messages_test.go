package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// message is one bad command and the exact stderr it must print; the
// table must not move (no version, no data file).
type message struct {
	name   string
	args   []string
	code   int
	stderr string
}

// checkMessages runs each case against table and checks its exit code,
// its whole stderr, and that the table did not move.
func checkMessages(t *testing.T, table string, cases []message) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, files := tableVersion(t, table), dataFiles(t, table)
			code, out, errOut := lakelog(t, c.args...)
			if code != c.code || errOut != c.stderr {
				t.Errorf("lakelog %v:\nexit %d, stderr %q\nwant %d, %q", c.args, code, errOut, c.code, c.stderr)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			if v := tableVersion(t, table); v != before {
				t.Errorf("the table moved from version %d to %d", before, v)
			}
			if after := dataFiles(t, table); !slices.Equal(files, after) {
				t.Errorf("data files changed: %v, before %v", after, files)
			}
		})
	}
}

// A truncated or invalid JSONL line is the same message from append and
// merge, naming the line: append once called it a type error and merge
// "unexpected end of input in a number".
func TestJSONLLineMessages(t *testing.T) {
	dir, table := newPeople(t)
	trunc := writeFile(t, dir, "trunc.jsonl", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"amount\": 4")
	number := writeFile(t, dir, "number.jsonl", "{\"id\": 2, \"amount\": -\n")
	literal := writeFile(t, dir, "literal.jsonl", "{\"id\": 2, \"amount\": tr\n")
	on := []string{"--on", "target.id = source.id", "--when-matched-delete"}
	checkMessages(t, table, []message{
		{"append truncated", []string{"append", table, trunc}, exitError, "lakelog append: " + trunc + ":2: the line is truncated JSON: unexpected end of input after an object element (byte 22)\n"},
		{"merge truncated", append([]string{"merge", table, trunc}, on...), exitError, "lakelog merge: " + trunc + ":2: the line is truncated JSON: unexpected end of input after an object element (byte 22)\n"},
		{"append in a number", []string{"append", table, number}, exitError, "lakelog append: " + number + ":1: the line is truncated JSON: unexpected end of input in a number (byte 22)\n"},
		{"merge in a number", append([]string{"merge", table, number}, on...), exitError, "lakelog merge: " + number + ":1: the line is truncated JSON: unexpected end of input in a number (byte 22)\n"},
		{"append bad literal", []string{"append", table, literal}, exitError, "lakelog append: " + literal + ":1: the line is not valid JSON: invalid character 't' in a literal (want true) (byte 21)\n"},
		{"merge bad literal", append([]string{"merge", table, literal}, on...), exitError, "lakelog merge: " + literal + ":1: the line is not valid JSON: invalid character 't' in a literal (want true) (byte 21)\n"},
	})
}

// The messages a new user met: each says what is wrong once, where.
func TestUserMessages(t *testing.T) {
	dir, table := newPeople(t)
	checkMessages(t, table, []message{
		{"a partition column not in the schema", []string{"create", filepath.Join(dir, "new"), "--schema", "id long", "--partition-by", "nosuch"}, exitError,
			"lakelog create: deltalog: create: partition column \"nosuch\" is not in the schema\n"},
		{"a literal of another type", []string{"scan", table, "--where", "id = 'abc'"}, exitError,
			"lakelog scan: --where: expr: 'abc' is not a long in id = 'abc'\n"},
		{"an overflow in SET", []string{"update", table, "--set", "id = id * 4611686018427387904", "--where", "id = 2"}, exitError,
			"lakelog update: dml: UPDATE: SET id: expr: id * 4611686018427387904: 2 * 4611686018427387904 overflows: arithmetic overflow\n"},
		{"a negative limit", []string{"scan", table, "--limit", "-1"}, exitUsage,
			"lakelog scan: --limit \"-1\": want 0 or more (leave --limit out for no limit)\nusage: lakelog " + verbs["scan"].synopsis() + "\n(lakelog scan --help lists every flag)\n"},
	})
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "new", "_delta_log")); err == nil {
			t.Errorf("the refused create left a log behind")
		}
	}
}

// A version whose files VACUUM removed names the file and says why, as
// changes does (it once said only "objstore: not found").
func TestScanAfterVacuumNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long")
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", "{\"id\":1}\n"))
	ok(t, "append", table, "--mode", "overwrite", writeFile(t, dir, "b.jsonl", "{\"id\":2}\n"))
	old := dataFiles(t, table)
	ok(t, "vacuum", table, "--retain", "0", "--force")
	gone := ""
	for _, f := range old {
		if _, err := os.Stat(filepath.Join(table, f)); err != nil {
			gone = f
		}
	}
	if gone == "" {
		t.Fatalf("vacuum removed none of %v", old)
	}
	checkMessages(t, table, []message{
		{"scan", []string{"scan", table, "--version", "1"}, exitError,
			"lakelog scan: reader: version 1: data file " + gone + " is missing (VACUUM removes the files only older versions read)\n"},
	})
}
