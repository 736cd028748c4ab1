package reader_test

import (
	"context"
	"slices"
	"testing"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestScanMinIO scans a multi-file table on MinIO (objstore/s3, pointed at
// it by AWS_ENDPOINT_URL) through the object-store read path: full,
// projected, filtered and limited scans return the rows the same table
// returns from memory, with the data read by planned ranged GETs only.
// Under CI a missing MinIO fails the test.
func TestScanMinIO(t *testing.T) {
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	ctx := context.Background()
	bucket := cloudtest.Name("lakelog-scan-")
	st, err := s3.New(ctx, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	if _, ok := objstore.Store(st).(objstore.RandomAccess); ok {
		t.Fatal("the S3 store reads in place: this test would not exercise the object-store path")
	}
	mem := objstore.NewMem()
	wideTable(t, mem, 4, 20000, 5, 7000)
	wideTable(t, st, 4, 20000, 5, 7000)
	local, remote := tabletest.Open(t, mem), tabletest.Open(t, st)
	for _, opts := range [][]reader.Option{
		nil,
		{reader.WithColumns("c0", "c3")},
		{reader.WithFilter(mustParse(t, "c0 >= 25000 AND c0 < 61000")), reader.WithColumns("c4")},
		{reader.WithParallelism(1), reader.WithFetchBudget(256 << 10)},
	} {
		want := tabletest.Sorted((scanRows(t, mustScan(t, local, opts...)))...)
		sc := mustScan(t, remote, opts...)
		got := tabletest.Sorted((scanRows(t, sc))...)
		if !slices.Equal(got, want) {
			t.Fatalf("MinIO: %s", diffRows(got, want))
		}
		m := sc.Metrics()
		t.Logf("%d rows: %d requests, %d bytes, peak buffered %d", len(got), m.Requests, m.BytesFetched, m.PeakBuffered)
		if m.Requests == 0 || m.UncoveredReads != 0 {
			t.Errorf("metrics %+v: want planned ranged GETs only", m)
		}
	}
	// A limit: the first rows in path order, the same as from memory.
	sc := mustScan(t, remote, reader.WithLimit(5))
	if n := len(scanRows(t, sc)); n != 5 {
		t.Fatalf("limit 5: %d rows", n)
	}
}
