package main

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// traffic is what a countingProxy saw between two snapshots: requests by
// HTTP method, the response body bytes it sent to clients (fetched) and
// the request body bytes it received from them (sent).
type traffic struct {
	Requests map[string]int64
	Fetched  int64
	Sent     int64
}

// total is the number of requests of every method.
func (t traffic) total() int64 {
	var n int64
	for _, c := range t.Requests {
		n += c
	}
	return n
}

// String is "N requests (GET a, HEAD b, ...), X MB fetched[, Y MB sent]".
func (t traffic) String() string {
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(t.Requests)) {
		parts = append(parts, fmt.Sprintf("%s %d", m, t.Requests[m]))
	}
	s := fmt.Sprintf("%d requests (%s), %s fetched", t.total(), strings.Join(parts, ", "), mib(t.Fetched))
	if t.Sent > 0 {
		s += ", " + mib(t.Sent) + " sent"
	}
	return s
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// countingProxy is an HTTP reverse proxy in front of an object-store
// server that counts the requests and body bytes going through it. The
// runner points both engines' children at it, so their requests and bytes
// are counted by the same code, on the wire.
type countingProxy struct {
	target *url.URL
	ln     net.Listener
	srv    *http.Server

	mu sync.Mutex
	t  traffic
}

// proxyOptions adjust what the proxy forwards.
type proxyOptions struct {
	// keepHost forwards the client's Host header (the proxy's address)
	// instead of the target's: S3 signatures cover the Host header.
	keepHost bool
	// rewrite, when set, may change each outgoing request; respond, each
	// response before it goes back.
	rewrite func(*http.Request)
	respond func(*http.Response) error
}

// startProxy listens on a free port of 127.0.0.1 and forwards every
// request to target (scheme://host:port). Location headers naming the
// target are rewritten to the proxy, so resumable uploads stay on it.
func startProxy(target string, opts proxyOptions) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("runner: proxy target %q is not a URL", target)
	}
	u = &url.URL{Scheme: u.Scheme, Host: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runner: proxy: %w", err)
	}
	p := &countingProxy{target: u, ln: ln, t: traffic{Requests: map[string]int64{}}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	tr.DisableCompression = true // pass bodies through as they are
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if opts.keepHost {
				pr.Out.Host = pr.In.Host
			}
			if opts.rewrite != nil {
				opts.rewrite(pr.Out)
			}
		},
		Transport: tr,
		ModifyResponse: func(r *http.Response) error {
			if loc := r.Header.Get("Location"); loc != "" {
				if l, err := url.Parse(loc); err == nil && l.Host == u.Host {
					l.Scheme, l.Host = "http", ln.Addr().String()
					r.Header.Set("Location", l.String())
				}
			}
			if opts.respond != nil {
				return opts.respond(r)
			}
			return nil
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &countingBody{ReadCloser: r.Body}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = body
		}
		cw := &countingWriter{ResponseWriter: w}
		rp.ServeHTTP(cw, r)
		p.mu.Lock()
		p.t.Requests[r.Method]++
		p.t.Fetched += cw.n
		p.t.Sent += body.n.Load()
		p.mu.Unlock()
	})}
	go p.srv.Serve(ln)
	return p, nil
}

// URL is the proxy's base URL, http://127.0.0.1:port.
func (p *countingProxy) URL() string { return "http://" + p.Addr() }

// Addr is the proxy's host:port.
func (p *countingProxy) Addr() string { return p.ln.Addr().String() }

// take returns the traffic since the last take and starts counting anew.
func (p *countingProxy) take() traffic {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.t
	p.t = traffic{Requests: map[string]int64{}}
	return t
}

func (p *countingProxy) Close() error { return p.srv.Close() }

// countingWriter counts the response body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController (the reverse proxy's flushes) reach
// the underlying writer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingBody counts the request body bytes read through it.
type countingBody struct {
	io.ReadCloser
	n atomic.Int64 // the transport reads the body in its own goroutine
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
