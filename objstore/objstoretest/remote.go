package objstoretest

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// Remote makes a store look like an object store to a reader: it does
// not implement objstore.RandomAccess (nor objstore.RangeReader), so every
// read of an object at an offset is a GetRange it sees. It delays each
// GetRange by a random latency up to its latency, records the ranges
// asked for and the most bytes and requests in flight at once, and can
// fail the GetRanges of a key suffix that reach past an offset.
type Remote struct {
	objstore.Store
	latency time.Duration

	mu struct {
		sync.Mutex
		rng                   *rand.Rand
		ranges                []Range
		inFlight, maxInFlight int64
		requests, maxRequests int
		failSuffix            string
		failFrom              int64
		failErr               error
	}
}

// Range is one GetRange a Remote saw.
type Range struct {
	Key    string
	Off, N int64
}

// NewRemote wraps inner with a random latency of up to latency per
// GetRange, drawn from seed.
func NewRemote(inner objstore.Store, latency time.Duration, seed uint64) *Remote {
	r := &Remote{Store: inner, latency: latency}
	r.mu.rng = rand.New(rand.NewPCG(seed, seed))
	return r
}

// FailFrom makes the GetRanges of keys ending in suffix that reach past
// off fail with err (err nil: they succeed again).
func (r *Remote) FailFrom(suffix string, off int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.failSuffix, r.mu.failFrom, r.mu.failErr = suffix, off, err
}

// GetRange implements objstore.Store.
func (r *Remote) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	r.mu.Lock()
	r.mu.ranges = append(r.mu.ranges, Range{key, off, n})
	r.mu.inFlight += n
	r.mu.maxInFlight = max(r.mu.maxInFlight, r.mu.inFlight)
	r.mu.requests++
	r.mu.maxRequests = max(r.mu.maxRequests, r.mu.requests)
	var d time.Duration
	if r.latency > 0 {
		d = time.Duration(r.mu.rng.Int64N(int64(r.latency)))
	}
	var fail error
	if r.mu.failErr != nil && strings.HasSuffix(key, r.mu.failSuffix) && off+n > r.mu.failFrom {
		fail = r.mu.failErr
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.mu.inFlight -= n
		r.mu.requests--
		r.mu.Unlock()
	}()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	return r.Store.GetRange(ctx, key, off, n)
}

// Ranges returns the GetRanges of keys ending in suffix since the last
// Reset.
func (r *Remote) Ranges(suffix string) []Range {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Range
	for _, g := range r.mu.ranges {
		if strings.HasSuffix(g.Key, suffix) {
			out = append(out, g)
		}
	}
	return out
}

// MaxInFlight returns the most bytes and the most requests in flight in
// GetRange at once since the last Reset.
func (r *Remote) MaxInFlight() (bytes int64, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.maxInFlight, r.mu.maxRequests
}

// Reset forgets the ranges seen and the maxima.
func (r *Remote) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.ranges, r.mu.maxInFlight, r.mu.maxRequests = nil, 0, 0
}

// Bytes is the sum of the ranges' lengths.
func Bytes(rs []Range) int64 {
	var n int64
	for _, g := range rs {
		n += g.N
	}
	return n
}
