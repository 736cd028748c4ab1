package reader_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/gcs"
	"github.com/lakelog/lakelog/objstore/s3"
)

// cloudPolicy is the stores' retry policy under injected faults: more
// tries, short waits, and a stall timeout shorter than the proxy's stalls.
var cloudPolicy = objstore.RetryPolicy{Attempts: 10, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond, StallTimeout: time.Second}

// TestDifferentialCloud runs the differential scan test's random tables
// through the object-store read path of the real servers: MinIO (S3),
// directly and through a proxy that injects 503s, connection resets and
// stalls into a share of the requests (the store's retries must make
// every scan whole); fake-gcs-server (GCS) with up to 5 ms more latency
// per ranged GET; and Azurite (Azure). On each, a table of large row
// groups (split into pieces decoded on several goroutines, filters on the
// page index's columns among the scans) and a table of every type (lists,
// maps, structs, decimals, large strings, deletion vectors, column
// mapping as drawn): every scan, and the same scan under a random limit,
// returns exactly the rows of the in-place read, in its order, each
// checked against arrow-go's plain pqarrow read, and no scan reads a byte
// its plan did not fetch (ScanMetrics.UncoveredReads is 0, the limited
// scans' too). Row groups must have been split on each server.
//
// CI size: the large-row-group table on every server and the every-type
// table on one server (which one turns with the base seed), six scans
// each (the split tables two more); -diff.long runs both tables on every
// server, thirty scans each. Seeds as in TestDifferentialScans
// (-diff.seed, -diff.base); under CI a missing server fails.
func TestDifferentialCloud(t *testing.T) {
	base := *diffBase
	if base == 0 {
		base = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(os.Stderr, "TestDifferentialCloud: base seed %d (replay: go test ./reader -run TestDifferentialCloud -diff.base %d)\n", base, base)
	servers := []struct {
		name    string
		open    func(t *testing.T) objstore.Store
		latency time.Duration
	}{
		{"minio", func(t *testing.T) objstore.Store { return minioStore(t, "") }, 0},
		{"minio-faults", func(t *testing.T) objstore.Store {
			upstream := cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
			f := &cloudtest.Faults{Seed: cloudtest.Seed(t), Rate: 0.03, Stall: 1500 * time.Millisecond, Kinds: []cloudtest.Fault{
				cloudtest.SlowDown, cloudtest.ResetMidBody, cloudtest.ResetRequest, cloudtest.StallMidBody, cloudtest.StallBeforeHeaders,
			}, Skip: func(r *http.Request) bool { return r.Method != http.MethodGet }}
			proxy := cloudtest.NewProxy(t, upstream, f.Intercept)
			t.Cleanup(func() { t.Logf("faults: %s", f) })
			return minioStore(t, proxy.URL)
		}, 0},
		{"gcs-slow", gcsStore, 5 * time.Millisecond},
		{"azure", azureStore, 0},
	}
	for si, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			split := remoteSplits.Load()
			for k, flat := range []bool{true, false} {
				seed := base + uint64(2*si+k)*0x9E3779B97F4A7C15
				if *diffSeed != 0 {
					seed = *diffSeed
				}
				if !flat && !*diffLong && *diffSeed == 0 && base%uint64(len(servers)) != uint64(si) {
					continue
				}
				t.Run(fmt.Sprintf("flat=%v/seed=%d", flat, seed), func(t *testing.T) {
					t.Logf("replay: go test ./reader -run 'TestDifferentialCloud/%s/flat=%v' -diff.seed %d", srv.name, flat, seed)
					runDifferentialWith(t, seed, diffOptions{long: *diffLong, flat: flat, cloud: srv.open(t), latency: srv.latency})
				})
			}
			if !t.Failed() && remoteSplits.Load() == split {
				t.Errorf("no row group was split on %s", srv.name)
			}
		})
	}
}

// minioStore is an empty store in a new bucket of MinIO, reached through
// endpoint when it is not empty.
func minioStore(t *testing.T, endpoint string) objstore.Store {
	t.Helper()
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("lakelog-diff-")
	opts := []s3.Option{s3.WithRetryPolicy(cloudPolicy)}
	if endpoint != "" {
		opts = append(opts, s3.WithEndpoint(endpoint))
	}
	st, err := s3.New(t.Context(), bucket, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	return st
}

// gcsStore is an empty store in a new bucket of fake-gcs-server.
func gcsStore(t *testing.T) objstore.Store {
	t.Helper()
	cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	bucket := cloudtest.Name("lakelog-diff-")
	st, err := gcs.New(t.Context(), bucket, "", gcs.WithRetryPolicy(cloudPolicy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Client().Bucket(bucket).Create(t.Context(), "lakelog", nil); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return st
}

// azureStore is an empty store in a new container of Azurite.
func azureStore(t *testing.T) objstore.Store {
	t.Helper()
	cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
	name := cloudtest.Name("lakelog-diff-")
	st, err := azure.New(t.Context(), name, "", azure.WithRetryPolicy(cloudPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Container().Create(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return st
}
