package writer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// slowPuts is a store whose data file uploads take a while, as a PUT to
// an object store does; it records how many run at once and can fail
// them. It has no writer of its own, so uploads go through Put.
type slowPuts struct {
	objstore.Store
	delay     time.Duration
	fail      bool
	inFlight  atomic.Int32
	maxFlight atomic.Int32
}

func (s *slowPuts) Put(ctx context.Context, key string, body io.Reader, opts objstore.PutOptions) error {
	if !strings.HasSuffix(key, ".parquet") {
		return s.Store.Put(ctx, key, body, opts)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxFlight.Load()
		if n <= m || s.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(s.delay)
	if s.fail {
		return errors.New("injected upload failure")
	}
	return s.Store.Put(ctx, key, strings.NewReader(string(data)), opts)
}

func manyFilesInput(t *testing.T, sc *arrow.Schema, batches, rows int) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	for k := range batches {
		b := array.NewRecordBuilder(tabletest.CheckedMem(t), sc)
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(k*rows + i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%016x", uint64(k*rows+i)*0x9e3779b97f4a7c15))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	return recs
}

// TestUploadsOverlapEncoding: a finished file's upload completes in the
// background while the next files are encoded, so on a store where each
// upload takes a while several are in flight, and every file is there.
func TestUploadsOverlapEncoding(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	store := &slowPuts{Store: mem, delay: 30 * time.Millisecond}
	tabletest.Create(t, mem, "id long, s string", nil)
	snap := tabletest.Open(t, store)
	sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
	recs := manyFilesInput(t, sc, 12, 2000)
	_, err := writer.Append(ctx, snap, tabletest.Batches(t, recs...), writer.WithTargetFileSize(16<<10))
	if err != nil {
		t.Fatal(err)
	}
	after := tabletest.Open(t, mem)
	if after.NumFiles() < 6 {
		t.Fatalf("%d files, want several", after.NumFiles())
	}
	if got := store.maxFlight.Load(); got < 2 {
		t.Errorf("at most %d upload in flight; a finished file's upload should overlap the next file's encoding", got)
	}
	if got, want := int64(len(tabletest.ScanLines(t, after))), int64(12*2000); got != want {
		t.Errorf("read %d rows, wrote %d", got, want)
	}
}

// TestFailedBackgroundUploadCommitsNothing: a background upload that
// fails fails the write, which commits nothing.
func TestFailedBackgroundUploadCommitsNothing(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	store := &slowPuts{Store: mem, delay: time.Millisecond, fail: true}
	tabletest.Create(t, mem, "id long, s string", nil)
	snap := tabletest.Open(t, store)
	sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
	recs := manyFilesInput(t, sc, 6, 2000)
	_, err := writer.Append(ctx, snap, tabletest.Batches(t, recs...), writer.WithTargetFileSize(16<<10))
	if err == nil || !strings.Contains(err.Error(), "injected upload failure") {
		t.Fatalf("err = %v, want the upload's failure", err)
	}
	if v := tabletest.Open(t, mem).Version(); v != 0 {
		t.Errorf("table at version %d after a failed write, want 0", v)
	}
}
