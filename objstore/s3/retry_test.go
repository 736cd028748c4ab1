package s3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/internal/cloudio"
)

// fakeS3 is just enough of S3, path-style, for the retry tests: GET (ranged
// or not) of one object, PutObject, and multipart uploads. fault, when set,
// may answer a request itself (and returns true) before the fake does.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	parts   map[int][]byte // of the one multipart upload in progress
	fault   func(w http.ResponseWriter, r *http.Request, try int) bool
	tries   map[string]int // by method, path and query: how often seen
	inPart  atomic.Int32   // UploadPart requests being served
	maxPart atomic.Int32   // the most served at once
	creates atomic.Int32   // CreateMultipartUpload requests
	// CompleteMultipartUpload requests (more than one when a try looked
	// stalled and was sent again)
	completes atomic.Int32
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Method + " " + r.URL.Path + " " + r.URL.Query().Get("partNumber") + " " + r.Header.Get("Range")
	f.mu.Lock()
	f.tries[id]++
	try := f.tries[id]
	f.mu.Unlock()
	if f.fault != nil && f.fault(w, r, try) {
		return
	}
	key := strings.TrimPrefix(r.URL.Path, "/bucket/")
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet:
		f.mu.Lock()
		obj, ok := f.objects[key]
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `<Error><Code>NoSuchKey</Code></Error>`)
			return
		}
		if rg := r.Header.Get("Range"); rg != "" {
			var a, b int
			fmt.Sscanf(rg, "bytes=%d-%d", &a, &b)
			b = min(b, len(obj)-1)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(obj)))
			w.Header().Set("Content-Length", strconv.Itoa(b-a+1))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[a : b+1])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(obj)))
		w.Write(obj)
	case r.Method == http.MethodPost && q.Has("uploads"):
		f.creates.Add(1)
		f.mu.Lock()
		f.parts = map[int][]byte{}
		f.mu.Unlock()
		fmt.Fprintf(w, `<InitiateMultipartUploadResult><Bucket>bucket</Bucket><Key>%s</Key><UploadId>up1</UploadId></InitiateMultipartUploadResult>`, key)
	case r.Method == http.MethodPut && q.Has("partNumber"):
		n := f.inPart.Add(1)
		defer f.inPart.Add(-1)
		for {
			m := f.maxPart.Load()
			if n <= m || f.maxPart.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // let parts overlap
		body, err := readBody(r)
		if err != nil {
			return
		}
		num, _ := strconv.Atoi(q.Get("partNumber"))
		f.mu.Lock()
		f.parts[num] = body
		f.mu.Unlock()
		w.Header().Set("ETag", fmt.Sprintf(`"etag%d"`, num))
	case r.Method == http.MethodPost && q.Has("uploadId"):
		f.completes.Add(1)
		f.mu.Lock()
		parts := make([][]byte, len(f.parts))
		for i := range parts {
			parts[i] = f.parts[i+1]
		}
		f.mu.Unlock()
		// One allocation and copy: growing the object by append took
		// over a second for 35 MiB under -race on a loaded machine,
		// longer than the client's stall timeout, and the client sent
		// the Complete again.
		all := bytes.Join(parts, nil)
		f.mu.Lock()
		f.objects[key] = all
		f.mu.Unlock()
		io.WriteString(w, `<CompleteMultipartUploadResult><ETag>"done"</ETag></CompleteMultipartUploadResult>`)
	case r.Method == http.MethodPut:
		body, err := readBody(r)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.objects[key] = body
		f.mu.Unlock()
		w.Header().Set("ETag", `"put"`)
	default:
		w.WriteHeader(http.StatusNotImplemented)
	}
}

// readBody reads a request's body into one buffer of its Content-Length:
// io.ReadAll's growing buffer made a 5 MiB part take long enough under
// -race on a loaded machine for the client's watchdog to call it stalled.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength < 0 {
		return io.ReadAll(r.Body)
	}
	body := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, body)
	return body, err
}

