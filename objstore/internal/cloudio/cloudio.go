// Package cloudio holds the small pieces of response handling the cloud
// stores share: reading a body into a buffer of the announced size, and the
// answer to a ranged read that yields no bytes.
package cloudio

import (
	"bytes"
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
