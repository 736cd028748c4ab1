package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// maintenanceSizes: rows and small files of the OPTIMIZE table, and the
// number of unreferenced files VACUUM deletes, per scale.
func maintenanceSizes(scale string) (rows, files, orphans int64) {
	if scale == "full" {
		return 50_000_000, 10_000, 100_000 // about 1 GB in 10,000 files
	}
	return 1_000_000, 1_000, 10_000
}

// smallFilesTable is the table of many small files that OPTIMIZE,
// Z-order, RESTORE and VACUUM start from: the scale's rows of the
// data-path table in one commit, files rolled at a size that makes about
// the scale's number of them (10 partitions), in the work folder's
// maintenance/small-files. With fresh it is written anew; without, a
// table left there by an earlier suite of the same run is reused.
func smallFilesTable(ctx context.Context, cfg *config, fresh bool) (string, *deltalog.Snapshot, error) {
	rows, nfiles, _ := maintenanceSizes(cfg.scale)
	dir := filepath.Join(cfg.work, "maintenance")
	small := filepath.Join(dir, "small-files")
	if !fresh {
		if st, err := objstore.NewLocal(small); err == nil {
			if snap, err := deltalog.Open(ctx, st, "", deltalog.WithStats()); err == nil && snapRows(snap) == rows {
				return small, snap, nil
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	start := time.Now()
	smallTarget := max(1, rows*20/nfiles)
	st, err := objstore.NewLocal(small)
	if err != nil {
		return "", nil, err
	}
	res, err := writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, rows), writer.WithTargetFileSize(smallTarget))
	if err != nil {
		return "", nil, err
	}
	snap, err := res.Snapshot()
	if err != nil {
		return "", nil, err
	}
	progress("maintenance: wrote %d rows in %d files (%.1f MB) in %s", rows, snap.NumFiles(), float64(snap.SizeInBytes())/(1<<20), time.Since(start).Round(time.Millisecond))
	return small, snap, nil
}

// snapRows is the rows of snap by its files' stats.
func snapRows(snap *deltalog.Snapshot) int64 {
	var n int64
	for _, f := range snap.ActiveFiles().All() {
		r, _ := f.NumRecords()
		n += r
	}
	return n
}

// maintenanceSuite: OPTIMIZE (bin-packing and Z-order) of a table of many
// small files, VACUUM of many unreferenced files, and RESTORE across an
// overwrite, with both engines on copies (hard links) of the same tables.
func maintenanceSuite(ctx context.Context, cfg *config, rep *report) error {
	const suite = "maintenance"
	_, _, orphans := maintenanceSizes(cfg.scale)
	dir := filepath.Join(cfg.work, "maintenance")
	small, snap, err := smallFilesTable(ctx, cfg, true)
	if err != nil {
		return err
	}
	rep.note("maintenance: %d rows of the data-path table in %d files of about %d KB (%.1f MB in all), one partition column of 10 values; local disk",
		snapRows(snap), snap.NumFiles(), snap.SizeInBytes()/int64(snap.NumFiles())>>10, float64(snap.SizeInBytes())/(1<<20))

	engines := []*Engine{cfg.lakelog}
	if cfg.deltars != nil {
		engines = append(engines, cfg.deltars)
	}
	table := func(what string, e *Engine) string { return filepath.Join(dir, what+"-"+e.Name) }
	both := func(name, unit string, what string, mk func(e *Engine) Spec, prep func(e *Engine) error, note func(o *Outcome) string) error {
		var outs [2]*Outcome
		for i, e := range engines {
			o, err := rep.measure(ctx, e, mk(e), func() error { return prep(e) })
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, e.Name, err)
			}
			outs[i] = o
		}
		rep.add(&Row{Suite: suite, Name: name, Unit: unit, Lakelog: outs[0], DeltaRS: outs[1], LakelogNote: note(outs[0]), DeltaRSNote: note(outs[1])})
		return nil
	}
	filesAfter := func(o *Outcome) string {
		if o == nil {
			return ""
		}
		return fmt.Sprintf("%d files after, version %d", o.Files, o.Version)
	}
	link := func(what, src string) func(e *Engine) error {
		return func(e *Engine) error { return workload.LinkTable(src, table(what, e)) }
	}
	target := int64(64 << 20)
	if cfg.scale == "full" {
		target = 256 << 20
	}
	err = both(fmt.Sprintf("OPTIMIZE (bin-packing) %d small files, target %d MB", snap.NumFiles(), target>>20), "files", "optimize",
		func(e *Engine) Spec {
			return Spec{Op: "optimize", Table: table("optimize", e), TargetFileSize: target}
		}, link("optimize", small), filesAfter)
	if err != nil {
		return err
	}
	err = both(fmt.Sprintf("Z-order by (id, v) %d small files, target %d MB", snap.NumFiles(), target>>20), "files", "zorder",
		func(e *Engine) Spec {
			return Spec{Op: "optimize", Method: "zorder", Table: table("zorder", e), TargetFileSize: target}
		}, link("zorder", small), filesAfter)
	if err != nil {
		return err
	}

	// RESTORE: the small-files table overwritten by a few rows, restored
	// to version 0 (every file comes back).
	restoreSrc := filepath.Join(dir, "restore-src")
	if err := workload.LinkTable(small, restoreSrc); err != nil {
		return err
	}
	rst, err := objstore.NewLocal(restoreSrc)
	if err != nil {
		return err
	}
	rsnap, err := deltalog.Open(ctx, rst, "")
	if err != nil {
		return err
	}
	if _, err := writer.Overwrite(ctx, rsnap, workload.Batches(nil, 1000)); err != nil {
		return err
	}
	err = both(fmt.Sprintf("RESTORE to version 0 across an overwrite (%d files back)", snap.NumFiles()), "files", "restore",
		func(e *Engine) Spec { return Spec{Op: "restore", Table: table("restore", e)} },
		link("restore", restoreSrc), filesAfter)
	if err != nil {
		return err
	}

	// VACUUM: the small-files table plus orphans unreferenced files an
	// hour old (a crashed writer's), retention 0.
	vacSrc := filepath.Join(dir, "vacuum-src")
	if err := workload.LinkTable(small, vacSrc); err != nil {
		return err
	}
	old := time.Now().Add(-time.Hour)
	for i := range orphans {
		p := filepath.Join(vacSrc, workload.P(i), fmt.Sprintf("part-orphan-%06d.parquet", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("orphan"), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, old, old); err != nil {
			return err
		}
	}
	rep.note("maintenance: VACUUM deletes %d unreferenced files of 6 bytes, an hour old, beside the table's %d live files; retention 0 (forced); delta-rs in its full mode (lite mode only deletes files of removes)", orphans, snap.NumFiles())
	return both(fmt.Sprintf("VACUUM %d unreferenced files", orphans), "files", "vacuum",
		func(e *Engine) Spec { return Spec{Op: "vacuum", Table: table("vacuum", e)} },
		link("vacuum", vacSrc), func(o *Outcome) string {
			if o == nil {
				return ""
			}
			if o.Count != orphans {
				return fmt.Sprintf("**WRONG: deleted %d files, want %d**", o.Count, orphans)
			}
			return fmt.Sprintf("deleted %d files", o.Count)
		})
}

