package reader_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestPageIndexSkipping compares filtered scans that skip pages by the
// Parquet page index with scans that read every page, over files with
// sorted and shuffled keys, nulls, small pages, several row groups, V1 and
// V2 pages and dictionaries, and filters on one or two integer columns
// mixed with others: the rows must be the same, and some scans must skip.
func TestPageIndexSkipping(t *testing.T) {
	ctx := context.Background()
	preds := []string{
		"id BETWEEN 1200 AND 1350",
		"id = 77",
		"id < 40 OR id > 3950",
		"id IN (5, 1999, 3001)",
		"id >= 2500 AND n < 10",
		"id >= 2500 AND s = 'x7'",
		"id IS NULL",
		"id IS NOT NULL AND id < 100",
		"NOT (id > 30)",
		"n = 3",
		"n BETWEEN 2 AND 4 OR id = 3998",
		"id + 1 = 1000",
		"s = 'x1'",
	}
	skippedSome := false
	for seed := range 6 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		sorted := seed%2 == 0
		version := parquet.DataPageV1
		if seed%3 == 1 {
			version = parquet.DataPageV2
		}
		store := objstore.NewMem()
		tabletest.Create(t, store, "id long, n int, s string", nil)
		snap := tabletest.Open(t, store)
		sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
		const rows = 4000
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for r := range rows {
			id := int64(r)
			if !sorted {
				id = int64(rng.IntN(rows))
			}
			if seed%2 == 1 && rng.IntN(20) == 0 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(id)
			}
			if rng.IntN(10) == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Int32Builder).Append(int32(r / 400))
			}
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("x%d", rng.IntN(9)))
		}
		rec := b.NewRecordBatch()
		b.Release()
		props := parquet.NewWriterProperties(parquet.WithDataPageVersion(version), parquet.WithDictionaryDefault(seed%3 == 2),
			parquet.WithDataPageSize(int64(256+seed*200)), parquet.WithBatchSize(64), parquet.WithMaxRowGroupLength(int64(1000+seed*300)),
			parquet.WithPageIndexEnabled(true), parquet.WithStats(true))
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
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
		for _, p := range preds {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, p), func(t *testing.T) {
				restore := reader.PageIndex(false)
				want := collect(t, mustScan(t, snap, reader.WithFilter(mustParse(t, p)), reader.WithBatchSize(333)))
				restore()
				// Batches of one row on two of the files under the race
				// detector, where they are most of the package's time.
				batches := []int{1, 333, 5000}
				if raceEnabled && seed > 1 {
					batches[0] = 17
				}
				for _, batch := range batches {
					scan := mustScan(t, snap, reader.WithFilter(mustParse(t, p)), reader.WithBatchSize(batch), reader.WithAllocator(tabletest.CheckedMem(t)))
					got := collect(t, scan)
					tabletest.DiffLines(t, "rows", got, want)
					m := scan.Metrics()
					if m.RowsRead < rows {
						skippedSome = true
					}
					// What the page index rules out is what is not
					// decoded.
					if m.RowsRead+m.RowsSkippedByPageIndex != rows || (m.RowsSkippedByPageIndex > 0) != (m.FilesUsingPageIndex == 1) {
						t.Errorf("batch %d: %d rows decoded, %d skipped by the page index in %d files; the file has %d", batch, m.RowsRead, m.RowsSkippedByPageIndex, m.FilesUsingPageIndex, rows)
					}
				}
			})
		}
	}
	if !skippedSome {
		t.Fatal("no scan skipped a page")
	}
}
