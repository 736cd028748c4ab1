package bench

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/objstore"
)

var (
	cdfVersions = flag.Int("cdf.versions", 100, "BenchmarkChangeFeed: versions after the first (1000 is the runner's -scale full)")
	cdfRows     = flag.Int64("cdf.rows", 2500, "BenchmarkChangeFeed: rows of each append (7500 is the runner's -scale full)")
)

// BenchmarkChangeFeed reads the change data feed of every version of the
// runner's small cdf table (100 versions of appends, UPDATEs with change
// data files and DELETEs; 332,500 change rows), or a tenth under -short,
// with one file read at a time and with the default parallelism.
func BenchmarkChangeFeed(b *testing.B) {
	spec := workload.CDFSpec{Versions: *cdfVersions, RowsPerVersion: *cdfRows}
	if testing.Short() {
		spec.Versions = 10
	}
	dir := b.TempDir()
	if err := workload.SynthesizeCDF(context.Background(), dir, spec); err != nil {
		b.Fatal(err)
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, par := range []int{1, 0} {
		name := "parallel=default"
		if par == 1 {
			name = "parallel=1"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			var rows int64
			for b.Loop() {
				rows = 0
				opts := []cdf.Option{}
				if par > 0 {
					opts = append(opts, cdf.WithParallelism(par))
				}
				f, err := cdf.Open(ctx, st, "", cdf.Versions(0, -1), opts...)
				if err != nil {
					b.Fatal(err)
				}
				for rec, err := range f.Records(ctx) {
					if err != nil {
						b.Fatal(err)
					}
					rows += rec.NumRows()
				}
			}
			if rows != spec.ChangeRows() {
				b.Fatal(fmt.Sprintf("%d change rows, want %d", rows, spec.ChangeRows()))
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
