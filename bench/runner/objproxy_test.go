package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/bench/runner/workload"
)

// upstream is a fake object store: GET /o?n=N answers N bytes (streamed,
// without a Content-Length when chunked=1), HEAD answers headers only, PUT
// reads the body and answers "ok", POST answers a Location on itself.
func upstream(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var hosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host+" "+r.URL.RequestURI())
		mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			if r.URL.Query().Get("chunked") == "" {
				w.Header().Set("Content-Length", strconv.Itoa(n))
			}
			for n > 0 {
				k := min(n, 10000)
				w.Write(bytes.Repeat([]byte{'x'}, k))
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				n -= k
			}
		case http.MethodHead:
			w.Header().Set("Content-Length", "777")
		case http.MethodPut:
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, "ok")
		case http.MethodPost:
			w.Header().Set("Location", "http://"+r.Host+"/upload/resumable/1?x=y")
			io.WriteString(w, "{}")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), hosts...) }
}

func TestCountingProxyCountsExactly(t *testing.T) {
	up, seen := upstream(t)
	p, err := startProxy(up.URL, proxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	do := func(method, path string, body []byte) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, p.URL()+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodGet {
			if n, _ := strconv.Atoi(req.URL.Query().Get("n")); len(got) != n {
				t.Fatalf("GET %s: %d bytes through the proxy, want %d", path, len(got), n)
			}
		}
		return resp
	}
	do("GET", "/b/o?n=1000", nil)
	do("GET", "/b/o?n=1000", nil)
	do("GET", "/b/o?n=3000000&chunked=1", nil) // streamed, no length
	do("HEAD", "/b/o", nil)
	do("HEAD", "/b/o", nil)
	do("PUT", "/b/o", bytes.Repeat([]byte{'y'}, 5000))
	resp := do("POST", "/upload?uploadType=resumable", []byte("{}"))
	tr := p.take()
	want := map[string]int64{"GET": 3, "HEAD": 2, "PUT": 1, "POST": 1}
	if len(tr.Requests) != len(want) {
		t.Errorf("requests %v, want %v", tr.Requests, want)
	}
	for m, n := range want {
		if tr.Requests[m] != n {
			t.Errorf("%s requests %d, want %d", m, tr.Requests[m], n)
		}
	}
	if tr.total() != 7 {
		t.Errorf("total %d, want 7", tr.total())
	}
	// Response bodies: 1000 + 1000 + 3000000 (GET), none for HEAD, "ok"
	// (PUT), "{}" (POST); request bodies: 5000 + 2.
	if tr.Fetched != 3_002_004 || tr.Sent != 5002 {
		t.Errorf("fetched %d, sent %d; want 3002004 and 5002", tr.Fetched, tr.Sent)
	}
	if s := tr.String(); !strings.Contains(s, "7 requests (GET 3, HEAD 2, POST 1, PUT 1)") || !strings.Contains(s, "2.9 MiB fetched") || !strings.Contains(s, "4.9 KiB sent") {
		t.Errorf("summary %q", s)
	}
	// The upload URL the server hands out leads back through the proxy.
	if loc := resp.Header.Get("Location"); loc != p.URL()+"/upload/resumable/1?x=y" {
		t.Errorf("Location %q, want the proxy's", loc)
	}
	// The target saw its own host and the paths and queries unchanged.
	for _, h := range seen() {
		if !strings.HasPrefix(h, strings.TrimPrefix(up.URL, "http://")+" /") {
			t.Errorf("upstream saw %q", h)
		}
	}
	// take starts afresh.
	if tr := p.take(); tr.total() != 0 || tr.Fetched != 0 || tr.Sent != 0 {
		t.Errorf("after take: %+v", tr)
	}
	do("GET", "/b/o?n=10", nil)
	if tr := p.take(); tr.Requests["GET"] != 1 || tr.Fetched != 10 {
		t.Errorf("second window: %+v", tr)
	}
}

