package uniform_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/uniform"
)

var benchFiles = flag.Int("uniform.files", 100_000, "files of BenchmarkConvertAppend's table")

// commitAdds commits n add actions of files that are not written (the
// conversion reads only the log), as one append.
func commitAdds(b *testing.B, store objstore.Store, first, n int) time.Duration {
	b.Helper()
	snap, err := deltalog.Open(context.Background(), store, tabletest.Root)
	if err != nil {
		b.Fatal(err)
	}
	tx := snap.NewTransaction()
	for i := range n {
		tx.Add(actions.Action{Add: &actions.Add{Path: fmt.Sprintf("part-%08d.parquet", first+i), PartitionValues: map[string]*string{},
			Size: 1000, ModificationTime: 1, DataChange: true, Stats: `{"numRecords":10}`}})
	}
	tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
	start := time.Now()
	if _, err := tx.Commit(context.Background()); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkConvertAppend: the conversion of a 10-file append to a table
// of -uniform.files files (100,000), already converted: its cost must be
// proportional to the commit (one new manifest, the list, the metadata),
// not to the table. Reports the Delta commit's own time beside it
// (commit-ns/op) and the full conversion of the table (full-ms).
func BenchmarkConvertAppend(b *testing.B) {
	store, err := objstore.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tabletest.Create(b, store, "id long", uniformProps)
	for done := 0; done < *benchFiles; done += 20_000 {
		commitAdds(b, store, done, min(20_000, *benchFiles-done))
	}
	snap := tabletest.Open(b, store)
	start := time.Now()
	if _, err := uniform.Convert(context.Background(), snap); err != nil {
		b.Fatal(err)
	}
	full := time.Since(start)
	next := *benchFiles
	var commit time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		commit += commitAdds(b, store, next, 10)
		next += 10
		snap, err := deltalog.Open(context.Background(), store, tabletest.Root)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := uniform.Convert(context.Background(), snap); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(commit.Nanoseconds())/float64(b.N), "commit-ns/op")
	b.ReportMetric(float64(full.Milliseconds()), "full-ms")
}
