package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// dvTable is the data-path table with deletion vectors: version 0 has
// none, version 1 deletes every 100th row of every file, version 2 every
// other row (the vectors are replaced, as a second DELETE would).
var dvTable sharedTable

func deletionVectorTable(b *testing.B) objstore.Store {
	b.Helper()
	return dvTable.get(b, "lakelog-bench-dv-", func(st objstore.Store) error {
		if err := createDataPathTable(st); err != nil {
			return err
		}
		for _, every := range []uint64{100, 2} {
			if err := deleteEvery(context.Background(), st, every); err != nil {
				return err
			}
		}
		return nil
	})
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
			version := int64(v)
			for b.Loop() {
				got, sc := scanAll(b, st, &version)
				rows = got.Rows
				if want, err := sc.Count(ctx); err != nil || want != rows {
					b.Fatalf("read %d rows, Count %d (%v)", rows, want, err)
				}
			}
			reportRows(b, rows)
		})
	}
}