// lakelogMaintenance runs one maintenance operation (the child side).
func lakelogMaintenance(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	var opts []deltalog.Option
	if spec.Op == "restore" {
		// RESTORE's removes carry the stats: read them with the
		// checkpoint, in one pass (as the CLI does).
		opts = append(opts, deltalog.WithStats())
	}
	snap, err := deltalog.Open(ctx, st, "", opts...)
	if err != nil {
		return Outcome{}, err
	}
	var count int64
	switch spec.Op {
	case "optimize":
		opts := []maintenance.OptimizeOption{maintenance.TargetSize(spec.TargetFileSize)}
		if spec.Method == "zorder" {
			opts = append(opts, maintenance.ZOrderBy("id", "v"))
		}
		res, err := maintenance.Optimize(ctx, snap, opts...)
		if err != nil {
			return Outcome{}, err
		}
		count = res.Metrics.NumRemovedFiles
	case "restore":
		res, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(0))
		if err != nil {
			return Outcome{}, err
		}
		count = res.Metrics.NumRestoredFiles
	case "vacuum":
		res, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(0), maintenance.Force())
		if err != nil {
			return Outcome{}, err
		}
		count = int64(len(res.Files))
	default:
		return Outcome{}, fmt.Errorf("unknown maintenance op %q", spec.Op)
	}
	secs := time.Since(start).Seconds()
	after, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Seconds: secs, Count: count, Files: int64(after.NumFiles()), Version: after.Version()}, nil
}
