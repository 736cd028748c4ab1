package cloud

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// The fault tests' sizes: appends of two partitions whose files span
// several multipart parts of s3.MinPartSize.
const (
	faultAppends      = 3
	faultRowsPerFile  = 60_000
	faultPayloadBytes = 100
)

// faultPolicy is the stores' policy under injected faults: more tries than
// the default, short waits, and a stall timeout short enough for CI (the
// proxy holds a stalled connection longer).
var faultPolicy = objstore.RetryPolicy{Attempts: 10, BaseDelay: 5 * time.Millisecond, MaxDelay: 200 * time.Millisecond, StallTimeout: time.Second}

// newFaultBucket creates a bucket on MinIO, directly.
func newFaultBucket(t *testing.T) string {
	t.Helper()
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("lakelog-faults-")
	st, err := s3.New(t.Context(), bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	return bucket
}

// payload is row id's payload: faultPayloadBytes of hex that does not
// compress, a function of id alone so that a read can check every row.
func payload(id int64) string {
	r := rand.New(rand.NewPCG(uint64(id), 0x5eed))
	const hex = "0123456789abcdef"
	b := make([]byte, faultPayloadBytes)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

var faultSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// faultBatches yields the rows of append a: ids [a·2·rows, (a+1)·2·rows),
// alternating between partitions "x" and "y".
func faultBatches(a int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		const batch = 8192
		first, end := int64(a*2*faultRowsPerFile), int64((a+1)*2*faultRowsPerFile)
		for lo := first; lo < end; lo += batch {
			b := array.NewRecordBuilder(memory.DefaultAllocator, faultSchema)
			for id := lo; id < min(lo+batch, end); id++ {
				b.Field(0).(*array.Int64Builder).Append(id)
				b.Field(1).(*array.StringBuilder).Append(string(rune('x' + id%2)))
				b.Field(2).(*array.StringBuilder).Append(payload(id))
			}
			rec := b.NewRecordBatch()
			b.Release()
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				return
			}
		}
	}
}

// checkRows scans snap through reader.NewScan(...).Records and checks that
// it holds exactly the rows of the first n appends, each once, each with
// its payload and partition. It returns the number of rows.
func checkRows(t *testing.T, ctx context.Context, snap *deltalog.Snapshot, n int) int64 {
	t.Helper()
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(n * 2 * faultRowsPerFile)
	seen := make([]bool, total)
	var rows int64
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		ids := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
		ps := rec.Column(int(rec.Schema().FieldIndices("p")[0])).(*array.String)
		pay := rec.Column(int(rec.Schema().FieldIndices("payload")[0])).(*array.String)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			if id < 0 || id >= total {
				t.Fatalf("scan: row id %d outside [0, %d)", id, total)
			}
			if seen[id] {
				t.Fatalf("scan: row id %d twice", id)
			}
			seen[id] = true
			if ps.Value(i) != string(rune('x'+id%2)) || pay.Value(i) != payload(id) {
				t.Fatalf("scan: row id %d has partition %q and a payload that differs from what was written", id, ps.Value(i))
			}
		}
		rows += rec.NumRows()
	}
	if rows != total {
		t.Fatalf("scan: %d rows, want %d", rows, total)
	}
	return rows
}

