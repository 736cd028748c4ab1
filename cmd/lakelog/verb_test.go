package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Every verb's declaration is whole: a summary, a sentence for each flag,
// flags named once, and a --help that lists every flag and the usage
// the synopsis generates.
func TestVerbDeclarations(t *testing.T) {
	for _, v := range orderedVerbs() {
		if v.summary == "" || v.run == nil {
			t.Errorf("%s: no summary or no run", v.name)
		}
		seen := map[string]bool{}
		for _, f := range v.allFlags() {
			if seen[f.name] {
				t.Errorf("%s: --%s declared twice", v.name, f.name)
			}
			seen[f.name] = true
			if f.help == "" {
				t.Errorf("%s --%s: no help sentence", v.name, f.name)
			}
			if f.kind == choiceFlag && len(f.choices) == 0 {
				t.Errorf("%s --%s: a choice without choices", v.name, f.name)
			}
		}
		for _, g := range v.allGroups() {
			for _, alt := range g.alts {
				for _, n := range alt {
					if !seen[n] {
						t.Errorf("%s: group names --%s, which is not declared", v.name, n)
					}
				}
			}
		}
		help := ok(t, v.name, "--help")
		if !strings.HasPrefix(help, "usage: lakelog "+v.synopsis()+"\n") {
			t.Errorf("%s --help does not start with its synopsis:\n%s", v.name, help)
		}
		for n := range seen {
			if !strings.Contains(help, "\n  --"+n) {
				t.Errorf("%s --help lacks --%s", v.name, n)
			}
		}
		if got := ok(t, "help", v.name); got != help {
			t.Errorf("help %s differs from %s --help", v.name, v.name)
		}
	}
}

// Usage errors from the flags' kinds name the flag and the value.
func TestFlagKinds(t *testing.T) {
	_, table := newPeople(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", table, "--limit", "-1"}, `--limit "-1": want 0 or more (leave --limit out for no limit)`},
		{[]string{"history", table, "--limit", "-1"}, `--limit "-1": want 0 or more (leave --limit out for no limit)`},
		{[]string{"scan", table, "--limit", "ten"}, `--limit "ten": want a whole number, 0 or more`},
		{[]string{"scan", table, "--version", "x"}, `--version "x": a version is a whole number, 0 or more`},
		{[]string{"scan", table, "--timestamp", "yesterday"}, `--timestamp "yesterday": not a timestamp`},
		{[]string{"scan", table, "--columns", ","}, `--columns ",": name at least one`},
		{[]string{"scan", table, "--format", "xml"}, `--format "xml": want table, jsonl, json or csv`},
		{[]string{"scan", table, "--nope"}, "no such flag: --nope"},
		{[]string{"scan"}, "want one TABLE, got 0 arguments"},
		{[]string{"append", table}, "want TABLE and at least one FILE, got 1 arguments"},
		{[]string{"append", table, "x.jsonl", "--mode", "upsert"}, `--mode "upsert": want append or overwrite`},
		{[]string{"optimize", table, "--target-size", "0"}, `--target-size: "0" is not a positive size`},
		{[]string{"vacuum", table, "--retain", "a while"}, `--retain "a while": not a duration`},
		{[]string{"vacuum", table, "--retain", "-3"}, `--retain "-3": not a number of hours, 0 or more`},
		{[]string{"alter", table, "--set-property", "novalue"}, `--set-property "novalue": want key=value`},
		{[]string{"changes", table, "--to", "3"}, "--to needs --from"},
		{[]string{"changes", table, "--from", "1", "--from-timestamp", "2026-01-01"}, "give --from/--to or --from-timestamp/--to-timestamp, not both"},
		{[]string{"changes", table}, "give --from V or --from-timestamp T"},
		{[]string{"restore", table}, "give --version N or --timestamp T"},
		{[]string{"delete", table}, "--where is required (--where true deletes every row)"},
	} {
		code, out, errOut := lakelog(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
		if !strings.Contains(errOut, "usage: lakelog "+c.args[0]) {
			t.Errorf("%v: the usage error does not show the usage: %s", c.args, errOut)
		}
	}
	if v := tableVersion(t, table); v != 1 {
		t.Fatalf("a usage error committed version %d", v)
	}
}

// Every verb that prints rows or metrics prints them in every format:
// jsonl lines and the json document parse, csv has a header and records
// of its width, and the records of jsonl, json and csv agree.
func TestEveryVerbEveryFormat(t *testing.T) {
	for _, format := range allFormats {
		t.Run(format, func(t *testing.T) {
			dir, table := newPeople(t, "delta.enableChangeDataFeed=true")
			src := writeFile(t, dir, "src.jsonl", `{"id": 1, "name": "ANN", "amount": "11.00", "country": "nl"}`+"\n")
			more := writeFile(t, dir, "more.jsonl", `{"id": 9, "name": "zed", "amount": "9.00", "country": "nl"}`+"\n")
			steps := [][]string{
				{"create", filepath.Join(dir, "other"), "--schema", "id long"},
				{"append", table, more},
				{"scan", table},
				{"count", table, "--where", "id > 2"},
				{"describe", table},
				{"history", table},
				{"files", table},
				{"update", table, "--set", "amount = amount + 1", "--where", "id = 2"},
				{"delete", table, "--where", "id = 3"},
				{"merge", table, src, "--on", "target.id = source.id", "--when-matched-update-all"},
				{"changes", table, "--from", "1"},
				{"alter", table, "--set-property", "team=ops"},
				{"optimize", table},
				{"restore", table, "--version", "2"},
				{"vacuum", table, "--dry-run"},
				{"vacuum", table, "--retain", "0", "--force"},
				{"checkpoint", table},
			}
			for _, args := range steps {
				out := ok(t, append(args, "--format", format)...)
				checkFormat(t, strings.Join(args[:1], " "), format, out)
			}
		})
	}
}

// checkFormat checks that out is well-formed in the format.
func checkFormat(t *testing.T, what, format, out string) {
	t.Helper()
	switch format {
	case formatJSONL:
		for _, l := range lines(out) {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Errorf("%s --format jsonl: line %q: %v", what, l, err)
			}
		}
	case formatJSON:
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s --format json: %v\n%s", what, err, out)
		}
	case formatCSV:
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) == 0 {
			t.Errorf("%s --format csv: %v\n%s", what, err, out)
		}
	case formatTable:
		if out == "" && what != "changes" {
			t.Errorf("%s --format table printed nothing", what)
		}
	}
}

