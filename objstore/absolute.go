package objstore

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
)

// Resolving wraps a table's store for reading the files a log names:
// a key that is an absolute location — a URI ("s3://bucket/t/x.parquet",
// "file:///data/t/x.parquet") or an absolute local path ("/data/t/x") —
// is read from the store that location belongs to (opened with [Open] on
// its root, "s3://bucket" or "/", once per process and kept), any other
// key from base. Delta allows a file action's path to be absolute: a
// SHALLOW CLONE's log names the source table's files. Writes, deletes
// and listings go to base only: nothing is ever written or deleted
// through an absolute key.
func Resolving(base Store) Store {
	r := &resolving{base: base}
	if _, ok := base.(RandomAccess); ok {
		return resolvingRandom{r} // opens files as base does, where it can
	}
	return r
}

type resolving struct{ base Store }

// resolvingRandom is a resolving store over a [RandomAccess] base.
type resolvingRandom struct{ *resolving }

var (
	_ Store       = (*resolving)(nil)
	_ RangeReader = (*resolving)(nil)
	_ Locator     = (*resolving)(nil)

	_ RandomAccess = resolvingRandom{}
)

// ResolvesAbsolute reports whether s reads absolute keys from the
// stores they name (it is a [Resolving] store).
func ResolvesAbsolute(s Store) bool {
	switch s.(type) {
	case *resolving, resolvingRandom:
		return true
	}
	return false
}

// absoluteStores are the stores opened for absolute keys, by root.
var absoluteStores struct {
	sync.Mutex
	m map[string]Store
}

// IsAbsoluteKey reports whether key names a location outside any one
// store: a URI with a scheme, or an absolute local path.
func IsAbsoluteKey(key string) bool {
	return strings.HasPrefix(key, "/") || strings.Contains(key, "://")
}

// splitAbsolute cuts an absolute key into the root a store is opened on
// and the key within it.
func splitAbsolute(key string) (root, rest string, err error) {
	if k, ok := strings.CutPrefix(key, "file://"); ok {
		key = k
	}
	if strings.HasPrefix(key, "/") {
		return "/", strings.TrimLeft(key, "/"), nil
	}
	scheme, after, ok := strings.Cut(key, "://")
	if !ok {
		return "", "", fmt.Errorf("objstore: %q is not an absolute location", key)
	}
	bucket, rest, _ := strings.Cut(after, "/")
	if bucket == "" || rest == "" {
		return "", "", fmt.Errorf("objstore: %q names no object", key)
	}
	return scheme + "://" + bucket, rest, nil
}

// target is the store and key that hold key.
func (r *resolving) target(ctx context.Context, key string) (Store, string, error) {
	if !IsAbsoluteKey(key) {
		return r.base, key, nil
	}
	root, rest, err := splitAbsolute(key)
	if err != nil {
		return nil, "", err
	}
	absoluteStores.Lock()
	defer absoluteStores.Unlock()
	if st, ok := absoluteStores.m[root]; ok {
		return st, rest, nil
	}
	st, err := Open(ctx, root)
	if err != nil {
		return nil, "", fmt.Errorf("objstore: open %s for %s: %w", root, key, err)
	}
	if absoluteStores.m == nil {
		absoluteStores.m = map[string]Store{}
	}
	absoluteStores.m[root] = st
	return st, rest, nil
}

// Get implements [Store].
func (r *resolving) Get(ctx context.Context, key string) ([]byte, error) {
	st, k, err := r.target(ctx, key)
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, k)
}

// GetRange implements [Store].
func (r *resolving) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	st, k, err := r.target(ctx, key)
	if err != nil {
		return nil, err
	}
	return st.GetRange(ctx, k, off, n)
}

// GetRangeInto implements [RangeReader].
func (r *resolving) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	st, k, err := r.target(ctx, key)
	if err != nil {
		return 0, err
	}
	return GetRangeInto(ctx, st, k, off, p)
}

// Head implements [Store].
func (r *resolving) Head(ctx context.Context, key string) (ObjectInfo, error) {
	st, k, err := r.target(ctx, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := st.Head(ctx, k)
	info.Key = key
	return info, err
}

// OpenObject implements [RandomAccess]: through the store that holds
// key (its size read with Head where that store reads by ranges).
func (r resolvingRandom) OpenObject(ctx context.Context, key string) (ReadAtCloser, error) {
	st, k, err := r.target(ctx, key)
	if err != nil {
		return nil, err
	}
	return OpenObject(ctx, st, k, -1)
}

// Put implements [Store]: on base only.
func (r *resolving) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) error {
	if IsAbsoluteKey(key) {
		return fmt.Errorf("objstore: %s: a table writes only under its own root", key)
	}
	return r.base.Put(ctx, key, body, opts)
}

// Delete implements [Store]: on base only.
func (r *resolving) Delete(ctx context.Context, key string) error {
	if IsAbsoluteKey(key) {
		return fmt.Errorf("objstore: %s: a table deletes only under its own root", key)
	}
	return r.base.Delete(ctx, key)
}

// List implements [Store]: base's objects.
func (r *resolving) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return r.base.List(ctx, prefix, startAfter)
}

// Location implements [Locator].
func (r *resolving) Location() string { return Location(r.base) }
