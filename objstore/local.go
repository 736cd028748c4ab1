package objstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// ErrInvalidKey is returned (wrapped) when a key cannot name an object: it
// is empty, starts or ends with '/', has an empty, "." or ".." segment, or
// contains a NUL byte. [NewLocal] also refuses segments starting with
// ".lakelog-tmp-", the prefix of its temporary files. It is terminal.
var ErrInvalidKey = errors.New("objstore: invalid key")

// tempPrefix starts the name of every file Local writes before publishing
// it. List never yields such a file and no key may use the prefix.
const tempPrefix = ".lakelog-tmp-"

// checkKey reports whether key can name an object in any store of this
// package.
func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: %q contains a NUL byte", ErrInvalidKey, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %q has an empty segment (leading, trailing or doubled '/')", ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// Local is a [Store] over a folder on local disk. Key "a/b.json" is the file
// a/b.json under the root. It is safe for concurrent use by goroutines and
// by processes sharing the folder.
//
// Put writes a temporary file in the destination folder, syncs it, and then
// publishes it in one step: with IfAbsent by a hard link, which the
// operating system refuses when the name exists, and otherwise by a rename.
// The folder is synced afterwards, so a successful Put survives a crash.
// Temporary files are named ".lakelog-tmp-*" and are never listed; a crash
// can leave one behind, which is harmless.
//
// A folder cannot be both an object and a parent of objects: after a Put of
// "a/b", a Put of "a" fails and Get of "a" is ErrNotFound. Symbolic links to
// files are read as objects; symbolic links to folders are not followed by
// List (the root itself may be a symbolic link). The file system must
// support hard links for IfAbsent puts.
type Local struct {
	root string
	// readDir is readDirUnsorted; tests replace it to see which folders
	// List reads.
	readDir func(name string) ([]fs.DirEntry, error)
}

var (
	_ RandomAccess = (*Local)(nil)
	_ BatchDeleter = (*Local)(nil)
	_ RangeReader  = (*Local)(nil)
)

// Location implements [Locator]: the folder's path.
func (l *Local) Location() string { return l.root }

// NewLocal returns a store rooted at the folder root, which need not exist
// yet: Put creates folders as needed. A relative root is made absolute.
func NewLocal(root string) (*Local, error) {
	if root == "" {
		return nil, errors.New("objstore: local root is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("objstore: local root %q: %w", root, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("objstore: local root %q is not a folder", abs)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("objstore: local root: %w", err)
	}
	return &Local{root: abs, readDir: readDirUnsorted}, nil
}

// readDirUnsorted is os.ReadDir without its sort: List sorts only the
// entries it keeps, and a log folder of 100,000 commits listed from a
// recent checkpoint keeps a handful.
func readDirUnsorted(name string) ([]fs.DirEntry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Root returns the absolute path of the store's folder.
func (l *Local) Root() string { return l.root }

// path maps a key to its file, after checking the key.
func (l *Local) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if filepath.Separator != '/' && strings.ContainsRune(key, filepath.Separator) {
		return "", fmt.Errorf("%w: %q contains %q", ErrInvalidKey, key, filepath.Separator)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(seg, tempPrefix) {
			return "", fmt.Errorf("%w: %q uses the reserved prefix %q", ErrInvalidKey, key, tempPrefix)
		}
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// missing reports whether err from opening or statting a file means that
// there is no object: the file does not exist or a parent is not a folder.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// open opens the object's file for reading and returns its size.
func (l *Local) open(ctx context.Context, op Op, key string) (*os.File, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("objstore: %s %q: %w", op, key, err)
	}
	p, err := l.path(key)
	if err != nil {
		return nil, 0, fmt.Errorf("objstore: %s: %w", op, err)
	}
	f, err := os.Open(p)
	if missing(err) {
		return nil, 0, fmt.Errorf("objstore: %s %q: %w", op, key, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("objstore: %s %q: %w", op, key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("objstore: %s %q: %w", op, key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("objstore: %s %q: %w (it is a folder or special file)", op, key, ErrNotFound)
	}
	return f, fi.Size(), nil
}

// Get implements [Store].
func (l *Local) Get(ctx context.Context, key string) ([]byte, error) {
	f, size, err := l.open(ctx, OpGet, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, size+1) // +1: the read that sees EOF needs room
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096) // the file grew after Stat; keep reading
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("objstore: get %q: %w", key, err)
		}
	}
}

// GetRange implements [Store].
func (l *Local) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("objstore: getrange %q: negative offset %d or length %d", key, off, n)
	}
	f, size, err := l.open(ctx, OpGetRange, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if off > size {
		return nil, fmt.Errorf("objstore: getrange %q: offset %d beyond size %d: %w", key, off, size, io.ErrUnexpectedEOF)
	}
	n = min(n, size-off)
	b := make([]byte, n)
	m, err := f.ReadAt(b, off)
	if err != nil && !(err == io.EOF && int64(m) == n) {
		return nil, fmt.Errorf("objstore: getrange %q: %w", key, err)
	}
	return b[:m], nil
}

// GetRangeInto implements [RangeReader]: one read of the file into p.
func (l *Local) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("objstore: getrange %q: negative offset %d", key, off)
	}
	f, size, err := l.open(ctx, OpGetRange, key)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if off > size {
		return 0, fmt.Errorf("objstore: getrange %q: offset %d beyond size %d: %w", key, off, size, io.ErrUnexpectedEOF)
	}
	want := p[:min(int64(len(p)), size-off)]
	m, err := f.ReadAt(want, off)
	if err != nil && !(err == io.EOF && m == len(want)) {
		return 0, fmt.Errorf("objstore: getrange %q: %w", key, err)
	}
	return m, nil
}

