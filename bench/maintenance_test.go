package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// smallFiles is a table of the runner's data-path rows in many small files
// (1,000 at 1M rows; a tenth under -short), written once per process,
// with an overwrite as version 1 (for RESTORE).
var smallFiles struct {
	once sync.Once
	dir  string
	err  error
}

func smallFilesTable(b *testing.B) string {
	b.Helper()
	smallFiles.once.Do(func() {
		rows := int64(1_000_000)
		if testing.Short() {
			rows = 100_000
		}
		ctx := context.Background()
		if smallFiles.dir, smallFiles.err = tempDir("lakelog-bench-small-"); smallFiles.err != nil {
			return
		}
		st, err := objstore.NewLocal(smallFiles.dir)
		if err != nil {
			smallFiles.err = err
			return
		}
		_, smallFiles.err = writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, rows), writer.WithTargetFileSize(rows*20/1000))
	})
	if smallFiles.err != nil {
		b.Fatal(smallFiles.err)
	}
	return smallFiles.dir
}

// copyOf links the table into a fresh folder, outside the timer.
func copyOf(b *testing.B, src string) *deltalog.Snapshot {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	dst := filepath.Join(b.TempDir(), "t")
	if err := workload.LinkTable(src, dst); err != nil {
		b.Fatal(err)
	}
	st, err := objstore.NewLocal(dst)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), st, "")
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkOptimize compacts the small-files table (bin-packing, and
// Z-order by id and v) into 64 MB files.
func BenchmarkOptimize(b *testing.B) {
	src := smallFilesTable(b)
	for _, zorder := range []bool{false, true} {
		b.Run(fmt.Sprintf("zorder=%v", zorder), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snap := copyOf(b, src)
				opts := []maintenance.OptimizeOption{maintenance.TargetSize(64 << 20)}
				if zorder {
					opts = append(opts, maintenance.ZOrderBy("id", "v"))
				}
				res, err := maintenance.Optimize(context.Background(), snap, opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Metrics.NumRemovedFiles), "files")
			}
		})
	}
}

// BenchmarkRestore restores the small-files table to version 0 after an
// overwrite: every file comes back.
func BenchmarkRestore(b *testing.B) {
	src := smallFilesTable(b)
	b.ReportAllocs()
	for b.Loop() {
		snap := copyOf(b, src)
		b.StopTimer()
		res, err := writer.Overwrite(context.Background(), snap, workload.Batches(nil, 10))
		if err != nil {
			b.Fatal(err)
		}
		if snap, err = res.Snapshot(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := maintenance.Restore(context.Background(), snap, maintenance.ToVersion(0)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVacuum deletes 10,000 unreferenced files (1,000 under -short)
// beside the small-files table.
func BenchmarkVacuum(b *testing.B) {
	src := smallFilesTable(b)
	n := 10_000
	if testing.Short() {
		n = 1_000
	}
	b.ReportAllocs()
	for b.Loop() {
		snap := copyOf(b, src)
		b.StopTimer()
		root := objstore.Location(snap.Store())
		old := time.Now().Add(-time.Hour)
		for i := range n {
			p := filepath.Join(root, workload.P(int64(i)), fmt.Sprintf("orphan-%06d.parquet", i))
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := maintenance.Vacuum(context.Background(), snap, maintenance.Retain(0), maintenance.Force())
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Files) != n {
			b.Fatalf("deleted %d files, want %d", len(res.Files), n)
		}
	}
}
