package main

import (
	"bytes"
	"context"
	"iter"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// lockedBuffer is written by the command and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// changes --follow prints each new version's changes as it lands, in
// every format, and exits 0 when interrupted.
func TestChangesFollow(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "t")
	ok(t, "create", tbl, "--schema", "id long, v string", "--property", "delta.enableChangeDataFeed=true")
	ok(t, "append", tbl, writeFile(t, dir, "a.jsonl", `{"id": 1, "v": "a"}`+"\n"))
	for _, c := range []struct {
		format string
		want   []string // in order
	}{
		{"jsonl", []string{`{"id":2,"v":"b","_change_type":"insert","_commit_version":2,`, `{"id":3,"v":"c","_change_type":"insert","_commit_version":3,`}},
		{"csv", []string{"id,v,_change_type,_commit_version,_commit_timestamp\n", "2,b,insert,2,", "3,c,insert,3,"}},
		{"table", []string{"id  v  _change_type", "2  b  insert", "id  v  _change_type", "3  c  insert"}},
		{"json", []string{"[\n{\"id\":2", "]", "[\n{\"id\":3"}},
	} {
		t.Run(c.format, func(t *testing.T) {
			tbl := filepath.Join(dir, c.format)
			ok(t, "create", tbl, "--schema", "id long, v string", "--property", "delta.enableChangeDataFeed=true")
			ok(t, "append", tbl, writeFile(t, dir, "a.jsonl", `{"id": 1, "v": "a"}`+"\n"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut lockedBuffer
			done := make(chan int)
			listed := followListed(tbl)
			go func() {
				done <- run(ctx, []string{"changes", "followtest://" + tbl, "--follow", "--format", c.format}, strings.NewReader(""), &out, &errOut)
			}()
			// Started, at latest = 1: once it has listed the log (a fixed
			// sleep lost the race to the append on a loaded machine, and
			// the follower then started after version 2).
			select {
			case <-listed:
			case code := <-done:
				t.Fatalf("exit %d before following: %s", code, errOut.String())
			case <-time.After(20 * time.Second):
				t.Fatal("the follower never listed the log")
			}
			ok(t, "append", tbl, writeFile(t, dir, "b.jsonl", `{"id": 2, "v": "b"}`+"\n"))
			waitFor(t, &out, "2")
			ok(t, "append", tbl, writeFile(t, dir, "c.jsonl", `{"id": 3, "v": "c"}`+"\n"))
			waitFor(t, &out, "3")
			cancel()
			if code := <-done; code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			got := out.String()
			at := 0
			for _, w := range c.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("output lacks %q after byte %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
			if strings.Contains(got, `"id":1`) || strings.Contains(got, "1,a,") || strings.Count(got, "id,v,") > 1 {
				t.Fatalf("output:\n%s", got)
			}
		})
	}
	// --from N starts there; --to, --sorted and --from latest without
	// --follow are usage errors.
	// (Interrupted once it printed version 1, not after a fixed second a
	// loaded machine may need to print it.)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"changes", tbl, "--follow", "--from", "0", "--format", "jsonl"}, strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, &out, "1")
	cancel()
	if code := <-done; code != exitOK || !strings.Contains(out.String(), `"id":1`) {
		t.Fatalf("--from 0: exit %d %s %s", code, out.String(), errOut.String())
	}
	for _, args := range [][]string{
		{"changes", tbl, "--follow", "--to", "3"},
		{"changes", tbl, "--follow", "--sorted"},
		{"changes", tbl, "--from", "latest"},
		{"changes", tbl, "--follow", "--from", "x"},
		{"changes", tbl},
	} {
		if code, _, errOut := lakelog(t, args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// followStores are the tables of the followtest:// scheme (a local path):
// the channel of a table is closed once a List of its log has been read
// to its end, when a follower knows the latest version.
var followStores struct {
	once   sync.Once
	mu     sync.Mutex
	listed map[string]chan struct{}
}

// followListed registers the followtest:// scheme and returns the channel
// closed when the log of the table at path has first been listed.
func followListed(path string) <-chan struct{} {
	followStores.once.Do(func() {
		objstore.Register("followtest", func(_ context.Context, u *url.URL, _ objstore.Options) (objstore.Store, error) {
			st, err := objstore.NewLocal(u.Path)
			if err != nil {
				return nil, err
			}
			followStores.mu.Lock()
			ch := followStores.listed[u.Path]
			followStores.mu.Unlock()
			var once sync.Once
			return &listSignal{Local: st, done: func() {
				if ch != nil {
					once.Do(func() { close(ch) })
				}
			}}, nil
		})
	})
	ch := make(chan struct{})
	followStores.mu.Lock()
	defer followStores.mu.Unlock()
	if followStores.listed == nil {
		followStores.listed = map[string]chan struct{}{}
	}
	followStores.listed[path] = ch
	return ch
}

// listSignal is a local store that calls done after each List of the
// log read to its end.
type listSignal struct {
	*objstore.Local
	done func()
}

func (s *listSignal) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		for info, err := range s.Local.List(ctx, prefix, startAfter) {
			if !yield(info, err) {
				return
			}
		}
		if strings.HasPrefix(prefix, "_delta_log/") {
			s.done()
		}
	}
}

// waitFor waits until the output has a line whose first field is id.
func waitFor(t *testing.T, out *lockedBuffer, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s := out.String()
		if strings.Contains(s, `"id":`+id) || strings.Contains(s, "\n"+id+",") || strings.Contains(s, "\n"+id+"  ") || strings.Contains(s, " "+id+"  ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("id %s never printed:\n%s", id, out.String())
}
