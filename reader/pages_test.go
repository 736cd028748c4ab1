package reader_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestFlatColumnsPageByPage reads every flat type the reader decodes page
// by page (long, int, double, float, date, timestamp, timestamp_ntz,
// string, binary), nullable and required, from files written with V1 and
// V2 data pages, small pages, several row groups and dictionaries that
// fall back to plain encoding part way: the rows equal those of the
// generic pqarrow path, for several batch sizes, with the scans' pooled
// allocator and with a checked one.
func TestFlatColumnsPageByPage(t *testing.T) {
	ctx := context.Background()
	for _, version := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		t.Run(fmt.Sprint("pages=v", int(version)+1), func(t *testing.T) {
			store := objstore.NewMem()
			tabletest.Create(t, store, "l long not null, i int, d double, f float, dt date, ts timestamp, tn timestamp_ntz, s string, b binary, few long", nil)
			snap := tabletest.Open(t, store)
			sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
			if err != nil {
				t.Fatal(err)
			}
			const rows = 5000
			bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer bld.Release()
			for r := range rows {
				null := func(k int) bool { return (r+k)%(7+k) == 0 }
				bld.Field(0).(*array.Int64Builder).Append(int64(r) * 1_000_003)
				appendOr(null(1), bld.Field(1), func() { bld.Field(1).(*array.Int32Builder).Append(int32(r % 300)) })
				appendOr(null(2), bld.Field(2), func() { bld.Field(2).(*array.Float64Builder).Append(float64(r) / 3) })
				appendOr(null(3), bld.Field(3), func() { bld.Field(3).(*array.Float32Builder).Append(float32(r % 50)) })
				appendOr(null(4), bld.Field(4), func() { bld.Field(4).(*array.Date32Builder).Append(arrow.Date32(18000 + r%400)) })
				appendOr(null(5), bld.Field(5), func() {
					bld.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(time.Date(2024, 1, 1, 0, 0, r, r*1000, time.UTC).UnixMicro()))
				})
				appendOr(null(6), bld.Field(6), func() { bld.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(r) * 1_000_000)) })
				appendOr(null(7), bld.Field(7), func() { bld.Field(7).(*array.StringBuilder).Append(fmt.Sprintf("s%d", r%(1+r/100))) })
				appendOr(null(8), bld.Field(8), func() { bld.Field(8).(*array.BinaryBuilder).Append([]byte{byte(r), byte(r >> 8)}) })
				appendOr(null(9), bld.Field(9), func() { bld.Field(9).(*array.Int64Builder).Append(int64(r % 3)) })
			}
			rec := bld.NewRecordBatch()
			defer rec.Release()
			props := parquet.NewWriterProperties(parquet.WithDataPageVersion(version), parquet.WithDictionaryDefault(true),
				parquet.WithDictionaryPageSizeLimit(4096), parquet.WithDataPageSize(1024), parquet.WithMaxRowGroupLength(1700),
				parquet.WithCompression(0))
			var buf bytes.Buffer
			w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteBuffered(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := store.Put(ctx, "tbl/part-0.parquet", bytes.NewReader(buf.Bytes()), objstore.PutOptions{Size: int64(buf.Len())}); err != nil {
				t.Fatal(err)
			}
			tx := snap.NewTransaction()
			tx.Add(actions.Action{Add: &actions.Add{Path: "part-0.parquet", PartitionValues: map[string]*string{}, Size: int64(buf.Len()), DataChange: true}})
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)

			_, restore := reader.PageColumns(false)
			want := collect(t, mustScan(t, snap, reader.WithBatchSize(4096)))
			restore()
			if len(want) != rows {
				t.Fatalf("generic path: %d rows", len(want))
			}
			used, restore := reader.PageColumns(true)
			defer restore()
			before := used()
			for _, batch := range []int{1, 999, 1700, 8192} {
				got := collect(t, mustScan(t, snap, reader.WithBatchSize(batch)))
				tabletest.DiffLines(t, "rows", got, want)
				got = collect(t, mustScan(t, snap, reader.WithBatchSize(batch), reader.WithAllocator(tabletest.CheckedMem(t))))
				tabletest.DiffLines(t, "rows", got, want)
			}
			if used() == before {
				t.Fatal("no column was decoded page by page")
			}
		})
	}
}

func appendOr(null bool, b array.Builder, appendValue func()) {
	if null && b.Type().ID() != arrow.INT64 || null && b.Len()%2 == 1 {
		b.AppendNull()
		return
	}
	appendValue()
}
