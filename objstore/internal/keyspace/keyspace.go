package keyspace

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/objstore"
)

// Root is a store's prefix inside its bucket, stored with a trailing '/'
// unless it is empty.
type Root struct{ p string }

// New returns the root for prefix. Leading and trailing '/' are dropped, so
// "", "/" and "a/b/" are the bucket itself, the bucket itself, and "a/b".
func New(prefix string) Root {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return Root{}
	}
	return Root{p + "/"}
}

// Location is the root's URI in bucket under scheme
// (scheme://bucket/prefix), as a store's Location gives it.
func (r Root) Location(scheme, bucket string) string {
	return scheme + "://" + bucket + "/" + strings.TrimSuffix(r.p, "/")
}

// String is the root with its trailing '/', or "" for the whole bucket.
func (r Root) String() string { return r.p }

// Name returns the bucket object name of key, after checking that key can
// name an object (see [Check]).
func (r Root) Name(key string) (string, error) {
	if err := Check(key); err != nil {
		return "", err
	}
	return r.p + key, nil
}

// ListPrefix returns the bucket object name prefix that lists the keys
// starting with prefix. Unlike Name it accepts any prefix, "" included.
func (r Root) ListPrefix(prefix string) string { return r.p + prefix }

// Key returns the key of a bucket object name, and false when the name is
// outside the root.
func (r Root) Key(name string) (string, bool) {
	key, ok := strings.CutPrefix(name, r.p)
	return key, ok && key != ""
}

// Check reports whether key can name an object. It accepts exactly the keys
// objstore's own stores accept: not empty, no NUL byte, and no empty, "."
// or ".." segment (so no leading, trailing or doubled '/'). The error wraps
// [objstore.ErrInvalidKey].
func Check(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", objstore.ErrInvalidKey)
	}
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: %q contains a NUL byte", objstore.ErrInvalidKey, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %q has an empty segment (leading, trailing or doubled '/')", objstore.ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q segment", objstore.ErrInvalidKey, key, seg)
		}
	}
	return nil
}
