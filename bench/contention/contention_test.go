package contention

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/s3"
)

// writers is how many writers commit at once.
const writers = 8

const schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`

// workload says what each writer's commit reads and where it appends.
type workload struct {
	name string
	// solo: one writer instead of eight, the uncontended baseline.
	solo bool
	// same: every writer appends to partition p=0; else writer i to p=i.
	same bool
	// read: the commit first reads its partition (a read predicate), so
	// it is not a blind append and concurrent non-blind appends into the
	// partition it read abort it (ConcurrentAppend).
	read bool
}

var workloads = []workload{
	{name: "solo", solo: true},
	{name: "blind/disjoint"},
	{name: "blind/same", same: true},
	{name: "read/disjoint", read: true},
	{name: "read/same", same: true, read: true},
}

// BenchmarkContendedCommits runs 8 writers that each commit one-file
// appends as fast as they can, b.N commits in all, on local disk and (when
// AWS_ENDPOINT_URL is set) on S3; "solo" is one writer alone, for
// comparison. It reports:
//
//   - success%: commits that landed, of those attempted (a conflict or
//     ErrTooManyAttempts is a failure; the writer reads the table again
//     and goes on);
//   - commits/s: landed commits per second of wall time, all writers
//     together;
//   - retries/commit: versions a landed commit lost before it won
//     (CommitResult.Attempts-1), on average; max-attempts is the worst.
//
// Only the commit is measured: the adds name data files that are never
// written. Run with a fixed count, e.g. -benchtime=400x.
func BenchmarkContendedCommits(b *testing.B) {
	for _, w := range workloads {
		b.Run("local/"+w.name, func(b *testing.B) {
			st, err := objstore.NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			runContention(b, st, w)
		})
	}
	for _, w := range workloads {
		b.Run("s3/"+w.name, func(b *testing.B) {
			if os.Getenv("AWS_ENDPOINT_URL") == "" && os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
				b.Skip("AWS_ENDPOINT_URL is not set: start MinIO with `source .ci/services.sh; services_start`")
			}
			runContention(b, newS3(b), w)
		})
	}
}

// outcome is one writer's tally.
type outcome struct {
	landed, failed, retries, maxAttempts int
	conflicts                            map[string]int
	err                                  error
}

func runContention(b *testing.B, st objstore.Store, w workload) {
	ctx := context.Background()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: schema, PartitionColumns: []string{"p"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	k := writers
	if w.solo {
		k = 1
	}
	outs := make([]outcome, k)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range k {
		n := b.N / k
		if i < b.N%k {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = commitLoop(ctx, st, w, i, n)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	var total outcome
	total.conflicts = map[string]int{}
	for _, o := range outs {
		if o.err != nil {
			b.Fatal(o.err)
		}
		total.landed += o.landed
		total.failed += o.failed
		total.retries += o.retries
		total.maxAttempts = max(total.maxAttempts, o.maxAttempts)
		for k, v := range o.conflicts {
			total.conflicts[k] += v
		}
	}
	attempted := total.landed + total.failed
	b.ReportMetric(100*float64(total.landed)/float64(max(attempted, 1)), "success%")
	b.ReportMetric(float64(total.landed)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(total.retries)/float64(max(total.landed, 1)), "retries/commit")
	b.ReportMetric(float64(total.maxAttempts), "max-attempts")
	b.ReportMetric(0, "ns/op") // wall time per commit is commits/s's inverse; ns/op would mislead
	if len(total.conflicts) > 0 {
		b.Logf("%d of %d commits failed: %v", total.failed, attempted, total.conflicts)
	}
}

// commitLoop is one writer: n one-file appends, each from the snapshot the
// previous commit returned (a fresh one after a failure).
func commitLoop(ctx context.Context, st objstore.Store, w workload, writer, n int) outcome {
	o := outcome{conflicts: map[string]int{}}
	part := fmt.Sprint(writer)
	if w.same {
		part = "0"
	}
	var pred expr.Expr
	snap, err := open(ctx, st)
	if err != nil {
		return outcome{err: err}
	}
	if w.read {
		parsed, err := expr.Parse("p = '" + part + "'")
		if err != nil {
			return outcome{err: err}
		}
		if pred, err = expr.BindPredicate(parsed, snap.Schema()); err != nil {
			return outcome{err: err}
		}
	}
	var results []*deltalog.CommitResult
	for i := range n {
		tx := snap.NewTransaction()
		if pred != nil {
			tx.ReadPredicates(pred)
		}
		tx.Add(actions.Action{Add: &actions.Add{
			Path:             fmt.Sprintf("p=%s/part-%05d-w%d-%08d.snappy.parquet", part, i, writer, i),
			PartitionValues:  map[string]*string{"p": &part},
			Size:             4096,
			ModificationTime: time.Now().UnixMilli(),
			DataChange:       true,
			Stats:            fmt.Sprintf(`{"numRecords":10,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, i*10, i*10+9),
		}})
		tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
		res, err := tx.Commit(ctx)
		var cerr *conflict.Error
		switch {
		case err == nil:
			o.landed++
			o.retries += res.Attempts - 1
			o.maxAttempts = max(o.maxAttempts, res.Attempts)
			if snap, err = res.Snapshot(); err != nil {
				return outcome{err: err}
			}
			results = append(results, res)
			continue
		case errors.As(err, &cerr):
			o.conflicts[strings.TrimPrefix(cerr.Kind.Error(), "conflict: ")]++
		case errors.Is(err, deltalog.ErrTooManyAttempts):
			o.conflicts["too many attempts"]++
		default:
			return outcome{err: err}
		}
		o.failed++
		if snap, err = open(ctx, st); err != nil {
			return outcome{err: err}
		}
	}
	for _, res := range results {
		_ = res.WaitHooks() // a failed checkpoint never fails a commit
	}
	return o
}

// open reads the latest snapshot, again when the listing ran into a
// commit being created (see test/model's TestOpenWithListingThatMissesACommit).
func open(ctx context.Context, st objstore.Store) (*deltalog.Snapshot, error) {
	for i := 0; ; i++ {
		s, err := deltalog.Open(ctx, st, "")
		if errors.Is(err, deltalog.ErrLogCorrupt) && i < 5 {
			continue
		}
		return s, err
	}
}

// newS3 returns a store in a fresh bucket of the S3 endpoint.
func newS3(b *testing.B) *s3.Store {
	b.Helper()
	ctx := context.Background()
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		b.Fatal(err)
	}
	bucket := "contention-" + hex.EncodeToString(id[:])
	st, err := s3.New(ctx, bucket, "table")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		b.Fatal(err)
	}
	return st
}
