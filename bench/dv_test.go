package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// dvTable is the data-path table with deletion vectors: version 0 has
// none, version 1 deletes every 100th row of every file, version 2 every
// other row (the vectors are replaced, as a second DELETE would).
var dvTable struct {
	once sync.Once
	dir  string
	err  error
}

func deletionVectorTable(b *testing.B) objstore.Store {
	b.Helper()
	dvTable.once.Do(func() {
		ctx := context.Background()
		if dvTable.dir, dvTable.err = tempDir("lakelog-bench-dv-"); dvTable.err != nil {
			return
		}
		var st objstore.Store
		if st, dvTable.err = objstore.NewLocal(dvTable.dir); dvTable.err != nil {
			return
		}
		n := dataPathRows()
		if _, dvTable.err = writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, n),
			writer.WithTargetFileSize(workload.TargetFileSize(n))); dvTable.err != nil {
			return
		}
		for _, every := range []uint64{100, 2} {
			if dvTable.err = deleteEvery(ctx, st, every); dvTable.err != nil {
				return
			}
		}
	})
	if dvTable.err != nil {
		b.Fatal(dvTable.err)
	}
	st, err := objstore.NewLocal(dvTable.dir)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// deleteEvery gives every file a vector deleting every every-th row,
// in one commit.
func deleteEvery(ctx context.Context, st objstore.Store, every uint64) error {
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return err
	}
	if err := snap.LoadStats(ctx); err != nil {
		return err
	}
	w := deletionvector.NewWriter(st, snap.Root())
	tx := snap.NewTransaction()
	for add := range snap.Files() {
		stats, err := actions.ParseStats(add.Stats)
		if err != nil {
			return err
		}
		rows := roaring64.New()
		for r := uint64(0); r < uint64(stats.NumRecords); r += every {
			rows.Add(r)
		}
		dv, err := w.Add(rows)
		if err != nil {
			return err
		}
		withDV := *add
		withDV.DeletionVector = dv
		tx.RemoveFile(add, true)
		tx.Add(actions.Action{Add: &withDV})
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

// BenchmarkScanDeletionVectors reads every row and column of the
// data-path table with no deletion vectors, with 1% of its rows deleted
// and with 50% deleted (local disk, warm cache; opening, planning, loading
// the vectors and reading, each time).
func BenchmarkScanDeletionVectors(b *testing.B) {
	ctx := context.Background()
	n := dataPathRows()
	for v, name := range []string{"none", "1pct", "50pct"} {
		b.Run(fmt.Sprintf("%s/rows=%d", name, n), func(b *testing.B) {
			st := deletionVectorTable(b)
			b.ReportAllocs()
			var rows int64
			for b.Loop() {
				snap, err := deltalog.Open(ctx, st, "", deltalog.AtVersion(int64(v)))
				if err != nil {
					b.Fatal(err)
				}
				sc, err := reader.NewScan(snap)
				if err != nil {
					b.Fatal(err)
				}
				var got workload.Checksum
				for rec, err := range sc.Records(ctx) {
					if err != nil {
						b.Fatal(err)
					}
					got.Add(rec)
				}
				rows = got.Rows
				if want, err := sc.Count(ctx); err != nil || want != rows {
					b.Fatalf("read %d rows, Count %d (%v)", rows, want, err)
				}
			}
			reportRows(b, rows)
		})
	}
}
