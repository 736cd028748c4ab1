package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lakelog/lakelog/bench/runner/workload"
)

// dataPathRows is the table size per scale.
func dataPathRows(scale string) int64 {
	if scale == "full" {
		return 10_000_000
	}
	return 1_000_000
}

// dataPath: append the generated rows, scan them whole, and scan 1% of
// the id range, with both engines, on both engines' tables.
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
		"generation time included in the append times for both engines (the generate row shows it alone)", n, target)

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
	spec = Spec{Op: "append", Rows: n, TargetFileSize: target}
	spec.Table = tables["lakelog"]
	if l, err = rep.measure(ctx, cfg.lakelog, spec, fresh(spec.Table)); err != nil {
		return err
	}
	spec.Table = tables["delta-rs"]
	if d, err = rep.measure(ctx, cfg.deltars, spec, fresh(spec.Table)); err != nil {
		return err
	}
	rep.add(&Row{Suite: suite, Name: fmt.Sprintf("append %s rows (create table, one commit)", human(float64(n))), Unit: "rows",
		Lakelog: l, DeltaRS: d, LakelogNote: filesNote(l), DeltaRSNote: filesNote(d)})
	if cfg.deltars == nil {
		delete(tables, "delta-rs")
	}

	lo := n / 2
	hi := lo + n/100 - 1
	wantSel := workload.Expect(lo, hi+1)
	for _, by := range []string{"lakelog", "delta-rs"} {
		table, ok := tables[by]
		if !ok {
			continue
		}
		for _, op := range []string{"scan", "select"} {
			spec := Spec{Op: op, Table: table, Lo: lo, Hi: hi, Method: "dataset"}
			w, name := want, fmt.Sprintf("full scan, all columns (table written by %s)", by)
			if op == "select" {
				w, name = wantSel, fmt.Sprintf("scan id BETWEEN %d AND %d, 1%% of rows (table written by %s)", lo, hi, by)
			}
			if l, err = rep.measure(ctx, cfg.lakelog, spec, nil); err != nil {
				return err
			}
			if d, err = rep.measure(ctx, cfg.deltars, spec, nil); err != nil {
				return err
			}
			rep.add(&Row{Suite: suite, Name: name, Unit: "rows", Lakelog: l, DeltaRS: d,
				LakelogNote: checkRows(l, w) + scanFiles(l), DeltaRSNote: "pyarrow dataset; " + checkRows(d, w) + scanFiles(d)})
			spec.Method = "datafusion"
			if d, err = rep.measure(ctx, cfg.deltars, spec, nil); err != nil {
				return err
			}
			rep.add(&Row{Suite: suite, Name: name + ", delta-rs through DataFusion", Unit: "rows", Lakelog: l, DeltaRS: d,
				LakelogNote: "same run as the row above", DeltaRSNote: "DeltaTable.scan; " + checkRows(d, w)})
		}
	}
	return nil
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
