package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/objstore"
)

func cdfSpec(scale string) workload.CDFSpec {
	if scale == "full" {
		// 1,000 versions, 10 million change rows.
		return workload.CDFSpec{Versions: 1000, RowsPerVersion: 7500}
	}
	return workload.CDFSpec{Versions: 100, RowsPerVersion: 2500}
}

// changeFeeds: the change data feed of every version of a table with the
// feed on (appends, UPDATEs with change data files, DELETEs of whole
// files), read by lakelog's cdf package and by delta-rs's load_cdf.
func changeFeeds(ctx context.Context, cfg *config, rep *report) error {
	const suite = "change data feed"
	spec := cdfSpec(cfg.scale)
	dir := filepath.Join(cfg.work, "cdf")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	start := time.Now()
	if err := workload.SynthesizeCDF(ctx, dir, spec); err != nil {
		return err
	}
	want := spec.ChangeRows()
	progress("cdf: synthesised %d versions, %d change rows in %s", spec.Versions+1, want, time.Since(start).Round(time.Millisecond))
	rep.note("cdf: a table of %d versions with the feed on: appends of %d rows, an UPDATE of each appended file (a change data file of pre- and post-images), "+
		"a DELETE of the file (a remove, no change data file); %d change rows in all; local disk, warm page cache",
		spec.Versions+1, spec.RowsPerVersion, want)
	s := Spec{Op: "changes", Table: dir}
	l, err := rep.measure(ctx, cfg.lakelog, s, nil)
	if err != nil {
		return err
	}
	d, err := rep.measure(ctx, cfg.deltars, s, nil)
	if err != nil {
		return err
	}
	check := func(o *Outcome) string {
		if o != nil && o.Count != want {
			return fmt.Sprintf("**WRONG: %d rows, want %d**", o.Count, want)
		}
		return ""
	}
	rep.add(&Row{Suite: suite, Name: fmt.Sprintf("changes of versions 0 to %d", spec.Versions), Unit: "rows",
		Lakelog: l, DeltaRS: d,
		LakelogNote: join(check(l), "cdf.Open + Feed.Records, every batch folded into a checksum"),
		DeltaRSNote: join(check(d), "DeltaTable.load_cdf(starting_version=0), every batch folded into a checksum")})
	return nil
}

// lakelogChanges: open the feed of every version and read every batch
// into a checksum.
func lakelogChanges(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	f, err := cdf.Open(ctx, st, "", cdf.Versions(0, -1))
	if err != nil {
		return Outcome{}, err
	}
	var c workload.Checksum
	for rec, err := range f.Records(ctx) {
		if err != nil {
			return Outcome{}, err
		}
		c.Add(rec)
	}
	_, to := f.Versions()
	return Outcome{Seconds: time.Since(start).Seconds(), Count: c.Rows, Checksum: (*Checksum)(&c), Version: to}, nil
}
