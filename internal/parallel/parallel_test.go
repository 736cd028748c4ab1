package parallel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestForEachRunsEveryIndexOnce: every index is called exactly once, and
// never more than limit at a time.
func TestForEachRunsEveryIndexOnce(t *testing.T) {
	for _, limit := range []int{0, 1, 3, 64} {
		const n = 200
		var calls [n]atomic.Int32
		var running, peak atomic.Int32
		err := ForEach(context.Background(), n, limit, func(_ context.Context, i int) error {
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			time.Sleep(50 * time.Microsecond)
			running.Add(-1)
			calls[i].Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("limit %d: index %d called %d times", limit, i, c)
			}
		}
		if want := int32(max(limit, 1)); peak.Load() > want {
			t.Fatalf("limit %d: %d ran at once", limit, peak.Load())
		}
	}
}

// TestForEachFirstErrorByIndex: the error of the lowest failing index is
// returned whatever the order of failures, no index starts after a
// failure is seen, and the others see their context cancelled.
func TestForEachFirstErrorByIndex(t *testing.T) {
	for range 20 {
		var started atomic.Int32
		err := ForEach(context.Background(), 100, 4, func(ctx context.Context, i int) error {
			started.Add(1)
			switch i {
			case 7:
				time.Sleep(2 * time.Millisecond)
				return fmt.Errorf("index %d", i)
			case 5:
				return fmt.Errorf("index %d", i)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Millisecond):
			}
			return nil
		})
		if err == nil || err.Error() != "index 5" {
			t.Fatalf("err %v", err)
		}
		if started.Load() == 100 {
			t.Fatal("every index started after a failure")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ForEach(ctx, 10, 2, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled parent: %v", err)
	}
}
