package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// followRates are the commit rates of the follow suites, with how many
// commits each runs per scale.
func followRates(scale string) []struct{ perSecond, commits int } {
	if scale == "full" {
		return []struct{ perSecond, commits int }{{1, 60}, {10, 300}, {100, 2000}}
	}
	return []struct{ perSecond, commits int }{{1, 8}, {10, 40}, {100, 200}}
}

// followLocal: commit-to-delivery latency of cdf.Follow on local disk.
func followLocal(ctx context.Context, cfg *config, rep *report) error {
	const withSpark = true
	dir := filepath.Join(cfg.work, "follow")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return followSuite(ctx, cfg, rep, "change feed follow, local disk", func(name string) string { return filepath.Join(dir, name) }, withSpark)
}

// followS3: the same on MinIO.
func followS3(ctx context.Context, cfg *config, rep *report) error {
	if os.Getenv("AWS_ENDPOINT_URL") == "" && os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
		return missingServer(rep, "follow-s3", "AWS_ENDPOINT_URL")
	}
	if err := ensureBucket(ctx); err != nil {
		return err
	}
	run := randomID()
	// Spark's stream is measured on local disk only (its S3 connector is
	// not set up for MinIO in bench/peers).
	return followSuite(ctx, cfg, rep, "change feed follow, S3 (MinIO)", func(name string) string { return fmt.Sprintf("s3://%s/%s/%s", bucket, run, name) }, false)
}

func followSuite(ctx context.Context, cfg *config, rep *report, suite string, uri func(string) string, withSpark bool) error {
	rep.note("%s: one writer appends 10 rows per commit at a fixed rate to a table with the change data feed on; a follower (cdf.Follow from latest, "+
		"poll interval 10 ms doubling to 50 ms when idle) reads each batch's rows; a version's latency runs from its commit's return to the end of "+
		"reading the batch that holds it (time: the mean latency; rate: its inverse; speed: the ratio of the mean latencies). Both in one process, so the clocks agree; the machine was shared.", suite)
	for _, r := range followRates(cfg.scale) {
		lat, achieved, err := followLatency(ctx, uri(fmt.Sprintf("rate-%d", r.perSecond)), r.perSecond, r.commits, nil)
		if err != nil {
			return err
		}
		row := &Row{Suite: suite, Name: fmt.Sprintf("commit-to-delivery at %d commits/s", r.perSecond), Unit: "versions", PerOp: true,
			Lakelog: latencyOutcome(lat, r.commits), LakelogNote: latencyText(lat, r.commits, achieved)}
		// Spark's stream costs a JVM start and minutes per rate: at the
		// small scale (CI) it is measured at 10 commits/s only.
		if withSpark && cfg.spark != nil && (cfg.scale == "full" || r.perSecond == 10) {
			started := time.Now()
			slat, sachieved, err := followLatency(ctx, uri(fmt.Sprintf("spark-rate-%d", r.perSecond)), r.perSecond, r.commits, &sparkFollower{python: cfg.python, script: filepath.Join(cfg.peers, "spark_follow.py")})
			if err != nil {
				return fmt.Errorf("Spark's readChangeFeed stream: %w", err)
			}
			row.Peer = "Spark"
			row.DeltaRS = latencyOutcome(slat, r.commits)
			row.DeltaRSNote = latencyText(slat, r.commits, sachieved) + fmt.Sprintf("; readStream readChangeFeed, default trigger, foreachBatch collect; the run took %s with the JVM's start", time.Since(started).Round(time.Second))
		}
		rep.add(row)
	}
	return nil
}

// latencyOutcome is a latency row's outcome: the time column shows the
// mean latency, so the rate is its inverse and the speed column the ratio
// of the two engines' mean latencies.
func latencyOutcome(l *Latency, n int) *Outcome {
	return &Outcome{Seconds: l.Mean / 1000 * float64(n), Count: int64(n), Latency: l}
}

func latencyText(l *Latency, n int, achieved float64) string {
	return fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d versions (achieved %.1f commits/s)", l.P50, l.P99, l.Max, n, achieved)
}

// sparkFollower runs bench/peers/spark_follow.py: Spark Structured
// Streaming's readChangeFeed over the table, writing each version's
// delivery time to a file.
type sparkFollower struct {
	python, script string
	cmd            *exec.Cmd
	out            string
	stderr         bytes.Buffer
}

// start starts the stream at version first and waits until it runs.
func (s *sparkFollower) start(ctx context.Context, table string, first, last int64) error {
	f, err := os.CreateTemp("", "lakelog-spark-follow-")
	if err != nil {
		return err
	}
	f.Close()
	s.out = f.Name()
	s.cmd = exec.CommandContext(ctx, s.python, s.script, table, fmt.Sprint(first), fmt.Sprint(last), s.out)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		return fmt.Errorf("spark_follow.py did not start (%q, %v): %s", line, err, tailText(s.stderr.String(), 20))
	}
	return nil
}

