package sharing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// endpoints are every API route of a table of a share, with the share,
// schema and table names to fill in.
var endpoints = []struct{ method, path, body string }{
	{"GET", "/delta-sharing/shares/%s", ""},
	{"GET", "/delta-sharing/shares/%s/schemas", ""},
	{"GET", "/delta-sharing/shares/%s/all-tables", ""},
	{"GET", "/delta-sharing/shares/%s/schemas/%s/tables", ""},
	{"GET", "/delta-sharing/shares/%s/schemas/%s/tables/%s/version", ""},
	{"HEAD", "/delta-sharing/shares/%s/schemas/%s/tables/%s", ""},
	{"GET", "/delta-sharing/shares/%s/schemas/%s/tables/%s/metadata", ""},
	{"POST", "/delta-sharing/shares/%s/schemas/%s/tables/%s/query", "{}"},
	{"GET", "/delta-sharing/shares/%s/schemas/%s/tables/%s/changes?startingVersion=0", ""},
}

func fill(path string, names ...any) string {
	n := strings.Count(path, "%s")
	return fmt.Sprintf(path, names[:n]...)
}

// TestCrossShareTokens: a recipient's token gets nothing of a share it
// does not hold, on every endpoint, and the answer is the answer for a
// share that does not exist: the same status and body but for the name.
func TestCrossShareTokens(t *testing.T) {
	f := newFixture(t)
	for _, e := range endpoints {
		for _, c := range []struct{ token, share, schema, table string }{
			{tokenA, "share_b", "secret", "other"},
			{tokenB, "share_a", "sales", "events"},
			{tokenB, "share_a", "sales", "dv"},
		} {
			got := f.do(e.method, fill(e.path, c.share, c.schema, c.table), c.token, e.body)
			ghost := strings.Repeat("z", len(c.share))
			absent := f.do(e.method, fill(e.path, ghost, c.schema, c.table), c.token, e.body)
			if got.status != 404 {
				t.Errorf("%s %s with the other recipient's token: %d %s", e.method, fill(e.path, c.share, c.schema, c.table), got.status, got.body)
			}
			if got.status != absent.status || !bytes.Equal(bytes.ReplaceAll(got.body, []byte(c.share), []byte(ghost)), absent.body) {
				t.Errorf("%s %s: answer %d %q differs from a missing share's %d %q", e.method, e.path, got.status, got.body, absent.status, absent.body)
			}
			if got.header.Get("Delta-Table-Version") != "" {
				t.Errorf("%s %s: a version header leaks", e.method, e.path)
			}
		}
	}
	r := f.do("GET", "/delta-sharing/shares", tokenB, "")
	if strings.Contains(string(r.body), "share_a") || !strings.Contains(string(r.body), "share_b") {
		t.Errorf("recipient b lists %s", r.body)
	}
}

func TestBadTokens(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ name, header string }{
		{"none", ""},
		{"basic", "Basic " + tokenA},
		{"empty bearer", "Bearer "},
		{"unknown", "Bearer " + strings.Repeat("x", 40)},
		{"expired", "Bearer " + tokenExpired},
		{"space inside", "Bearer " + tokenA[:10] + " " + tokenA[10:]},
		{"huge", "Bearer " + strings.Repeat("y", 5000)},
		{"a token's prefix", "Bearer " + tokenA[:20]},
	} {
		for _, e := range endpoints {
			r := f.do(e.method, fill(e.path, "share_a", "sales", "events"), "", e.body, "Authorization", c.header)
			if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s token on %s %s: %d %s", c.name, e.method, e.path, r.status, r.body)
			}
		}
		r := f.do("GET", "/delta-sharing/shares", "", "", "Authorization", c.header)
		if r.status == 401 && r.errorCode(t) != "UNAUTHENTICATED" {
			t.Errorf("%s: error code %s", c.name, r.errorCode(t))
		}
		if c.name == "expired" && !strings.Contains(string(r.body), "expired") {
			t.Errorf("expired token: message %s", r.body)
		}
	}
	if bytes.Contains(f.log.Bytes(), []byte(tokenA)) || bytes.Contains(f.log.Bytes(), []byte(tokenExpired)) {
		t.Error("the access log holds a token")
	}
}

