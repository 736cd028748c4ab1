package main

import (
	"bytes"
	"context"
	"github.com/lakelog/lakelog/reader"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var commitTime = regexp.MustCompile(`"_commit_timestamp":"[^"]*"|(?m)Ms \d+$`)

// ttyBuffer is a buffer that says it is a terminal.
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) IsTerminal() bool { return true }

// onTerminal runs lakelog with stderr a terminal, progress lines shown at
// once and rewritten at every tick.
func onTerminal(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	delay, every := progressDelay, progressEvery
	progressDelay, progressEvery = 0, time.Millisecond
	defer func() { progressDelay, progressEvery = delay, every }()
	var out bytes.Buffer
	var errb ttyBuffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestMeterLine(t *testing.T) {
	for _, c := range []struct {
		what        string
		done, total int64
		unit, extra string
		el          time.Duration
		want        string
	}{
		{"optimize: rows rewritten", 3, 12, "", "", 6 * time.Second, "optimize: rows rewritten: 3 of 12 (25%), 0.5/s, about 18s left, 6s"},
		{"scan", 5, 10, "files", "1200 rows", 10 * time.Second, "scan: 5 of 10 (50%) files, 1200 rows, 0.5/s, about 10s left, 10s"},
		{"scan", 0, 0, "files", "0 rows", 0, "scan: 0 files, 0 rows, 0s"},
		{"upload", 3 << 20, 4 << 20, "B", "", 3 * time.Second, "upload: 3.0 MiB of 4.0 MiB (75%), 1.0 MiB/s, about 1s left, 3s"},
		{"vacuum: files deleted", 7, 7, "", "", 2 * time.Second, "vacuum: files deleted: 7 of 7 (100%), 3.5/s, 2s"},
	} {
		if got := meterLine(c.what, c.done, c.total, c.unit, c.extra, c.el); got != c.want {
			t.Errorf("meterLine = %q, want %q", got, c.want)
		}
	}
}

// On a terminal, scan to a file, optimize and vacuum show a progress line
// on stderr and clear it at the end; stdout is what it is without one;
// --quiet shows none.
func TestProgressOnTerminal(t *testing.T) {
	dir, table := newPeople(t, "delta.enableChangeDataFeed=true")
	ok(t, "append", table, writeFile(t, dir, "more.jsonl", `{"id": 6, "name": "fay", "amount": "60.00", "country": "nl"}
{"id": 7, "name": "gus", "amount": "70.00", "country": "de"}
{"id": 8, "name": "hal", "amount": "80.00", "country": "fr"}
`))
	quiet := filepath.Join(dir, "quiet")
	copyTable(t, table, quiet)
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"scan", "TABLE", "--where", "id > 1", "--format", "jsonl"}, "\rscan: "},
		{[]string{"changes", "TABLE", "--from", "1", "--format", "jsonl"}, "\rchanges: versions: "},
		{[]string{"optimize", "TABLE"}, "\roptimize: rows rewritten: "},
		{[]string{"vacuum", "TABLE", "--retain", "0", "--force"}, "\rvacuum: files deleted: "},
		{[]string{"delete", "TABLE", "--where", "id = 7"}, "\rdelete: rows read: "},
		{[]string{"update", "TABLE", "--set", "name = 'x'", "--where", "id = 6"}, "\rupdate: rows rewritten: "},
		{[]string{"sql", "DELETE FROM delta.`TABLE` WHERE id = 8"}, "\rdelete: rows read: "},
		{[]string{"checkpoint", "TABLE"}, "\rcheckpoint: files written: "},
	} {
		with := func(table string, extra ...string) []string {
			var out []string
			for _, a := range c.args {
				out = append(out, strings.ReplaceAll(a, "TABLE", table))
			}
			return append(out, extra...)
		}
		code, out, errOut := onTerminal(t, with(table)...)
		qcode, qout, qerr := onTerminal(t, with(quiet, "--quiet")...)
		if code != 0 || qcode != 0 {
			t.Fatalf("%v: exit %d (%s), quiet %d (%s)", c.args, code, errOut, qcode, qerr)
		}
		if !strings.Contains(errOut, c.line) || !strings.HasSuffix(errOut, "\r\x1b[K") {
			t.Errorf("%v: stderr %q: want a progress line %q, cleared at the end", c.args, errOut, c.line)
		}
		if qerr != "" {
			t.Errorf("%v --quiet: stderr %q", c.args, qerr)
		}
		// (The copy's commit files are younger: their times differ.)
		if norm := func(s string) string { return commitTime.ReplaceAllString(strings.ReplaceAll(s, quiet, table), "") }; norm(qout) != norm(out) {
			t.Errorf("%v: stdout with a progress line differs:\n%s\nwithout:\n%s", c.args, out, qout)
		}
	}
	// Rows to a terminal: no progress line among them.
	delay := progressDelay
	progressDelay = 0
	defer func() { progressDelay = delay }()
	var out, errb ttyBuffer
	if code := run(context.Background(), []string{"scan", table}, strings.NewReader(""), &out, &errb); code != 0 || errb.Len() != 0 {
		t.Errorf("scan to a terminal: exit %d, stderr %q", code, errb.String())
	}
}

// A scan's line counts rows once planning knows them (a scan of one large
// file moves as its rows are decoded), files before.
func TestScanProgress(t *testing.T) {
	for _, c := range []struct {
		m           reader.ScanMetrics
		files       int64
		done, total int64
		unit        string
	}{
		{reader.ScanMetrics{FilesConsidered: 1, FilesPlanned: 1, RowsPlanned: 5_000_000, RowsRead: 1_200_000, RowsReturned: 1_000_000}, 1, 1_200_000, 5_000_000, "rows"},
		{reader.ScanMetrics{FilesConsidered: 1, FilesPlanned: 1, RowsPlanned: 100, RowsRead: 50, RowsSkippedByPageIndex: 25}, 1, 75, 100, "rows"},
		// Planning not done, or a file's rows unknown: files.
		{reader.ScanMetrics{FilesConsidered: 3, FilesPlanned: 3, RowsPlanned: 300, FilesRead: 2}, 10, 2, 10, "files"},
		{reader.ScanMetrics{FilesConsidered: 2, FilesPlanned: 2, RowsPlanned: 300, RowsUnknown: 1, FilesRead: 1, FilesSkippedByStats: 1}, 2, 1, 1, "files"},
	} {
		done, total, unit, _ := scanProgress(c.m, c.files)
		if done != c.done || total != c.total || unit != c.unit {
			t.Errorf("%+v: %d of %d %s, want %d of %d %s", c.m, done, total, unit, c.done, c.total, c.unit)
		}
	}
}
