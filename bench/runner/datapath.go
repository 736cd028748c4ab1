package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakelog/lakelog/bench/runner/workload"
)

// dataPathRows is the table size per scale.
func dataPathRows(scale string) int64 {
	if scale == "full" {
		return 10_000_000
	}
	return 1_000_000
}

// dataPath: append the generated rows, scan them whole, scan 1% of the id
// range and project two columns, with both engines, on both engines'
// tables of two shapes: many small files (partitioned by p, the target
// file size for about 150 files) and few large files (largeFiles). Each
// scan row times delta-rs's three readers (peerReaders) against lakelog's
// one and compares with the fastest.
func dataPath(ctx context.Context, cfg *config, rep *report) error {
	const suite = "data path"
	n := dataPathRows(cfg.scale)
	target := cfg.targetFileSize
	if target == 0 {
		target = workload.TargetFileSize(n)
	}
	dir := filepath.Join(cfg.work, "datapath")
	tables := map[string]string{"lakelog": filepath.Join(dir, "by-lakelog"), "delta-rs": filepath.Join(dir, "by-delta-rs")}
	rep.note("data path: %d rows of (id long, p string, v double, s string) partitioned by p (10 values), "+
		"target file size %d bytes for both writers; rows generated in the child, batch by batch (64Ki rows), "+
		"generation time included in the append times for both engines (the generate row shows it alone); "+
		"the few-large-files shape: the same rows unpartitioned, written in two commits of one file each; "+
		"every scan row times delta-rs's QueryBuilder SQL (select ... from t, batches streamed), DeltaTable.scan and the pyarrow dataset, "+
		"each in its own process, and shows the fastest in the delta-rs columns; %s", n, target, stringsNote(cfg))

	// Baselines.
	l, err := rep.measure(ctx, cfg.lakelog, Spec{Op: "idle"}, nil)
	if err != nil {
		return err
	}
	d, err := rep.measure(ctx, cfg.deltars, Spec{Op: "idle"}, nil)
	if err != nil {
		return err
	}
	rep.add(&Row{Suite: suite, Name: "idle process (runtime + imports)", Unit: "", Lakelog: l, DeltaRS: d,
		LakelogNote: "Go runtime, this binary", DeltaRSNote: "python + deltalake + pyarrow + numpy imported"})

	want := workload.Expect(0, n)
	spec := Spec{Op: "gen", Rows: n}
	if l, err = rep.measure(ctx, cfg.lakelog, spec, nil); err != nil {
		return err
	}
	if d, err = rep.measure(ctx, cfg.deltars, spec, nil); err != nil {
		return err
	}
	rep.add(&Row{Suite: suite, Name: fmt.Sprintf("generate %s rows only (no write)", human(float64(n))), Unit: "rows",
		Lakelog: l, DeltaRS: d, LakelogNote: checkRows(l, want), DeltaRSNote: checkRows(d, want)})

	// Append: each engine creates its table with all rows in one commit.
	fresh := func(path string) func() error {
		return func() error { return os.RemoveAll(path) }
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	appendRow := func(name string, spec Spec, tables map[string]string, note func(table string) string) error {
		spec.Table = tables["lakelog"]
		l, err := rep.measure(ctx, cfg.lakelog, spec, fresh(spec.Table))
		if err != nil {
			return err
		}
		spec.Table = tables["delta-rs"]
		d, err := rep.measure(ctx, cfg.deltars, spec, fresh(spec.Table))
		if err != nil {
			return err
		}
		rep.add(&Row{Suite: suite, Name: name, Unit: "rows", Lakelog: l, DeltaRS: d,
			LakelogNote: filesNote(l) + note(tables["lakelog"]), DeltaRSNote: filesNote(d) + note(tables["delta-rs"])})
		return nil
	}
	none := func(string) string { return "" }
	if err := appendRow(fmt.Sprintf("append %s rows (create table, one commit)", human(float64(n))),
		Spec{Op: "append", Rows: n, TargetFileSize: target}, tables, none); err != nil {
		return err
	}
	// The second shape: few large files (largeFiles).
	large := map[string]string{"lakelog": filepath.Join(dir, "large-by-lakelog"), "delta-rs": filepath.Join(dir, "large-by-delta-rs")}
	spec = largeFiles(n)
	if err := appendRow(fmt.Sprintf("append %s rows as few large files (%d commits of one file)", human(float64(n)), spec.Commits),
		spec, large, func(table string) string { return "; " + sizesNote(table) }); err != nil {
		return err
	}
	if cfg.deltars == nil {
		delete(tables, "delta-rs")
		delete(large, "delta-rs")
	}

	for _, shape := range []struct {
		what   string
		tables map[string]string
	}{{"", tables}, {"few large files, ", large}} {
		for _, by := range []string{"lakelog", "delta-rs"} {
			table, ok := shape.tables[by]
			if !ok {
				continue
			}
			for _, q := range scanQueries(n) {
				spec := q.spec
				spec.Table = table
				name := fmt.Sprintf("%s (%stable written by %s)", q.name, shape.what, by)
				if l, err = rep.measure(ctx, cfg.lakelog, spec, nil); err != nil {
					return err
				}
				row := &Row{Suite: suite, Name: name, Unit: "rows", Lakelog: l, LakelogNote: checkRows(l, q.want) + scanFiles(l)}
				if cfg.deltars != nil {
					var outs []peerOutcome
					for _, m := range peerReaders {
						spec.Method = m.method
						d, err := rep.measure(ctx, cfg.deltars, spec, nil)
						if err != nil {
							return err
						}
						outs = append(outs, peerOutcome{reader: m.name, o: d, note: checkRows(d, q.want) + scanFiles(d)})
					}
					row.DeltaRS, row.DeltaRSNote = fastestPeer(outs)
				}
				rep.add(row)
			}
		}
	}
	return nil
}

// stringsNote says how lakelog's scans return strings (-strings).
func stringsNote(cfg *config) string {
	if cfg.plainStrings {
		return "lakelog's scans return plain strings (reader.NewScan's default options; -strings plain)"
	}
	return "lakelog's scans return strings as views (reader.WithStringViews), as DataFusion does"
}

// largeFiles is the append of the data-path table's second shape, few
// large files: unpartitioned (p a column of the files), in two commits
// of half the rows each, each one file (the target is far above it), so
// that both engines write two files of n/2 rows (at full scale about 86
// MB each), whatever their writers' rolling heuristics.
func largeFiles(n int64) Spec {
	return Spec{Op: "append", Rows: n, Unpartitioned: true, Commits: 2, TargetFileSize: max(64<<20, n*64)}
}

// scanQuery is one scan the data-path suites time on each table.
type scanQuery struct {
	name string
	spec Spec
	want workload.Checksum
}

// scanQueries are the data-path scans of a table of n rows: the full
// scan, the 1% id range and the projection of two columns.
func scanQueries(n int64) []scanQuery {
	lo := n / 2
	hi := lo + n/100 - 1
	return []scanQuery{
		{"full scan, all columns", Spec{Op: "scan"}, workload.Expect(0, n)},
		{fmt.Sprintf("scan id BETWEEN %d AND %d, 1%% of rows", lo, hi), Spec{Op: "select", Lo: lo, Hi: hi}, workload.Expect(lo, hi+1)},
		{"projection of two columns (id, s), all rows", Spec{Op: "scan", Columns: projection}, expectProjected(n)},
	}
}

// peerReaders are delta-rs's readers every scan row measures (Spec.Method):
// the row's delta-rs cells are the fastest of them, the notes give all.
var peerReaders = []struct{ method, name string }{
	{"querybuilder", "QueryBuilder SQL"},
	{"datafusion", "DeltaTable.scan"},
	{"dataset", "pyarrow dataset"},
}

// peerOutcome is one delta-rs reader's run of a scan row; o is nil when
// it failed (note says why).
type peerOutcome struct {
	reader string
	o      *Outcome
	note   string
}

// fastestPeer is the fastest of the readers' outcomes that completed, for
// a row's delta-rs cells, and a note naming it and giving every reader's
// time, peak and checks. A reader whose result is WRONG or FAILED keeps
// its mark in the note (so the row fails), and is not chosen.
func fastestPeer(outs []peerOutcome) (*Outcome, string) {
	var best *peerOutcome
	var parts []string
	for i := range outs {
		p := &outs[i]
		if p.o == nil {
			parts = append(parts, p.reader+": "+p.note)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s, %.0f MB, %s", p.reader, duration(p.o.Seconds), p.o.PeakMB, p.note))
		if strings.Contains(p.note, "**") {
			continue
		}
		if best == nil || p.o.Seconds < best.o.Seconds {
			best = p
		}
	}
	if best == nil {
		return nil, strings.Join(parts, "; ")
	}
	return best.o, "fastest: " + best.reader + "; " + strings.Join(parts, "; ")
}

// sizesNote lists the sizes of the data files of the local table at dir.
func sizesNote(dir string) string {
	var sizes []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") && !strings.Contains(path, "_delta_log") {
			if info, err := d.Info(); err == nil {
				sizes = append(sizes, fmt.Sprintf("%.0f MB", float64(info.Size())/1e6))
			}
		}
		return nil
	})
	return "data files of " + strings.Join(sizes, ", ")
}

// checkRows compares a scan's checksum with the expected one.
func checkRows(o *Outcome, want workload.Checksum) string {
	if o == nil || o.Checksum == nil {
		return ""
	}
	c := o.Checksum
	if c.Rows != want.Rows || c.SumID != want.SumID || c.StrBytes != want.StrBytes {
		progress("WRONG RESULT: got %+v, want %+v", *c, want)
		return fmt.Sprintf("**WRONG: %d rows, sum(id) %d, string bytes %d; want %d, %d, %d**",
			c.Rows, c.SumID, c.StrBytes, want.Rows, want.SumID, want.StrBytes)
	}
	return "rows checked"
}

func filesNote(o *Outcome) string {
	if o == nil {
		return ""
	}
	return fmt.Sprintf("%d files", o.Files)
}

func scanFiles(o *Outcome) string {
	if o == nil || o.FilesRead < 0 {
		return ""
	}
	return fmt.Sprintf(", read %d of %d files", o.FilesRead, o.Files)
}
