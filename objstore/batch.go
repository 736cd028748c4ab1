package objstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// BatchDeleter is implemented by stores that delete many keys at once:
// S3 with DeleteObjects (1,000 keys a request), Azure with a blob batch
// (256), GCS with a JSON API batch (100); the local and in-memory stores
// delete a batch in one call too. [DeleteKeys] uses it.
type BatchDeleter interface {
	// DeleteBatch deletes keys, at most MaxDeleteBatch of them. A
	// missing key is not an error. When the store deleted some keys and
	// not others it returns a *[DeleteError] naming those it did not;
	// any other error is about the whole request, and no key of it may
	// be taken as deleted.
	DeleteBatch(ctx context.Context, keys []string) error
	// MaxDeleteBatch is the most keys one DeleteBatch takes.
	MaxDeleteBatch() int
}

// DeleteError is a batch delete that left some keys in place.
type DeleteError struct {
	// Keys are the keys not deleted, and Errs why, one per key.
	Keys []string
	Errs []error
}

func (e *DeleteError) Error() string {
	if len(e.Keys) == 0 {
		return "objstore: batch delete: no key failed"
	}
	msg := fmt.Sprintf("objstore: batch delete: %d keys not deleted, first %q: %v", len(e.Keys), e.Keys[0], e.Errs[0])
	return msg
}

// Unwrap returns the keys' errors.
func (e *DeleteError) Unwrap() []error { return e.Errs }

// DeleteOptions tune [DeleteKeys].
type DeleteOptions struct {
	// Concurrency bounds the delete requests in flight: 16 by default.
	Concurrency int
	// Retry bounds how often a key a batch reported not deleted is tried
	// again (Attempts in all), with its backoff; the request itself is
	// retried by the store's client. Zero fields take the defaults.
	Retry RetryPolicy
	// Progress, when set, is called after each request (from one
	// goroutine at a time) with the number of keys deleted so far.
	Progress func(deleted int)
}

// DeleteKeys deletes keys from s under a budget of Concurrency requests
// in flight: in batches of MaxDeleteBatch when s is a [BatchDeleter],
// else with one Delete per key. Keys a batch reports not deleted are
// retried, alone in later batches, with backoff; a key that still fails
// fails the call. It returns how many keys were deleted (missing keys
// count as deleted) and the first error; after an error, keys not yet
// sent are not deleted.
func DeleteKeys(ctx context.Context, s Store, keys []string, opts DeleteOptions) (int, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	policy := opts.Retry.WithDefaults()
	var mu struct {
		sync.Mutex
		deleted int
	}
	report := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		mu.deleted += n
		if opts.Progress != nil && n > 0 {
			opts.Progress(mu.deleted)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	bd, batched := s.(BatchDeleter)
	size := 1
	if batched {
		size = max(bd.MaxDeleteBatch(), 1)
	}
	for b := 0; b < len(keys); b += size {
		if gctx.Err() != nil {
			break
		}
		batch := keys[b:min(b+size, len(keys))]
		g.Go(func() error {
			if !batched {
				if err := s.Delete(gctx, batch[0]); err != nil {
					return err
				}
				report(1)
				return nil
			}
			return deleteBatch(gctx, bd, batch, policy, report)
		})
	}
	err := g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	return mu.deleted, err
}

// deleteBatch deletes one batch, retrying the keys the store reports not
// deleted.
func deleteBatch(ctx context.Context, bd BatchDeleter, keys []string, p RetryPolicy, report func(int)) error {
	for attempt := 1; ; attempt++ {
		err := bd.DeleteBatch(ctx, keys)
		var de *DeleteError
		if !errors.As(err, &de) {
			if err == nil {
				report(len(keys))
			}
			return err
		}
		report(len(keys) - len(de.Keys))
		if attempt >= p.Attempts || len(de.Keys) == 0 {
			return err
		}
		keys = de.Keys
		wait := min(p.MaxDelay, p.BaseDelay<<min(attempt-1, 20))
		t := time.NewTimer(time.Duration(rand.Int64N(int64(wait) + 1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("objstore: batch delete: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// ListRanges lists prefix as List does, in ranges listed concurrently:
// splits (keys or any strings, in any order) cut the key space into
// ranges, each listed by its own List from the split before it, at most
// concurrency at once. It yields every object under prefix once, in key
// order, as List would; an error of any range is yielded (once) and ends
// the listing. Object stores list a few thousand keys a request, one
// request after another: a table of a million files lists that much
// faster in ranges.
func ListRanges(ctx context.Context, s Store, prefix string, splits []string, concurrency int) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		cuts := make([]string, 0, len(splits))
		for _, k := range splits {
			if strings.HasPrefix(k, prefix) && k > prefix {
				cuts = append(cuts, k)
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		if len(cuts) == 0 || concurrency <= 1 {
			for o, err := range s.List(ctx, prefix, "") {
				if !yield(o, err) || err != nil {
					return
				}
			}
			return
		}
		// Range i is (cuts[i-1], cuts[i]]; the last one is open.
		n := len(cuts) + 1
		results := make([][]ObjectInfo, n)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(concurrency)
		for i := range n {
			g.Go(func() error {
				after := ""
				if i > 0 {
					after = cuts[i-1]
				}
				for o, err := range s.List(gctx, prefix, after) {
					if err != nil {
						return err
					}
					if i < len(cuts) && o.Key > cuts[i] {
						break
					}
					results[i] = append(results[i], o)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", prefix, err))
			return
		}
		for _, r := range results {
			for _, o := range r {
				if !yield(o, nil) {
					return
				}
			}
		}
	}
}
