package sharing_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/sharing"
)

// FuzzParseQueryRequest: any body is a query or a *RequestError, never a
// panic; a query re-encoded parses to the same query.
func FuzzParseQueryRequest(f *testing.F) {
	for _, s := range []string{`{}`, ``, `{"predicateHints":["a = 1"],"limitHint":3}`, `{"version":1}`, `{"startingVersion":1,"endingVersion":2,"maxFiles":5}`,
		`{"jsonPredicateHints":"{\"op\":\"and\"}"}`, `{"timestamp":"2026-01-01T00:00:00Z"}`, `[`, `{"version":-1}`, `{"pageToken":"x","refreshToken":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := sharing.ParseQueryRequest(body)
		if err != nil {
			var re *sharing.RequestError
			if !errorsAs(err, &re) || re.Status != 400 {
				t.Fatalf("error %v is not a 400 RequestError", err)
			}
			return
		}
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		q2, err := sharing.ParseQueryRequest(b)
		if err != nil {
			t.Fatalf("re-encoded %s: %v", b, err)
		}
		b2, _ := json.Marshal(q2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip %s != %s", b, b2)
		}
	})
}

// FuzzParseJSONPredicate: any text converts or not, never panics, and a
// conversion prints as text that parses.
func FuzzParseJSONPredicate(f *testing.F) {
	for _, s := range []string{
		`{"op":"equal","children":[{"op":"column","name":"a","valueType":"int"},{"op":"literal","value":"1","valueType":"int"}]}`,
		`{"op":"not","children":[{"op":"isNull","children":[{"op":"column","name":"id","valueType":"int"}]}]}`,
		`{"op":"and","children":[{"op":"or","children":[]},{"op":"lessThan","children":[{"op":"literal","value":"x","valueType":"string"},{"op":"column","name":"s","valueType":"string"}]}]}`,
		`{"op":"greaterThanOrEqual","children":[{"op":"column","name":"d","valueType":"date"},{"op":"literal","value":"2021-04-29","valueType":"date"}]}`,
		`{}`, `null`, `{"op":"not","children":[null]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := sharing.ParseJSONPredicate(s)
		if !ok {
			return
		}
		if _, err := expr.Parse(e.String()); err != nil {
			t.Fatalf("%s converted to %s, which does not parse: %v", s, e, err)
		}
	})
}

// FuzzParseConfig: any configuration text is a configuration or an
// error wrapping ErrConfig, never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(baseConfig("/tmp/x", "")))
	f.Add([]byte("version: 1\nshares: [{name: a, schemas: [{name: b, tables: [{name: c, location: /x}]}]}]\n"))
	f.Add([]byte("version: 1\nrecipients: [{name: r, tokenSha256: 00}]\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := sharing.ParseConfig("f.yaml", data); err != nil && !errorsIs(err, sharing.ErrConfig) {
			t.Fatalf("error %v does not wrap ErrConfig", err)
		}
	})
}

// FuzzRequests sends arbitrary methods, paths, capability headers and
// bodies through the server's handler with a valid token: the answer is
// never a panic nor a 500 (the fixture's tables are sound).
func FuzzRequests(f *testing.F) {
	fx := newFixture(f)
	fx.start(baseConfig(fx.dir, "limits:\n  requestsPerSecond: 1000000\n  burst: 1000000\n"))
	h := fx.srv.Handler()
	for _, c := range [][4]string{
		{"POST", tablePath + "/query", "responseformat=delta;readerfeatures=deletionvectors", `{"startingVersion":0}`},
		{"POST", dvPath + "/query", "responseformat=delta,parquet;readerfeatures=deletionvectors", `{"maxFiles":1}`},
		{"GET", tablePath + "/changes?startingVersion=0&maxFiles=1", "responseformat=parquet", ``},
		{"GET", tablePath + "/metadata?version=1", "", ``},
		{"GET", "/delta-sharing/shares/share_a/all-tables?maxResults=1&pageToken=abc.def", "", ``},
		{"GET", "/delta-sharing/files/x/y?sp=r&se=1&sig=00", "", ``},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, method, path, caps, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || strings.ContainsAny(method, " \r\n\t/()<>@,;:\\\"[]?={}") || method == "" {
			return
		}
		req, err := http.NewRequest(method, "http://sharing.test"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+tokenA)
		if !strings.ContainsAny(caps, "\r\n\x00") {
			req.Header.Set("delta-sharing-capabilities", caps)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == 500 {
			t.Fatalf("%s %s (%q, %q): 500 %s", method, path, caps, body, w.Body)
		}
	})
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
func errorsIs(err, target error) bool     { return errors.Is(err, target) }
