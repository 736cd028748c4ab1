package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// The writers suites: concurrent writers as users run them. W processes
// per engine share one fresh table; each writes one data file of
// writerRows rows and commits it as a blind append, again and again, for
// the round's duration. Beside them, the hammer: the same W writers
// committing back to back with no data (the commits op).
const (
	writerCount = 8
	writerRows  = 100_000
)

// writersSeconds is how long each round of the writers suites runs.
func writersSeconds(scale string) float64 {
	if scale == "full" {
		return 60
	}
	return 5
}

// writersLocal runs the writers suite on local disk.
func writersLocal(ctx context.Context, cfg *config, rep *report) error {
	dir := filepath.Join(cfg.work, "writers")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return writersSuite(ctx, cfg, rep, "concurrent writers, local disk", func(name string) string { return filepath.Join(dir, name) }, run)
}

// writersS3 runs the writers suite on the S3 server of AWS_ENDPOINT_URL.
func writersS3(ctx context.Context, cfg *config, rep *report) error {
	if os.Getenv("AWS_ENDPOINT_URL") == "" && os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
		if os.Getenv("CI") == "true" {
			return errors.New("runner: writers-s3: AWS_ENDPOINT_URL is not set (under CI the services must run)")
		}
		rep.note("writers on S3: skipped, AWS_ENDPOINT_URL is not set (source .ci/services.sh && services_start)")
		return nil
	}
	if err := ensureBucket(ctx); err != nil {
		return err
	}
	id := randomID()
	uri := func(name string) string { return fmt.Sprintf("s3://%s/writers-%s/%s", bucket, id, name) }
	return writersSuite(ctx, cfg, rep, "concurrent writers, S3 (MinIO)", uri, runS3)
}

func writersSuite(ctx context.Context, cfg *config, rep *report, suite string, table func(string) string,
	runOne func(context.Context, *Engine, Spec) (Outcome, error)) error {
	secs := writersSeconds(cfg.scale)
	s3 := strings.HasPrefix(table("x"), "s3://")
	spec := func(s Spec) Spec {
		if s3 {
			return s3Spec(s)
		}
		return s
	}
	data := &Row{Suite: suite, Name: fmt.Sprintf("%d writers, each writes a %d-row file and commits it, %.0f s", writerCount, writerRows, secs), Unit: "commits", PerOp: true}
	hammer := &Row{Suite: suite, Name: fmt.Sprintf("hammer: %d writers commit back to back, no data, %.0f s", writerCount, secs), Unit: "commits", PerOp: true}
	for _, e := range []*Engine{cfg.lakelog, cfg.deltars} {
		if e == nil {
			continue
		}
		// At the small scale (CI) the hammer is lakelog's alone: eight
		// Python processes cost more to start than the round lasts, and
		// commit-s3 has delta-rs's.
		hammerToo := cfg.scale == "full" || e == cfg.lakelog
		// Data writers: an unpartitioned table of the data-path columns,
		// created by lakelog for both engines (as the dml suite's).
		t := table(e.Name + "-data-" + randomID())
		if err := createWritersTable(ctx, t); err != nil {
			return err
		}
		specs := make([]Spec, writerCount)
		for i := range specs {
			specs[i] = spec(Spec{Op: "write-commits", Table: t, Seconds: secs, Rows: writerRows, Lo: int64(i) * writerRows})
		}
		outs, err := runGroup(ctx, e, specs)
		if err != nil {
			return err
		}
		agg, note := fairness(outs, e == cfg.lakelog)
		if e == cfg.lakelog {
			data.Lakelog, data.LakelogNote = agg, note
		} else {
			data.DeltaRS, data.DeltaRSNote = agg, note
		}
		if !hammerToo {
			continue
		}
		// The hammer: the commit loop of the commit suites, W at once.
		t = table(e.Name + "-hammer-" + randomID())
		if _, err := runOne(ctx, e, spec(Spec{Op: "create", Table: t})); err != nil {
			return err
		}
		for i := range specs {
			specs[i] = spec(Spec{Op: "commits", Table: t, Seconds: secs, Partition: fmt.Sprintf("p%d", i)})
		}
		if outs, err = runGroup(ctx, e, specs); err != nil {
			return err
		}
		agg, note = fairness(outs, e == cfg.lakelog)
		if e == cfg.lakelog {
			hammer.Lakelog, hammer.LakelogNote = agg, note
		} else {
			hammer.DeltaRS, hammer.DeltaRSNote = agg, note
		}
	}
	rep.add(data)
	rep.add(hammer)
	if s3 {
		rep.note("writers on S3: delta-rs gets storage_options %v", s3Storage)
	} else {
		rep.note("concurrent writers: %d processes per engine on one fresh table, all released together after setup. "+
			"Data rows: each writer builds one batch of %d rows (ids of its own range, unpartitioned table, about 2 MB of Parquet) before the start, "+
			"then writes it as a new data file and commits it as a blind append, again and again; both engines with their defaults "+
			"(lakelog: writer.WriteFiles + writer.Commit, checkpoints every 10 commits in the background; delta-rs: write_deltalake(DeltaTable, mode=append), "+
			"its default 15 commit retries and post-commit hooks). Time = mean write + commit per landed file. "+
			"**commit wait** (lakelog) = from the start of writer.Commit (the file is written) to its success, giving up and committing again included; "+
			"delta-rs cannot time its commit apart from its write, so its wait is the whole write_deltalake call. "+
			"Fairness: the slowest writer's p99 wait and the longest single wait, each over the median wait of all commits (goal: at most 10×). "+
			"Hammer rows: the commit suites' loop (one-file appends, no data, each writer its own partition), %d at once; "+
			"its wait is the whole commit", writerCount, writerRows, writerCount)
	}
	return nil
}

