package cloudio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultStallTimeout is how long a request may go without progress
// (a byte of its body sent, its response headers, a byte of the response
// body received) before the watchdog cancels it.
const DefaultStallTimeout = 30 * time.Second

// ErrStalled is wrapped by the error of a request the watchdog cancelled.
var ErrStalled = errors.New("request stalled")

// StallError is the error of a request that made no progress for After.
// It says it is a timeout and temporary, so that the SDKs' retryers (which
// retry timeouts and temporary network errors) re-issue the request.
type StallError struct {
	Method, URL string
	After       time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("%s %s: no progress for %v: %v", e.Method, e.URL, e.After, ErrStalled)
}

// Unwrap returns ErrStalled.
func (e *StallError) Unwrap() error { return ErrStalled }

// Timeout reports true: a stall is a timeout.
func (e *StallError) Timeout() bool { return true }

// Temporary reports true: a stalled request may be tried again.
func (e *StallError) Temporary() bool { return true }

// Watchdog is an http.RoundTripper that cancels a request that makes no
// progress for Stall: while its body is being sent no Read of it for
// Stall, then no response headers within Stall of the last body byte,
// then no byte of the response body for Stall. The request's error (from
// RoundTrip, or from a Read of the response body) is then a *StallError.
// Every attempt of an SDK's retry loop goes through RoundTrip, so a
// stalled attempt is re-issued by the SDK like a broken connection.
type Watchdog struct {
	Base  http.RoundTripper // nil: http.DefaultTransport
	Stall time.Duration     // 0: DefaultStallTimeout
}

// RoundTrip implements http.RoundTripper.
func (t *Watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	stall := t.Stall
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	d := &dog{cancel: cancel, stall: stall}
	d.timer = time.AfterFunc(stall, d.fire)
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength != 0 {
		out.Body = &sendBody{progress{req.Body, d}, req.Body}
	}
	resp, err := base.RoundTrip(out)
	if err != nil {
		d.stop()
		if d.fired() && req.Context().Err() == nil {
			return nil, &StallError{Method: req.Method, URL: req.URL.Redacted(), After: stall}
		}
		cancel(nil)
		return nil, err
	}
	d.kick()
	resp.Body = &recvBody{ReadCloser: resp.Body, d: d, req: req}
	return resp, nil
}

// dog is the watchdog of one request.
type dog struct {
	stall  time.Duration
	cancel context.CancelCauseFunc
	timer  *time.Timer
	mu     sync.Mutex
	done   bool // stopped or fired
	bit    bool // fired
}

func (d *dog) fire() {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	d.done, d.bit = true, true
	d.mu.Unlock()
	d.cancel(ErrStalled)
}

func (d *dog) fired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bit
}

// kick restarts the countdown: the request made progress.
func (d *dog) kick() {
	d.mu.Lock()
	if !d.done {
		d.timer.Reset(d.stall)
	}
	d.mu.Unlock()
}

func (d *dog) stop() {
	d.mu.Lock()
	d.done = true
	d.timer.Stop()
	d.mu.Unlock()
}

// progress is a reader whose reads that return bytes are progress.
type progress struct {
	r io.Reader
	d *dog
}

func (g *progress) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if n > 0 {
		g.d.kick()
	}
	return n, err
}

// sendBody is a request body whose reads are progress.
type sendBody struct {
	progress
	io.Closer
}

// recvBody is a response body whose bytes are progress; a read that the
// watchdog ended fails with a *StallError.
type recvBody struct {
	io.ReadCloser
	d   *dog
	req *http.Request
}

func (b *recvBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.d.kick()
	}
	if err == io.EOF {
		b.d.stop()
	}
	if err != nil && err != io.EOF && b.d.fired() && b.req.Context().Err() == nil {
		err = &StallError{Method: b.req.Method, URL: b.req.URL.Redacted(), After: b.d.stall}
	}
	return n, err
}

func (b *recvBody) Close() error {
	b.d.stop()
	err := b.ReadCloser.Close()
	b.d.cancel(nil)
	return err
}

// Doer sends a request, as *http.Client and the SDKs' HTTP clients do.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// WatchClient returns an HTTP client that sends requests through c under
// a Watchdog of stall. It follows no redirects itself (c decides).
func WatchClient(c Doer, stall time.Duration) *http.Client {
	return &http.Client{
		Transport:     &Watchdog{Base: doerTransport{c}, Stall: stall},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// doerTransport makes a Doer an http.RoundTripper.
type doerTransport struct{ c Doer }

func (d doerTransport) RoundTrip(r *http.Request) (*http.Response, error) { return d.c.Do(r) }

// Guard is a watchdog for a client library that reads bodies itself (the
// GCS client): it cancels its context when what it watches makes no
// progress for the stall timeout, from NewGuard to Stop.
type Guard struct {
	d    *dog
	what string
}

// NewGuard returns a context for one try of a request, cancelled when the
// guard fires, and the guard; what names the request in errors.
func NewGuard(ctx context.Context, stall time.Duration, what string) (context.Context, *Guard) {
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d := &dog{cancel: cancel, stall: stall}
	d.timer = time.AfterFunc(stall, d.fire)
	return ctx, &Guard{d: d, what: what}
}

// Reader returns r, whose reads that return bytes are progress.
func (g *Guard) Reader(r io.Reader) io.Reader { return &progress{r: r, d: g.d} }

// Kick records progress (a response, say).
func (g *Guard) Kick() { g.d.kick() }

// Err is err, or a *StallError when the guard fired.
func (g *Guard) Err(err error) error {
	if err != nil && g.d.fired() {
		return &StallError{Method: "GET", URL: g.what, After: g.d.stall}
	}
	return err
}

// Stop ends the guard and releases its context.
func (g *Guard) Stop() {
	g.d.stop()
	g.d.cancel(nil)
}
