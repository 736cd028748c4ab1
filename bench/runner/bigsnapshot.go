package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// bigSnapshotFiles is the size of the synthetic table of the snapshot
// suite, per scale.
func bigSnapshotFiles(scale string) int {
	if scale == "full" {
		return 10_000_000
	}
	return 100_000
}

// Limits of the peer's run on the big table: delta-rs holds every file's
// add action in memory, and on a shared machine a run that needs more
// than this is stopped and reported rather than let grow.
const (
	peerMemoryLimit = 16 << 30
	peerTimeLimit   = 20 * time.Minute
)

// bigSnapshot: a table of 10M files (100k at the small scale) whose log
// is one checkpoint, synthesised by the runner (workload.SynthesizeCheckpoint,
// reused from an earlier run in the same work folder); each engine opens
// it with the files' stats and plans a 1% range of id (files whose
// min/max stats cannot hold it are skipped), in one process, timed from
// before the open. delta-rs runs under a memory and a time limit; where
// it fails the row says how.
func bigSnapshot(ctx context.Context, cfg *config, rep *report) error {
	const suite = "snapshot of a 10M-file table"
	n := bigSnapshotFiles(cfg.scale)
	if cfg.snapshotFiles > 0 {
		n = cfg.snapshotFiles
	}
	table := filepath.Join(cfg.work, "bigsnapshot", fmt.Sprintf("files-%d", n))
	if _, err := newestCheckpoint(table); err != nil {
		start := time.Now()
		if err := workload.SynthesizeCheckpoint(ctx, table, n); err != nil {
			return err
		}
		progress("snapshot: synthesised a checkpoint of %d files in %s", n, time.Since(start).Round(time.Millisecond))
	}
	if fi, err := checkpointSize(table, 0); err == nil {
		rep.note("snapshot: a synthetic table of %d files (ids [1000f, 1000f+999] in file f, JSON stats of id, v and s, one partition column), "+
			"its log one checkpoint of %.0f MB (version 0, written by lakelog, cleaned-up log); local disk, warm page cache; "+
			"delta-rs under a %d GB address-space limit and a %s time limit", n, float64(fi)/(1<<20), peerMemoryLimit>>30, peerTimeLimit)
	}
	// 1% of the files, in the middle of the table.
	first, count := int64(n/2), int64(n/100)
	spec := Spec{Op: "plan", Table: table, Lo: 1000 * first, Hi: 1000*(first+count) - 1}
	check := func(o *Outcome) string {
		if o == nil {
			return ""
		}
		if o.Count != int64(n) || o.FilesRead >= 0 && o.FilesRead != count {
			return fmt.Sprintf("**WRONG: planned %d of %d files, want %d of %d**", o.FilesRead, o.Count, count, n)
		}
		if o.FilesRead < 0 { // the engine cannot count what it planned
			return o.Info
		}
		return fmt.Sprintf("%s; planned %d files", o.Info, o.FilesRead)
	}
	row := &Row{Suite: suite, Name: fmt.Sprintf("open with stats and plan a 1%% range of id, %d files", n), Unit: "files"}
	o, err := rep.measure(ctx, cfg.lakelog, spec, nil)
	if err != nil {
		return err
	}
	row.Lakelog, row.LakelogNote = o, join(check(o), "deltalog.Open(WithStats()), then reader.NewScan(WithFilter(id BETWEEN ...)).Files")
	if cfg.deltars != nil {
		peer := limitedPeer(cfg.deltars, peerMemoryLimit)
		pctx, cancel := context.WithTimeout(ctx, peerTimeLimit)
		o, err := rep.measure(pctx, peer, spec, nil)
		timedOut := pctx.Err() != nil
		cancel()
		switch {
		case err != nil && timedOut:
			row.DeltaRSNote = fmt.Sprintf("did not finish in %s (stopped)", peerTimeLimit)
		case err != nil:
			row.DeltaRSNote = "failed: " + lastLine(err.Error())
		default:
			row.DeltaRS, row.DeltaRSNote = o, join(check(o), "DeltaTable(), then QueryBuilder's physical plan of the query (EXPLAIN: DataFusion prunes files by their stats; it lists them in part, so the count is not checked)")
		}
	}
	rep.add(row)
	return nil
}

// limitedPeer is e run under an address-space limit (ulimit -v).
func limitedPeer(e *Engine, bytes int64) *Engine {
	return &Engine{Name: e.Name, Env: e.Env, Command: func(spec []byte) []string {
		return append([]string{"sh", "-c", `ulimit -v "$0" && exec "$@"`, fmt.Sprint(bytes >> 10)}, e.Command(spec)...)
	}}
}

// lastLine is the last non-empty line of s (a child's error ends with
// its stderr).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// lakelogPlan: open the latest snapshot with the files' stats and plan a
// scan of id BETWEEN lo AND hi (the measured part is both): Count is the
// table's files, FilesRead those the plan keeps.
func lakelogPlan(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	filter, err := expr.Parse(fmt.Sprintf("id BETWEEN %d AND %d", spec.Lo, spec.Hi))
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	snap, err := deltalog.Open(ctx, st, "", deltalog.WithStats())
	if err != nil {
		return Outcome{}, err
	}
	opened := time.Since(start)
	sc, err := reader.NewScan(snap, reader.WithFilter(filter))
	if err != nil {
		return Outcome{}, err
	}
	var planned int64
	for _, err := range sc.Files(ctx) {
		if err != nil {
			return Outcome{}, err
		}
		planned++
	}
	secs := time.Since(start).Seconds()
	if planned == 0 && snap.NumFiles() > 0 {
		return Outcome{}, errors.New("the plan kept no file")
	}
	return Outcome{Seconds: secs, Count: int64(snap.NumFiles()), Files: int64(snap.NumFiles()), FilesRead: planned, Version: snap.Version(),
		Info: fmt.Sprintf("open %s, plan %s", duration(opened.Seconds()), duration(secs-opened.Seconds()))}, nil
}
