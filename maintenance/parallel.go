package maintenance

import (
	"context"
	"encoding/json"

	"golang.org/x/sync/errgroup"
)

// headParallelism bounds the concurrent requests of an existence check or
// a batch of deletes: object stores answer them one at a time, so many
// are in flight at once.
const headParallelism = 32

// parallel runs fn(ctx, i) for i in [0, n) on up to workers goroutines
// and returns the first error; the others' context is cancelled then.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