// addCommit writes a commit adding a file named path to the events
// table, as a hand-made (or hostile) log would.
func addCommit(t *testing.T, dir string, version int, path string) {
	t.Helper()
	add := map[string]any{"add": map[string]any{"path": path, "partitionValues": map[string]string{"day": "2026-01-09"},
		"size": 10, "modificationTime": time.Now().UnixMilli(), "dataChange": true}}
	b, _ := json.Marshal(add)
	name := filepath.Join(location(dir, "events"), "_delta_log", fmt.Sprintf("%020d.json", version))
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFileOutsideTable: a log that names a file outside the table's root
// gets no URL for it; the query fails naming the table.
func TestFileOutsideTable(t *testing.T) {
	for _, path := range []string{"../other/tbl/secret.parquet", "%2E%2E/other/tbl/secret.parquet", "day=x/../../../other/tbl/secret.parquet",
		"file:///etc/passwd", "/etc/passwd", "_delta_log/00000000000000000000.json", "a//b.parquet"} {
		t.Run(path, func(t *testing.T) {
			f := newFixture(t)
			addCommit(t, f.dir, 3, path)
			for _, body := range []string{`{}`, `{"version":3}`, `{"startingVersion":3}`} {
				for _, format := range []string{"responseformat=parquet", "responseformat=delta"} {
					r := f.do("POST", tablePath+"/query", tokenA, body, "delta-sharing-capabilities", format)
					if r.status != 500 || !strings.Contains(string(r.body), "outside the table") {
						t.Errorf("query %s (%s): %d %s", body, format, r.status, r.body)
					}
					if bytes.Contains(r.body, []byte("/files/")) || bytes.Contains(r.body, []byte("secret")) {
						t.Errorf("query %s: a URL was given out: %s", body, r.body)
					}
				}
			}
			r := f.do("GET", tablePath+"/changes?startingVersion=3", tokenA, "")
			if r.status != 500 || bytes.Contains(r.body, []byte("/files/")) {
				t.Errorf("changes: %d %s", r.status, r.body)
			}
		})
	}
}

func TestBodies(t *testing.T) {
	f := newFixture(t)
	f.start(baseConfig(f.dir, "limits:\n  maxRequestBytes: 512\n"))
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"predicateHints":["` + strings.Repeat("a", 600) + `"]}`, 413, "REQUEST_TOO_LARGE"},
		{`{"predicateHints":`, 400, "MALFORMED_REQUEST"},
		{`{"version":"one"}`, 400, "MALFORMED_REQUEST"},
		{`{"predicateHints":"x"}`, 400, "MALFORMED_REQUEST"},
		{`{} {}`, 400, "MALFORMED_REQUEST"},
		{`[1,2]`, 400, "MALFORMED_REQUEST"},
		{`{"version":1e400}`, 400, "MALFORMED_REQUEST"},
		{`{"limitHint":-1}`, 400, "INVALID_PARAMETER_VALUE"},
		{`{"unknownField":1}`, 200, ""},
		{``, 200, ""},
	} {
		r := f.do("POST", tablePath+"/query", tokenA, c.body)
		if r.status != c.status || (c.code != "" && r.errorCode(t) != c.code) {
			t.Errorf("body %.40q: %d %s, want %d %s", c.body, r.status, r.body, c.status, c.code)
		}
	}
	// A body without a length, over the limit.
	req, _ := http.NewRequest("POST", f.http.URL+tablePath+"/query", struct{ *strings.Reader }{strings.NewReader(`{"x":"` + strings.Repeat("b", 2000) + `"}`)})
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked body over the limit: %d", resp.StatusCode)
	}
}

func TestURLExpiry(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", tablePath+"/query", tokenA, `{}`)
	fl := files(t, r, "file")[0]
	if get(t, fl.URL).status != 200 {
		t.Fatal("fresh URL refused")
	}
	for _, tamper := range []func(string) string{
		func(u string) string { return strings.Replace(u, "sig=", "sig=00", 1) },
		func(u string) string { return strings.Replace(u, "se=", "se=9", 1) },
		func(u string) string { return strings.Replace(u, "/day=", "/xday=", 1) },
		func(u string) string { return strings.Replace(u, "/day=", "/../../other/tbl/day=", 1) },
	} {
		if got := get(t, tamper(fl.URL)); got.status != 403 && got.status != 404 {
			t.Errorf("tampered URL %s: %d", tamper(fl.URL), got.status)
		}
	}
	if time.UnixMilli(fl.ExpirationTimestamp).Sub(f.clock.Now()) > time.Hour+time.Second {
		t.Errorf("expiration %v is beyond the configured hour", time.UnixMilli(fl.ExpirationTimestamp))
	}
	f.clock.Advance(time.Hour + time.Second)
	if got := get(t, fl.URL); got.status != 403 {
		t.Errorf("expired URL: %d %s", got.status, got.body)
	}
	// A shorter expiry from the configuration.
	f.start(baseConfig(f.dir, "preSignedUrlTimeoutSeconds: 60\n"))
	fl = files(t, f.do("POST", tablePath+"/query", tokenA, `{}`), "file")[0]
	if d := time.UnixMilli(fl.ExpirationTimestamp).Sub(f.clock.Now()); d > time.Minute || d < 58*time.Second {
		t.Errorf("expiry %v, want a minute", d)
	}
	f.clock.Advance(61 * time.Second)
	if got := get(t, fl.URL); got.status != 403 {
		t.Errorf("URL after its minute: %d", got.status)
	}
}

func TestRateLimits(t *testing.T) {
	f := newFixture(t)
	f.start(baseConfig(f.dir, "limits:\n  requestsPerSecond: 1\n  burst: 3\n"))
	var codes []int
	for range 5 {
		codes = append(codes, f.do("GET", "/delta-sharing/shares", tokenA, "").status)
	}
	if fmt.Sprint(codes) != "[200 200 200 429 429]" {
		t.Errorf("statuses %v", codes)
	}
	r := f.do("GET", "/delta-sharing/shares", tokenA, "")
	if r.header.Get("Retry-After") == "" || r.errorCode(t) != "RESOURCE_EXHAUSTED" {
		t.Errorf("429 without Retry-After: %v %s", r.header, r.body)
	}
	if f.do("GET", "/delta-sharing/shares", tokenB, "").status != 200 {
		t.Error("recipient b limited by a's requests")
	}
	f.clock.Advance(2 * time.Second)
	if got := f.do("GET", "/delta-sharing/shares", tokenA, "").status; got != 200 {
		t.Errorf("after the bucket refilled: %d", got)
	}
	// Failed authentications from one address are bounded too.
	codes = nil
	for range 5 {
		codes = append(codes, f.do("GET", "/delta-sharing/shares", "wrong-token-0123456789012345678901", "").status)
	}
	if fmt.Sprint(codes) != "[401 401 401 429 429]" {
		t.Errorf("guessing statuses %v", codes)
	}
}

func TestHistorySharing(t *testing.T) {
	f := newFixture(t)
	other := "/delta-sharing/shares/share_b/schemas/secret/tables/other"
	for _, c := range []struct{ method, path, body string }{
		{"GET", other + "/version?startingTimestamp=2000-01-01T00:00:00Z", ""},
		{"GET", other + "/metadata?version=0", ""},
		{"POST", other + "/query", `{"version":0}`},
		{"POST", other + "/query", `{"timestamp":"2026-01-01T00:00:00Z"}`},
		{"POST", other + "/query", `{"startingVersion":0}`},
		{"GET", other + "/changes?startingVersion=0", ""},
	} {
		r := f.do(c.method, c.path, tokenB, c.body)
		if r.status != 403 || r.errorCode(t) != "PERMISSION_DENIED" {
			t.Errorf("%s %s %s on a table without history: %d %s", c.method, c.path, c.body, r.status, r.body)
		}
	}
	if r := f.do("POST", other+"/query", tokenB, `{}`); r.status != 200 {
		t.Errorf("latest of a table without history: %d %s", r.status, r.body)
	}
	// startVersion 2: versions before it are refused.
	text := strings.Replace(baseConfig(f.dir, ""), "      historyShared: true\n    - name: dv", "      historyShared: true\n      startVersion: 2\n    - name: dv", 1)
	f.start(text)
	for _, c := range []struct{ method, path, body string }{
		{"POST", tablePath + "/query", `{"version":1}`},
		{"POST", tablePath + "/query", `{"startingVersion":1}`},
		{"GET", tablePath + "/changes?startingVersion=1", ""},
		{"GET", tablePath + "/metadata?version=0", ""},
	} {
		if r := f.do(c.method, c.path, tokenA, c.body); r.status != 403 {
			t.Errorf("%s %s before startVersion: %d %s", c.path, c.body, r.status, r.body)
		}
	}
	if r := f.do("POST", tablePath+"/query", tokenA, `{"version":2}`); r.status != 200 {
		t.Errorf("version 2 with startVersion 2: %d %s", r.status, r.body)
	}
	// changeDataFeedShared: false keeps history but not the feed.
	f.start(strings.Replace(baseConfig(f.dir, ""), "      historyShared: true\n    - name: dv", "      historyShared: true\n      changeDataFeedShared: false\n    - name: dv", 1))
	if r := f.do("GET", tablePath+"/changes?startingVersion=0", tokenA, ""); r.status != 403 {
		t.Errorf("changes with the feed not shared: %d %s", r.status, r.body)
	}
	if r := f.do("POST", tablePath+"/query", tokenA, `{"version":1}`); r.status != 200 {
		t.Errorf("history with the feed not shared: %d %s", r.status, r.body)
	}
}

func TestAccessLog(t *testing.T) {
	f := newFixture(t)
	f.do("POST", tablePath+"/query", tokenA, `{}`)
	f.do("GET", "/delta-sharing/shares", "nope-nope-nope-nope-nope-nope-nope-nope", "")
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(f.log.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("access log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("access log has %d lines: %s", len(lines), f.log)
	}
	if lines[0]["recipient"] != "a" || lines[0]["status"] != float64(200) || lines[0]["files"] != float64(3) || lines[0]["path"] != tablePath+"/query" {
		t.Errorf("query line %v", lines[0])
	}
	if lines[1]["status"] != float64(401) || lines[1]["recipient"] != nil || lines[1]["error"] == nil {
		t.Errorf("refused line %v", lines[1])
	}
}

func TestHealth(t *testing.T) {
	f := newFixture(t)
	if r := f.do("GET", "/health", "", ""); r.status != 200 {
		t.Errorf("health: %d", r.status)
	}
	if r := f.do("GET", "/delta-sharing/nothing-here", tokenA, ""); r.status != 404 || r.errorCode(t) != "RESOURCE_DOES_NOT_EXIST" {
		t.Errorf("unknown route: %d %s", r.status, r.body)
	}
}
