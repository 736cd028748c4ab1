package cloudtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// Fault is one kind of failure a [Faults] proxy injects.
type Fault int

// The faults a [Faults] proxy injects.
const (
	// SlowDown answers 503 with S3's SlowDown error, without forwarding.
	SlowDown Fault = iota
	// ResetRequest reads part of the request's body (when it has one),
	// then resets the connection, without forwarding.
	ResetRequest
	// ResetMidBody forwards the request, sends the server's status,
	// headers and half its body, then resets the connection.
	ResetMidBody
	// StallBeforeHeaders holds the connection open, sending nothing, for
	// the Faults' Stall, then closes it, without forwarding.
	StallBeforeHeaders
	// StallMidBody forwards the request, sends the status, headers and
	// half the body, then holds the connection for Stall and closes it.
	StallMidBody
	// LostResponse forwards the request and waits for the whole answer,
	// then resets the connection: the request took effect, the client
	// cannot know.
	LostResponse
	numFaults
)

var faultNames = [numFaults]string{"slowdown", "reset-request", "reset-mid-body", "stall-before-headers", "stall-mid-body", "lose-response"}

func (f Fault) String() string {
	if f < 0 || f >= numFaults {
		return fmt.Sprintf("fault(%d)", int(f))
	}
	return faultNames[f]
}

// Faults is an [Interceptor] that injects faults into a seeded random
// fraction of the requests that pass a [Proxy]: S3 slow-downs (503),
// connection resets before and in the middle of a body, stalls before the
// headers and in the middle of a body, and lost responses. A test prints
// Seed, so that a failing run can be repeated (the requests' interleaving
// still varies with scheduling).
type Faults struct {
	// Seed seeds the choice of requests and faults.
	Seed uint64
	// Rate is the fraction of requests that are faulted, 0 to 1.
	Rate float64
	// Kinds are the faults to inject, in turn (the first faulted request
	// gets the first kind, and so on, so that a few faults cover them
	// all); nil means all but LostResponse.
	Kinds []Fault
	// Stall is how long a stalled connection is held: longer than the
	// client's stall timeout.
	Stall time.Duration
	// Skip, when set, exempts the requests it returns true for.
	Skip func(r *http.Request) bool

	once     sync.Once
	mu       sync.Mutex
	rng      *rand.Rand
	turn     int
	requests atomic.Int64
	injected [numFaults]atomic.Int64
}

// Injected returns how many requests were faulted with each kind so far.
func (f *Faults) Injected() map[Fault]int64 {
	m := map[Fault]int64{}
	for k := range numFaults {
		if n := f.injected[k].Load(); n > 0 {
			m[k] = n
		}
	}
	return m
}

// Requests is the number of requests the proxy has seen.
func (f *Faults) Requests() int64 { return f.requests.Load() }

// String summarises the faults injected so far.
func (f *Faults) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d requests:", f.Seed, f.Requests())
	for k := range numFaults {
		if n := f.injected[k].Load(); n > 0 {
			fmt.Fprintf(&b, " %s=%d", k, n)
		}
	}
	return b.String()
}

// pick decides the fate of one request: a fault, or -1.
func (f *Faults) pick(r *http.Request) Fault {
	f.once.Do(func() { f.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15)) })
	f.requests.Add(1)
	if f.Skip != nil && f.Skip(r) {
		return -1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.Rate {
		return -1
	}
	kinds := f.Kinds
	if len(kinds) == 0 {
		kinds = []Fault{SlowDown, ResetRequest, ResetMidBody, StallBeforeHeaders, StallMidBody}
	}
	k := kinds[f.turn%len(kinds)]
	f.turn++
	// A HEAD answer has no body to break.
	if r.Method == http.MethodHead && (k == ResetMidBody || k == StallMidBody) {
		k = SlowDown
	}
	return k
}

