// Package cloudio holds the small pieces of response handling the cloud
// stores share: reading a body into a buffer of the announced size, and the
// answer to a ranged read that yields no bytes.
package cloudio

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// ReadBody reads r to the end, into a buffer sized for hint bytes.
func ReadBody(r io.Reader, hint int64) ([]byte, error) {
	var buf bytes.Buffer
	if hint > 0 && hint < 1<<30 {
		buf.Grow(int(hint) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// EmptyRange is what a GetRange at off that reads no bytes returns, given
// the object's size: empty when off is at most the size, an error wrapping
// io.ErrUnexpectedEOF past it. store names the store in the message.
func EmptyRange(store, key string, off, size int64) ([]byte, error) {
	if off > size {
		return nil, fmt.Errorf("%s: getrange %q: offset %d beyond size %d: %w", store, key, off, size, io.ErrUnexpectedEOF)
	}
	return []byte{}, nil
}

// RangeRead reads the body of a ranged GET, with its Content-Length and
// Content-Range headers, and returns the count of bytes it kept.
type RangeRead func(body io.Reader, length int64, contentRange string) (int, error)

// ReadRangeNew is the RangeRead of a GetRange of n bytes at off: the body
// read into a new slice, checked as CheckRange does, and left in *dst.
func ReadRangeNew(dst *[]byte, off, n int64) RangeRead {
	return func(body io.Reader, length int64, contentRange string) (int, error) {
		raw, err := ReadBody(body, min(n, length))
		if err != nil || len(raw) == 0 {
			return 0, err
		}
		*dst, err = CheckRange(raw, contentRange, off, n)
		return len(*dst), err
	}
}

// ReadRangeTo is the RangeRead of a GetRangeInto of p at off
// (ReadRangeInto).
func ReadRangeTo(off int64, p []byte) RangeRead {
	return func(body io.Reader, _ int64, contentRange string) (int, error) {
		return ReadRangeInto(body, contentRange, off, p)
	}
}

// EndRange settles a ranged read of n bytes at off that ended without an
// error with got bytes; past says the server refused the range as
// starting at or past the end (416). A read without bytes is judged by
// the object's size, which size asks for: 0 at the end (or for n 0),
// io.ErrUnexpectedEOF past it, and before it a short read (which is
// retried). store names the store in messages.
func EndRange(ctx context.Context, store, key string, off, n int64, got int, past bool, size func(context.Context) (int64, error)) (int, error) {
	if got > 0 {
		return got, nil
	}
	sz, err := size(ctx)
	if err != nil {
		return 0, err
	}
	if past || n == 0 {
		_, err = EmptyRange(store, key, off, sz)
	} else {
		_, err = NoBytes(store, key, off, n, sz)
	}
	return 0, err
}
