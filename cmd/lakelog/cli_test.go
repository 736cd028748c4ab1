package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/test/golden"
)

// lakelog runs the CLI in-process and returns exit code, stdout, stderr.
func lakelog(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// Every table of the conformance corpus: describe reports the expected
// latest version, columns and partition columns, or fails where the
// corpus says reading must fail.
func TestDescribeGoldenTables(t *testing.T) {
	cases, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			code, out, errOut := lakelog(t, "describe", c.Dir, "--format", "json")
			if c.ExpectError {
				if code != exitError || errOut == "" {
					t.Fatalf("want an error (%s), got exit %d\nstdout: %s", c.Error, code, out)
				}
				if strings.Contains(errOut, "panic") {
					t.Fatalf("panicked: %s", errOut)
				}
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var d description
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("describe output: %v\n%s", err, out)
			}
			if c.LatestVersion != nil && d.Version != *c.LatestVersion {
				t.Errorf("version %d, want %d", d.Version, *c.LatestVersion)
			}
			if c.Columns != nil && !slices.Equal(d.Columns, c.Columns) {
				t.Errorf("columns %v, want %v", d.Columns, c.Columns)
			}
			if c.PartitionColumns != nil && !slices.Equal(d.PartitionColumns, c.PartitionColumns) {
				t.Errorf("partition columns %v, want %v", d.PartitionColumns, c.PartitionColumns)
			}
			for app, v := range c.Txns {
				if got, ok := d.Txns[app]; !ok || got != v {
					t.Errorf("txn %s = %d (%v), want %d", app, got, ok, v)
				}
			}
			if c.NumTxns != nil && int64(len(d.Txns)) != *c.NumTxns {
				t.Errorf("%d app transactions, want %d", len(d.Txns), *c.NumTxns)
			}
			if c.NumFiles != nil && int64(d.NumFiles) != *c.NumFiles {
				t.Errorf("numFiles %d, want %d", d.NumFiles, *c.NumFiles)
			}
		})
	}
}

func TestCreateDescribeHistory(t *testing.T) {
	dir := t.TempDir() + "/orders"
	code, _, errOut := lakelog(t, "create", dir, "--schema", "id long not null, customer string, amount decimal(10,2), country string", "--partition-by", "country", "--property", "delta.appendOnly=false")
	if code != exitOK {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	code, _, errOut = lakelog(t, "create", dir, "--schema", "id long")
	if code != exitError || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second create: exit %d: %s", code, errOut)
	}
	code, out, errOut := lakelog(t, "describe", dir, "--format", "json")
	if code != exitOK {
		t.Fatalf("describe: %s", errOut)
	}
	var d description
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != 0 || strings.Join(d.Columns, ",") != "id,customer,amount,country" || strings.Join(d.PartitionColumns, ",") != "country" || d.Properties["delta.appendOnly"] != "false" || d.MinReaderVersion != 1 || d.MinWriterVersion != 2 {
		t.Fatalf("describe: %+v", d)
	}
	code, out, _ = lakelog(t, "describe", dir)
	if code != exitOK || !strings.Contains(out, "amount") || !strings.Contains(out, "decimal(10,2)") {
		t.Fatalf("describe table: %s", out)
	}
	code, out, errOut = lakelog(t, "history", dir, "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("history: %s", errOut)
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &h); err != nil {
		t.Fatalf("history line: %v: %s", err, out)
	}
	if h["version"] != float64(0) || h["operation"] != "CREATE TABLE" || h["timestamp"] == "" {
		t.Fatalf("history: %v", h)
	}
}

