// Package tabletest holds the fixtures the packages' tests share: small
// tables created from a DDL schema, rows appended from JSON, a table read
// back as sorted canonical rows, row-set differences, and the checked
// Arrow allocator. Tests of reader, writer, dml, maintenance and the
// others import it (from their external test packages); nothing else
// does.
package tabletest

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

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

// Root is the table's root in the store the fixtures work on.
const Root = "tbl"

// CheckedMem returns an allocator that fails the test when something it
// allocated is not released by the end of the test.
func CheckedMem(t testing.TB) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// Create creates an empty table at Root in store with the schema (DDL,
// or its JSON form when it starts with '{'), properties and partition
// columns, and returns its snapshot.
func Create(t testing.TB, store objstore.Store, schema string, props map[string]string, parts ...string) *deltalog.Snapshot {
	t.Helper()
	var st *actions.StructType
	var err error
	if strings.HasPrefix(schema, "{") {
		st, err = actions.ParseSchema(schema)
	} else {
		st, err = actions.ParseDDL(schema)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(st)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(store, Root, &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return Open(t, store)
}

// Open opens the table at Root in store.
func Open(t testing.TB, store objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, Root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// RecordJSON is a batch of the Arrow schema sc from a JSON array of row
// objects, allocated from mem; the caller releases it.
func RecordJSON(t testing.TB, mem memory.Allocator, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("record from JSON: %v", err)
	}
	return rec
}

// Batch is a batch of the table's logical schema from a JSON array of row
// objects (RecordJSON).
func Batch(t testing.TB, mem memory.Allocator, snap *deltalog.Snapshot, rows string) arrow.RecordBatch {
	t.Helper()
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	return RecordJSON(t, mem, sc, rows)
}

// Batches yields recs in order, and releases them when the test ends.
func Batches(t testing.TB, recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	t.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Append appends rows (a JSON array of objects in the table's Arrow form)
// on top of snap, through a checked allocator unless opts name another,
// and returns the snapshot of the commit.
func Append(t testing.TB, snap *deltalog.Snapshot, rows string, opts ...writer.Option) *deltalog.Snapshot {
	t.Helper()
	mem := CheckedMem(t)
	opts = append([]writer.Option{writer.WithAllocator(mem)}, opts...)
	res, err := writer.Append(context.Background(), snap, Batches(t, Batch(t, mem, snap, rows)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// AppendTo appends rows to the latest version of the table at Root in
// store (Append) and returns the table opened again.
func AppendTo(t testing.TB, store objstore.Store, rows string, opts ...writer.Option) *deltalog.Snapshot {
	t.Helper()
	Append(t, Open(t, store), rows, opts...)
	return Open(t, store)
}

// Lines reads a scan's rows in canonical form (reader.CanonicalRows),
// sorted.
func Lines(ctx context.Context, sc *reader.Scan) ([]string, error) {
	var lines []string
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return nil, err
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines, nil
}

// ScanLines reads the snapshot's rows with the scan options, in canonical
// form, sorted.
func ScanLines(t testing.TB, snap *deltalog.Snapshot, opts ...reader.Option) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Lines(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// Sorted is the lines, sorted (a copy).
func Sorted(lines ...string) []string {
	out := slices.Clone(lines)
	slices.Sort(out)
	return out
}

// DiffLines fails the test, naming what, when got and want are not the
// same lines (in the same order); it shows the lines one has more of than
// the other.
func DiffLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	var extra, missing []string
	for k, n := range count {
		for ; n > 0; n-- {
			extra = append(extra, k)
		}
		for ; n < 0; n++ {
			missing = append(missing, k)
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	if len(extra) == 0 && len(missing) == 0 {
		t.Errorf("%s: the same %d rows in another order:\n got: %s\nwant: %s", what, len(got), strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		return
	}
	t.Errorf("%s: got %d rows, want %d\n unexpected: %s\n    missing: %s", what, len(got), len(want), strings.Join(extra, "\n             "), strings.Join(missing, "\n             "))
}

// MinIOURI is the URI of a fresh prefix in a new bucket of the MinIO
// that AWS_ENDPOINT_URL names (cloudtest.Require: fails under CI=true
// without it, skips otherwise).
func MinIOURI(t testing.TB) string {
	t.Helper()
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("lakelog-ex-")
	st, err := s3.New(t.Context(), bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return "s3://" + bucket + "/" + cloudtest.Name("t-")
}
