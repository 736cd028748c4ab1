package checkpoint

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/lakelog/lakelog/objstore"
)

// Reading from a store without cheap random access (S3, GCS, Azure), a
// checkpoint's I/O runs ahead of its decoding: the projected byte span of
// each row group is fetched by a fetcher, in file and row-group order,
// with up to fetchRequests requests in flight and up to fetchBudget
// bytes fetched and not yet decoded, while decoding stays bounded by
// WithConcurrency (GOMAXPROCS by default). On two cores a checkpoint of
// fifty row groups is fifty round trips; sixteen at a time they cost
// the latency of a few. Files' footers are read with one speculative
// tail read (tailReadSize), and the next files' footers (openAhead) while
// the current file's row groups are planned.
const (
	fetchRequests = 16
	fetchBudget   = 24 << 20
	tailReadSize  = 256 << 10
	openAhead     = 8
)

// fetcher fetches byte ranges ahead of their use, in the order they were
// asked for. The budget a fetch holds is released by its user once it
// has decoded the bytes (fetch.release), so memory stays bounded however
// far decoding lags.
type fetcher struct {
	ctx    context.Context
	store  objstore.Store
	budget *semaphore.Weighted
	reqs   chan struct{}

	mu     sync.Mutex
	queue  []*fetch
	closed bool // the context ended: fetches asked for now fail at once
	wake   chan struct{}
	wg     sync.WaitGroup
}

// fetch is one range: done is closed when data or err is set.
type fetch struct {
	key    string
	off, n int64
	done   chan struct{}
	data   []byte
	err    error
	held   int64
	f      *fetcher
	once   sync.Once
}

// newFetcher starts a fetcher that runs until ctx ends; wait for its
// goroutines with stop after cancelling ctx.
func newFetcher(ctx context.Context, store objstore.Store) *fetcher {
	fr := &fetcher{ctx: ctx, store: store, budget: semaphore.NewWeighted(fetchBudget),
		reqs: make(chan struct{}, fetchRequests), wake: make(chan struct{}, 1)}
	fr.wg.Add(1)
	go fr.loop()
	return fr
}

// get queues a fetch of n bytes of key at off. It never blocks.
func (fr *fetcher) get(key string, off, n int64) *fetch {
	f := &fetch{key: key, off: off, n: n, done: make(chan struct{}), f: fr}
	fr.mu.Lock()
	if fr.closed {
		fr.mu.Unlock()
		f.err = fr.ctx.Err()
		close(f.done)
		return f
	}
	fr.queue = append(fr.queue, f)
	fr.mu.Unlock()
	select {
	case fr.wake <- struct{}{}:
	default:
	}
	return f
}

// loop starts the queued fetches in order, each once the budget and a
// request slot are free.
func (fr *fetcher) loop() {
	defer fr.wg.Done()
	for {
		fr.mu.Lock()
		var f *fetch
		if len(fr.queue) > 0 {
			f = fr.queue[0]
			fr.queue[0] = nil
			fr.queue = fr.queue[1:]
		}
		fr.mu.Unlock()
		if f == nil {
			select {
			case <-fr.wake:
				continue
			case <-fr.ctx.Done():
				fr.failQueued()
				return
			}
		}
		w := min(f.n, fetchBudget) // a span larger than the budget takes it all
		if err := fr.budget.Acquire(fr.ctx, w); err != nil {
			f.err = err
			close(f.done)
			fr.failQueued()
			return
		}
		f.held = w
		select {
		case fr.reqs <- struct{}{}:
		case <-fr.ctx.Done():
			f.err = fr.ctx.Err()
			close(f.done)
			fr.failQueued()
			return
		}
		fr.wg.Add(1)
		go func() {
			defer fr.wg.Done()
			f.data, f.err = fr.store.GetRange(fr.ctx, f.key, f.off, f.n)
			<-fr.reqs
			close(f.done)
		}()
	}
}

// failQueued ends the fetches never started, once the context ended, and
// those asked for later.
func (fr *fetcher) failQueued() {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.closed = true
	for _, f := range fr.queue {
		f.err = fr.ctx.Err()
		close(f.done)
	}
	fr.queue = nil
}

// stop waits for the fetcher's goroutines; its context must have ended.
func (fr *fetcher) stop() { fr.wg.Wait() }

// wait returns the fetched bytes.
func (f *fetch) wait(ctx context.Context) ([]byte, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.err == nil && int64(len(f.data)) != f.n {
		return nil, &formatError{errShortRange(f.key, f.off, f.n, len(f.data))}
	}
	return f.data, f.err
}

// release gives the fetch's budget back and drops its bytes.
func (f *fetch) release() {
	f.once.Do(func() {
		<-f.done
		f.data = nil
		if f.held > 0 {
			f.f.budget.Release(f.held)
		}
	})
}
