package maintenance_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// OPTIMIZE reports its progress in rows as it reads each bin's batches,
// so that one large bin moves too: done grows to the bins' rows (deleted
// rows left out), and never past them.
func TestOptimizeProgressInRows(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, region string", map[string]string{"delta.enableDeletionVectors": "true"})
	for f := range 3 { // three files of 3,000 rows, read in batches of 1,000
		var rows []string
		for i := range 3000 {
			rows = append(rows, fmt.Sprintf(`{"id":%d,"region":"US"}`, f*3000+i))
		}
		snap = tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
	}
	var mu sync.Mutex
	var calls [][2]int
	_, err := maintenance.Optimize(ctx, snap, maintenance.OptimizeProgress(func(done, total int) {
		mu.Lock()
		calls = append(calls, [2]int{done, total})
		mu.Unlock()
	}), maintenance.OptimizeWriterOptions(writer.WithTargetFileSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 3 {
		t.Fatalf("progress called %d times: %v", len(calls), calls)
	}
	last := calls[len(calls)-1]
	if last != [2]int{9000, 9000} {
		t.Errorf("last progress %v, want 9000 of 9000", last)
	}
	for i, c := range calls {
		if c[1] != 9000 || c[0] > c[1] || i > 0 && c[0] < calls[i-1][0] {
			t.Errorf("progress %v after %v", c, calls[max(0, i-1)])
		}
	}
}