// createWritersTable creates the writers' empty unpartitioned table at uri.
func createWritersTable(ctx context.Context, uri string) error {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return err
	}
	tx, err := deltalog.Create(st, "", workload.DMLMetadata(false))
	if err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

// fairness folds W writers' outcomes: the summed rate, the mean time per
// landed file as the row's time, and a note with retries, give-ups and
// the waits: the median of all commits, each writer's p50/p99, the
// slowest writer's p99 and the longest wait over that median.
func fairness(outs []Outcome, retries bool) (*Outcome, string) {
	agg := &Outcome{}
	var all, ops []float64 // seconds
	var attempts int64
	var per []string
	minC, maxC := int64(-1), int64(0)
	slowest := 0.0
	for i, o := range outs {
		agg.Count += o.Count
		agg.Failed += o.Failed
		attempts += o.Attempts
		agg.Seconds = max(agg.Seconds, o.Seconds)
		agg.PeakMB = max(agg.PeakMB, o.PeakMB)
		if o.Seconds > 0 {
			agg.Rate += float64(o.Count) / o.Seconds
		}
		if minC < 0 || o.Count < minC {
			minC = o.Count
		}
		maxC = max(maxC, o.Count)
		w := msToSeconds(o.Waits)
		all = append(all, w...)
		if len(o.Ops) > 0 {
			ops = append(ops, msToSeconds(o.Ops)...)
		} else {
			ops = append(ops, w...)
		}
		if l := summarize(w); l != nil {
			slowest = max(slowest, l.P99)
			per = append(per, fmt.Sprintf("w%d %d: %s/%s", i, o.Count, duration(l.P50/1000), duration(l.P99/1000)))
		} else {
			per = append(per, fmt.Sprintf("w%d 0", i))
		}
	}
	agg.Latency = summarize(ops)
	if agg.Rate == 0 && agg.Seconds > 0 {
		agg.Rate = float64(agg.Count) / agg.Seconds
	}
	note := fmt.Sprintf("%d commits, %s commits/s", agg.Count, human(agg.Rate))
	if retries && agg.Count > 0 {
		note += fmt.Sprintf(", %.2f retries per commit", float64(attempts-agg.Count)/float64(agg.Count))
	}
	note += fmt.Sprintf(", %d gave up", agg.Failed)
	if pooled := summarize(all); pooled != nil && pooled.P50 > 0 {
		note += fmt.Sprintf("; wait median %s, slowest writer's p99 %s (%.1f× the median), longest %s (%.1f×)",
			duration(pooled.P50/1000), duration(slowest/1000), slowest/pooled.P50, duration(pooled.Max/1000), pooled.Max/pooled.P50)
		if slowest/pooled.P50 > 10 || agg.Failed > 0 {
			note += " **goal missed**"
		}
	}
	note += fmt.Sprintf("; commits per writer %d to %d; per writer (commits: p50/p99 wait) %s", minC, maxC, strings.Join(per, ", "))
	return agg, note
}

func msToSeconds(ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = m / 1000
	}
	return out
}

func secondsToMS(s []float64) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = 1000 * x
	}
	return out
}

// lakelogWriteCommits: one writer of the writers suite. Setup: open the
// table and build the batch of rows [Lo, Lo+Rows). Then, until Seconds
// have passed: write the batch as a data file (writer.WriteFiles) and
// commit it (writer.Commit, a blind append) on the snapshot the previous
// commit returned. A commit that gives up (ErrTooManyAttempts) is counted
// in Failed and committed again on a fresh snapshot; its wait goes on.
// Waits are from the start of the first writer.Commit to its success;
// Ops from the start of the write.
func lakelogWriteCommits(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return Outcome{}, err
	}
	rec := workload.Batch(memory.DefaultAllocator, spec.Lo, spec.Lo+spec.Rows)
	defer rec.Release()
	if err := barrier(spec); err != nil {
		return Outcome{}, err
	}
	var waits, ops []float64
	var attempts, failed int64
	start := time.Now()
	deadline := start.Add(time.Duration(spec.Seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		t0 := time.Now()
		wr, err := writer.WriteFiles(ctx, snap, workload.Replay([]arrow.RecordBatch{rec}))
		if err != nil {
			return Outcome{}, err
		}
		t1 := time.Now()
		for {
			tx := snap.NewTransaction()
			err := tx.Stage(wr.Changes("WRITE", map[string]any{"mode": "Append"}, nil))
			var res *deltalog.CommitResult
			if err == nil {
				res, err = tx.Commit(ctx)
			}
			if errors.Is(err, deltalog.ErrTooManyAttempts) {
				failed++
				if snap, err = deltalog.Open(ctx, st, ""); err != nil {
					return Outcome{}, err
				}
				continue
			}
			if err != nil {
				return Outcome{}, err
			}
			if snap, err = res.Snapshot(); err != nil {
				return Outcome{}, err
			}
			attempts += int64(res.Attempts)
			break
		}
		now := time.Now()
		waits = append(waits, now.Sub(t1).Seconds())
		ops = append(ops, now.Sub(t0).Seconds())
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, Count: int64(len(waits)), Attempts: attempts, Failed: failed, Latency: summarize(ops),
		Waits: secondsToMS(waits), Ops: secondsToMS(ops), Version: snap.Version()}, nil
}
