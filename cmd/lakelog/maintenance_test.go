package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The seed scenario on the command line: a mistaken overwrite is undone
// by restore; history shows RESTORE.
func TestCLIRestore(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "users")
	ok(t, "create", table, "--schema", "id long not null, region string")
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", `{"id":1,"region":"US"}`+"\n"+`{"id":2,"region":"EU"}`+"\n"))
	ok(t, "append", table, writeFile(t, dir, "b.jsonl", `{"id":3,"region":"APAC"}`+"\n"))
	before := ok(t, "scan", table, "--format", "jsonl", "--sorted")
	v := tableVersion(t, table)
	ok(t, "append", table, "--mode", "overwrite", writeFile(t, dir, "c.jsonl", `{"id":9,"region":"US"}`+"\n"))

	out := ok(t, "restore", table, "--version", fmt.Sprint(v))
	if !strings.Contains(out, fmt.Sprintf("restored version %d as version %d: 2 files restored", v, v+2)) || !strings.Contains(out, "numRestoredFiles=2") {
		t.Fatalf("restore printed %q", out)
	}
	if got := ok(t, "scan", table, "--format", "jsonl", "--sorted"); got != before {
		t.Fatalf("rows after restore:\n%s\nwant:\n%s", got, before)
	}
	if h := ok(t, "history", table, "--limit", "1"); !strings.Contains(h, "RESTORE") {
		t.Fatalf("history: %s", h)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"restore", table}, exitUsage, "--version N or --timestamp T"},
		{[]string{"restore", table, "--version", "1", "--timestamp", "2026-01-01"}, exitUsage, "not both"},
		{[]string{"restore", table, "--version", "99"}, exitError, "99"},
	} {
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("lakelog %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.msg)
		}
	}
}

func TestCLIOptimizeVacuum(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "events")
	ok(t, "create", table, "--schema", "id long not null, x long, p string", "--partition-by", "p")
	for i := range 6 {
		ok(t, "append", table, writeFile(t, dir, fmt.Sprintf("%d.jsonl", i), fmt.Sprintf(`{"id":%d,"x":%d,"p":"%c"}`+"\n", i, 10-i, 'a'+i%2)))
	}
	before := ok(t, "scan", table, "--format", "jsonl", "--sorted")
	out := ok(t, "optimize", table, "--where", "p = 'a'", "--zorder-by", "x,id")
	if !strings.HasPrefix(out, "optimized: 3 files") {
		t.Fatalf("optimize printed %q", out)
	}
	out = ok(t, "optimize", table, "--target-size", "64m")
	if !strings.HasPrefix(out, "optimized: 3 files") || !strings.Contains(out, "numRemovedFiles=3") {
		t.Fatalf("optimize printed %q", out)
	}
	if out := ok(t, "optimize", table); !strings.HasPrefix(out, "nothing to optimize") {
		t.Fatalf("a second optimize printed %q", out)
	}
	if got := ok(t, "scan", table, "--format", "jsonl", "--sorted"); got != before {
		t.Fatalf("rows after optimize:\n%s\nwant:\n%s", got, before)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"optimize", table, "--target-size", "lots"}, exitUsage, "--target-size"},
		{[]string{"optimize", table, "--where", "x > 1"}, exitError, "partition"},
		{[]string{"vacuum", table, "--retain", "0h"}, exitError, "--force"},
		{[]string{"vacuum", table, "--retain", "soon"}, exitUsage, "--retain"},
	} {
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("lakelog %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.msg)
		}
	}

	// The 6 compacted files are unreachable once the retention is 0.
	dry := lines(ok(t, "vacuum", table, "--retain", "0h", "--force", "--dry-run"))
	if len(dry) != 7 || !strings.HasPrefix(dry[6], "dry run: 6 files") {
		t.Fatalf("dry run printed:\n%s", strings.Join(dry, "\n"))
	}
	for _, l := range dry[:6] {
		if !strings.HasPrefix(l, "p=") || !strings.Contains(l, "\t") {
			t.Fatalf("dry run line %q: want the file and its size", l)
		}
	}
	out = ok(t, "vacuum", table, "--retain", "0 hours", "--force")
	if !strings.HasPrefix(out, "vacuumed: 6 files") || !strings.Contains(out, "metrics: numDeletedFiles=6 sizeOfDataToDelete=") {
		t.Fatalf("vacuum printed %q", out)
	}
	if got := ok(t, "scan", table, "--format", "jsonl", "--sorted"); got != before {
		t.Fatalf("rows after vacuum:\n%s\nwant:\n%s", got, before)
	}
	h := ok(t, "history", table, "--limit", "2")
	if !strings.Contains(h, "VACUUM END") || !strings.Contains(h, "VACUUM START") {
		t.Fatalf("history: %s", h)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "100b": 100, "1k": 1024, "128m": 128 << 20, "1 GiB": 1 << 30, "2gb": 2 << 30} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "1x", "k", "99999999999t"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

