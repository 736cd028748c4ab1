package cloud

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/writer"
)

// appendMB is the size of the Arrow input of BenchmarkAppendS3: about the
// size of the table it writes, as its payload does not compress.
var appendMB = flag.Int("append.mb", 256, "MB of rows BenchmarkAppendS3 appends (1024 for the issue's 1 GB)")

// appendRows yields about mb MB of rows: an id and 120 bytes of random
// letters that do not compress.
func appendRows(mb int) iter.Seq2[arrow.RecordBatch, error] {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const rowBytes, batch = 8 + 120, 16384
	rows := int64(mb) << 20 / rowBytes
	return func(yield func(arrow.RecordBatch, error) bool) {
		r := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 120)
		for lo := int64(0); lo < rows; lo += batch {
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for id := lo; id < min(lo+batch, rows); id++ {
				b.Field(0).(*array.Int64Builder).Append(id)
				for i := range buf {
					buf[i] = 'a' + byte(r.IntN(26))
				}
				b.Field(1).(*array.StringBuilder).Append(string(buf))
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

// BenchmarkAppendS3 appends -append.mb MB to a fresh table on MinIO, in
// files of 128 MB uploaded in parts of 8 MB, with 1 part in flight per
// file (what the store did before) and with 4 (its default now). The
// table is created outside the timer. MB/s is of the input.
func BenchmarkAppendS3(b *testing.B) {
	need(b, "AWS_ENDPOINT_URL")
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("parts-in-flight=%d", conc), func(b *testing.B) {
			ctx := context.Background()
			base := newS3(b)
			b.SetBytes(int64(*appendMB) << 20)
			for b.Loop() {
				b.StopTimer()
				st, err := s3.New(ctx, base.Bucket(), "append-"+runID(), s3.WithPartSize(8<<20), s3.WithPartConcurrency(conc))
				if err != nil {
					b.Fatal(err)
				}
				snap := createAppendTable(b, ctx, st)
				b.StartTimer()
				if _, err := writer.Append(ctx, snap, appendRows(*appendMB), writer.WithTargetFileSize(128<<20)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func createAppendTable(b *testing.B, ctx context.Context, st objstore.Store) *deltalog.Snapshot {
	b.Helper()
	schema, err := actions.ParseDDL("id long, payload string")
	if err != nil {
		b.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		b.Fatal(err)
	}
	tx, err := deltalog.Create(st, "tbl", &actions.Metadata{SchemaString: s})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "tbl")
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkStreamS3 streams -append.mb MB through objstore.NewWriter to
// MinIO in parts of 8 MB, 1 and 4 in flight: the upload alone, without
// encoding.
func BenchmarkStreamS3(b *testing.B) {
	need(b, "AWS_ENDPOINT_URL")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("parts-in-flight=%d", conc), func(b *testing.B) {
			ctx := context.Background()
			base := newS3(b)
			st, err := s3.New(ctx, base.Bucket(), "stream-"+runID(), s3.WithPartSize(8<<20), s3.WithPartConcurrency(conc))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(*appendMB) << 20)
			n := 0
			for b.Loop() {
				w, err := objstore.NewWriter(ctx, st, fmt.Sprintf("obj-%d", n), objstore.PutOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for range *appendMB {
					if _, err := w.Write(chunk); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	}
}
