package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestDictionaryChoice: columns whose values are mostly distinct are
// written without a dictionary; columns whose values repeat keep one,
// and every value reads back.
func TestDictionaryChoice(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, v double, code string, name string, day int", nil)
	sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
	b := array.NewRecordBuilder(mem, sc)
	const n = 20_000
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Float64Builder).Append(float64(i) / 7)
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("code-%d", i%50))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i*7919%n))
		b.Field(4).(*array.Int32Builder).Append(int32(i % 365))
	}
	rec := b.NewRecordBatch()
	b.Release()
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	want := map[string]bool{"id": false, "v": false, "code": true, "name": false, "day": true}
	for f := range snap.Files() {
		data, err := store.Get(ctx, "tbl/"+f.Path)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		for c := range md.Schema.NumColumns() {
			name := md.Schema.Column(c).Name()
			chunk, err := md.RowGroup(0).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			hasDict := chunk.HasDictionaryPage()
			for _, e := range chunk.Encodings() {
				if e == parquet.Encodings.RLEDict || e == parquet.Encodings.PlainDict {
					hasDict = true
				}
			}
			if hasDict != want[name] {
				t.Errorf("column %s: dictionary %v, want %v", name, hasDict, want[name])
			}
		}
		pf.Close()
	}
	lines := tabletest.ScanLines(t, snap)
	if len(lines) != n {
		t.Fatalf("read %d rows, want %d", len(lines), n)
	}
}
