package convert_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/convert"
)

// BenchmarkToDelta converts a folder of 500 small Parquet files of the
// wide schema in 5 partition folders; each run removes the log first.
func BenchmarkToDelta(b *testing.B) {
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(1, 1))
	for k := range 500 {
		rec := record(b, wide, randomRows(r, 20))
		writeParquet(b, filepath.Join(dir, fmt.Sprintf("p=%d", k%5), fmt.Sprintf("part-%05d.parquet", k)), rec, 10)
		rec.Release()
	}
	ctx := context.Background()
	st := localStore(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		if err := os.RemoveAll(filepath.Join(dir, "_delta_log")); err != nil {
			b.Fatal(err)
		}
		if _, err := convert.ToDelta(ctx, st, "", convert.PartitionBy(mustDDL(b, "p int"))); err != nil {
			b.Fatal(err)
		}
	}
}