// faultStores returns two stores on one fresh prefix of bucket: one whose
// requests pass proxy, in parts of s3.MinPartSize under faultPolicy, and
// one that talks to MinIO directly.
func faultStores(t *testing.T, bucket string, proxy *cloudtest.Proxy) (faulty, clean *s3.Store) {
	t.Helper()
	prefix := cloudtest.Name("t-")
	faulty, err := s3.New(t.Context(), bucket, prefix, s3.WithEndpoint(proxy.URL), s3.WithPartSize(s3.MinPartSize), s3.WithRetryPolicy(faultPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if clean, err = s3.New(t.Context(), bucket, prefix); err != nil {
		t.Fatal(err)
	}
	return faulty, clean
}

func createFaultTable(t *testing.T, ctx context.Context, st objstore.Store) {
	t.Helper()
	schema, err := actions.ParseDDL("id long, p string, payload string")
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(st, "tbl", &actions.Metadata{SchemaString: s, PartitionColumns: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// TestFaultsS3 puts a proxy that injects faults into 15% of the requests
// (503 SlowDown, resets before and in the middle of a body, stalls before
// the headers and in the middle of a body, responses lost after MinIO
// acted; in turn, on requests chosen at random, seeded, the seed logged;
// LAKELOG_FAULT_SEED repeats it) in front of MinIO, and through it
// (a) creates a table and appends to it, each append two files of several
// multipart parts, every append committing exactly once; (b) scans it with
// reader.NewScan(...).Records, which must return exactly the rows written,
// as a scan without faults does.
func TestFaultsS3(t *testing.T) {
	bucket := newFaultBucket(t)
	ctx := t.Context()
	seed := cloudtest.Seed(t)
	faults := &cloudtest.Faults{Seed: seed, Rate: 0.15, Stall: 3 * time.Second, Kinds: []cloudtest.Fault{
		cloudtest.SlowDown, cloudtest.ResetMidBody, cloudtest.StallBeforeHeaders,
		cloudtest.ResetRequest, cloudtest.StallMidBody, cloudtest.LostResponse,
	}}
	t.Logf("fault seed %d (LAKELOG_FAULT_SEED=%d repeats it)", seed, seed)
	proxy := cloudtest.NewProxy(t, os.Getenv("AWS_ENDPOINT_URL"), faults.Intercept)
	faulty, clean := faultStores(t, bucket, proxy)
	defer func() { t.Logf("faults injected: %v", faults) }()

	start := time.Now()
	createFaultTable(t, ctx, faulty)
	for a := range faultAppends {
		snap, err := deltalog.Open(ctx, faulty, "tbl")
		if err != nil {
			t.Fatalf("open before append %d: %v", a, err)
		}
		res, err := writer.Append(ctx, snap, faultBatches(a))
		if err != nil {
			t.Fatalf("append %d: %v", a, err)
		}
		if res.Version != int64(a+1) {
			t.Fatalf("append %d committed version %d, want %d", a, res.Version, a+1)
		}
	}
	t.Logf("(a) %d appends in %v; %v", faultAppends, time.Since(start).Round(time.Millisecond), faults)

	// The log as MinIO holds it: one version per append, no more.
	want, err := deltalog.Open(ctx, clean, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if want.Version() != faultAppends {
		t.Fatalf("the table is at version %d, want %d (one commit per append)", want.Version(), faultAppends)
	}
	multipart := 0
	for add := range want.Files() {
		if add.Size > s3.MinPartSize {
			multipart++
		}
	}
	if multipart < faultAppends {
		t.Fatalf("only %d data files are larger than a part; the test must upload multipart files", multipart)
	}
	checkRows(t, ctx, want, faultAppends) // without faults

	start = time.Now()
	before := faults.Requests()
	snap, err := deltalog.Open(ctx, faulty, "tbl")
	if err != nil {
		t.Fatalf("open through faults: %v", err)
	}
	rows := checkRows(t, ctx, snap, faultAppends)
	t.Logf("(b) scan of %d rows in %v, %d requests; %v", rows, time.Since(start).Round(time.Millisecond), faults.Requests()-before, faults)
	// The run's 60-odd requests draw fewer than 3 faults (so fewer than
	// 3 kinds) for about 1 seed in 600 (LAKELOG_FAULT_SEED=352073 draws
	// one): scan again through the faults, each scan checked, until 3
	// kinds were injected; 20 more scans make a shortfall 1e-30 likely.
	for extra := 1; len(faults.Injected()) < 3 && extra <= 20; extra++ {
		snap, err := deltalog.Open(ctx, faulty, "tbl")
		if err != nil {
			t.Fatalf("open through faults (scan %d more): %v", extra, err)
		}
		checkRows(t, ctx, snap, faultAppends)
		t.Logf("(b) scan %d more: %v", extra, faults)
	}
	if k := len(faults.Injected()); k < 3 {
		t.Fatalf("faults of only %d kinds were injected (%v): too few to prove much", k, faults)
	}
}

// TestFaultsS3LostCommitResponse loses the response of the first
// conditional PUT of an append's commit, in both ways a response is lost
// (the connection reset after MinIO stored the commit; a gateway's 503
// after it did). The commit layer must end as documented: success after
// recognizing the commit as its own, or ErrCommitUnknown; never a
// duplicate commit, never rows lost.
func TestFaultsS3LostCommitResponse(t *testing.T) {
	bucket := newFaultBucket(t)
	for _, tc := range []struct {
		name string
		lose cloudtest.Interceptor
	}{
		{"Reset", func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
			(&cloudtest.Faults{Rate: 1, Kinds: []cloudtest.Fault{cloudtest.LostResponse}}).Intercept(w, r, forward)
		}},
		{"GatewayError", cloudtest.FailAfter(http.StatusServiceUnavailable)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			var lost atomic.Int32
			proxy := cloudtest.NewProxy(t, os.Getenv("AWS_ENDPOINT_URL"), func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
				if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" && lost.Add(1) == 2 { // the append's, after the create's
					tc.lose(w, r, forward)
					return
				}
				cloudtest.Relay(w, r, forward)
			})
			faulty, clean := faultStores(t, bucket, proxy)
			createFaultTable(t, ctx, faulty)
			snap, err := deltalog.Open(ctx, faulty, "tbl")
			if err != nil {
				t.Fatal(err)
			}
			res, err := writer.Append(ctx, snap, faultBatches(0))
			var unknown *deltalog.CommitUnknownError
			switch {
			case err == nil:
				if res.Version != 1 {
					t.Fatalf("append committed version %d, want 1", res.Version)
				}
				t.Logf("the lost commit was recognized as ours: version %d", res.Version)
			case errors.As(err, &unknown):
				v, ferr := deltalog.FindCommit(ctx, clean, "tbl", unknown.Version, unknown.TxnID)
				if ferr != nil || v != 1 {
					t.Fatalf("append: %v; FindCommit = %d, %v; want version 1", err, v, ferr)
				}
				t.Logf("append: outcome unknown (%v), found at version %d", err, v)
			default:
				t.Fatalf("append whose commit response was lost = %v; want success or ErrCommitUnknown", err)
			}
			if n := lost.Load(); n < 3 {
				t.Errorf("%d conditional PUTs, want the create's, the lost one and a retry", n)
			}
			got, err := deltalog.Open(ctx, clean, "tbl")
			if err != nil {
				t.Fatal(err)
			}
			if got.Version() != 1 {
				t.Fatalf("the table is at version %d, want 1: the lost commit must not be written twice", got.Version())
			}
			checkRows(t, ctx, got, 1)
		})
	}
}
