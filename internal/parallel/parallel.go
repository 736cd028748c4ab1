// Package parallel runs independent pieces of work on a bounded number of
// goroutines: the one helper the operations (the writer's partitions,
// DML's files, maintenance's bins and requests) share.
package parallel

import (
	"context"
	"iter"
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

// Stream runs run on each job that jobs(ctx) yields, up to limit at once
// (at least one), and yields what the runs emit in job order: every
// output of the first job, then of the second, and so on, whatever order
// they finish in. A run emits at most ahead outputs (at least one) in
// front of the consumer before emit blocks; emit returns false once the
// stream is stopping, and the run should then return. A job's error (from
// jobs, or run's return) is yielded in its place, after the outputs
// emitted before it, and ends the stream; so does the end of ctx. When the
// consumer stops, or ctx ends, the jobs and the runs are cancelled (the
// context they are given), and release is called on every output that
// was emitted and not yielded; when the sequence returns, every goroutine
// Stream started has ended. An output yielded is the consumer's.
func Stream[J, T any](ctx context.Context, jobs func(ctx context.Context) iter.Seq2[J, error], limit, ahead int, run func(ctx context.Context, j J, emit func(T) bool) error, release func(T)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		parent := ctx
		ctx, cancel := context.WithCancel(parent)
		defer cancel()
		outs := make(chan chan streamItem[T], max(limit, 1))
		slots := make(chan struct{}, max(limit, 1))
		var wg sync.WaitGroup
		send := func(out chan streamItem[T], it streamItem[T]) bool {
			select {
			case out <- it:
				return true
			case <-ctx.Done():
				if it.err == nil {
					release(it.v)
				}
				return false
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(outs)
			for j, err := range jobs(ctx) {
				out := make(chan streamItem[T], max(ahead, 1))
				if err != nil {
					out <- streamItem[T]{err: err}
					close(out)
				} else {
					select {
					case slots <- struct{}{}:
					case <-ctx.Done():
						return
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer func() { <-slots }()
						defer close(out)
						emit := func(v T) bool { return send(out, streamItem[T]{v: v}) }
						if err := run(ctx, j, emit); err != nil {
							send(out, streamItem[T]{err: err})
						}
					}()
				}
				select {
				case outs <- out:
				case <-ctx.Done():
					drainItems(out, release)
					return
				}
				if err != nil {
					return
				}
			}
		}()
		var cur chan streamItem[T]
		defer func() {
			cancel()
			if cur != nil {
				drainItems(cur, release)
			}
			for out := range outs {
				drainItems(out, release)
			}
			wg.Wait()
		}()
		var zero T
		for out := range outs {
			cur = out
			for it := range out {
				if it.err != nil {
					yield(zero, it.err)
					return
				}
				if !yield(it.v, nil) {
					return
				}
			}
			cur = nil
		}
		if err := parent.Err(); err != nil {
			yield(zero, err)
		}
	}
}

// streamItem is an output of a run, or its error.
type streamItem[T any] struct {
	v   T
	err error
}

// drainItems releases the outputs of a run until it closes its channel.
func drainItems[T any](out chan streamItem[T], release func(T)) {
	for it := range out {
		if it.err == nil {
			release(it.v)
		}
	}
}
