package objstore_test

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

func TestOpenLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my table %41")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
	for _, uri := range []string{
		dir,
		u.String(), // file:///.../my%20table%20%2541
		"file://localhost" + u.EscapedPath(),
	} {
		s, err := objstore.Open(t.Context(), uri)
		if err != nil {
			t.Fatalf("Open(%q): %v", uri, err)
		}
		l, ok := s.(*objstore.Local)
		if !ok {
			t.Fatalf("Open(%q) = %T, want *Local", uri, s)
		}
		if l.Root() != dir {
			t.Errorf("Open(%q).Root() = %q, want %q", uri, l.Root(), dir)
		}
	}
	s, err := objstore.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "_delta_log/00.json", "v0")
	if b, err := os.ReadFile(filepath.Join(dir, "_delta_log", "00.json")); err != nil || string(b) != "v0" {
		t.Errorf("file = %q, %v", b, err)
	}
}

func TestOpenRelativePath(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	s, err := objstore.Open(t.Context(), "rel/table")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(wd, "rel", "table")
	if got := s.(*objstore.Local).Root(); got != want {
		t.Errorf("Root() = %q, want %q", got, want)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"file://otherhost/x",
		"file://",
		"file:///bad%zzescape",
		"nosuch://bucket/x",
		file, // a file, not a folder
		"file://" + filepath.ToSlash(file),
	} {
		s, err := objstore.Open(t.Context(), uri)
		if err == nil {
			t.Errorf("Open(%q) succeeded", uri)
		}
		if s != nil {
			t.Errorf("Open(%q) returned a non-nil Store %#v with its error", uri, s)
		}
	}
}

func TestOpenMemIsFreshEachTime(t *testing.T) {
	a, err := objstore.Open(t.Context(), "mem://x")
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, a, "k", "v")
	b, err := objstore.Open(t.Context(), "mem://x")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*objstore.Mem); !ok {
		t.Fatalf("Open(mem://x) = %T, want *Mem", b)
	}
	if got := listKeys(t, b, "", ""); len(got) != 0 {
		t.Errorf("second mem://x store holds %q, want nothing", got)
	}
	if _, err := b.Get(t.Context(), "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get from a fresh mem store = %v, want ErrNotFound", err)
	}
}

func TestOpenObject(t *testing.T) {
	local := newLocal(t)
	stores := map[string]objstore.Store{
		"mem":      objstore.NewMem(),
		"local":    local,
		"counting": objstore.Counting(objstore.NewMem()), // no RandomAccess: GetRange fallback
	}
	body := []byte("0123456789")
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			mustPut(t, s, "d/part-0.parquet", string(body))
			for _, size := range []int64{-1, int64(len(body))} {
				r, err := objstore.OpenObject(ctx, s, "d/part-0.parquet", size)
				if err != nil {
					t.Fatal(err)
				}
				if r.Size() != int64(len(body)) {
					t.Errorf("Size = %d", r.Size())
				}
				// Overwriting after the open does not change what is read.
				mustPut(t, s, "d/part-0.parquet", "changed!!!")
				buf := make([]byte, 4)
				if n, err := r.ReadAt(buf, 2); n != 4 || err != nil || string(buf) != "2345" {
					if name != "counting" { // the fallback reads the store as it is now
						t.Errorf("ReadAt(2) = %d, %v, %q", n, err, buf)
					}
				}
				mustPut(t, s, "d/part-0.parquet", string(body))
				if n, err := r.ReadAt(buf, 8); n != 2 || err != io.EOF || string(buf[:2]) != "89" {
					t.Errorf("ReadAt(8) = %d, %v, %q; want 2, EOF, \"89\"", n, err, buf[:n])
				}
				if n, err := r.ReadAt(buf, 10); n != 0 || err != io.EOF {
					t.Errorf("ReadAt(10) = %d, %v; want 0, EOF", n, err)
				}
				all, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
				if err != nil || !bytes.Equal(all, body) {
					t.Errorf("whole object = %q, %v", all, err)
				}
				if err := r.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
			if _, err := objstore.OpenObject(ctx, s, "d/missing", -1); !errors.Is(err, objstore.ErrNotFound) {
				t.Errorf("OpenObject of a missing key = %v, want ErrNotFound", err)
			}
		})
	}
}

type closingStore struct {
	objstore.Store
	closed int
}

func (c *closingStore) Close() error { c.closed++; return nil }

// TestClose: objstore.Close closes a store that holds something open and
// does nothing to one that does not.
func TestClose(t *testing.T) {
	if err := objstore.Close(objstore.NewMem()); err != nil {
		t.Fatal(err)
	}
	c := &closingStore{Store: objstore.NewMem()}
	if err := objstore.Close(c); err != nil || c.closed != 1 {
		t.Fatalf("Close of a closer: %v, closed %d times", err, c.closed)
	}
}
