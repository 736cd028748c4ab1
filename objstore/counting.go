package objstore

import (
	"context"
	"io"
	"iter"
	"slices"
	"sync"
)

// CountingStore wraps a [Store] and records every call: how many of each
// operation and on which keys (the prefix, for List), in call order. Tests
// use it to prove what a piece of code read, for example that loading a
// snapshot read one checkpoint and at most ten commits. Failed calls count
// too. It is safe for concurrent use.
//
// It does not implement [RandomAccess], so [OpenObject] reads through
// GetRange and every read is counted.
type CountingStore struct {
	inner Store
	mu    struct {
		sync.Mutex
		keys map[Op][]string
	}
}

var (
	_ Store       = (*CountingStore)(nil)
	_ RangeReader = (*CountingStore)(nil)
)

// Counting wraps inner.
func Counting(inner Store) *CountingStore {
	c := &CountingStore{inner: inner}
	c.mu.keys = map[Op][]string{}
	return c
}

// Inner returns the wrapped store, to use it without counting.
func (c *CountingStore) Inner() Store { return c.inner }

func (c *CountingStore) record(op Op, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.keys[op] = append(c.mu.keys[op], key)
}

// Count returns the number of calls of op since the store was made or
// last Reset.
func (c *CountingStore) Count(op Op) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.keys[op])
}

// Keys returns the keys of the calls of op in call order, with repeats,
// since the store was made or last Reset. The slice is the caller's.
func (c *CountingStore) Keys(op Op) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.mu.keys[op])
}

// Reset forgets all calls recorded so far.
func (c *CountingStore) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.mu.keys)
}

// Get implements [Store].
func (c *CountingStore) Get(ctx context.Context, key string) ([]byte, error) {
	c.record(OpGet, key)
	return c.inner.Get(ctx, key)
}

// GetRange implements [Store].
func (c *CountingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	c.record(OpGetRange, key)
	return c.inner.GetRange(ctx, key, off, n)
}

// GetRangeInto implements [RangeReader]; it counts as a GetRange.
func (c *CountingStore) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	c.record(OpGetRange, key)
	return GetRangeInto(ctx, c.inner, key, off, p)
}

// Head implements [Store].
func (c *CountingStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	c.record(OpHead, key)
	return c.inner.Head(ctx, key)
}

// Put implements [Store].
func (c *CountingStore) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) error {
	c.record(OpPut, key)
	return c.inner.Put(ctx, key, body, opts)
}

// Delete implements [Store].
func (c *CountingStore) Delete(ctx context.Context, key string) error {
	c.record(OpDelete, key)
	return c.inner.Delete(ctx, key)
}

// List implements [Store]. A call counts when its iteration begins.
func (c *CountingStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		c.record(OpList, prefix)
		for info, err := range c.inner.List(ctx, prefix, startAfter) {
			if !yield(info, err) {
				return
			}
		}
	}
}

// Location implements [Locator]: the wrapped store's.
func (c *CountingStore) Location() string { return Location(c.inner) }