func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
		{[]string{"describe"}, exitUsage, "want one TABLE"},
		{[]string{"describe", dir}, exitError, "not a Delta table"},
		{[]string{"create", dir + "/t", "--schema", "id lnog"}, exitError, "lnog"},
		{[]string{"create", dir + "/t"}, exitUsage, "--schema is required"},
		{[]string{"describe", dir, "--version", "1", "--timestamp", "2026-01-01"}, exitUsage, "not both"},
		{[]string{"scan", dir, "--version", "-5"}, exitUsage, "a version is 0 or more"},
		{[]string{"count", dir, "--version", "-1", "--timestamp", "2026-01-01"}, exitUsage, "not both"},
		{[]string{"history", dir, "--format", "xml"}, exitUsage, "--format"},
	} {
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// The quickstart needs no input, builds the demo table from several
// concurrent writers, and leaves a table every version of which reads.
func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := lakelog(t, "quickstart", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"created version 0", "committed as version 4", "CREATE TABLE", "lakelog count " + dir + "/orders --version 4\n   1000",
		"(files: 16 in the table;"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = lakelog(t, "describe", dir+"/orders", "--format", "json")
	var d description
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.Version != 4 || d.NumFiles != 16 {
		t.Fatalf("table after quickstart: exit %d %s", code, out)
	}
	// A second run refuses to overwrite the demo.
	if code, _, errOut := lakelog(t, "quickstart", dir); code != exitError || !strings.Contains(errOut, "already holds a table") {
		t.Fatalf("second run: exit %d %s", code, errOut)
	}
}

func TestCheckpointVerb(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := lakelog(t, "quickstart", dir); code != exitOK {
		t.Fatal(errOut)
	}
	table := dir + "/orders"
	code, out, errOut := lakelog(t, "checkpoint", table)
	if code != exitOK || !strings.Contains(out, "checkpoint of version 4 written") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	// Without the commits the checkpoint covers, the table still reads.
	for v := 0; v <= 4; v++ {
		if err := os.Remove(fmt.Sprintf("%s/_delta_log/%020d.json", table, v)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = lakelog(t, "describe", table, "--format", "json")
	var d description
	if code != exitOK || json.Unmarshal([]byte(out), &d) != nil || d.Version != 4 || d.NumFiles != 16 {
		t.Fatalf("describe after removing commits: exit %d %s %s", code, out, errOut)
	}
}

// A transaction aborted by a conflict exits with 3 and names the conflict.
func TestConflictExitCode(t *testing.T) {
	register(&verb{name: "test-conflict", run: func(context.Context, *call) error {
		return fmt.Errorf("append: %w", &conflict.Error{Kind: conflict.ErrConcurrentDeleteRead, WinningVersion: 7, Paths: []string{"p=1/a.parquet"}})
	}})
	defer delete(verbs, "test-conflict")
	code, _, errOut := lakelog(t, "test-conflict")
	if code != exitConflict || !strings.Contains(errOut, "version 7") || !strings.Contains(errOut, "p=1/a.parquet") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestMissingCommitInTheMiddle: with a commit file gone from the middle of
// the log, versions before the gap still read, the latest does not, and
// history lists the missing version and fails.
func TestMissingCommitInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long")
	for i := range 3 {
		ok(t, "append", table, writeFile(t, dir, fmt.Sprintf("%d.jsonl", i), fmt.Sprintf("{\"id\": %d}\n", i)))
	}
	if err := os.Remove(filepath.Join(table, "_delta_log", "00000000000000000002.json")); err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(ok(t, "count", table, "--version", "1")); n != "1" {
		t.Errorf("count --version 1 before the gap: %s, want 1", n)
	}
	if code, _, errOut := lakelog(t, "count", table); code != exitError || !strings.Contains(errOut, "version 2 is missing") {
		t.Errorf("count of the latest version across the gap: exit %d, %s", code, errOut)
	}
	code, out, errOut := lakelog(t, "history", table)
	if code != exitError || !strings.Contains(out, "2  ") || !strings.Contains(out, "MISSING") || !strings.Contains(errOut, "version 2 is missing") {
		t.Errorf("history across the gap: exit %d\nstdout:\n%s\nstderr: %s", code, out, errOut)
	}
	if got := len(lines(out)); got != 6 { // header, rule, versions 3, 2 (missing), 1, 0
		t.Errorf("history printed %d lines, want 6:\n%s", got, out)
	}
	if out := ok(t, "history", table, "--limit", "0", "--format", "jsonl"); out != "" {
		t.Errorf("history --limit 0 printed %q, want nothing", out)
	}
}

// TestHelp: CMD --help and lakelog help CMD list every flag with its
// sentence and the exit codes; the help topics print; an unknown topic
// is a usage error.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"scan", "--help"}, {"help", "scan"}} {
		out := ok(t, args...)
		for _, want := range []string{"usage: lakelog scan", "--where", "--columns", "--limit", "0 prints none", "--version", "--timestamp", "--format", "--sorted", "2 usage error"} {
			if !strings.Contains(out, want) {
				t.Errorf("lakelog %s lacks %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
	}
	for topic, want := range map[string]string{"predicates": "BETWEEN", "types": "timestamp_ntz", "time": "epoch milliseconds", "uris": "AWS_ENDPOINT_URL"} {
		if out := ok(t, "help", topic); !strings.Contains(out, want) {
			t.Errorf("help %s lacks %q", topic, want)
		}
	}
	if code, _, _ := lakelog(t, "help", "nope"); code != exitUsage {
		t.Errorf("help nope: exit %d, want %d", code, exitUsage)
	}
	if out := ok(t, "--help"); !strings.Contains(out, "lakelog help [") || !strings.Contains(out, "exit codes") {
		t.Errorf("--help:\n%s", out)
	}
}
