package reader_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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

// TestStringColumnsAcrossPages reads string and binary columns, which the
// reader decodes itself, from a file with small pages and row groups:
// batches that end inside pages and cross row groups, nulls, empty and
// long values, and a dictionary-encoded column that falls back to plain
// encoding part way through a chunk. Every row comes back as written,
// with the scans' pooled allocator and with a checked one.
func TestStringColumnsAcrossPages(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s string, b binary, d string", nil)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const rows = 3000
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	var want []string
	str := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	for i := range rows {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		s := "null"
		switch {
		case i%11 == 5:
			bld.Field(1).(*array.StringBuilder).AppendNull()
		case i%13 == 7:
			bld.Field(1).(*array.StringBuilder).Append("")
			s = `""`
		default:
			v := fmt.Sprintf("é-%d-%s", i, strings.Repeat("日本", i%37))
			bld.Field(1).(*array.StringBuilder).Append(v)
			s = str(v)
		}
		b := "null"
		if i%4 == 0 {
			bld.Field(2).(*array.BinaryBuilder).AppendNull()
		} else {
			v := []byte{byte(i), 0, byte(i >> 8), 0xff}
			bld.Field(2).(*array.BinaryBuilder).Append(v)
			b = `"` + base64.StdEncoding.EncodeToString(v) + `"`
		}
		// Few distinct values at first (a dictionary), then many (plain).
		dv := fmt.Sprintf("k%d", i%5)
		if i >= 400 {
			dv = fmt.Sprintf("unique-%06d", i)
		}
		bld.Field(3).(*array.StringBuilder).Append(dv)
		want = append(want, fmt.Sprintf(`{"id":%d,"s":%s,"b":%s,"d":%s}`, i, s, b, str(dv)))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf,
		parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("d", true),
			parquet.WithDictionaryPageSizeLimit(2048), parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(1100)),
		pqarrow.DefaultWriterProps())
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
	tx := tabletest.Open(t, store).NewTransaction()
	tx.Add(actions.Action{Add: &actions.Add{Path: "part-0.parquet", PartitionValues: map[string]*string{}, Size: int64(buf.Len()), DataChange: true}})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// With page-by-page decoding off, the strings go through
	// byteArrayColumn, which other encodings need.
	for _, pages := range []bool{true, false} {
		_, restore := reader.PageColumns(pages)
		stringBatches(t, store, rows, want, pages)
		restore()
	}
}

func stringBatches(t *testing.T, store objstore.Store, rows int, want []string, pages bool) {
	for _, batch := range []int{1, 333, 1100, 4096} {
		t.Run(fmt.Sprintf("pages=%v/batch=%d", pages, batch), func(t *testing.T) {
			got := collect(t, mustScan(t, tabletest.Open(t, store), reader.WithBatchSize(batch)))
			tabletest.DiffLines(t, "rows", got, want)
			got = collect(t, mustScan(t, tabletest.Open(t, store), reader.WithBatchSize(batch), reader.WithAllocator(tabletest.CheckedMem(t))))
			tabletest.DiffLines(t, "rows", got, want)
			// Only the string columns, so that no column goes through pqarrow.
			got = collect(t, mustScan(t, tabletest.Open(t, store), reader.WithBatchSize(batch), reader.WithColumns("s", "d")))
			if len(got) != rows {
				t.Fatalf("%d rows of s and d, want %d", len(got), rows)
			}
		})
	}
}
