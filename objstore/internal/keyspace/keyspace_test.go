package keyspace

import (
	"errors"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

func TestRoot(t *testing.T) {
	for _, tc := range []struct {
		prefix, root string
	}{
		{"", ""}, {"/", ""}, {"//", ""}, {"a", "a/"}, {"/a/b/", "a/b/"}, {"a/b", "a/b/"},
	} {
		r := New(tc.prefix)
		if r.String() != tc.root {
			t.Errorf("New(%q) = %q, want %q", tc.prefix, r.String(), tc.root)
		}
		name, err := r.Name("_delta_log/0.json")
		if err != nil || name != tc.root+"_delta_log/0.json" {
			t.Errorf("New(%q).Name = %q, %v", tc.prefix, name, err)
		}
		if key, ok := r.Key(name); !ok || key != "_delta_log/0.json" {
			t.Errorf("New(%q).Key(%q) = %q, %v", tc.prefix, name, key, ok)
		}
		if got := r.ListPrefix(""); got != tc.root {
			t.Errorf("New(%q).ListPrefix(\"\") = %q", tc.prefix, got)
		}
	}
	r := New("t1")
	for _, name := range []string{"t10/x", "t1", "t1/", "other/x"} {
		if key, ok := r.Key(name); ok {
			t.Errorf("Key(%q) = %q, true; want it outside root t1/", name, key)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, k := range []string{"a", "a/b", "a b/c%20", "...", "a..b", "日本/😀", ".hidden"} {
		if err := Check(k); err != nil {
			t.Errorf("Check(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range []string{"", "/a", "a/", "a//b", ".", "a/./b", "..", "a/../b", "a\x00b"} {
		if err := Check(k); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Check(%q) = %v, want ErrInvalidKey", k, err)
		}
		if _, err := New("p").Name(k); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Name(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}