func TestCLIAlterAndFiles(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, p string", "--partition-by", "p")
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", `{"id":1,"p":"x"}`+"\n"+`{"id":2,"p":"x"}`+"\n"+`{"id":3,"p":"y"}`+"\n"))

	out := ok(t, "alter", table, "--set-property", "delta.deletedFileRetentionDuration=interval 1 day", "--set-property", "team=ops")
	if !strings.HasPrefix(out, "version 2: set 2 properties") {
		t.Fatalf("alter printed %q", out)
	}
	if d := ok(t, "describe", table, "--format", "json"); !strings.Contains(d, `"delta.deletedFileRetentionDuration":"interval 1 day"`) {
		t.Fatalf("describe: %s", d)
	}
	ok(t, "alter", table, "--unset-property", "team")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"alter", table}, exitUsage, "--set-property"},
		{[]string{"alter", table, "--set-property", "novalue"}, exitUsage, "key=value"},
		{[]string{"alter", table, "--set-property", "delta.logRetentionDuration=soon"}, exitError, "delta.logRetentionDuration"},
		{[]string{"alter", table, "--set-property", "delta.nonsense=1"}, exitError, "unknown table property"},
		{[]string{"alter", table, "--unset-property", "team"}, exitError, "team"},
	} {
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("lakelog %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.msg)
		}
	}

	got := lines(ok(t, "files", table, "--format", "jsonl"))
	if len(got) != 2 {
		t.Fatalf("files: %v", got)
	}
	var rows []string
	for _, l := range got {
		for _, want := range []string{`"path":"p=`, `"size":`, `"deletedRows":0`} {
			if !strings.Contains(l, want) {
				t.Errorf("files line %s lacks %s", l, want)
			}
		}
		if strings.Contains(l, `"p":"x"`) {
			rows = append(rows, "x")
			if !strings.Contains(l, `"numRecords":2`) {
				t.Errorf("partition x: %s", l)
			}
		}
	}
	if len(rows) != 1 {
		t.Fatalf("files: %v", got)
	}
	table1 := lines(ok(t, "files", table, "--version", "0"))
	if len(table1) != 2 || !strings.HasPrefix(table1[0], "path") || !strings.HasPrefix(table1[1], "----") { // header and rule
		t.Fatalf("files at version 0: %v", table1)
	}
	if tbl := ok(t, "files", table); !strings.Contains(tbl, "p=y") {
		t.Fatalf("files: %s", tbl)
	}
}

// vacuum --retain takes a number of hours, as Spark's RETAIN 168 HOURS
// and delta-rs's retention_hours, besides Go durations and intervals.
func TestVacuumRetainHours(t *testing.T) {
	_, table := newPeople(t)
	for _, c := range []struct {
		retain string
		hours  float64
	}{{"168", 168}, {"200.5", 200.5}, {"170h", 170}, {"8 days", 192}} {
		out := ok(t, "vacuum", table, "--retain", c.retain, "--dry-run")
		i := strings.Index(out, "files modified before ")
		if i < 0 {
			t.Fatalf("--retain %s: %q", c.retain, out)
		}
		cut, err := time.Parse(time.RFC3339, strings.Fields(out[i+len("files modified before "):])[0])
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(cut) - time.Duration(c.hours*float64(time.Hour)); d < -time.Minute || d > time.Minute {
			t.Errorf("--retain %s: cutoff %s, want %v ago", c.retain, cut, c.hours)
		}
	}
}

// TestCLIFilesColumnMapped: on a column-mapped table the log keys
// partition values by physical name; files prints them under the column's
// name (it printed p=null for every file), also after a rename.
func TestCLIFilesColumnMapped(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t")
	ok(t, "create", table, "--schema", "id long, p string", "--partition-by", "p", "--property", "delta.columnMapping.mode=name")
	ok(t, "append", table, writeFile(t, dir, "a.jsonl", `{"id":1,"p":"x"}`+"\n"+`{"id":2,"p":"y"}`+"\n"))
	text := ok(t, "files", table)
	for _, want := range []string{" p=x ", " p=y "} {
		if !strings.Contains(text, want) {
			t.Errorf("files does not print %q:\n%s", want, text)
		}
	}
	ok(t, "alter", table, "--rename-column", "p:q")
	got := lines(ok(t, "files", table, "--format", "jsonl"))
	var vals []string
	for _, l := range got {
		for _, v := range []string{`"partitionValues":{"q":"x"}`, `"partitionValues":{"q":"y"}`} {
			if strings.Contains(l, v) {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) != 2 {
		t.Fatalf("files after the rename: %v", got)
	}
}
