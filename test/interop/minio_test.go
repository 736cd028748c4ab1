package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	s3store "github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/writer"
)

// minioBucket creates a fresh bucket on the MinIO of .ci/services.sh and
// returns its name.
func minioBucket(t *testing.T) string {
	t.Helper()
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("interop-")
	st, err := objstore.Open(t.Context(), "s3://"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	s3st, ok := st.(*s3store.Store)
	if !ok {
		t.Fatalf("s3:// opened a %T", st)
	}
	if _, err := s3st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return bucket
}

// deltaRSOnS3 are delta-rs's storage options for the MinIO that the
// environment points at: plain HTTP, path-style addressing (delta-rs's
// default with a custom endpoint), and commits created with conditional
// PUT (If-None-Match), which MinIO supports, instead of a lock service.
func deltaRSOnS3() map[string]string {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return map[string]string{
		"AWS_ENDPOINT_URL":      os.Getenv("AWS_ENDPOINT_URL"),
		"AWS_ACCESS_KEY_ID":     os.Getenv("AWS_ACCESS_KEY_ID"),
		"AWS_SECRET_ACCESS_KEY": os.Getenv("AWS_SECRET_ACCESS_KEY"),
		"AWS_REGION":            region,
		"AWS_ALLOW_HTTP":        "true",
		"conditional_put":       "etag",
	}
}

// TestMinIOLakelogWritesDeltaRSReads writes a partitioned table of every
// type to MinIO with lakelog (its partition values make object keys with
// escaped characters) and checks that delta-rs reads the same rows there.
func TestMinIOLakelogWritesDeltaRSReads(t *testing.T) {
	bucket := minioBucket(t)
	rs := requirePeer(t, deltaRS)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	l := layouts[1]
	schema, sc := tableSchema(t, l.ddl)
	g := newGen(700)
	g.pools = l.pools
	first, second := g.batch(mem, sc, 60), g.batch(mem, sc, 60)
	defer first.Release()
	defer second.Release()

	uri := "s3://" + bucket + "/tables/lakelog-written"
	store, err := objstore.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, store, "", schema, l.parts, nil, first)
	if _, err := writer.Append(ctx, open(t, store, ""), seq(second), writer.WithCommitOptions(noHooks), writer.WithAllocator(mem)); err != nil {
		t.Fatalf("lakelog append on MinIO: %v", err)
	}
	want := l.expect(t, first, second)
	sameRows(t, "lakelog on MinIO", openLines(t, store, ""), want)
	for _, rd := range []string{"pyarrow", "datafusion"} {
		got, resp := peerRead(t, rs, request{Path: uri, Reader: rd, StorageOptions: deltaRSOnS3()})
		sameRows(t, "delta-rs "+rd+" on MinIO", got, want)
		if resp.Version != 1 {
			t.Errorf("delta-rs %s read version %d, want 1", rd, resp.Version)
		}
	}
}

// TestMinIODeltaRSWritesLakelogReads has delta-rs create, append to and
// overwrite a partitioned table on MinIO, and checks that lakelog reads
// every version there as written.
func TestMinIODeltaRSWritesLakelogReads(t *testing.T) {
	bucket := minioBucket(t)
	rs := requirePeer(t, deltaRS)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	l := layouts[1]
	_, sc := tableSchema(t, l.ddl)
	g := newGen(800)
	g.pools = l.pools
	var inputs []arrow.RecordBatch
	for range 3 {
		rec := g.batch(mem, sc, 60)
		defer rec.Release()
		inputs = append(inputs, rec)
	}

	uri := "s3://" + bucket + "/tables/deltars-written"
	files := t.TempDir()
	for v, mode := range []string{"error", "append", "overwrite"} {
		in := filepath.Join(files, fmt.Sprintf("in-%d.parquet", v))
		writeParquet(t, in, inputs[v])
		resp := rs.call(t, request{Op: "write", Path: uri, Input: in, Mode: mode, PartitionBy: l.parts, StorageOptions: deltaRSOnS3()})
		if resp.Version != int64(v) {
			t.Fatalf("delta-rs %s on MinIO made version %d, want %d", mode, resp.Version, v)
		}
	}
	store, err := objstore.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		l.expect(t, inputs[0]),
		l.expect(t, inputs[0], inputs[1]),
		l.expect(t, inputs[2]),
	}
	for v := range int64(3) {
		sameRows(t, fmt.Sprintf("lakelog on MinIO at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), want[v])
	}
}