// slowDown answers as S3 does when it throttles.
func slowDown(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
}

// resetMidBody sends the headers of a full answer and half its body, then
// resets the connection.
func resetMidBody(w http.ResponseWriter, status int, hdr http.Header, body []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	hdr.Write(buf)
	fmt.Fprintf(buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body[:len(body)/2])
	buf.Flush()
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok {
		tc.SetLinger(0) // RST, not FIN
	}
	conn.Close()
}

// testPolicy retries fast and calls a request stalled after 200ms.
var testPolicy = objstore.RetryPolicy{Attempts: 5, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, StallTimeout: 200 * time.Millisecond}

func newFake(t *testing.T, f *fakeS3, opts ...Option) *Store {
	t.Helper()
	f.objects, f.tries = map[string][]byte{}, map[string]int{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	// Plain bodies: no aws-chunked trailing checksums for the fake to decode.
	t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
	t.Setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_required")
	opts = append([]Option{
		WithEndpoint(srv.URL), WithRegion("us-east-1"),
		WithCredentials(credentials.NewStaticCredentialsProvider("k", "s", "")),
		WithRetryPolicy(testPolicy),
	}, opts...)
	s, err := New(t.Context(), "bucket", "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// TestGetRangeRetries reads a range through each fault on its first tries
// in turn: a 503 SlowDown (the SDK's retryer), a reset halfway through the
// body and a body that stalls halfway (the store's own retry of the read,
// the watchdog for the stall), a server that sends fewer bytes than the
// range (the short-read check). Each read must return exactly the bytes.
func TestGetRangeRetries(t *testing.T) {
	obj := pattern(100_000)
	rangeHeader := func(a, b int) http.Header {
		h := http.Header{}
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(obj)))
		return h
	}
	const off, n = 1000, 50_000
	for _, tc := range []struct {
		name   string
		faults int // tries that fail
		fault  func(w http.ResponseWriter, r *http.Request)
	}{
		{"SlowDown", 3, func(w http.ResponseWriter, r *http.Request) { slowDown(w) }},
		{"InternalError", 2, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }},
		{"ResetMidBody", 2, func(w http.ResponseWriter, r *http.Request) {
			resetMidBody(w, http.StatusPartialContent, rangeHeader(off, off+n-1), obj[off:off+n])
		}},
		{"StallMidBody", 2, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, len(obj)))
			w.Header().Set("Content-Length", strconv.Itoa(n))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[off : off+n/2])
			http.NewResponseController(w).Flush()
			select { // hold the connection open, sending nothing
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}},
		{"StallBeforeHeaders", 1, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}},
		{"ShortRange", 2, func(w http.ResponseWriter, r *http.Request) {
			// A well-formed answer with fewer bytes than asked for, though
			// the object holds them.
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n/2-1, len(obj)))
			w.Header().Set("Content-Length", strconv.Itoa(n/2))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[off : off+n/2])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeS3{}
			f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
				if r.Method == http.MethodGet && try <= tc.faults {
					tc.fault(w, r)
					return true
				}
				return false
			}
			s := newFake(t, f)
			f.objects["k"] = obj
			start := time.Now()
			got, err := s.GetRange(t.Context(), "k", off, n)
			if err != nil {
				t.Fatalf("GetRange after %d faults: %v", tc.faults, err)
			}
			if !bytes.Equal(got, obj[off:off+n]) {
				t.Fatalf("GetRange returned %d bytes that differ from the range", len(got))
			}
			tries := f.tries["GET /bucket/k  "+fmt.Sprintf("bytes=%d-%d", off, off+n-1)]
			// More only when the loaded machine made a try look stalled.
			if tries < tc.faults+1 || tries > testPolicy.Attempts {
				t.Errorf("%d GETs, want %d (the faults and one that succeeds)", tries, tc.faults+1)
			}
			t.Logf("%d faults survived in %v", tc.faults, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestGetRangeNeverShort checks that a server that always answers a range
// with fewer bytes than asked (and than the object holds) yields an error,
// after the policy's tries, never a short slice.
func TestGetRangeNeverShort(t *testing.T) {
	obj := pattern(1000)
	f := &fakeS3{}
	f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
		if r.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 100-149/%d", len(obj)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(obj[100:150])
		return true
	}
	s := newFake(t, f)
	f.objects["k"] = obj
	got, err := s.GetRange(t.Context(), "k", 100, 200)
	var sr *cloudio.ShortReadError
	if !errors.As(err, &sr) {
		t.Fatalf("GetRange from a server that sends 50 of 200 bytes = %d bytes, %v; want a short-read error", len(got), err)
	}
	if tries := f.tries["GET /bucket/k  bytes=100-299"]; tries != testPolicy.Attempts {
		t.Errorf("%d GETs, want %d (every try of the policy)", tries, testPolicy.Attempts)
	}
	// At the object's end fewer bytes are the right answer.
	f.fault = nil
	if got, err := s.GetRange(t.Context(), "k", 900, 200); err != nil || !bytes.Equal(got, obj[900:]) {
		t.Fatalf("GetRange over the end = %d bytes, %v; want the last 100", len(got), err)
	}
}

