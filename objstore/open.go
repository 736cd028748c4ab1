package objstore

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime"
)

// ReadAtCloser is one opened object, read at any offset. Size is its length
// when it was opened. Close releases it; ReadAt after Close fails.
type ReadAtCloser interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// RandomAccess is implemented by stores that can open an object for reading
// at offsets more cheaply than by one GetRange per read: [Local] opens the
// file and [Mem] reads its memory. Use it through [OpenObject].
//
// The [Faulty] and [Counting] wrappers do not implement it, so that every
// read through them is a GetRange they see.
type RandomAccess interface {
	// OpenObject opens key for reading. A missing key is ErrNotFound.
	OpenObject(ctx context.Context, key string) (ReadAtCloser, error)
}

// OpenObject opens key in s for reads at offsets, for Parquet readers. When
// s implements [RandomAccess] it is used and size is ignored. Otherwise the
// result is a [ReaderAt] over s, which issues one GetRange per ReadAt and
// reads with ctx; size is the object's length, or negative to ask Head for
// it.
func OpenObject(ctx context.Context, s Store, key string, size int64) (ReadAtCloser, error) {
	if ra, ok := s.(RandomAccess); ok {
		return ra.OpenObject(ctx, key)
	}
	if size < 0 {
		info, err := s.Head(ctx, key)
		if err != nil {
			return nil, err
		}
		size = info.Size
	}
	return rangeReader{NewReaderAt(ctx, s, key, size)}, nil
}

// rangeReader gives a ReaderAt, which holds nothing open, a Close.
type rangeReader struct{ *ReaderAt }

func (rangeReader) Close() error { return nil }

// openLocalPath opens the local store at a plain path, for Open.
func openLocalPath(path string) (Store, error) {
	l, err := NewLocal(path)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// openFileURI opens the local store named by a file URI: file:///abs/path
// or file://localhost/abs/path, with percent-escapes decoded.
func openFileURI(uri string) (Store, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("objstore: parse %q: %w", uri, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("objstore: file URI %q names host %q; want file:///absolute/path", uri, u.Host)
	}
	p := u.Path
	if p == "" {
		return nil, fmt.Errorf("objstore: file URI %q has no path", uri)
	}
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/dir
	}
	return openLocalPath(filepath.FromSlash(p))
}