// Head implements [Store].
func (l *Local) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, fmt.Errorf("objstore: head %q: %w", key, err)
	}
	p, err := l.path(key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("objstore: head: %w", err)
	}
	fi, err := os.Stat(p)
	if missing(err) || err == nil && !fi.Mode().IsRegular() {
		return ObjectInfo{}, fmt.Errorf("objstore: head %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("objstore: head %q: %w", key, err)
	}
	return ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// OpenObject implements [RandomAccess] with the open file: reads go straight
// to disk, and an overwrite of the key after the call is not seen.
func (l *Local) OpenObject(ctx context.Context, key string) (ReadAtCloser, error) {
	f, size, err := l.open(ctx, "open", key)
	if err != nil {
		return nil, err
	}
	return &localObject{File: f, size: size}, nil
}

type localObject struct {
	*os.File
	size int64
}

func (o *localObject) Size() int64 { return o.size }

// Put implements [Store]. See [Local] for how it is made atomic.
func (l *Local) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: put %q: %w", key, err)
	}
	p, err := l.path(key)
	if err != nil {
		return fmt.Errorf("objstore: put: %w", err)
	}
	defer func() {
		if err != nil && !errors.Is(err, ErrExists) {
			err = fmt.Errorf("objstore: put %q: %w", key, err)
		}
	}()
	dir := filepath.Dir(p)
	if err := l.mkdirs(dir); err != nil {
		return err
	}
	if opts.IfAbsent {
		err = createExclusive(ctx, dir, p, body)
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Lstat(p); serr == nil && fi.IsDir() {
				return errors.New("the key names a folder holding other objects")
			}
			return fmt.Errorf("objstore: put %q: %w", key, ErrExists)
		}
		if err != nil {
			return err
		}
		return syncDir(dir)
	}
	tmp, err := writeTemp(ctx, dir, body)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after a failure; a rename leaves nothing
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	return syncDir(dir)
}

// unnamedCreates lets createExclusive use unnamed temporary files where the
// system has them; tests turn it off to run the named route.
var unnamedCreates = true

// linkNamed creates p from body unless it exists: body goes to a named
// temporary file, synced, which is then hard-linked as p (failing with
// fs.ErrExist when p exists) and removed. The caller syncs dir.
func linkNamed(ctx context.Context, dir, p string, body io.Reader) error {
	tmp, err := writeTemp(ctx, dir, body)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, p)
}

// copySync copies body to f through a pooled buffer and syncs f.
func copySync(ctx context.Context, f *os.File, body io.Reader) error {
	// A large buffer, and f without its ReadFrom (which would copy in
	// 32 KiB steps through the context check): fewer write calls. The
	// buffers are pooled: a commit should not pay for zeroing one.
	buf := copyBuffers.Get().(*[]byte)
	_, err := io.CopyBuffer(struct{ io.Writer }{f}, contextReader{ctx, body}, *buf)
	copyBuffers.Put(buf)
	if err != nil {
		return err
	}
	return f.Sync()
}

// copyBuffers hold writeTemp's copy buffers.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}

