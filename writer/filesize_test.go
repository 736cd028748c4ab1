package writer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestFileSizeNearTarget writes batches that each encode to more than
// half the target file size: files are cut inside a batch, near the
// target, rather than after the batch that crosses it.
func TestFileSizeNearTarget(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	const rowsPerBatch, numBatches = 4000, 12
	batch := func(store objstore.Store, k int) arrow.RecordBatch {
		snap := tabletest.Open(t, store)
		sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
		b := array.NewRecordBuilder(mem, sc)
		defer b.Release()
		for i := k * rowsPerBatch; i < (k+1)*rowsPerBatch; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15))
		}
		return b.NewRecordBatch()
	}

	// The encoded size of one batch, written alone.
	probe := objstore.NewMem()
	tabletest.Create(t, probe, "id long, s string", nil)
	if _, err := writer.Append(ctx, tabletest.Open(t, probe), tabletest.Batches(t, batch(probe, 0)), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	var batchBytes int64
	for f := range tabletest.Open(t, probe).Files() {
		batchBytes += f.Size
	}

	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s string", nil)
	var recs []arrow.RecordBatch
	for k := range numBatches {
		recs = append(recs, batch(store, k))
	}
	target := batchBytes * 5 / 4 // a file holds 1.25 batches
	if _, err := writer.Append(ctx, tabletest.Open(t, store), tabletest.Batches(t, recs...), writer.WithAllocator(mem), writer.WithTargetFileSize(target)); err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Open(t, store)
	if snap.NumFiles() < 3 {
		t.Fatalf("%d files, want several", snap.NumFiles())
	}
	var total int64
	n := 0
	for f := range snap.Files() {
		st, err := actions.ParseStats(f.Stats)
		if err != nil || st == nil {
			t.Fatal(err)
		}
		total += st.NumRecords
		if n++; n == snap.NumFiles() {
			break // the last file holds what is left
		}
		if f.Size > target*6/5 || f.Size < target*4/5 {
			t.Errorf("file %s has %d bytes, want about the target %d (one batch encodes to %d)", f.Path, f.Size, target, batchBytes)
		}
	}
	if total != rowsPerBatch*numBatches {
		t.Errorf("numRecords total %d, want %d", total, rowsPerBatch*numBatches)
	}
}
