package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
			go func() {
				done <- run(ctx, []string{"changes", tbl, "--follow", "--format", c.format}, strings.NewReader(""), &out, &errOut)
			}()
			time.Sleep(300 * time.Millisecond) // started, at latest = 1
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out, errOut lockedBuffer
	if code := run(ctx, []string{"changes", tbl, "--follow", "--from", "0", "--format", "jsonl"}, strings.NewReader(""), &out, &errOut); code != exitOK || !strings.Contains(out.String(), `"id":1`) {
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