// writeTemp copies body to a new temporary file in dir, syncs and closes
// it, and returns its path. On failure it leaves no file behind.
func writeTemp(ctx context.Context, dir string, body io.Reader) (string, error) {
	var (
		name string
		f    *os.File
		err  error
	)
	for range 10 {
		name = filepath.Join(dir, tempPrefix+rand.Text())
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	err = copySync(ctx, f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// mkdirs makes dir and its missing parents, syncing each parent whose
// entries changed, so a crash cannot lose the folder of a finished Put.
func (l *Local) mkdirs(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	var created []string // deepest first
	for d := dir; d != l.root && len(d) > len(l.root); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes the entries of dir durable. Windows cannot sync a folder;
// there it does nothing.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// contextReader fails reads once its context is done, so a long upload
// stops when its caller gives up.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Delete implements [Store]. A key naming a folder is not an object and is
// left alone.
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("objstore: delete %q: %w", key, err)
	}
	p, err := l.path(key)
	if err != nil {
		return fmt.Errorf("objstore: delete: %w", err)
	}
	fi, err := os.Lstat(p)
	if missing(err) || err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !missing(err) {
		return fmt.Errorf("objstore: delete %q: %w", key, err)
	}
	return nil
}

// List implements [Store]. It reads only the folder that the prefix's last
// '/' names and the folders below it whose keys can match, and it sorts
// each folder's entries so that keys come out in byte order even though
// "a/b" sorts after "a.b" ('/' is 0x2F, '.' is 0x2E). Objects written or
// removed during the listing may or may not be seen.
func (l *Local) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		dir := ""
		if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
			dir = prefix[:i]
			if _, err := l.path(dir); err != nil {
				yield(ObjectInfo{}, fmt.Errorf("objstore: list prefix %q: %w", prefix, err))
				return
			}
		}
		w := listWalk{l: l, ctx: ctx, prefix: prefix, startAfter: startAfter, yield: yield}
		w.walk(dir)
	}
}

type listWalk struct {
	l                  *Local
	ctx                context.Context
	prefix, startAfter string
	yield              func(ObjectInfo, error) bool
}

// listEntry is one name in a folder: a file, or a folder whose keys all
// start with sortKey.
type listEntry struct {
	entry   fs.DirEntry
	key     string
	sortKey string // key, plus '/' for a folder
	isDir   bool
}

// walk yields the matching objects under the folder dirKey ("" is the
// root) and reports whether to go on.
func (w *listWalk) walk(dirKey string) bool {
	if err := w.ctx.Err(); err != nil {
		return w.yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", w.prefix, err))
	}
	entries, err := w.l.readDir(filepath.Join(w.l.root, filepath.FromSlash(dirKey)))
	if missing(err) {
		return true
	}
	if err != nil {
		w.yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", w.prefix, err))
		return false
	}
	var keep []listEntry
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			continue
		}
		key := name
		if dirKey != "" {
			key = dirKey + "/" + name
		}
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(w.l.root, filepath.FromSlash(key)))
			if err != nil || !fi.Mode().IsRegular() {
				continue // dangling, or a link to a folder: not followed
			}
			mode = 0
		}
		switch {
		case mode.IsDir():
			sub := key + "/"
			if (strings.HasPrefix(sub, w.prefix) || strings.HasPrefix(w.prefix, sub)) &&
				(sub > w.startAfter || strings.HasPrefix(w.startAfter, sub)) {
				keep = append(keep, listEntry{entry: e, key: key, sortKey: sub, isDir: true})
			}
		case mode.IsRegular():
			if strings.HasPrefix(key, w.prefix) && key > w.startAfter {
				keep = append(keep, listEntry{entry: e, key: key, sortKey: key})
			}
		}
	}
	slices.SortFunc(keep, func(a, b listEntry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, e := range keep {
		if e.isDir {
			if !w.walk(e.key) {
				return false
			}
			continue
		}
		fi, err := os.Stat(filepath.Join(w.l.root, filepath.FromSlash(e.key)))
		if missing(err) {
			continue // deleted since the folder was read
		}
		if err != nil {
			w.yield(ObjectInfo{}, fmt.Errorf("objstore: list %q: %w", w.prefix, err))
			return false
		}
		if !w.yield(ObjectInfo{Key: e.key, Size: fi.Size(), ModTime: fi.ModTime()}, nil) {
			return false
		}
	}
	return true
}

// MaxDeleteBatch implements [BatchDeleter].
func (l *Local) MaxDeleteBatch() int { return 1000 }

// DeleteBatch implements [BatchDeleter]: one Delete after another (a
// file system has no batch; the batch saves the caller's requests).
func (l *Local) DeleteBatch(ctx context.Context, keys []string) error {
	var de DeleteError
	for _, k := range keys {
		if err := l.Delete(ctx, k); err != nil {
			if ctx.Err() != nil {
				return err
			}
			de.Keys, de.Errs = append(de.Keys, k), append(de.Errs, err)
		}
	}
	if len(de.Keys) > 0 {
		return &de
	}
	return nil
}
