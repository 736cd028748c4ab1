package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// rangeCounter counts the ranged GETs made through it and the bytes they
// return.
type rangeCounter struct {
	objstore.Store
	requests, bytes atomic.Int64
}

func (r *rangeCounter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := r.Store.GetRange(ctx, key, off, n)
	if strings.HasSuffix(key, ".parquet") {
		r.requests.Add(1)
		r.bytes.Add(int64(len(b)))
	}
	return b, err
}

// objstoreScanRows is the table size of BenchmarkScanMinIO: 2M rows
// (200k under -short), or LAKELOG_BENCH_OS_ROWS.
func objstoreScanRows() int64 {
	if v, err := strconv.ParseInt(os.Getenv("LAKELOG_BENCH_OS_ROWS"), 10, 64); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 200_000
	}
	return 2_000_000
}

// BenchmarkScanMinIO reads the data-path table (partitioned by p, files
// of up to 16 MB) from MinIO through objstore/s3: every row and column
// ("full"), 1% of the sorted id range ("range") and two columns
// ("project"), each time opening the table, planning and reading. It
// reports the ranged GETs of data files per scan and the bytes they
// fetched. The table is written once into the bucket lakelog-bench-scan
// and reused by later runs (so a build of another commit scans the same
// files: benchstat before/after).
func BenchmarkScanMinIO(b *testing.B) {
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		b.Skip("AWS_ENDPOINT_URL is not set: start MinIO with `source .ci/services.sh; services_start`")
	}
	ctx := context.Background()
	n := objstoreScanRows()
	bucket := "lakelog-bench-scan"
	st, err := s3.New(ctx, bucket, fmt.Sprintf("datapath-%d", n))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil && !strings.Contains(err.Error(), "BucketAlready") {
		b.Fatal(err)
	}
	if _, err := deltalog.Open(ctx, st, ""); errors.Is(err, deltalog.ErrNotTable) || errors.Is(err, objstore.ErrNotFound) {
		if _, err := writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, n), writer.WithTargetFileSize(16<<20)); err != nil {
			b.Fatal(err)
		}
	} else if err != nil {
		b.Fatal(err)
	}
	lo, hi := n/2, n/2+n/100-1
	rangePred, err := expr.Parse(fmt.Sprintf("id BETWEEN %d AND %d", lo, hi))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		opts []reader.Option
		rows int64
	}{
		{"full", nil, n},
		{"range", []reader.Option{reader.WithFilter(rangePred)}, hi - lo + 1},
		{"project", []reader.Option{reader.WithColumns("id", "v")}, n},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%s/rows=%d", c.name, n), func(b *testing.B) {
			cs := &rangeCounter{Store: st}
			b.ReportAllocs()
			scans := 0
			for b.Loop() {
				got, _ := scanAll(b, cs, nil, c.opts...)
				if got.Rows != c.rows {
					b.Fatalf("read %d rows, want %d", got.Rows, c.rows)
				}
				scans++
			}
			reportRows(b, c.rows)
			b.ReportMetric(float64(cs.requests.Load())/float64(scans), "gets/op")
			b.ReportMetric(float64(cs.bytes.Load())/float64(scans)/(1<<20), "MB-fetched/op")
		})
	}
}
