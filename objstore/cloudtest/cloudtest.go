package cloudtest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// Require returns the value of the environment variable env, which points a
// cloud store's tests at their emulator, or ends the test when it is unset:
// with t.Fatal under CI (CI=true), with t.Skip when LAKELOG_SKIP_CLOUD=1,
// and otherwise with t.Fatal and a message saying how to start the
// emulators. server names the emulator in that message.
func Require(t testing.TB, env, server string) string {
	t.Helper()
	v := os.Getenv(env)
	switch {
	case v != "":
		return v
	case os.Getenv("CI") == "true":
		t.Fatalf("%s is not set under CI: .ci/run must start %s (source .ci/services.sh; services_start)", env, server)
	case os.Getenv("LAKELOG_SKIP_CLOUD") == "1":
		t.Skipf("%s is not set and LAKELOG_SKIP_CLOUD=1: skipping the %s tests", env, server)
	default:
		t.Fatalf("%s is not set, so there is no %s to test against. Start the emulators with\n"+
			"\tsource .ci/services.sh; services_start\n"+
			"in this shell (services_stop stops them), or set LAKELOG_SKIP_CLOUD=1 to skip the cloud tests.", env, server)
	}
	return ""
}

// Name returns a fresh name that starts with prefix and is valid for an S3
// bucket, a GCS bucket and an Azure container: prefix (lowercase letters,
// digits and '-') and 16 random hex digits.
func Name(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Forward sends a request on to the proxied server and returns its answer.
type Forward func(r *http.Request) (*http.Response, error)

// Interceptor handles one request arriving at a Proxy. It may answer it
// itself, or call forward and then answer (or not) as it likes.
type Interceptor func(w http.ResponseWriter, r *http.Request, forward Forward)

// Proxy is an HTTP server on 127.0.0.1 that passes requests on to an
// emulator, unchanged (the Host header included, so signatures stay
// valid), except where its Interceptor decides otherwise.
type Proxy struct {
	// URL is the proxy's base URL, http://127.0.0.1:port.
	URL string
	// Host is the proxy's host:port.
	Host string
}

// NewProxy starts a proxy in front of upstream (an http:// base URL) for the
// length of the test. A nil intercept forwards everything.
func NewProxy(t testing.TB, upstream string, intercept Interceptor) *Proxy {
	t.Helper()
	up, err := url.Parse(upstream)
	if err != nil || up.Host == "" {
		t.Fatalf("cloudtest: bad upstream URL %q: %v", upstream, err)
	}
	transport := &http.Transport{DisableCompression: true, Proxy: nil}
	t.Cleanup(transport.CloseIdleConnections)
	forward := func(r *http.Request) (*http.Response, error) {
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme = up.Scheme
		out.URL.Host = up.Host
		out.Host = r.Host
		if r.ContentLength == 0 {
			out.Body = nil
		}
		return transport.RoundTrip(out)
	}
	if intercept == nil {
		intercept = func(w http.ResponseWriter, r *http.Request, forward Forward) { Relay(w, r, forward) }
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cloudtest: listen: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		intercept(w, r, forward)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &Proxy{URL: "http://" + ln.Addr().String(), Host: ln.Addr().String()}
}

// Relay forwards r and copies the answer back to w; a failure to reach the
// server is a 502.
func Relay(w http.ResponseWriter, r *http.Request, forward Forward) {
	resp, err := forward(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// LoseResponse forwards r, waits for the server's whole answer, and then
// closes the client's connection without sending a byte of it: the request
// took effect, and the client cannot know.
func LoseResponse(w http.ResponseWriter, r *http.Request, forward Forward) {
	if resp, err := forward(r); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // ends the connection all the same
	}
	conn.Close()
}

// FailAfter forwards r, waits for the server's whole answer, and then
// answers the client with status instead, as a gateway that timed out
// waiting for the server would: the request took effect, and the client
// is told it failed.
func FailAfter(status int) Interceptor {
	return func(w http.ResponseWriter, r *http.Request, forward Forward) {
		if resp, err := forward(r); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		http.Error(w, http.StatusText(status), status)
	}
}

// orderTrapKeys are names whose byte order (the contract's) differs from
// their UTF-16 order (Azure's and JavaScript's): characters at or above
// U+10000 against characters from U+E000 to U+FFFF. No name is a "folder"
// of another, which fake-gcs-server's file system backend cannot hold.
var orderTrapKeys = []string{
	"z", "\uE000", "\uFF01", "\uFFFDx", "😀", "😀b/a", "a\uFF01", "a😀", "a😀b", "a\uE000/b", "b",
}

// CheckListOrder puts names whose byte order differs from their UTF-16
// order into the empty store s and checks that List yields them in byte
// order, with and without a startAfter between them. The conformance suite
// has no such names; a server that sorts by UTF-16 passes it.
func CheckListOrder(t *testing.T, s objstore.Store) {
	t.Helper()
	ctx := t.Context()
	for _, k := range orderTrapKeys {
		if err := s.Put(ctx, k, strings.NewReader(k), objstore.PutOptions{}); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	sorted := slices.Clone(orderTrapKeys)
	slices.Sort(sorted)
	for _, after := range append([]string{""}, sorted...) {
		for _, prefix := range []string{"", "a"} {
			var want, got []string
			for _, k := range sorted {
				if k > after && strings.HasPrefix(k, prefix) {
					want = append(want, k)
				}
			}
			for info, err := range s.List(ctx, prefix, after) {
				if err != nil {
					t.Fatalf("List(%q, %q): %v", prefix, after, err)
				}
				got = append(got, info.Key)
			}
			if !slices.Equal(got, want) {
				t.Errorf("List(%q, %q):\n got %q\nwant %q", prefix, after, got, want)
			}
		}
	}
}

// CheckLostResponse is the lost-response test every cloud store runs. It
// shows what Put with IfAbsent does when the store creates the object but
// the client does not learn it: the connection breaks before the
// response, or a gateway answers 503 instead. Put must send the request
// once (isConditional picks the store's conditional create among the
// requests) and return an error that is neither nil nor ErrExists; the
// object is there; a retry by the caller then sees ErrExists for what was
// its own write, which is why the commit loop reads a taken version back
// to compare txnIds. open returns a store on a fresh prefix whose
// requests go through a proxy calling intercept (NewProxy).
func CheckLostResponse(t *testing.T, isConditional func(*http.Request) bool, open func(t *testing.T, intercept Interceptor) objstore.Store) {
	for _, tc := range []struct {
		name string
		lose Interceptor
	}{
		{"ConnectionDropped", LoseResponse},
		{"GatewayError", FailAfter(http.StatusServiceUnavailable)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int32
			s := open(t, func(w http.ResponseWriter, r *http.Request, forward Forward) {
				if isConditional(r) && sent.Add(1) == 1 {
					tc.lose(w, r, forward)
					return
				}
				Relay(w, r, forward)
			})
			ctx := t.Context()
			key := "_delta_log/00000000000000000000.json"
			err := s.Put(ctx, key, strings.NewReader("ours"), objstore.PutOptions{IfAbsent: true})
			if err == nil || errors.Is(err, objstore.ErrExists) {
				t.Fatalf("IfAbsent Put whose response was lost = %v, want an error that is not ErrExists", err)
			}
			if n := sent.Load(); n != 1 {
				t.Fatalf("the conditional create was sent %d times, want once (no automatic retries)", n)
			}
			if got, err := s.Get(ctx, key); err != nil || string(got) != "ours" {
				t.Fatalf("after the lost response Get = %q, %v; want the object the lost request created", got, err)
			}
			err = s.Put(ctx, key, strings.NewReader("ours"), objstore.PutOptions{IfAbsent: true})
			if !errors.Is(err, objstore.ErrExists) {
				t.Fatalf("retried IfAbsent Put = %v, want ErrExists (the caller must read the object back)", err)
			}
		})
	}
}

// CheckPresign checks a store's PresignGet against its server: a URL for
// a key with characters that need escaping reads the object with a plain
// GET and a Range GET, carries none of the secrets given (the store's
// keys), and, when enforced is true (the server checks expiry: MinIO,
// Azurite; fake-gcs-server does not), is refused once ttl has passed.
func CheckPresign(t *testing.T, s objstore.Store, ttl time.Duration, enforced bool, secrets ...string) {
	t.Helper()
	ctx := t.Context()
	key := "presign/a b+c=d%e/part-0.parquet"
	body := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	if err := s.Put(ctx, key, bytes.NewReader(body), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := objstore.PresignGet(ctx, s, key, ttl)
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	if time.Until(u.Expires) > ttl || time.Until(u.Expires) < ttl-5*time.Second {
		t.Errorf("presigned URL expires at %v, want in %v", u.Expires, ttl)
	}
	for _, secret := range secrets {
		if secret != "" && strings.Contains(u.URL, secret) {
			t.Fatalf("presigned URL %s holds a secret of the store", u.URL)
		}
	}
	get := func(rng string) (int, []byte) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := get(""); code != http.StatusOK || !bytes.Equal(b, body) {
		t.Fatalf("GET of the presigned URL: %d %q", code, b)
	}
	if code, b := get("bytes=30-"); code != http.StatusPartialContent || string(b) != "uvwxyz" {
		t.Errorf("Range GET of the presigned URL: %d %q", code, b)
	}
	if _, err := objstore.PresignGet(ctx, s, "../escape", ttl); err == nil {
		t.Error("presign of a key with '..' succeeded")
	}
	if !enforced {
		return
	}
	time.Sleep(time.Until(u.Expires) + 1500*time.Millisecond)
	if code, b := get(""); code != http.StatusForbidden {
		t.Errorf("GET of the expired URL: %d %q, want 403", code, b)
	}
}
