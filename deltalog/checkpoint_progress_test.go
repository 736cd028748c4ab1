package deltalog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// A checkpoint reports the files it writes: from none to all of them.
func TestCheckpointProgress(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	for i := range 5 {
		snap = tabletest.Append(t, snap, fmt.Sprintf(`[{"id":%d}]`, i))
	}
	var calls [][2]int64
	if _, err := snap.Checkpoint(ctx, time.Now(), deltalog.CheckpointProgress(func(done, total int64) {
		calls = append(calls, [2]int64{done, total})
	})); err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 || calls[0] != [2]int64{0, 5} || calls[len(calls)-1] != [2]int64{5, 5} {
		t.Errorf("progress %v, want 0 of 5 first and 5 of 5 last", calls)
	}
}