// TestGetRetriesResetBody checks Get (the whole object) through a reset
// halfway through its body.
func TestGetRetriesResetBody(t *testing.T) {
	obj := pattern(64 << 10)
	f := &fakeS3{}
	f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
		if r.Method == http.MethodGet && try == 1 {
			resetMidBody(w, http.StatusOK, http.Header{}, obj)
			return true
		}
		return false
	}
	s := newFake(t, f)
	f.objects["k"] = obj
	got, err := s.Get(t.Context(), "k")
	if err != nil || !bytes.Equal(got, obj) {
		t.Fatalf("Get after a reset body = %d bytes, %v", len(got), err)
	}
}

// TestMultipartPartsConcurrentAndRetried uploads 8 parts with 4 in
// flight: part 2's first try is answered 503 SlowDown, part 3's first try
// resets while its body is being sent, part 5's first try stalls (the
// server reads nothing). Each is re-sent alone; the object is whole, and
// more than one part was in flight at once.
func TestMultipartPartsConcurrentAndRetried(t *testing.T) {
	f := &fakeS3{}
	f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
		q := r.URL.Query()
		if r.Method != http.MethodPut || !q.Has("partNumber") || try > 1 {
			return false
		}
		switch q.Get("partNumber") {
		case "2":
			io.Copy(io.Discard, r.Body)
			slowDown(w)
			return true
		case "3":
			io.CopyN(io.Discard, r.Body, 1000)
			conn, _, _ := http.NewResponseController(w).Hijack()
			if tc, ok := conn.(interface{ SetLinger(int) error }); ok {
				tc.SetLinger(0)
			}
			conn.Close()
			return true
		case "5":
			// Read nothing and answer nothing, on a connection nobody
			// will use again.
			conn, _, _ := http.NewResponseController(w).Hijack()
			time.Sleep(3 * time.Second)
			conn.Close()
			return true
		}
		return false
	}
	// A longer stall timeout than the other tests': 4 parts of 5 MiB in
	// flight on a loaded CI machine must not look stalled.
	policy := testPolicy
	policy.StallTimeout = time.Second
	s := newFake(t, f, WithPartSize(MinPartSize), WithPartConcurrency(4), WithRetryPolicy(policy))
	body := pattern(7*MinPartSize + 12345)
	w, err := objstore.NewWriter(t.Context(), s, "big", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p := body; len(p) > 0; {
		k := min(len(p), 100_000)
		if _, err := w.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.objects["big"]; !bytes.Equal(got, body) {
		t.Fatalf("the object has %d bytes that differ from the %d written", len(got), len(body))
	}
	for _, part := range []string{"2", "3", "5"} {
		if n := f.tries["PUT /bucket/big "+part+" "]; n < 2 {
			t.Errorf("part %s sent %d times, want 2 (the fault, then the retry)", part, n)
		}
	}
	if n := f.creates.Load(); n != 1 {
		t.Errorf("%d CreateMultipartUpload requests, want 1: a failed part must not restart the file", n)
	}
	if n := f.completes.Load(); n != 1 {
		t.Logf("CompleteMultipartUpload sent %d times (a try looked stalled on a loaded machine)", n)
	}
	if n := f.tries["PUT /bucket/big 1 "]; n != 1 {
		t.Logf("part 1 sent %d times (a try looked stalled on a loaded machine)", n)
	}
	// A try the client gave up on as stalled may still be served while
	// its retry is: each such try allows one more part in flight at the
	// fake (the injected faults are answered before they count).
	sent := int32(0)
	for p := 1; p <= 8; p++ {
		sent += int32(f.tries[fmt.Sprintf("PUT /bucket/big %d ", p)])
	}
	abandoned := sent - 8 - 3
	if m := f.maxPart.Load(); m < 2 || m > 4+abandoned {
		t.Errorf("at most %d parts were in flight at once (%d tries abandoned as stalled), want 2 to %d", m, abandoned, 4+abandoned)
	}
}

// TestMultipartPartFailsForGood checks that a part that fails every try
// fails the Put with that part's error, and aborts the upload.
func TestMultipartPartFailsForGood(t *testing.T) {
	f := &fakeS3{}
	var aborted atomic.Bool
	f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
		q := r.URL.Query()
		if r.Method == http.MethodDelete && q.Has("uploadId") {
			aborted.Store(true)
			w.WriteHeader(http.StatusNoContent)
			return true
		}
		if r.Method == http.MethodPut && q.Get("partNumber") == "2" {
			io.Copy(io.Discard, r.Body)
			slowDown(w)
			return true
		}
		return false
	}
	// The stall timeout of TestMultipartPartsConcurrentAndRetried: with
	// 200 ms, parts 1 and 3 (5 MiB each) looked stalled five times in a
	// row in 5 of 40 -race runs on the loaded machine, and the Put failed
	// on them rather than on part 2.
	policy := testPolicy
	policy.StallTimeout = time.Second
	s := newFake(t, f, WithPartSize(MinPartSize), WithRetryPolicy(policy))
	err := s.Put(t.Context(), "big", bytes.NewReader(pattern(3*MinPartSize)), objstore.PutOptions{})
	if err == nil || !strings.Contains(err.Error(), "part 2") {
		t.Fatalf("Put whose part 2 always fails = %v, want an error naming part 2", err)
	}
	if !aborted.Load() {
		t.Error("the multipart upload was not aborted")
	}
	if _, ok := f.objects["big"]; ok {
		t.Error("an object was created")
	}
}

// TestConditionalPutStallSentOnce checks that a commit (Put with IfAbsent)
// whose request stalls is cancelled by the watchdog and not re-sent: the
// outcome is unknown, an error that is not ErrExists.
func TestConditionalPutStallSentOnce(t *testing.T) {
	f := &fakeS3{}
	var puts atomic.Int32
	f.fault = func(w http.ResponseWriter, r *http.Request, try int) bool {
		if r.Method == http.MethodPut && r.Header.Get("If-None-Match") == "*" {
			puts.Add(1)
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // stored, but the answer never comes
			return true
		}
		return false
	}
	s := newFake(t, f)
	err := s.Put(t.Context(), "_delta_log/00000000000000000000.json", strings.NewReader("{}"), objstore.PutOptions{IfAbsent: true})
	if err == nil || errors.Is(err, objstore.ErrExists) || !errors.Is(err, cloudio.ErrStalled) {
		t.Fatalf("stalled conditional Put = %v; want a stall error that is not ErrExists", err)
	}
	if n := puts.Load(); n != 1 {
		t.Fatalf("the conditional PUT was sent %d times, want once", n)
	}
}
