package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore/s3"
)

// commitCount is the length of a single-writer commit loop per scale.
func commitCount(scale string) int {
	if scale == "full" {
		return 1000
	}
	return 100 // small is CI's scale
}

// concurrentSeconds is how long each concurrent-writer round runs.
func concurrentSeconds(scale string) float64 {
	if scale == "full" {
		return 20
	}
	return 5
}

// commitsLocal: single-writer commit latency on local disk, next to the
// durable create it is built on, and the Go benchmark of bench/.
func commitsLocal(ctx context.Context, cfg *config, rep *report) error {
	const suite = "commits, local disk"
	n := commitCount(cfg.scale)
	dir := filepath.Join(cfg.work, "commits")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	raw, err := rep.measure(ctx, cfg.lakelog, Spec{Op: "raw-create", Table: filepath.Join(dir, "raw"), N: n}, func() error {
		return os.RemoveAll(filepath.Join(dir, "raw"))
	})
	if err != nil {
		return err
	}
	rep.add(&Row{Suite: suite, Name: "floor: durable create-if-absent of a commit-sized file (Go, no engine)", Unit: "commits", PerOp: true,
		Lakelog: raw, LakelogNote: "temp file, fsync, link, remove, fsync folder; " + latencyNote(raw) + "; " + raw.Info})
	if err := singleWriter(ctx, cfg, rep, suite, func(name string) string { return filepath.Join(dir, name) }, n); err != nil {
		return err
	}
	return goBenchmarks(ctx, cfg, rep)
}

// singleWriter measures a loop of n one-file appends by each engine on a
// fresh table it created.
func singleWriter(ctx context.Context, cfg *config, rep *report, suite string, table func(string) string, n int) error {
	row := &Row{Suite: suite, Name: fmt.Sprintf("single writer: %d one-file append commits", n), Unit: "commits", PerOp: true}
	for _, e := range []*Engine{cfg.lakelog, cfg.deltars} {
		if e == nil {
			continue
		}
		var t string
		prep := func() error {
			t = table(e.Name + "-single-" + randomID())
			_, err := run(ctx, e, Spec{Op: "create", Table: t})
			return err
		}
		if err := prep(); err != nil {
			return err
		}
		var outs []Outcome
		for i := range cfg.count {
			if i > 0 {
				if err := prep(); err != nil {
					return err
				}
			}
			o, err := run(ctx, e, Spec{Op: "commits", Table: t, N: n, Partition: "p0"})
			if err != nil {
				return err
			}
			outs = append(outs, o)
		}
		o := medianOutcome(outs)
		if e == cfg.lakelog {
			row.Lakelog, row.LakelogNote = o, "commit + CommitResult.Snapshot; "+latencyNote(o)
		} else {
			row.DeltaRS, row.DeltaRSNote = o, "create_write_transaction + update_incremental; "+latencyNote(o)
		}
	}
	rep.add(row)
	return nil
}

func latencyNote(o *Outcome) string {
	if o == nil || o.Latency == nil {
		return ""
	}
	return fmt.Sprintf("p50 %s, p99 %s", duration(o.Latency.P50/1000), duration(o.Latency.P99/1000))
}

func randomID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// goBenchmarks runs bench/'s Go commit benchmark and keeps its output.
func goBenchmarks(ctx context.Context, cfg *config, rep *report) error {
	progress("commits: go test -bench BenchmarkCommitLocal ./bench/")
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkCommitLocal$", "-benchtime", fmt.Sprintf("%dx", commitCount(cfg.scale)), "./bench/")
	cmd.Dir = cfg.repo
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		rep.extra = append(rep.extra, "## go test -bench BenchmarkCommitLocal\n\nfailed: "+err.Error()+"\n\n```\n"+out.String()+"```\n")
		return fmt.Errorf("runner: go test -bench BenchmarkCommitLocal ./bench/: %w", err) // the suite did not complete
	}
	var keep []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "cpu:") {
			keep = append(keep, l)
		}
	}
	rep.extra = append(rep.extra, "## go test -bench BenchmarkCommitLocal ./bench/ (lakelog only, same run)\n\n```\n"+strings.Join(keep, "\n")+"\n```\n")
	return nil
}

// bucket is the MinIO bucket the S3 commit benchmarks use.
const bucket = "lakelog-bench"

