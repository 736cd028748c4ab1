package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

func newLocal(t *testing.T) *objstore.Local {
	t.Helper()
	l, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func put(t *testing.T, s objstore.Store, key, body string, opts objstore.PutOptions) error {
	t.Helper()
	return s.Put(t.Context(), key, strings.NewReader(body), opts)
}

func mustPut(t *testing.T, s objstore.Store, key, body string) {
	t.Helper()
	if err := put(t, s, key, body, objstore.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func listKeys(t *testing.T, s objstore.Store, prefix, startAfter string) []string {
	t.Helper()
	var keys []string
	for info, err := range s.List(t.Context(), prefix, startAfter) {
		if err != nil {
			t.Fatalf("List(%q, %q): %v", prefix, startAfter, err)
		}
		keys = append(keys, info.Key)
	}
	return keys
}

// tempFiles returns the temporary files anywhere under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), objstore.TempPrefix) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestLocalLeavesNoTempFiles(t *testing.T) {
	l := newLocal(t)
	ifAbsent := objstore.PutOptions{IfAbsent: true}
	if err := put(t, l, "_delta_log/00.json", "v0", ifAbsent); err != nil {
		t.Fatal(err)
	}
	if err := put(t, l, "_delta_log/00.json", "loser", ifAbsent); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("second IfAbsent put = %v, want ErrExists", err)
	}
	mustPut(t, l, "_delta_log/00.json", "overwritten")
	mustPut(t, l, "a/b/c", "deep")
	errBody := errors.New("body broke")
	for _, opts := range []objstore.PutOptions{{}, ifAbsent} {
		err := l.Put(t.Context(), "_delta_log/01.json", io.MultiReader(strings.NewReader("part"), errReader{errBody}), opts)
		if !errors.Is(err, errBody) {
			t.Errorf("Put with a failing body = %v, want it to wrap the body's error", err)
		}
	}
	if found := tempFiles(t, l.Root()); len(found) > 0 {
		t.Errorf("temporary files left behind: %q", found)
	}
	// The folders hold exactly the objects.
	entries, err := os.ReadDir(filepath.Join(l.Root(), "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "00.json" {
		t.Errorf("_delta_log holds %v, want just 00.json", entries)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestLocalNeverListsTempFiles(t *testing.T) {
	l := newLocal(t)
	mustPut(t, l, "_delta_log/00.json", "v0")
	// A temporary file a crashed writer left, and one in a folder of its own.
	for _, p := range []string{
		filepath.Join(l.Root(), "_delta_log", objstore.TempPrefix+"crashed"),
		filepath.Join(l.Root(), objstore.TempPrefix+"dir", "x"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := listKeys(t, l, "", ""); !slices.Equal(got, []string{"_delta_log/00.json"}) {
		t.Errorf("List = %q, want only the object", got)
	}
	if got := listKeys(t, l, "_delta_log/"+objstore.TempPrefix, ""); len(got) != 0 {
		t.Errorf("List of the temp prefix = %q, want nothing", got)
	}
	// Nor can a key name one.
	_, err := l.Get(t.Context(), "_delta_log/"+objstore.TempPrefix+"crashed")
	if !errors.Is(err, objstore.ErrInvalidKey) {
		t.Errorf("Get of a temp file = %v, want ErrInvalidKey", err)
	}
}

// TestLocalTempNeverListedDuringPuts lists while other goroutines write, so
// a listing that shows temp files would be caught mid-put.
func TestLocalTempNeverListedDuringPuts(t *testing.T) {
	l := newLocal(t)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				key := "_delta_log/" + string(rune('a'+w)) + strings.Repeat("x", i%50)
				body := bytes.Repeat([]byte{'z'}, 1<<14)
				if err := l.Put(ctx, key, bytes.NewReader(body), objstore.PutOptions{IfAbsent: i%2 == 0}); err != nil &&
					!errors.Is(err, objstore.ErrExists) && ctx.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 200 {
		for info, err := range l.List(t.Context(), "_delta_log/", "") {
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(info.Key, objstore.TempPrefix) {
				t.Fatalf("List yielded the temporary file %q", info.Key)
			}
		}
	}
	cancel()
	wg.Wait()
}

func TestLocalListReadsOnlyThePrefixFolder(t *testing.T) {
	l := newLocal(t)
	for _, k := range []string{
		"_delta_log/00000000000000000000.json",
		"_delta_log/00000000000000000001.json",
		"_delta_log/_sidecars/a.parquet",
		"part=1/a.parquet",
		"part=2/sub/b.parquet",
		"z/c.parquet",
	} {
		mustPut(t, l, k, k)
	}
	var seen []string
	objstore.WatchReadDir(l, func(dir string) {
		rel, err := filepath.Rel(l.Root(), dir)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, filepath.ToSlash(rel))
	})
	cases := []struct {
		prefix, startAfter string
		wantKeys           []string
		wantDirs           []string
	}{
		{"_delta_log/", "", []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/_sidecars/a.parquet"}, []string{"_delta_log", "_delta_log/_sidecars"}},
		{"_delta_log/", "_delta_log/00000000000000000000.json", []string{"_delta_log/00000000000000000001.json", "_delta_log/_sidecars/a.parquet"}, []string{"_delta_log", "_delta_log/_sidecars"}},
		// _sidecars sorts before the startAfter, so it is skipped unread.
		{"_delta_log/", "_delta_log/_t", nil, []string{"_delta_log"}},
		{"_delta_log/0", "", []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"}, []string{"_delta_log"}},
		{"part=2/", "", []string{"part=2/sub/b.parquet"}, []string{"part=2", "part=2/sub"}},
		// "part=1/" sorts before "part=10", so that folder is skipped...
		{"part=", "part=10", []string{"part=2/sub/b.parquet"}, []string{".", "part=2", "part=2/sub"}},
		// ...but keys after "part=1/zzz" may still be in it.
		{"part=", "part=1/zzz", []string{"part=2/sub/b.parquet"}, []string{".", "part=1", "part=2", "part=2/sub"}},
		{"nope/", "", nil, []string{"nope"}},
	}
	for _, c := range cases {
		seen = nil
		if got := listKeys(t, l, c.prefix, c.startAfter); !slices.Equal(got, c.wantKeys) {
			t.Errorf("List(%q, %q) = %q, want %q", c.prefix, c.startAfter, got, c.wantKeys)
		}
		if !slices.Equal(seen, c.wantDirs) {
			t.Errorf("List(%q, %q) read folders %q, want %q", c.prefix, c.startAfter, seen, c.wantDirs)
		}
	}
}

func TestLocalRejectsKeysOutsideRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "table")
	l, err := objstore.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "/etc/passwd", "../escape", "a/../../escape", "a/./b", "a//b", "a/", ".", "..", "a\x00b"} {
		if err := put(t, l, key, "x", objstore.PutOptions{}); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := l.Get(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := l.Delete(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	for info, err := range l.List(t.Context(), "../", "") {
		if !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("List(\"../\") yielded %+v, %v; want ErrInvalidKey", info, err)
		}
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("something was written outside the root: %v", entries)
	}
}

func TestLocalFolderIsNotAnObject(t *testing.T) {
	l := newLocal(t)
	mustPut(t, l, "a/b", "b")
	mustPut(t, l, "f", "f")
	ctx := t.Context()
	if _, err := l.Get(ctx, "a"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get of a folder = %v, want ErrNotFound", err)
	}
	if _, err := l.OpenObject(ctx, "a"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("OpenObject of a folder = %v, want ErrNotFound", err)
	}
	for _, opts := range []objstore.PutOptions{{}, {IfAbsent: true}} {
		err := put(t, l, "a", "x", opts)
		if err == nil || errors.Is(err, objstore.ErrExists) {
			t.Errorf("Put over a folder (IfAbsent %v) = %v, want a non-ErrExists error", opts.IfAbsent, err)
		}
	}
	if err := put(t, l, "f/x", "x", objstore.PutOptions{}); err == nil {
		t.Error("Put under an object succeeded")
	}
	if err := l.Delete(ctx, "a"); err != nil {
		t.Errorf("Delete of a folder = %v, want nil", err)
	}
	if got := listKeys(t, l, "", ""); !slices.Equal(got, []string{"a/b", "f"}) {
		t.Errorf("List = %q, want [a/b f]", got)
	}
}

func TestLocalSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	l, err := objstore.NewLocal(link)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, l, "_delta_log/00.json", "v0")
	if err := put(t, l, "_delta_log/00.json", "v1", objstore.PutOptions{IfAbsent: true}); !errors.Is(err, objstore.ErrExists) {
		t.Errorf("IfAbsent put through a symlinked root = %v, want ErrExists", err)
	}
	if got := listKeys(t, l, "_delta_log/", ""); !slices.Equal(got, []string{"_delta_log/00.json"}) {
		t.Errorf("List = %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(real, "_delta_log", "00.json")); err != nil || string(b) != "v0" {
		t.Errorf("file in the real folder = %q, %v", b, err)
	}
	// A symlinked file is an object; a symlinked folder is not walked.
	if err := os.Symlink(filepath.Join(real, "_delta_log", "00.json"), filepath.Join(real, "alias.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "_delta_log"), filepath.Join(real, "loop")); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, l, "", ""); !slices.Equal(got, []string{"_delta_log/00.json", "alias.json"}) {
		t.Errorf("List with symlinks = %q", got)
	}
}

func TestLocalRootIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := objstore.NewLocal(f); err == nil {
		t.Error("NewLocal of a file succeeded")
	}
	if _, err := objstore.NewLocal(""); err == nil {
		t.Error("NewLocal(\"\") succeeded")
	}
}

func TestLocalMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not", "yet")
	l, err := objstore.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, l, "", ""); len(got) != 0 {
		t.Errorf("List of a missing root = %q", got)
	}
	if _, err := l.Get(t.Context(), "x"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Get in a missing root = %v, want ErrNotFound", err)
	}
	mustPut(t, l, "x", "made the root")
	if b, err := os.ReadFile(filepath.Join(root, "x")); err != nil || string(b) != "made the root" {
		t.Errorf("after Put: %q, %v", b, err)
	}
	if l.Root() != root {
		t.Errorf("Root() = %q, want %q", l.Root(), root)
	}
}

func TestLocalRelativeRootIsMadeAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	l, err := objstore.NewLocal("rel/table")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(l.Root()) {
		t.Errorf("Root() = %q, want an absolute path", l.Root())
	}
}
