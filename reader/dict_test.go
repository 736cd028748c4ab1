package reader_test

import (
	"bytes"
	"context"
	"fmt"
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

// TestDictionaryFileColumn reads a file whose stored Arrow schema makes a
// string column dictionary-typed (as other writers produce), nulls and a
// row group boundary included: the scan gives plain strings, in order.
func TestDictionaryFileColumn(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s string", nil)

	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	fileSchema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: dictType, Nullable: true},
	}, nil)
	const rows = 2500
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	sb := array.NewDictionaryBuilder(memory.DefaultAllocator, dictType).(*array.BinaryDictionaryBuilder)
	defer sb.Release()
	var want []string
	for i := range rows {
		ids.Append(int64(i))
		if i%7 == 3 {
			sb.AppendNull()
			want = append(want, fmt.Sprintf(`{"id":%d,"s":null}`, i))
			continue
		}
		v := fmt.Sprintf("v%02d", i%13)
		if err := sb.AppendString(v); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf(`{"id":%d,"s":%q}`, i, v))
	}
	idArr, sArr := ids.NewArray(), sb.NewArray()
	defer idArr.Release()
	defer sArr.Release()
	rec := array.NewRecordBatch(fileSchema, []arrow.Array{idArr, sArr}, rows)
	defer rec.Release()

	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(fileSchema, &buf,
		parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithMaxRowGroupLength(1000)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
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
	for _, batch := range []int{64, 1000, 4096} {
		mem := tabletest.CheckedMem(t)
		got := collect(t, mustScan(t, tabletest.Open(t, store), reader.WithBatchSize(batch), reader.WithAllocator(mem)))
		tabletest.DiffLines(t, "rows", got, want)
	}
}
