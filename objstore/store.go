package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
)

// ErrNotFound is returned (wrapped) by Get, GetRange and Head when the key
// does not exist. It is terminal for that key.
var ErrNotFound = errors.New("objstore: not found")

// ErrExists is returned (wrapped) by Put with IfAbsent when the key already
// exists. Nothing was written. For a Delta commit it means another writer
// took the version (or, after a lost response, that we did).
var ErrExists = errors.New("objstore: already exists")

// ErrRefused is wrapped by a store's error when the store refused the
// request before applying it (an HTTP 4xx other than the ones with their
// own meaning: a missing key, a failed condition, a conflict, throttling):
// nothing was written. ErrAccessDenied and ErrNoBucket wrap it.
var ErrRefused = errors.New("objstore: request refused")

// ErrAccessDenied: the credentials are missing, wrong or not allowed the
// request (HTTP 401 or 403, or none could be found to sign it). Nothing
// was written.
var ErrAccessDenied error = refusal("objstore: access denied")

// ErrNoBucket: the bucket or container does not exist. Nothing was
// written.
var ErrNoBucket error = refusal("objstore: no such bucket or container")

// refusal is an error that is also ErrRefused.
type refusal string

func (r refusal) Error() string        { return string(r) }
func (r refusal) Is(target error) bool { return target == ErrRefused }

// PutOptions modify Put.
type PutOptions struct {
	// IfAbsent makes the put fail with ErrExists when the key exists. The
	// check and the write are one atomic step in the backing store.
	IfAbsent bool
	// Size is the body's length when known, or 0 when unknown. Stores may
	// use it to choose between a single upload and a multipart one.
	Size int64
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Store is a flat object namespace. Every method takes a context first and
// is safe for concurrent use.
type Store interface {
	// Get returns the whole object.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns n bytes starting at off. It returns fewer only when
	// the object ends first; an off beyond the end yields io.ErrUnexpectedEOF.
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Head returns the object's size and modification time.
	Head(ctx context.Context, key string) (ObjectInfo, error)
	// Put stores body under key. A reader sees the whole object or nothing.
	// With IfAbsent it fails with ErrExists when the key exists; it never
	// checks and then writes.
	Put(ctx context.Context, key string, body io.Reader, opts PutOptions) error
	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List yields the objects whose key starts with prefix and sorts
	// strictly after startAfter, in byte order of their keys. Iteration
	// stops at the first error, which is yielded with a zero ObjectInfo.
	List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error]
}

// RangeReader is implemented by stores that read a range into a buffer
// the caller owns, so that a reader that fetches many ranges (a scan on
// an object store) can reuse its buffers rather than make garbage of one
// new slice per read. Every store of this package implements it; use it
// through [GetRangeInto], which falls back to GetRange for others.
type RangeReader interface {
	// GetRangeInto reads len(p) bytes starting at off into p and returns
	// how many it read: fewer only when the object ends first (then err
	// is nil); an off beyond the end yields io.ErrUnexpectedEOF. Bytes of
	// p past the count returned are unspecified.
	GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error)
}

// GetRangeInto reads len(p) bytes of key at off into p, as
// [RangeReader.GetRangeInto]: with s's own GetRangeInto when s has one,
// else with GetRange and a copy.
func GetRangeInto(ctx context.Context, s Store, key string, off int64, p []byte) (int, error) {
	if r, ok := s.(RangeReader); ok {
		return r.GetRangeInto(ctx, key, off, p)
	}
	b, err := s.GetRange(ctx, key, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	if len(b) > len(p) {
		return 0, fmt.Errorf("objstore: getrange %q: %d bytes returned for %d asked", key, len(b), len(p))
	}
	return copy(p, b), nil
}

// Locator is implemented by stores that can name where they are, as a
// user would write it (a path, s3://bucket/prefix, ...), for messages.
type Locator interface {
	Location() string
}

// Location names where s is: its Location when it implements Locator,
// else its type.
func Location(s Store) string {
	if l, ok := s.(Locator); ok {
		return l.Location()
	}
	return fmt.Sprintf("a %T", s)
}

// Op names a store operation, for fault injection and counting.
type Op string

// The operations of a Store.
const (
	OpGet      Op = "get"
	OpGetRange Op = "getrange"
	OpHead     Op = "head"
	OpPut      Op = "put"
	OpDelete   Op = "delete"
	OpList     Op = "list"
)

// ReaderAt adapts one object to io.ReaderAt, io.Reader and io.Seeker, for
// Parquet readers. It issues one ranged read per ReadAt, into the caller's
// buffer ([GetRangeInto]); reads past the object's end are cut there, as
// [io.SectionReader] does.
type ReaderAt struct {
	*io.SectionReader
}

// NewReaderAt returns a reader over key, whose size the caller knows (from
// Head, List or the Delta log).
func NewReaderAt(ctx context.Context, s Store, key string, size int64) *ReaderAt {
	return &ReaderAt{io.NewSectionReader(rangeAt{ctx, s, key}, 0, size)}
}

// rangeAt reads one object at offsets, one ranged read per call.
type rangeAt struct {
	ctx   context.Context
	store Store
	key   string
}

func (r rangeAt) ReadAt(p []byte, off int64) (int, error) {
	c, err := GetRangeInto(r.ctx, r.store, r.key, off, p)
	if err == nil && c < len(p) {
		err = io.EOF
	}
	return c, err
}

// Close releases what a store holds open, when it holds anything: stores
// that own connections or clients (the GCS store with the client it made)
// implement io.Closer, and Close closes them; for any other store it does
// nothing. Whatever Open returns can be passed to it once the store is no
// longer used.
func Close(s Store) error {
	if c, ok := s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
