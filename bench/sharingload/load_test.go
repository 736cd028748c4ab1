package sharingload

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/sharing"
	"github.com/lakelog/lakelog/test/tabletest"
)

var (
	clients  = flag.Int("sharing.clients", 2, "TestSharingLoad: concurrent clients, each querying and following the feed")
	commits  = flag.Int("sharing.commits", 5, "TestSharingLoad: commits the writer makes while the clients run")
	interval = flag.Duration("sharing.interval", 50*time.Millisecond, "TestSharingLoad: pause between the writer's commits")
	rows     = flag.Int("sharing.rows", 100, "TestSharingLoad: rows of each commit")
)

const token = "load-test-token-0123456789abcdefghijkl"

// TestSharingLoad runs the load: see the package doc.
func TestSharingLoad(t *testing.T) {
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Create(t, st, "id long, v string", map[string]string{"delta.enableChangeDataFeed": "true"})
	snap = tabletest.Append(t, snap, rowsJSON(0, *rows))
	cfg, err := sharing.ParseConfig("load.yaml", []byte(fmt.Sprintf(`version: 1
accessLog: off
limits:
  requestsPerSecond: 1000000
  burst: 1000000
shares:
- name: s
  schemas:
  - name: db
    tables:
    - name: t
      location: %q
      historyShared: true
recipients:
- name: load
  token: %s
  shares: [s]
`, dir+"/"+tabletest.Root, token)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sharing.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stopServer := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String() + "/delta-sharing/shares/s/schemas/db/tables/t"

	l := &load{t: t, base: base, store: st, http: &http.Client{Timeout: time.Minute}, lat: map[string][]time.Duration{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.client(i, stop)
		}()
	}
	var peak atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	for i := range *commits {
		snap = tabletest.Append(t, snap, rowsJSON((i+1)**rows, *rows))
		time.Sleep(*interval)
	}
	// Let the followers reach the last version, then stop.
	deadline := time.Now().Add(time.Minute)
	for l.minFollowed() < snap.Version() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	<-sampled
	stopServer()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	for _, e := range l.errs {
		t.Error(e)
	}
	if got := l.minFollowed(); got < snap.Version() {
		t.Errorf("a follower reached version %d of %d", got, snap.Version())
	}
	t.Logf("%d clients, %d commits of %d rows in %v; peak heap in use %.1f MiB", *clients, *commits, *rows, time.Since(start).Round(time.Millisecond), float64(peak.Load())/(1<<20))
	for _, kind := range []string{"query", "version", "changes", "file"} {
		d := l.lat[kind]
		if len(d) == 0 {
			t.Errorf("no %s request was made", kind)
			continue
		}
		slices.Sort(d)
		p := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
		t.Logf("%-8s n=%-6d p50 %-10v p95 %-10v p99 %-10v max %v", kind, len(d), p(.50), p(.95), p(.99), d[len(d)-1])
	}
}

func rowsJSON(from, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"v":"row %d"}`, from+i, from+i)
	}
	return b.String() + "]"
}

// load is the clients' shared state: latencies, errors and how far each
// follower got.
type load struct {
	t     *testing.T
	base  string
	store objstore.Store
	http  *http.Client
	mu    sync.Mutex
	lat   map[string][]time.Duration
	errs  []error
	// followed[i] is the last version client i's feed reached.
	followed sync.Map
}

func (l *load) record(kind string, d time.Duration) {
	l.mu.Lock()
	l.lat[kind] = append(l.lat[kind], d)
	l.mu.Unlock()
}

func (l *load) fail(err error) {
	l.mu.Lock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, err)
	}
	l.mu.Unlock()
}

func (l *load) minFollowed() int64 {
	m := int64(1 << 62)
	n := 0
	l.followed.Range(func(_, v any) bool {
		m = min(m, v.(int64))
		n++
		return true
	})
	if n < *clients {
		return -1
	}
	return m
}

// client alternates a query of the latest version (its files checked
// against the snapshot of the version the answer names, one file fetched
// whole) with a step of following the feed (the adds of each new version
// checked against its commit).
func (l *load) client(id int, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(id), 38))
	next := int64(0)
	l.followed.Store(id, int64(-1))
	for {
		select {
		case <-stop:
			return
		default:
		}
		if err := l.query(rng); err != nil {
			l.fail(fmt.Errorf("client %d query: %w", id, err))
		}
		v, err := l.follow(next)
		if err != nil {
			l.fail(fmt.Errorf("client %d follow from %d: %w", id, next, err))
			continue
		}
		if v >= next {
			next = v + 1
			l.followed.Store(id, v)
		}
	}
}

// do sends a request and returns its status, headers and body lines.
func (l *load) do(kind, method, url, body string) (http.Header, []map[string]json.RawMessage, error) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := l.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	l.record(kind, time.Since(start))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != 200 {
		return nil, nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	var lines []map[string]json.RawMessage
	for _, ln := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			return nil, nil, fmt.Errorf("line %q: %w", ln, err)
		}
		lines = append(lines, m)
	}
	return resp.Header, lines, nil
}

type file struct {
	URL     string `json:"url"`
	ID      string `json:"id"`
	Size    int64  `json:"size"`
	Version int64  `json:"version"`
}

func fileID(path string) string {
	s := md5.Sum([]byte(path))
	return hex.EncodeToString(s[:])
}

func (l *load) query(rng *rand.Rand) error {
	h, lines, err := l.do("query", "POST", l.base+"/query", "{}")
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(h.Get("Delta-Table-Version"), 10, 64)
	if err != nil {
		return fmt.Errorf("version header %q", h.Get("Delta-Table-Version"))
	}
	var got []file
	for _, ln := range lines {
		if raw, ok := ln["file"]; ok {
			var f file
			json.Unmarshal(raw, &f)
			got = append(got, f)
		}
	}
	snap, err := deltalog.Open(context.Background(), l.store, tabletest.Root, deltalog.AtVersion(v))
	if err != nil {
		return err
	}
	var want []string
	for a := range snap.Files() {
		want = append(want, fileID(a.Path))
	}
	ids := make([]string, len(got))
	for i, f := range got {
		ids[i] = f.ID
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		return fmt.Errorf("version %d: the answer's files %v are not the snapshot's %v", v, ids, want)
	}
	if len(got) == 0 {
		return errors.New("no file")
	}
	f := got[rng.IntN(len(got))]
	start := time.Now()
	resp, err := l.http.Get(f.URL)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	l.record("file", time.Since(start))
	if err != nil || resp.StatusCode != 200 || n != f.Size {
		return fmt.Errorf("file %s: %d, %d bytes of %d: %v", f.ID, resp.StatusCode, n, f.Size, err)
	}
	return nil
}

// follow reads the feed from next to the latest version and checks each
// version's adds; it returns the last version read (next-1 when there is
// none yet).
func (l *load) follow(next int64) (int64, error) {
	h, _, err := l.do("version", "GET", l.base+"/version", "")
	if err != nil {
		return next - 1, err
	}
	latest, _ := strconv.ParseInt(h.Get("Delta-Table-Version"), 10, 64)
	if latest < next {
		return next - 1, nil
	}
	url := fmt.Sprintf("%s/changes?startingVersion=%d&endingVersion=%d", l.base, next, latest)
	_, lines, err := l.do("changes", "GET", url, "")
	if err != nil {
		return next - 1, err
	}
	got := map[int64][]string{}
	for _, ln := range lines {
		if raw, ok := ln["add"]; ok {
			var f file
			json.Unmarshal(raw, &f)
			got[f.Version] = append(got[f.Version], f.ID)
		}
	}
	for c, err := range deltalog.Commits(context.Background(), l.store, tabletest.Root, next, latest) {
		if err != nil {
			return next - 1, err
		}
		var want []string
		for _, a := range c.Actions {
			if a.Add != nil && a.Add.DataChange {
				want = append(want, fileID(a.Add.Path))
			}
		}
		g := got[c.Version]
		slices.Sort(g)
		slices.Sort(want)
		if !slices.Equal(g, want) {
			return next - 1, fmt.Errorf("version %d: the feed's adds %v are not the commit's %v", c.Version, g, want)
		}
	}
	return latest, nil
}