// A result record is the same in jsonl, json and csv.
func TestResultFormatsAgree(t *testing.T) {
	var recs []map[string]string
	for _, format := range []string{formatJSONL, formatJSON, formatCSV} {
		_, table := newPeople(t)
		out := ok(t, "delete", table, "--where", "id = 2", "--format", format)
		rec := map[string]string{}
		if format == formatCSV {
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(rows) != 2 {
				t.Fatalf("csv: %v %q", err, out)
			}
			for i, k := range rows[0] {
				rec[k] = rows[1][i]
			}
		} else {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("%s: %v %q", format, err, out)
			}
			for k, v := range m {
				rec[k], _ = cellText(v)
			}
		}
		var m map[string]any // timings differ from run to run
		if err := json.Unmarshal([]byte(rec["operationMetrics"]), &m); err != nil {
			t.Fatalf("%s: operationMetrics %q: %v", format, rec["operationMetrics"], err)
		}
		for k := range m {
			if strings.HasSuffix(k, "TimeMs") {
				delete(m, k)
			}
		}
		b, _ := json.Marshal(m)
		rec["operationMetrics"] = string(b)
		recs = append(recs, rec)
	}
	for _, r := range recs[1:] {
		if fmt.Sprint(r) != fmt.Sprint(recs[0]) {
			t.Errorf("records differ: %v and %v", r, recs[0])
		}
	}
	if recs[0]["operation"] != "DELETE" || recs[0]["version"] != "2" || !strings.Contains(recs[0]["operationMetrics"], `"numDeletedRows":1`) {
		t.Errorf("record: %v", recs[0])
	}
}

func TestVersionText(t *testing.T) {
	out := ok(t, "--version")
	if !strings.HasPrefix(out, "lakelog ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q", out)
	}
	var b bytes.Buffer
	printUsage(&b)
	if !strings.Contains(b.String(), "lakelog --version") {
		t.Errorf("the usage does not list --version")
	}
}
