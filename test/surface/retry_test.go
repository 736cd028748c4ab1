package surface_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestRetryOnConflict: writers that each DELETE or UPDATE their own rows
// of one file conflict with each other (each removes the file the others
// read); with RetryOnConflict every one of them lands, each once, and
// the table ends with exactly their changes. Without it, some fail with
// a conflict, which is what makes the test able to fail.
func TestRetryOnConflict(t *testing.T) {
	const writers = 6
	run := func(t *testing.T, retry bool) (failed int, attempts int64) {
		ctx := context.Background()
		st := objstore.NewMem()
		snap := tabletest.Create(t, st, "k long, v string", nil)
		var rows []string
		for k := range 2 * writers {
			rows = append(rows, fmt.Sprintf(`{"k":%d,"v":"a"}`, k))
		}
		tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			errs  []error
			tries atomic.Int64
			start = make(chan struct{})
		)
		for w := range writers {
			wg.Go(func() {
				<-start
				op := func(snap *deltalog.Snapshot) error {
					tries.Add(1)
					var err error
					if w%2 == 0 {
						_, err = dml.Delete(ctx, snap, expr.Col("k").Eq(int64(w)))
					} else {
						_, err = dml.Update(ctx, snap, expr.Col("k").Eq(int64(w)), []*expr.Assignment{{Column: expr.Col("v"), Value: expr.Lit("b")}})
					}
					return err
				}
				var err error
				if retry {
					err = deltalog.RetryOnConflict(ctx, st, tabletest.Root, op, deltalog.RetryBackoff(time.Millisecond, 20*time.Millisecond), deltalog.RetryAttempts(50))
				} else {
					var s *deltalog.Snapshot
					if s, err = deltalog.Open(ctx, st, tabletest.Root); err == nil {
						err = op(s)
					}
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if !errors.Is(err, conflict.ErrConflict) {
				t.Fatalf("a writer failed with %v, not a conflict", err)
			}
		}
		if retry {
			if len(errs) > 0 {
				t.Fatalf("%d writers failed with retries: %v", len(errs), errs[0])
			}
			var want []string
			for k := range 2 * writers {
				switch {
				case k < writers && k%2 == 0: // deleted
				case k < writers:
					want = append(want, fmt.Sprintf(`{"k":%d,"v":"b"}`, k))
				default:
					want = append(want, fmt.Sprintf(`{"k":%d,"v":"a"}`, k))
				}
			}
			tabletest.DiffLines(t, "rows", tabletest.Sorted(tabletest.ScanLines(t, tabletest.Open(t, st))...), tabletest.Sorted(want...))
			if v := tabletest.Open(t, st).Version(); v != 1+writers {
				t.Errorf("version %d, want %d: one commit per writer", v, 1+writers)
			}
		}
		return len(errs), tries.Load()
	}
	// Without retries the writers conflict; a run in which the goroutines
	// happened to go one after another proves nothing, so try a few.
	conflicted := false
	for range 5 {
		if n, _ := run(t, false); n > 0 {
			conflicted = true
			break
		}
	}
	if !conflicted {
		t.Fatal("no writer conflicted without retries: the test cannot tell whether retries work")
	}
	_, tries := run(t, true)
	t.Logf("%d writers, %d attempts with RetryOnConflict", writers, tries)
}

// TestRetryOnConflictGivesUp: an operation that always conflicts is run
// RetryAttempts times, and its conflict is returned; other errors are
// not retried.
func TestRetryOnConflictGivesUp(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	tabletest.Create(t, st, "k long", nil)
	n := 0
	err := deltalog.RetryOnConflict(ctx, st, tabletest.Root, func(*deltalog.Snapshot) error {
		n++
		return fmt.Errorf("op: %w", conflict.ErrConcurrentAppend)
	}, deltalog.RetryAttempts(3), deltalog.RetryBackoff(time.Millisecond, time.Millisecond))
	if n != 3 || !errors.Is(err, conflict.ErrConcurrentAppend) {
		t.Errorf("%d attempts, %v; want 3 and the conflict", n, err)
	}
	n = 0
	boom := errors.New("boom")
	err = deltalog.RetryOnConflict(ctx, st, tabletest.Root, func(*deltalog.Snapshot) error { n++; return boom })
	if n != 1 || !errors.Is(err, boom) {
		t.Errorf("%d attempts, %v; want 1 and the error", n, err)
	}
	if err := deltalog.RetryOnConflict(ctx, st, tabletest.Root, nil); err == nil {
		t.Error("nil op: no error")
	}
}
