package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// checkpointLog is the synthetic log of the checkpoint benchmarks: the
// runner's -scale small (10,000 commits of 10 adds, 100,000 files), or a
// tenth of it under -short.
func checkpointLog() workload.LogSpec {
	if testing.Short() {
		return workload.LogSpec{Commits: 1_000, AddsPerCommit: 10}
	}
	return workload.LogSpec{Commits: 10_000, AddsPerCommit: 10}
}

// synthetic is the log, written once per process.
var synthetic struct {
	once sync.Once
	dir  string
	err  error
}

func syntheticLog(b *testing.B) string {
	b.Helper()
	synthetic.once.Do(func() {
		if synthetic.dir, synthetic.err = tempDir("lakelog-bench-log-"); synthetic.err == nil {
			synthetic.err = workload.SynthesizeLog(context.Background(), synthetic.dir, checkpointLog())
		}
	})
	if synthetic.err != nil {
		b.Fatal(synthetic.err)
	}
	return synthetic.dir
}

// linkedCopy returns a store over a hard-linked copy of the synthetic log,
// so that a benchmark can add a checkpoint without changing it.
func linkedCopy(b *testing.B) (objstore.Store, string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "t")
	if err := workload.LinkTable(syntheticLog(b), dir); err != nil {
		b.Fatal(err)
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	return st, dir
}

func reportFiles(b *testing.B, files int) {
	if b.N > 0 && b.Elapsed() > 0 {
		b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	}
}

// BenchmarkCheckpoint measures, on a local table whose log holds only JSON
// commits, what the runner's checkpoint rows measure for lakelog:
//
//   - open-replay: deltalog.Open replaying every commit;
//   - write: Snapshot.Checkpoint of the latest version (the open is
//     outside the loop);
//   - open-checkpoint: deltalog.Open once that checkpoint exists;
//   - list: iterating Snapshot.Files of an open snapshot.
func BenchmarkCheckpoint(b *testing.B) {
	ctx := context.Background()
	spec := checkpointLog()
	files := spec.Files()
	prefix := fmt.Sprintf("commits=%d/files=%d", spec.Commits, files)
	open := func(b *testing.B, st objstore.Store) *deltalog.Snapshot {
		snap, err := deltalog.Open(ctx, st, "")
		if err != nil {
			b.Fatal(err)
		}
		if snap.NumFiles() != files {
			b.Fatalf("%d files, want %d", snap.NumFiles(), files)
		}
		return snap
	}
	b.Run(prefix+"/open-replay", func(b *testing.B) {
		st, _ := linkedCopy(b)
		b.ReportAllocs()
		for b.Loop() {
			open(b, st)
		}
		reportFiles(b, files)
	})
	b.Run(prefix+"/write", func(b *testing.B) {
		st, _ := linkedCopy(b)
		snap := open(b, st)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := snap.Checkpoint(ctx, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		reportFiles(b, files)
	})
	b.Run(prefix+"/open-checkpoint", func(b *testing.B) {
		st, _ := linkedCopy(b)
		if _, err := open(b, st).Checkpoint(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			open(b, st)
		}
		reportFiles(b, files)
	})
	b.Run(prefix+"/list", func(b *testing.B) {
		st, _ := linkedCopy(b)
		snap := open(b, st)
		b.ReportAllocs()
		for b.Loop() {
			n, bytes := 0, 0
			for f := range snap.Files() {
				n++
				bytes += len(f.Path)
			}
			if n != files || bytes == 0 {
				b.Fatalf("listed %d files", n)
			}
		}
		reportFiles(b, files)
	})
}
