package sharing_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/sharing"
	"github.com/lakelog/lakelog/test/tabletest"
)

// Tokens of the fixture's recipients.
const (
	tokenA       = "token-of-recipient-a-0123456789abcdef"
	tokenB       = "token-of-recipient-b-0123456789abcdef"
	tokenExpired = "token-of-expired-one-0123456789abcdef"
)

// clock is a settable clock for token and URL expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is a server over local tables, on an httptest server.
type fixture struct {
	t      testing.TB
	dir    string
	srv    *sharing.Server
	http   *httptest.Server
	clock  *clock
	log    *bytes.Buffer
	tables map[string]*deltalog.Snapshot // by name: the latest snapshot written
}

// newTable makes a local table named name under dir (its location is
// dir/name/tbl) and returns its store and snapshot.
func newTable(t testing.TB, dir, name, schema string, props map[string]string, parts ...string) (objstore.Store, *deltalog.Snapshot) {
	t.Helper()
	st, err := objstore.NewLocal(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return st, tabletest.Create(t, st, schema, props, parts...)
}

func location(dir, name string) string { return filepath.Join(dir, name, tabletest.Root) }

// baseConfig is a configuration of share_a (tables events and dv) for
// recipient a, share_b (table other) for recipient b, and an expired
// recipient of share_a; tables are under dir.
func baseConfig(dir string, extra string) string {
	return fmt.Sprintf(`version: 1
endpoint: /delta-sharing
accessLog: off
shares:
- name: share_a
  schemas:
  - name: sales
    tables:
    - name: events
      location: %q
      historyShared: true
    - name: dv
      location: %q
      historyShared: true
- name: share_b
  schemas:
  - name: secret
    tables:
    - name: other
      location: %q
recipients:
- name: a
  token: %s
  shares: [share_a]
- name: b
  token: %s
  shares: [share_b]
- name: old
  token: %s
  expirationTime: 2020-01-01T00:00:00Z
  shares: [share_a]
%s`, location(dir, "events"), location(dir, "dv"), location(dir, "other"), tokenA, tokenB, tokenExpired, extra)
}

// newFixture creates the three tables (events partitioned by day with
// the change feed, dv with deletion vectors, other) and serves them.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, clock: &clock{now: time.Now()}, log: &bytes.Buffer{}, tables: map[string]*deltalog.Snapshot{}}
	_, ev := newTable(t, dir, "events", "id long, day string, v double", map[string]string{"delta.enableChangeDataFeed": "true"}, "day")
	ev = tabletest.Append(t, ev, `[{"id":1,"day":"2026-01-01","v":1.5},{"id":2,"day":"2026-01-01","v":2.5}]`)
	ev = tabletest.Append(t, ev, `[{"id":3,"day":"2026-01-02","v":3.5},{"id":4,"day":"2026-01-03","v":null}]`)
	f.tables["events"] = ev
	_, dv := newTable(t, dir, "dv", "id long, s string", map[string]string{"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"})
	f.tables["dv"] = tabletest.Append(t, dv, `[{"id":1,"s":"a"},{"id":2,"s":"b"},{"id":3,"s":"c"}]`)
	_, other := newTable(t, dir, "other", "x int", nil)
	f.tables["other"] = tabletest.Append(t, other, `[{"x":7}]`)
	f.start(baseConfig(dir, ""))
	return f
}

// start (re)starts the server with the configuration text.
func (f *fixture) start(text string) {
	f.t.Helper()
	cfg, err := sharing.ParseConfig("shares.yaml", []byte(text))
	if err != nil {
		f.t.Fatal(err)
	}
	srv, err := sharing.New(context.Background(), cfg, sharing.WithClock(f.clock.Now), sharing.WithAccessLog(f.log))
	if err != nil {
		f.t.Fatal(err)
	}
	if f.http != nil {
		f.http.Close()
		f.srv.Close()
	}
	f.srv = srv
	f.http = httptest.NewServer(srv.Handler())
	f.t.Cleanup(func() { f.http.Close(); srv.Close() })
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// lines splits an NDJSON body into decoded objects.
func (r response) lines(t *testing.T) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// errorCode is the errorCode of an error body.
func (r response) errorCode(t *testing.T) string {
	t.Helper()
	var e struct {
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	return e.ErrorCode
}

// do sends a request with token (none when empty) and headers.
func (f *fixture) do(method, path, token, body string, headers ...string) response {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

// get fetches a file URL without a token.
func get(t *testing.T, url string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

// readFile reads a file of a table as the store holds it.
func readFile(t *testing.T, dir, table, key string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(location(dir, table), filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
