package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer"
)

// TestNoEmptyRowGroups writes random inputs with small targets and
// buffers, so that files are cut at row group boundaries and buffers are
// exceeded, and checks that no file's footer records an empty row group
// (DataFusion over object_store could not read such a file: it asks for
// the empty byte range of its column chunks) and that every row is there.
func TestNoEmptyRowGroups(t *testing.T) {
	ctx := context.Background()
	seed := testseed.From(t, "ROWGROUPS_SEED")
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 12 {
		store := objstore.NewMem()
		var parts []string
		if round%2 == 1 {
			parts = []string{"p"}
		}
		snap := tabletest.Create(t, store, "id long, p string, s string", nil, parts...)
		sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
		var recs []arrow.RecordBatch
		total, next := 0, 0
		for range 1 + rng.IntN(12) {
			b := array.NewRecordBuilder(tabletest.CheckedMem(t), sc)
			n := 1 + rng.IntN(5000)
			for range n {
				b.Field(0).(*array.Int64Builder).Append(int64(next))
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%d", rng.IntN(4)))
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("%x", rng.Uint64()))
				next++
			}
			recs = append(recs, b.NewRecordBatch())
			b.Release()
			total += n
		}
		opts := []writer.Option{writer.WithTargetFileSize(int64(4<<10 + rng.IntN(64<<10)))}
		if rng.IntN(2) == 0 {
			opts = append(opts, writer.WithBufferSize(int64(1<<10+rng.IntN(32<<10))))
		}
		if _, err := writer.Append(ctx, snap, tabletest.Batches(t, recs...), opts...); err != nil {
			t.Fatal(err)
		}
		rows := int64(0)
		for f := range tabletest.Open(t, store).Files() {
			rel, err := actions.UnescapePath(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			body, err := store.Get(ctx, "tbl/"+rel)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := file.NewParquetReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, f.Path, err)
			}
			for rg := range pf.NumRowGroups() {
				if n := pf.MetaData().RowGroup(rg).NumRows(); n == 0 {
					t.Errorf("round %d: %s: row group %d of %d is empty", round, f.Path, rg, pf.NumRowGroups())
				}
			}
			rows += pf.NumRows()
			pf.Close()
		}
		if rows != int64(total) {
			t.Errorf("round %d: files hold %d rows, wrote %d", round, rows, total)
		}
	}
}