// wait waits for the stream to deliver its last version and returns each
// version's delivery time.
func (s *sparkFollower) wait() (map[int64]time.Time, error) {
	defer os.Remove(s.out)
	defer os.RemoveAll(s.out + ".checkpoint")
	if err := s.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("spark_follow.py: %v: %s", err, tailText(s.stderr.String(), 20))
	}
	b, err := os.ReadFile(s.out)
	if err != nil {
		return nil, err
	}
	out := map[int64]time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v int64
		var secs float64
		if _, err := fmt.Sscanf(line, "%d %f", &v, &secs); err == nil {
			if _, seen := out[v]; !seen {
				out[v] = time.Unix(0, int64(secs*1e9))
			}
		}
	}
	return out, nil
}

func tailText(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// followLatency commits n appends at rate per second to a new table at
// uri while a follower reads them (cdf.Follow in this process, or the
// peer's when given), and returns the delivery latencies (ms) and the
// rate achieved.
func followLatency(ctx context.Context, uri string, rate, n int, peer *sparkFollower) (*Latency, float64, error) {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return nil, 0, err
	}
	defer objstore.Close(st)
	schema, err := actions.ParseDDL("id long, v string")
	if err != nil {
		return nil, 0, err
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		return nil, 0, err
	}
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: s, Configuration: map[string]string{"delta.enableChangeDataFeed": "true"}})
	if err != nil {
		return nil, 0, err
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, 0, err
	}
	snap, err := res.Snapshot()
	if err != nil {
		return nil, 0, err
	}
	first := snap.Version() + 1
	last := first + int64(n) - 1

	var mu sync.Mutex
	committed := map[int64]time.Time{}
	delivered := map[int64]time.Time{}
	fctx, cancel := context.WithTimeout(ctx, time.Duration(n/rate+300)*time.Second)
	defer cancel()
	followErr := make(chan error, 1)
	if peer != nil {
		if err := peer.start(fctx, uri, first-1, last); err != nil {
			return nil, 0, err
		}
	} else {
		go lakelogFollow(fctx, st, first, last, &mu, delivered, followErr)
	}
	sc, err := actions.ToArrowSchema(schema, false, "")
	if err != nil {
		return nil, 0, err
	}
	// Commit i is due at start + i/rate (by writer i mod w).
	w := 1 // more writers contend for the log and reach a lower rate here
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	var wwg sync.WaitGroup
	writeErr := make(chan error, w)
	for k := range w {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			snap := snap
			for i := k; i < n; i += w {
				if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
				for j := range 10 {
					b.Field(0).(*array.Int64Builder).Append(int64(10*i + j))
					b.Field(1).(*array.StringBuilder).Append(strings.Repeat("v", 20))
				}
				rec := b.NewRecordBatch()
				b.Release()
				res, err := writer.Append(ctx, snap, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) })
				rec.Release()
				if err != nil {
					writeErr <- err
					return
				}
				mu.Lock()
				committed[res.Version] = time.Now()
				mu.Unlock()
				if snap, err = res.Snapshot(); err != nil {
					writeErr <- err
					return
				}
			}
		}()
	}
	wwg.Wait()
	close(writeErr)
	if err := <-writeErr; err != nil {
		return nil, 0, err
	}
	achieved := float64(n) / time.Since(start).Seconds()
	if peer != nil {
		got, err := peer.wait()
		if err != nil {
			return nil, 0, err
		}
		maps.Copy(delivered, got)
	} else if err := <-followErr; err != nil {
		return nil, 0, err
	}
	var secs []float64
	mu.Lock()
	defer mu.Unlock()
	for v := first; v <= last; v++ {
		c, ok1 := committed[v]
		d, ok2 := delivered[v]
		if !ok1 || !ok2 {
			return nil, 0, fmt.Errorf("version %d: committed %v, delivered %v", v, ok1, ok2)
		}
		// A version can be delivered before its writer saw the commit
		// return (the follower found the file first): latency 0.
		secs = append(secs, max(0, d.Sub(c).Seconds()))
	}
	return summarize(secs), achieved, nil
}

// lakelogFollow follows the table from first until last was delivered,
// recording each version's delivery time.
func lakelogFollow(fctx context.Context, st objstore.Store, first, last int64, mu *sync.Mutex, delivered map[int64]time.Time, followErr chan<- error) {
	for b, err := range cdf.Follow(fctx, st, "", cdf.StartingVersion(first), cdf.WithPollInterval(10*time.Millisecond), cdf.WithMaxPollInterval(50*time.Millisecond)) {
		if err != nil {
			followErr <- err
			return
		}
		rows := 0
		for rec, err := range b.Records(fctx) {
			if err != nil {
				followErr <- err
				return
			}
			rows += int(rec.NumRows())
		}
		if want := 10 * int(b.Last-b.First+1); rows != want {
			followErr <- fmt.Errorf("versions %d to %d: %d change rows, want %d", b.First, b.Last, rows, want)
			return
		}
		now := time.Now()
		mu.Lock()
		for v := b.First; v <= b.Last; v++ {
			delivered[v] = now
		}
		mu.Unlock()
		if b.Last >= last {
			followErr <- nil
			return
		}
	}
}
