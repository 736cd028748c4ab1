// Package parallel runs independent pieces of work on a bounded number of
// goroutines: the one helper the operations (the writer's partitions,
// DML's files, maintenance's bins and requests) share.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// ForEach calls fn(ctx, i) for every i in [0, n) on up to limit goroutines
// (at least one) and waits for all of them. After the first failure no
// further index is started, and the context fn sees is cancelled, so the
// calls under way can stop early. It returns the error of the lowest index
// that failed, so that the same failures give the same error whatever
// the scheduling; else the parent context's error, if it ended.
func ForEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(max(limit, 1), n) {
		wg.Go(func() {
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					errs[i] = err
					failed.Store(true)
					cancel()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return context.Cause(ctx)
}