// commitsS3: commits against the S3 server of AWS_ENDPOINT_URL (MinIO):
// the raw conditional PUT, a single writer, and 1 to 8 concurrent writers.
func commitsS3(ctx context.Context, cfg *config, rep *report) error {
	const suite = "commits, S3 (MinIO)"
	if os.Getenv("AWS_ENDPOINT_URL") == "" && os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
		if os.Getenv("CI") == "true" {
			return fmt.Errorf("runner: commit-s3: AWS_ENDPOINT_URL is not set (under CI the services must run)")
		}
		rep.note("commits on S3: skipped, AWS_ENDPOINT_URL is not set (source .ci/services.sh && services_start)")
		return nil
	}
	if err := ensureBucket(ctx); err != nil {
		return err
	}
	run := randomID()
	uri := func(name string) string { return fmt.Sprintf("s3://%s/%s/%s", bucket, run, name) }
	n := commitCount(cfg.scale)
	// Each raw-put run needs a fresh prefix, so it is measured here rather
	// than by rep.measure.
	var outs []Outcome
	for range cfg.count {
		o, err := runS3(ctx, cfg.lakelog, Spec{Op: "raw-put", Table: uri("raw-" + randomID()), N: n})
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	rawO := medianOutcome(outs)
	rep.add(&Row{Suite: suite, Name: "floor: PutObject If-None-Match: * of a commit-sized object (Go, no engine)", Unit: "puts", PerOp: true,
		Lakelog: rawO, LakelogNote: "objstore/s3 Put with IfAbsent; " + latencyNote(rawO) + "; " + rawO.Info})
	if err := singleWriterS3(ctx, cfg, rep, suite, uri, n); err != nil {
		return err
	}
	secs := concurrentSeconds(cfg.scale)
	writers := []int{1, 2, 4, 8}
	if cfg.scale == "small" { // CI's scale: each round starts W Python processes
		writers = []int{1, 8}
	}
	for _, w := range writers {
		row := &Row{Suite: suite, Name: fmt.Sprintf("%d concurrent writers, disjoint partitions, %.0f s", w, secs), Unit: "commits"}
		for _, e := range []*Engine{cfg.lakelog, cfg.deltars} {
			if e == nil {
				continue
			}
			t := uri(fmt.Sprintf("%s-concurrent%d-%s", e.Name, w, randomID()))
			if _, err := runS3(ctx, e, Spec{Op: "create", Table: t}); err != nil {
				return err
			}
			specs := make([]Spec, w)
			for i := range specs {
				specs[i] = s3Spec(Spec{Op: "commits", Table: t, Seconds: secs, Partition: fmt.Sprintf("p%d", i)})
			}
			outs, err := runGroup(ctx, e, specs)
			if err != nil {
				return err
			}
			agg, note := aggregate(outs)
			if e == cfg.lakelog {
				row.Lakelog, row.LakelogNote = agg, note
			} else {
				row.DeltaRS, row.DeltaRSNote = agg, note
			}
		}
		rep.add(row)
	}
	rep.note("commits on S3: the delta-rs children get storage_options %v (the endpoint and keys from the environment); "+
		"concurrent rows: each writer is its own process, all start together after setup, aggregate rate = sum of each writer's commits/s, peak = the largest writer's", s3Storage)
	return nil
}

// s3Storage are the storage options delta-rs needs for MinIO: conditional
// PUT (If-None-Match) for safe commits without a lock service, and http.
var s3Storage = map[string]string{"aws_conditional_put": "etag", "AWS_ALLOW_HTTP": "true"}

func s3Spec(s Spec) Spec {
	s.Storage = s3Storage
	return s
}

func runS3(ctx context.Context, e *Engine, s Spec) (Outcome, error) { return run(ctx, e, s3Spec(s)) }

func singleWriterS3(ctx context.Context, cfg *config, rep *report, suite string, uri func(string) string, n int) error {
	row := &Row{Suite: suite, Name: fmt.Sprintf("single writer: %d one-file append commits", n), Unit: "commits", PerOp: true}
	for _, e := range []*Engine{cfg.lakelog, cfg.deltars} {
		if e == nil {
			continue
		}
		var outs []Outcome
		for range cfg.count {
			t := uri(e.Name + "-single-" + randomID())
			if _, err := runS3(ctx, e, Spec{Op: "create", Table: t}); err != nil {
				return err
			}
			o, err := runS3(ctx, e, Spec{Op: "commits", Table: t, N: n, Partition: "p0"})
			if err != nil {
				return err
			}
			outs = append(outs, o)
		}
		o := medianOutcome(outs)
		if e == cfg.lakelog {
			row.Lakelog, row.LakelogNote = o, "commit + CommitResult.Snapshot; "+latencyNote(o)
		} else {
			row.DeltaRS, row.DeltaRSNote = o, "create_write_transaction + update_incremental; "+latencyNote(o)
		}
	}
	rep.add(row)
	return nil
}

// aggregate folds concurrent writers' outcomes into one: the summed rate
// of the writers, the longest writer's time (a writer stuck in a commit
// runs past the round's end), the largest peak, and a note with the
// retries and latencies.
func aggregate(outs []Outcome) (*Outcome, string) {
	var total int64
	var r, secs, peak, meanLat, p99 float64
	var attempts, failed int64
	for _, o := range outs {
		failed += o.Failed
		total += o.Count
		if o.Seconds > 0 {
			r += float64(o.Count) / o.Seconds
		}
		secs = max(secs, o.Seconds)
		peak = max(peak, o.PeakMB)
		attempts += o.Attempts
		if o.Latency != nil {
			meanLat += o.Latency.Mean * float64(o.Count)
			p99 = max(p99, o.Latency.P99)
		}
	}
	agg := &Outcome{Count: total, PeakMB: peak, Seconds: secs, Rate: r}
	note := fmt.Sprintf("%d commits", total)
	if total > 0 {
		note += fmt.Sprintf(", mean latency %s, worst writer p99 %s", duration(meanLat/float64(total)/1000), duration(p99/1000))
	}
	if attempts > 0 {
		note += fmt.Sprintf(", %d lost races before the commits that landed", attempts-total)
	}
	if failed > 0 {
		note += fmt.Sprintf(", **%d commits gave up**", failed)
		for _, o := range outs {
			if o.Info != "" {
				note += " (" + o.Info + ")"
				break
			}
		}
	}
	return agg, note
}

// ensureBucket creates the benchmark bucket unless it exists.
func ensureBucket(ctx context.Context) error {
	st, err := s3.New(ctx, bucket, "")
	if err != nil {
		return err
	}
	_, err = st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: new(bucket)})
	if err != nil && !strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") && !strings.Contains(err.Error(), "BucketAlreadyExists") {
		return fmt.Errorf("runner: create bucket %s: %w", bucket, err)
	}
	return nil
}
