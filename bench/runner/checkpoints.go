package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
)

func logSpec(scale string) workload.LogSpec {
	if scale == "full" {
		return workload.LogSpec{Commits: 100_000, AddsPerCommit: 10}
	}
	return workload.LogSpec{Commits: 2_000, AddsPerCommit: 10} // small is CI's scale
}

// checkpoints: replay a long log, write its checkpoint, open from it and
// list the files, with both engines. The log is synthesised once and
// hard-linked into one copy per engine, so each engine checkpoints a
// table that has none and later opens the checkpoint it wrote itself (and,
// in a second row, the other engine's).
func checkpoints(ctx context.Context, cfg *config, rep *report) error {
	const suite = "checkpoints"
	spec := logSpec(cfg.scale)
	dir := filepath.Join(cfg.work, "checkpoint")
	src := filepath.Join(dir, "synthetic")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	start := time.Now()
	if err := workload.SynthesizeLog(ctx, src, spec); err != nil {
		return err
	}
	progress("checkpoints: synthesised %d commits with %d adds in %s", spec.Commits, spec.Files(), time.Since(start).Round(time.Millisecond))
	rep.note("checkpoints: a synthetic log of %d commits (version 0 with protocol and metaData), %d adds each, "+
		"so %d active files with JSON stats and one partition column; data files do not exist; local disk, warm page cache",
		spec.Commits, spec.AddsPerCommit, spec.Files())

	engines := []*Engine{cfg.lakelog}
	if cfg.deltars != nil {
		engines = append(engines, cfg.deltars)
	}
	table := func(e *Engine) string { return filepath.Join(dir, e.Name) }
	copyFor := func(e *Engine) func() error {
		return func() error { return workload.LinkTable(src, table(e)) }
	}
	for _, e := range engines {
		if err := copyFor(e)(); err != nil {
			return err
		}
	}
	both := func(name, unit string, mk func(e *Engine) (Spec, func() error), notes func(l, d *Outcome) (string, string)) error {
		var outs [2]*Outcome
		for i, e := range engines {
			s, prep := mk(e)
			o, err := rep.measure(ctx, e, s, prep)
			if err != nil {
				return err
			}
			outs[i] = o
		}
		row := &Row{Suite: suite, Name: name, Unit: unit, Lakelog: outs[0], DeltaRS: outs[1]}
		if notes != nil {
			row.LakelogNote, row.DeltaRSNote = notes(outs[0], outs[1])
		}
		check := func(o *Outcome) string {
			if o != nil && o.Count != int64(spec.Files()) {
				return fmt.Sprintf("**WRONG: %d files, want %d**", o.Count, spec.Files())
			}
			return ""
		}
		row.LakelogNote = join(check(outs[0]), row.LakelogNote)
		row.DeltaRSNote = join(check(outs[1]), row.DeltaRSNote)
		rep.add(row)
		return nil
	}
	setup := func(o *Outcome) string {
		if o == nil {
			return ""
		}
		return fmt.Sprintf("open before it took %s (peak includes it)", duration(o.SetupSeconds))
	}

	err := both(fmt.Sprintf("open latest snapshot, replaying %d JSON commits (no checkpoint)", spec.Commits), "files",
		func(e *Engine) (Spec, func() error) { return Spec{Op: "open", Table: table(e)}, nil }, nil)
	if err != nil {
		return err
	}
	err = both(fmt.Sprintf("write checkpoint of %d files (after an open, not timed)", spec.Files()), "files",
		func(e *Engine) (Spec, func() error) { return Spec{Op: "checkpoint", Table: table(e)}, copyFor(e) },
		func(l, d *Outcome) (string, string) {
			return join(setup(l), infoOf(l)), setup(d)
		})
	if err != nil {
		return err
	}
	for _, e := range engines {
		if fi, err := checkpointSize(table(e), spec.Commits-1); err == nil {
			rep.note("checkpoints: the checkpoint %s wrote is %.1f MB", e.Name, float64(fi)/(1<<20))
		}
	}
	err = both("open latest snapshot from its own checkpoint", "files",
		func(e *Engine) (Spec, func() error) { return Spec{Op: "open", Table: table(e)}, nil },
		func(l, d *Outcome) (string, string) {
			return "deltalog.Open: the files' stats are deferred to Snapshot.LoadStats (next row)", "DeltaTable(): stats loaded with the files"
		})
	if err != nil {
		return err
	}
	err = both("open latest snapshot from its own checkpoint, with the files' stats", "files",
		func(e *Engine) (Spec, func() error) { return Spec{Op: "open", Table: table(e), Method: "stats"}, nil },
		func(l, d *Outcome) (string, string) {
			return "deltalog.Open(WithStats()): the stats read with the checkpoint, one pass", "DeltaTable(), as above"
		})
	if err != nil {
		return err
	}
	if len(engines) == 2 {
		other := map[string]string{"lakelog": table(engines[1]), "delta-rs": table(engines[0])}
		err = both("open latest snapshot from the other engine's checkpoint", "files",
			func(e *Engine) (Spec, func() error) { return Spec{Op: "open", Table: other[e.Name]}, nil },
			func(l, d *Outcome) (string, string) {
				return "reads delta-rs's checkpoint", "reads lakelog's checkpoint"
			})
		if err != nil {
			return err
		}
	}
	err = both("list active files (after an open from the checkpoint, not timed)", "files",
		func(e *Engine) (Spec, func() error) { return Spec{Op: "list", Table: table(e), Method: "uris"}, nil },
		func(l, d *Outcome) (string, string) {
			return join("iterate Snapshot.Files, read each path", setup(l)), join("DeltaTable.file_uris(), read each", setup(d))
		})
	if err != nil || cfg.deltars == nil {
		return err
	}
	d, err := rep.measure(ctx, cfg.deltars, Spec{Op: "list", Table: table(cfg.deltars), Method: "add_actions"}, nil)
	if err != nil {
		return err
	}
	last := rep.rows[len(rep.rows)-1]
	rep.add(&Row{Suite: suite, Name: "list active files, delta-rs as Arrow", Unit: "files", Lakelog: last.Lakelog, DeltaRS: d,
		LakelogNote: "same run as the row above", DeltaRSNote: join("get_add_actions(), read the path column", setup(d))})
	return nil
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func infoOf(o *Outcome) string {
	if o == nil {
		return ""
	}
	return o.Info
}

// checkpointSize is the size of the classic checkpoint of version v.
func checkpointSize(table string, v int) (int64, error) {
	fi, err := os.Stat(filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", v)))
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
