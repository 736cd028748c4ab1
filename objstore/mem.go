package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory [Store]. Each Mem is its own namespace; nothing is
// shared between instances. Put copies the body and Get returns a copy, so
// callers may reuse their buffers. It is safe for concurrent use, and a
// Put with IfAbsent checks and inserts under one lock.
//
// Mem accepts the same keys as [NewLocal], so that code tested on Mem does
// not fail on disk: see [ErrInvalidKey]. Every call fails once its context
// is done.
type Mem struct {
	mu struct {
		sync.RWMutex
		objects map[string]memObject
		keys    []string // the keys of objects, sorted
	}
}

type memObject struct {
	data    []byte // never modified after the put
	modTime time.Time
}

var (
	_ RandomAccess = (*Mem)(nil)
	_ BatchDeleter = (*Mem)(nil)
	_ RangeReader  = (*Mem)(nil)
)

// Location implements [Locator].
func (m *Mem) Location() string { return "mem://" }

// NewMem returns an empty in-memory store.
func NewMem() *Mem {
	m := &Mem{}
	m.mu.objects = map[string]memObject{}
	return m
}

// lookup returns the object under key, after checking the context and key.
func (m *Mem) lookup(ctx context.Context, op Op, key string) (memObject, error) {
	if err := ctx.Err(); err != nil {
		return memObject{}, fmt.Errorf("objstore: %s %q: %w", op, key, err)
	}
	if err := checkKey(key); err != nil {
		return memObject{}, fmt.Errorf("objstore: %s: %w", op, err)
	}
	m.mu.RLock()
	o, ok := m.mu.objects[key]
	m.mu.RUnlock()
	if !ok {
		return memObject{}, fmt.Errorf("objstore: %s %q: %w", op, key, ErrNotFound)
	}
	return o, nil
}

// Get implements [Store].
func (m *Mem) Get(ctx context.Context, key string) ([]byte, error) {
	o, err := m.lookup(ctx, OpGet, key)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(o.data), nil
}

// GetRange implements [Store].
func (m *Mem) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("objstore: getrange %q: negative offset %d or length %d", key, off, n)
	}
	o, err := m.lookup(ctx, OpGetRange, key)
	if err != nil {
		return nil, err
	}
	size := int64(len(o.data))
	if off > size {
		return nil, fmt.Errorf("objstore: getrange %q: offset %d beyond size %d: %w", key, off, size, io.ErrUnexpectedEOF)
	}
	return bytes.Clone(o.data[off : off+min(n, size-off)]), nil
}

// GetRangeInto implements [RangeReader].
func (m *Mem) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("objstore: getrange %q: negative offset %d", key, off)
	}
	o, err := m.lookup(ctx, OpGetRange, key)
	if err != nil {
		return 0, err
	}
	size := int64(len(o.data))
	if off > size {
		return 0, fmt.Errorf("objstore: getrange %q: offset %d beyond size %d: %w", key, off, size, io.ErrUnexpectedEOF)
	}
	return copy(p, o.data[off:]), nil
}

// Head implements [Store].
func (m *Mem) Head(ctx context.Context, key string) (ObjectInfo, error) {
	o, err := m.lookup(ctx, OpHead, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

// OpenObject implements [RandomAccess]. The reader sees the object as it
// was when opened, even if the key is overwritten later.
func (m *Mem) OpenObject(ctx context.Context, key string) (ReadAtCloser, error) {
	o, err := m.lookup(ctx, "open", key)
	if err != nil {
		return nil, err
	}
	return memReader{bytes.NewReader(o.data)}, nil
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

// Put implements [Store]. The body is read in full before the store is
// locked; the modification time is the moment of insertion.
func (m *Mem) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: put %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return fmt.Errorf("objstore: put: %w", err)
	}
	data, err := io.ReadAll(contextReader{ctx, body})
	if err != nil {
		return fmt.Errorf("objstore: put %q: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: put %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.objects[key]; ok {
		if opts.IfAbsent {
			return fmt.Errorf("objstore: put %q: %w", key, ErrExists)
		}
	} else {
		i, _ := slices.BinarySearch(m.mu.keys, key)
		m.mu.keys = slices.Insert(m.mu.keys, i, key)
	}
	m.mu.objects[key] = memObject{data: data, modTime: time.Now().Round(0)}
	return nil
}

// Delete implements [Store].
func (m *Mem) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: delete %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return fmt.Errorf("objstore: delete: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.objects[key]; !ok {
		return nil
	}
	delete(m.mu.objects, key)
	if i, ok := slices.BinarySearch(m.mu.keys, key); ok {
		m.mu.keys = slices.Delete(m.mu.keys, i, i+1)
	}
	return nil
}

// List implements [Store]. It yields the objects as they were when the
// iteration began, so the loop body may call the store.
func (m *Mem) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", prefix, err))
			return
		}
		var infos []ObjectInfo
		m.mu.RLock()
		i, _ := slices.BinarySearch(m.mu.keys, prefix)
		j, found := slices.BinarySearch(m.mu.keys, startAfter)
		if found {
			j++
		}
		for _, k := range m.mu.keys[max(i, j):] {
			if !strings.HasPrefix(k, prefix) {
				break
			}
			o := m.mu.objects[k]
			infos = append(infos, ObjectInfo{Key: k, Size: int64(len(o.data)), ModTime: o.modTime})
		}
		m.mu.RUnlock()
		for _, info := range infos {
			if err := ctx.Err(); err != nil {
				yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", prefix, err))
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// MaxDeleteBatch implements [BatchDeleter].
func (m *Mem) MaxDeleteBatch() int { return 1000 }

// DeleteBatch implements [BatchDeleter]: the keys go under one lock.
func (m *Mem) DeleteBatch(ctx context.Context, keys []string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: delete batch: %w", err)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("objstore: delete batch: %w", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	gone := false
	for _, k := range keys {
		if _, ok := m.mu.objects[k]; ok {
			delete(m.mu.objects, k)
			gone = true
		}
	}
	if gone {
		m.mu.keys = slices.DeleteFunc(m.mu.keys, func(k string) bool {
			_, ok := m.mu.objects[k]
			return !ok
		})
	}
	return nil
}
