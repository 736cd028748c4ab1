package cloudio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckRange(t *testing.T) {
	body := []byte("0123456789")
	for _, tc := range []struct {
		name   string
		body   []byte
		cr     string
		off, n int64
		want   string // "" with ok false: a short read
		ok     bool
	}{
		{"Exact", body[2:7], "bytes 2-6/10", 2, 5, "23456", true},
		{"UpToEnd", body[7:], "bytes 7-9/10", 7, 5, "789", true},
		{"Short", body[2:4], "bytes 2-3/10", 2, 5, "", false},
		{"ShortUnknownTotal", body[2:4], "bytes 2-3/*", 2, 5, "", false},
		{"WrongStart", body[3:8], "bytes 3-7/10", 2, 5, "", false},
		{"LengthDisagrees", body[2:6], "bytes 2-6/10", 2, 5, "", false},
		{"TooMany", body[2:9], "bytes 2-8/10", 2, 5, "", false},
		{"Garbage", body[2:7], "bytes x-y/10", 2, 5, "", false},
		{"WholeObject", body, "", 2, 5, "23456", true},
		{"WholeObjectPastEnd", body, "", 8, 5, "89", true},
	} {
		got, err := CheckRange(tc.body, tc.cr, tc.off, tc.n)
		var sr *ShortReadError
		switch {
		case tc.ok && (err != nil || string(got) != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		case !tc.ok && !errors.As(err, &sr):
			t.Errorf("%s: got %q, %v; want a short-read error", tc.name, got, err)
		}
		// The same answer read into a buffer of the caller's: the same
		// bytes, or a retryable error (a body that ends before its
		// Content-Range says is an unexpected EOF there).
		p := bytes.Repeat([]byte{'x'}, int(tc.n))
		k, err := ReadRangeInto(bytes.NewReader(tc.body), tc.cr, tc.off, p)
		switch {
		case tc.ok && (err != nil || string(p[:k]) != tc.want):
			t.Errorf("%s: ReadRangeInto got %q, %v; want %q", tc.name, p[:k], err, tc.want)
		case !tc.ok && !errors.As(err, &sr) && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("%s: ReadRangeInto got %q, %v; want a short-read error", tc.name, p[:k], err)
		case !tc.ok && !Transient(err):
			t.Errorf("%s: ReadRangeInto error %v is not transient", tc.name, err)
		}
	}
	if _, err := CheckRange(body, "", 11, 1); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("whole object, offset past the end: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadRangeInto(bytes.NewReader(body), "", 11, make([]byte, 1)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadRangeInto, whole object, offset past the end: %v, want io.ErrUnexpectedEOF", err)
	}
	if k, err := ReadRangeInto(bytes.NewReader(nil), "", 3, make([]byte, 4)); k != 0 || err != nil {
		t.Errorf("ReadRangeInto of an empty body = %d, %v; want 0, nil (the caller asks the size)", k, err)
	}
}

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&StallError{After: time.Second}, true},
		{&ShortReadError{}, true},
		{errors.New("read tcp: connection reset by peer"), true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("access denied"), false},
		{io.EOF, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRetryDo checks that Do retries transient errors up to Attempts, stops
// at a terminal one, and stops at the deadline.
func TestRetryDo(t *testing.T) {
	r := Retry{Attempts: 4, Base: time.Millisecond, Max: 2 * time.Millisecond}
	n := 0
	err := r.Do(t.Context(), func(context.Context) error { n++; return io.ErrUnexpectedEOF })
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 4 {
		t.Errorf("always transient: %d tries, %v; want 4", n, err)
	}
	n = 0
	err = r.Do(t.Context(), func(context.Context) error {
		n++
		if n < 3 {
			return io.ErrUnexpectedEOF
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("transient twice: %d tries, %v; want success on the 3rd", n, err)
	}
	n = 0
	denied := errors.New("denied")
	if err := r.Do(t.Context(), func(context.Context) error { n++; return denied }); err != denied || n != 1 {
		t.Errorf("terminal: %d tries, %v; want 1", n, err)
	}
	r = Retry{Attempts: 1000, Base: 10 * time.Millisecond, Max: 10 * time.Millisecond, Deadline: 100 * time.Millisecond}
	start := time.Now()
	r.Do(t.Context(), func(context.Context) error { return io.ErrUnexpectedEOF })
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a 100ms deadline let tries go on for %v", d)
	}
}

// TestWatchdog checks that a server that stops sending, before the
// headers or in the middle of the body, is cut after the stall timeout
// with a StallError, and that a slow server that keeps sending is not.
func TestWatchdog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers":
			<-r.Context().Done()
		case "/body":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte(strings.Repeat("x", 50)))
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		case "/slow":
			for range 30 { // 1.5 s in all, never 1 s without a byte
				w.Write([]byte("x"))
				http.NewResponseController(w).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}
	}))
	defer srv.Close()
	// A stall timeout of 1 s, not 200 ms: under -race on a loaded
	// machine a 50 ms gap of /slow stretched past 200 ms in 20 of 300
	// runs, and the moving body was cut.
	c := WatchClient(http.DefaultClient, time.Second)
	get := func(path string) (string, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, path := range []string{"/headers", "/body"} {
		start := time.Now()
		_, err := get(path)
		var se *StallError
		if !errors.As(err, &se) || !Transient(err) {
			t.Errorf("%s: %v, want a transient StallError", path, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: cut after %v, want about 1s", path, d)
		}
	}
	if got, err := get("/slow"); err != nil || got != strings.Repeat("x", 30) {
		t.Errorf("/slow: %q, %v; want the 10 bytes of a slow but moving body", got, err)
	}
}
