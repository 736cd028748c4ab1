package deltalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/objstore"
)

// RetryOption tunes RetryOnConflict.
type RetryOption func(*retryConfig)

type retryConfig struct {
	attempts  int
	base, max time.Duration
	open      []Option
}

// RetryAttempts is how many times in all RetryOnConflict runs the
// operation (default 8).
func RetryAttempts(n int) RetryOption { return func(c *retryConfig) { c.attempts = n } }

// RetryBackoff is the backoff between attempts: jittered, from base,
// doubling up to max (default 50ms to 5s).
func RetryBackoff(base, max time.Duration) RetryOption {
	return func(c *retryConfig) { c.base, c.max = base, max }
}

// RetryOpenOptions are the options each attempt opens the table with.
func RetryOpenOptions(opts ...Option) RetryOption {
	return func(c *retryConfig) { c.open = opts }
}

// RetryOnConflict opens the latest snapshot of the table at root and runs
// op on it; while op fails with a conflict (conflict.ErrConflict: a
// concurrent commit won the version and changed what op read or
// removes), it waits a jittered backoff, opens the latest snapshot again
// and runs op again, at most RetryAttempts times in all. Every conflict
// kind is retried: op runs afresh on the new snapshot, so what the winner
// changed (files, metadata, protocol) is taken into account, and op may
// then succeed or fail for a reason of its own. Nothing else is retried:
// not ErrCommitUnknown (the commit may have landed; run op with an
// application transaction, WithAppTransaction, and a retry by the caller
// is answered AlreadyApplied instead of applying it twice), not a
// refusal by the store, not op's own errors. The last conflict is
// returned, wrapped, when the attempts run out.
//
// op must do its whole operation on the snapshot it is given (read,
// decide, write, commit), as Spark's retry of a failed transaction does.
func RetryOnConflict(ctx context.Context, store objstore.Store, root string, op func(*Snapshot) error, opts ...RetryOption) error {
	c := retryConfig{attempts: 8, base: 50 * time.Millisecond, max: 5 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	if op == nil {
		return errors.New("deltalog: RetryOnConflict needs an operation (op is nil)")
	}
	var last error
	for attempt := 1; attempt <= max(1, c.attempts); attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, backoffDelay(c.base, c.max, attempt-2)); err != nil {
				return fmt.Errorf("deltalog: retry after %w: %w", last, err)
			}
		}
		snap, err := Open(ctx, store, root, c.open...)
		if err != nil {
			return err
		}
		if last = op(snap); last == nil || !errors.Is(last, conflict.ErrConflict) {
			return last
		}
	}
	return fmt.Errorf("deltalog: still conflicting after %d attempts: %w", max(1, c.attempts), last)
}