func TestCountingProxyKeepsHost(t *testing.T) {
	up, seen := upstream(t)
	p, err := startProxy(up.URL, proxyOptions{keepHost: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := http.Get(p.URL() + "/b/o%2Fk?n=5")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := seen(); len(got) != 1 || got[0] != p.Addr()+" /b/o%2Fk?n=5" {
		t.Errorf("upstream saw %q, want the proxy's host and the escaped path as sent", got)
	}
}

func TestFakeGCSUpload(t *testing.T) {
	for _, c := range []struct {
		method, uri string
		marked      bool
	}{
		{"PUT", "/bkt/a%2Fb.parquet", true},
		{"PUT", "/upload/resumable/1", false},
		{"PUT", "/bkt/o?uploadId=3&partNumber=1", false},
		{"POST", "/bkt/o", false},
		{"GET", "/bkt/o", false},
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=x", false},
	} {
		r := httptest.NewRequest(c.method, "http://h"+c.uri, nil)
		fakeGCSUpload(r)
		if got := r.URL.Query().Get("X-Goog-Algorithm") != ""; got != c.marked {
			t.Errorf("%s %s: marked %v, want %v", c.method, c.uri, got, c.marked)
		}
	}
	req := httptest.NewRequest("PUT", "http://h/bkt/o?X-Goog-Algorithm=GOOG4-RSA-SHA256", nil)
	body := `{"kind":"storage#object","etag":"XUFAKr==","generation":"17"}`
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: req, Body: io.NopCloser(strings.NewReader(body))}
	if err := fakeGCSUploaded(resp); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("ETag") != `"XUFAKr=="` || resp.Header.Get("x-goog-generation") != "17" {
		t.Errorf("headers %v", resp.Header)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != body {
		t.Errorf("body changed: %q", b)
	}
}

func TestWrongRowsFailTheSuite(t *testing.T) {
	want := workload.Expect(0, 10)
	ok := &Row{Name: "good", LakelogNote: checkRows(&Outcome{Checksum: (*Checksum)(&want)}, want)}
	if err := wrongRows([]*Row{ok}); err != nil {
		t.Fatalf("checked rows failed: %v", err)
	}
	bad := want
	bad.Rows--
	wrong := &Row{Name: "bad", DeltaRSNote: checkRows(&Outcome{Checksum: (*Checksum)(&bad)}, want)}
	if err := wrongRows([]*Row{ok, wrong}); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("a WRONG row gave %v", err)
	}
	failed := &Row{Name: "crashed", DeltaRSNote: failedNote(errors.New("runner: delta-rs select: exit status 1\n  Traceback\n  ArrowInvalid: boom"))}
	if failed.DeltaRSNote != "**FAILED: ArrowInvalid: boom**" {
		t.Errorf("failed note %q", failed.DeltaRSNote)
	}
	if err := wrongRows([]*Row{ok, failed}); err == nil || !strings.Contains(err.Error(), `"crashed"`) {
		t.Fatalf("a FAILED row gave %v", err)
	}
}

// TestLakelogProjection: a scan with Columns reads those columns only, and
// its checksum is expectProjected's, not the full scan's.
func TestLakelogProjection(t *testing.T) {
	ctx := context.Background()
	table := filepath.Join(t.TempDir(), "t")
	const n = 20_000
	if _, err := lakelogOp(ctx, Spec{Op: "append", Table: table, Rows: n, TargetFileSize: workload.TargetFileSize(n)}); err != nil {
		t.Fatal(err)
	}
	o, err := lakelogOp(ctx, Spec{Op: "scan", Table: table, Columns: projection})
	if err != nil {
		t.Fatal(err)
	}
	if got := checkRows(&o, expectProjected(n)); got != "rows checked" {
		t.Errorf("projection: %s", got)
	}
	if got := checkRows(&o, workload.Expect(0, n)); got == "rows checked" {
		t.Errorf("projection read p too: %+v", *o.Checksum)
	}
}
