package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/convert"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// convertSizes: rows and Parquet files of the folder the convert suite
// converts, per scale (the 10,000 files at full scale).
func convertSizes(scale string) (rows, files int64) {
	if scale == "full" {
		return 2_000_000, 10_000
	}
	return 200_000, 1_000
}

// convertSuite: CONVERT TO DELTA of a folder of many small Parquet files
// in 10 Hive partition folders (p=p0/ ... p=p9/), lakelog's convert.ToDelta
// against delta-rs's convert_to_deltalake, each on its own copy (hard
// links) of the same folder. Both read every footer (schema and stats)
// and write one commit.
func convertSuite(ctx context.Context, cfg *config, rep *report) error {
	const suite = "convert"
	rows, nfiles := convertSizes(cfg.scale)
	dir := filepath.Join(cfg.work, "convert")
	src := filepath.Join(dir, "parquet")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	// The folder: a table written by lakelog's writer with its log
	// removed, which leaves plain Parquet files in p=.../ folders.
	start := time.Now()
	st, err := objstore.NewLocal(src)
	if err != nil {
		return err
	}
	if _, err := writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, rows), writer.WithTargetFileSize(max(1, rows*20/nfiles))); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(src, "_delta_log")); err != nil {
		return err
	}
	n, size, err := folderFiles(src)
	if err != nil {
		return err
	}
	progress("convert: wrote %d rows in %d Parquet files (%.1f MB) in %s", rows, n, float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))
	rep.note("convert: %d rows in %d Parquet files of about %d KB in 10 partition folders (%.1f MB in all); local disk", rows, n, size/max(1, n)>>10, float64(size)/(1<<20))

	engines := []*Engine{cfg.lakelog}
	if cfg.deltars != nil {
		engines = append(engines, cfg.deltars)
	}
	var outs [2]*Outcome
	for i, e := range engines {
		table := filepath.Join(dir, "table-"+e.Name)
		o, err := rep.measure(ctx, e, Spec{Op: "convert", Table: table}, func() error { return workload.LinkTable(src, table) })
		if err != nil {
			return fmt.Errorf("convert: %s: %w", e.Name, err)
		}
		if o.Files != n {
			return fmt.Errorf("convert: %s made a table of %d files of the folder's %d", e.Name, o.Files, n)
		}
		outs[i] = o
	}
	note := func(o *Outcome) string {
		if o == nil {
			return ""
		}
		return fmt.Sprintf("%d files, version %d", o.Files, o.Version)
	}
	rep.add(&Row{Suite: suite, Name: fmt.Sprintf("CONVERT TO DELTA %d Parquet files (partitioned)", n), Unit: "files",
		Lakelog: outs[0], DeltaRS: outs[1], LakelogNote: note(outs[0]), DeltaRSNote: note(outs[1])})
	return nil
}

// folderFiles counts the files under dir and their bytes.
func folderFiles(dir string) (n, size int64, err error) {
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() && strings.HasSuffix(p, ".parquet") {
			n++
			size += info.Size()
		}
		return nil
	})
	return n, size, err
}

// lakelogConvert: convert.ToDelta of the folder, partitioned by p; the
// measured part is the whole call (listing, footers, commit).
func lakelogConvert(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	part := &actions.StructType{Fields: []*actions.StructField{{Name: "p", Type: actions.TypeString, Nullable: true}}}
	start := time.Now()
	res, err := convert.ToDelta(ctx, st, "", convert.PartitionBy(part))
	if err != nil {
		return Outcome{}, err
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, Count: int64(res.Files), Files: int64(res.Files), Version: res.Version}, nil
}
