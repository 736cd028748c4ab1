package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// BENCHMARKS.md holds one block per suite between a begin and an end
// marker, plus one for the run's header; -benchmarks FILE replaces each
// block's content with this run's table, so that publishing a full run
// is one command:
//
//	<!-- runner:run -->            machine, versions, commit, command, chart
//	<!-- runner:table SUITE -->    the table of the rows whose Suite is SUITE
//	<!-- runner:table * -->        the tables of suites no other block names
//	<!-- runner:end -->            closes each of these blocks
//
// Text outside the blocks (what each workload is) is left as it is. A
// partial run (-only) fills only the blocks of the suites it ran and
// leaves the others, and the run block, as they were: each table it
// fills links its own report.
const (
	markRun   = "<!-- runner:run -->"
	markTable = "<!-- runner:table "
	markEnd   = "<!-- runner:end -->"
)

// fillBenchmarks rewrites the blocks of the file at path with rep's run;
// report is the path of the run's markdown report.
func fillBenchmarks(path string, rep *report, report string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	out, err := fillBlocks(string(b), rep, relPath(path, report))
	if err != nil {
		return fmt.Errorf("benchmarks: %s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

func relPath(from, to string) string {
	fromAbs, err1 := filepath.Abs(filepath.Dir(from))
	toAbs, err2 := filepath.Abs(to)
	if err1 != nil || err2 != nil {
		return to
	}
	rel, err := filepath.Rel(fromAbs, toAbs)
	if err != nil {
		return to
	}
	return filepath.ToSlash(rel)
}

// fillBlocks returns text with every block filled from rep; reportRel is
// the report's path relative to the file.
func fillBlocks(text string, rep *report, reportRel string) (string, error) {
	named := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), markTable); ok {
			named[strings.TrimSuffix(s, " -->")] = true
		}
	}
	var b strings.Builder
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		t := strings.TrimSpace(line)
		var body string
		keep := false // a partial run leaves the block as it was
		partial := len(rep.cfg.only) > 0
		switch {
		case t == markRun:
			body, keep = runBlock(rep, reportRel), partial
		case strings.HasPrefix(t, markTable):
			suite := strings.TrimSuffix(strings.TrimPrefix(t, markTable), " -->")
			body = tableBlock(rep, suite, named, reportRel)
			keep = partial && !rep.hasRows(suite, named)
		default:
			b.WriteString(line)
			if i < len(lines)-1 {
				b.WriteString("\n")
			}
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != markEnd {
			if s := strings.TrimSpace(lines[end]); s == markRun || strings.HasPrefix(s, markTable) {
				end = len(lines)
			}
			end++
		}
		if end >= len(lines) {
			return "", fmt.Errorf("line %d: %s has no %s after it", i+1, t, markEnd)
		}
		if keep {
			body = strings.Join(lines[i+1:end], "\n")
			if end > i+1 {
				body += "\n"
			}
		}
		b.WriteString(line + "\n" + body + lines[end])
		if end < len(lines)-1 {
			b.WriteString("\n")
		}
		i = end
	}
	return b.String(), nil
}

func runBlock(rep *report, reportRel string) string {
	var b strings.Builder
	cfg := rep.cfg
	fmt.Fprintf(&b, "Filled from the run of %s (`-scale %s -count %d`), report [%s](%s).\n\n",
		rep.started.Format("2006-01-02 15:04 MST"), cfg.scale, cfg.count, filepath.Base(reportRel), reportRel)
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, %s\n", cpuModel(), runtime.NumCPU(), memTotal())
	fmt.Fprintf(&b, "- lakelog: %s, %s\n", gitDescribe(cfg.repo), runtime.Version())
	if cfg.deltars != nil {
		fmt.Fprintf(&b, "- delta-rs: %s\n", rep.peerVersion())
	}
	fmt.Fprintf(&b, "- runner wall time: %s\n", rep.elapsed.Round(1e9))
	if rep.chart != "" {
		chart := strings.TrimSuffix(reportRel, filepath.Base(reportRel)) + rep.chart
		fmt.Fprintf(&b, "\n![speed ratios, log scale](%s)\n", chart)
	}
	return b.String()
}

// hasRows reports whether the run has rows for suite's block ("*": for
// a suite no block names).
func (rep *report) hasRows(suite string, named map[string]bool) bool {
	for _, row := range rep.rows {
		if suite == "*" && !named[row.Suite] || row.Suite == suite {
			return true
		}
	}
	return false
}

// tableBlock is the table of suite's rows ("*": of every suite no block
// names, each under its name).
func tableBlock(rep *report, suite string, named map[string]bool, reportRel string) string {
	var b strings.Builder
	current := ""
	for _, row := range rep.rows {
		if suite == "*" && named[row.Suite] || suite != "*" && row.Suite != suite {
			continue
		}
		if row.Suite != current {
			current = row.Suite
			if suite == "*" {
				fmt.Fprintf(&b, "\n**%s**\n", current)
			}
			b.WriteString("\n| operation | lakelog time | lakelog peak MB | delta-rs time | delta-rs peak MB | speed | mem |\n")
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
		}
		speed, mem := ratios(row)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Name,
			timeCell(row.Lakelog, row.PerOp), memCell(row.Lakelog), row.peerCell(timeCell(row.DeltaRS, row.PerOp)), row.peerCell(memCell(row.DeltaRS)), speed, mem)
	}
	if current == "" {
		if suite == "*" {
			return ""
		}
		return fmt.Sprintf("\n_Not in the run of %s._\n\n", rep.started.Format("2006-01-02"))
	}
	// The writers suites' numbers the issue names (commits/s, retries,
	// give-ups, the slowest writer's p99) are in the notes: their summary,
	// without the per-writer list, goes under the table.
	for _, row := range rep.rows {
		if (suite == "*" && !named[row.Suite] || row.Suite == suite) && strings.HasPrefix(row.Suite, "concurrent writers") {
			for _, n := range []struct{ engine, note string }{{"lakelog", row.LakelogNote}, {row.peer(), row.DeltaRSNote}} {
				if n.note != "" {
					summary, _, _ := strings.Cut(n.note, "; per writer (")
					fmt.Fprintf(&b, "\n- %s, %s: %s", row.Name, n.engine, summary)
				}
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nRates and notes (checks, retries, latencies): [the report](%s).\n\n", reportRel)
	return b.String()
}