// Intercept implements [Interceptor]; pass it to [NewProxy].
func (f *Faults) Intercept(w http.ResponseWriter, r *http.Request, forward Forward) {
	k := f.pick(r)
	if k < 0 {
		Relay(w, r, forward)
		return
	}
	f.injected[k].Add(1)
	switch k {
	case SlowDown:
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	case ResetRequest:
		if r.ContentLength != 0 {
			io.CopyN(io.Discard, r.Body, max(r.ContentLength/2, 1))
		}
		reset(hijack(w))
	case StallBeforeHeaders:
		conn := hijack(w)
		time.Sleep(f.Stall)
		conn.Close()
	case ResetMidBody, StallMidBody, LostResponse:
		resp, err := forward(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn := hijack(w)
		if k == LostResponse {
			reset(conn)
			return
		}
		bw := bufio.NewWriter(conn)
		fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
		resp.Header.Del("Content-Length")
		resp.Header.Del("Transfer-Encoding")
		resp.Header.Write(bw)
		fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", len(body))
		bw.Write(body[:len(body)/2])
		bw.Flush()
		if k == StallMidBody {
			time.Sleep(f.Stall)
			conn.Close()
			return
		}
		reset(conn)
	}
}

// hijack takes the client's connection from the server.
func hijack(w http.ResponseWriter) net.Conn {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // ends the connection all the same
	}
	return conn
}

// reset closes conn with a TCP RST rather than a FIN.
func reset(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// SeedEnv names the environment variable that replays a fault seed.
const SeedEnv = "LAKELOG_FAULT_SEED"

// Seed returns the seed in SeedEnv when it is set, else a fresh one. The
// caller logs it (CheckFaults does) so that a failing run can be replayed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	if s := os.Getenv(SeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, s, err)
		}
		return v
	}
	return rand.Uint64()
}

// CheckFaults streams an object of size bytes into s through
// objstore.NewWriter and reads it back whole and in ranges, all through a
// store whose requests pass f's proxy; every read must return exactly the
// bytes written. It reads more ranges until f has injected a fault, and
// fails the test when f injected none.
func CheckFaults(t *testing.T, s objstore.Store, size int, f *Faults) {
	t.Helper()
	ctx := t.Context()
	t.Logf("fault seed %d (%s=%d replays it)", f.Seed, SeedEnv, f.Seed)
	body := make([]byte, size)
	r := rand.New(rand.NewPCG(f.Seed, 1))
	for i := range body {
		body[i] = byte(r.Uint32())
	}
	w, err := objstore.NewWriter(ctx, s, "faults.bin", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p := body; len(p) > 0; {
		k := min(len(p), 256<<10)
		if _, err := w.Write(p[:k]); err != nil {
			t.Fatalf("write under faults (%v): %v", f, err)
		}
		p = p[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("upload under faults (%v): %v", f, err)
	}
	got, err := s.Get(ctx, "faults.bin")
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Get under faults (%v) = %d bytes, %v; want the %d written", f, len(got), err, len(body))
	}
	// 24 ranged reads, then more while no fault was injected yet: a run
	// of a few dozen requests draws no fault at all once in a few hundred
	// seeds (0.8^26 with Rate 0.2), and such a run proves nothing; 200
	// more make those odds 4e-20. A proxy out of the path still fails.
	for i := 0; i < 24 || len(f.Injected()) == 0 && i < 224; i++ {
		off := int64(r.IntN(size))
		n := int64(r.IntN(1 << 20))
		if i%6 == 0 {
			off, n = int64(size)-1000, 5000 // over the end
		}
		got, err := s.GetRange(ctx, "faults.bin", off, n)
		want := body[off:min(off+n, int64(size))]
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GetRange(%d, %d) under faults (%v) = %d bytes, %v; want %d", off, n, f, len(got), err, len(want))
		}
	}
	t.Logf("faults injected: %v", f)
	if len(f.Injected()) == 0 {
		t.Fatal("no fault was injected: the test proved nothing")
	}
}
