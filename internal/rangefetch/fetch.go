package rangefetch

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/lakelog/lakelog/objstore"
)

// Defaults of Options.
const (
	// DefaultBudget is the most bytes a Fetcher holds fetched or in
	// flight and not yet freed.
	DefaultBudget = 128 << 20
	// DefaultRequests is the most ranged GETs in flight.
	DefaultRequests = 16
	// DefaultPieceSize is the most bytes one ranged GET asks for: a
	// longer run is cut into pieces fetched concurrently.
	DefaultPieceSize = 4 << 20
	// DefaultCoalesceGap is the largest gap between two needed ranges
	// that is fetched (and thrown away) to save a request.
	DefaultCoalesceGap = 256 << 10
	// DefaultTailMin and DefaultTailMax bound the speculative tail read;
	// in between it is 1/32 of the file.
	DefaultTailMin = 64 << 10
	DefaultTailMax = 1 << 20
)

// Options configure a Fetcher. Zero fields take their defaults.
type Options struct {
	// Budget bounds the bytes of pieces fetched or in flight and not
	// yet freed (see the package doc for the one exception).
	Budget int64
	// Requests bounds the ranged GETs in flight.
	Requests int
	// Window, when above 0, is how many files, from the oldest one not
	// yet released, may have pieces fetched at once: the pieces of files
	// further ahead wait, so that the bandwidth goes to the files read
	// next rather than shared by all. Tails are pieces too.
	Window int
	// PieceSize and CoalesceGap shape the pieces (DefaultPieceSize,
	// DefaultCoalesceGap); TailMin and TailMax bound TailSize.
	PieceSize, CoalesceGap int64
	TailMin, TailMax       int64
	// Stats, when not nil, counts the Fetcher's requests.
	Stats *Stats
}

func (o Options) withDefaults() Options {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Requests <= 0 {
		o.Requests = DefaultRequests
	}
	if o.PieceSize <= 0 {
		o.PieceSize = DefaultPieceSize
	}
	if o.CoalesceGap < 0 {
		o.CoalesceGap = 0
	} else if o.CoalesceGap == 0 {
		o.CoalesceGap = DefaultCoalesceGap
	}
	if o.TailMin <= 0 {
		o.TailMin = DefaultTailMin
	}
	if o.TailMax <= 0 {
		o.TailMax = DefaultTailMax
	}
	if o.Stats == nil {
		o.Stats = new(Stats)
	}
	return o
}

// Stats count what a Fetcher read. They grow while it runs.
type Stats struct {
	// Requests is the ranged GETs issued, Bytes the bytes they returned,
	// Uncovered those of them that served a read no piece held, and
	// Peak the most bytes of pieces held (fetched or in flight) at once.
	Requests, Bytes, Uncovered, Peak atomic.Int64
}

// notePeak raises Peak to n.
func (s *Stats) notePeak(n int64) {
	for {
		old := s.Peak.Load()
		if n <= old || s.Peak.CompareAndSwap(old, n) {
			return
		}
	}
}

// TailSize is the speculative read of the end of a file of size bytes
// with which its footer is read: 1/32 of the file, at least tailMin and
// at most tailMax bytes (DefaultTailMin, DefaultTailMax when 0), never
// more than the file.
func TailSize(size, tailMin, tailMax int64) int64 {
	if tailMin <= 0 {
		tailMin = DefaultTailMin
	}
	if tailMax <= 0 {
		tailMax = DefaultTailMax
	}
	return max(0, min(size, max(tailMin, min(tailMax, size/32))))
}

// Fetcher is the I/O stage of one pass of a reader: it fetches the
// queued pieces of the files added to it, in order, within its budget.
// Its methods are safe for concurrent use.
type Fetcher struct {
	store  objstore.Store
	ctx    context.Context
	cancel context.CancelFunc
	opt    Options
	stats  *Stats
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		cond    *sync.Cond
		pending []*piece // not yet granted, in grant order
		used    int64    // bytes of granted pieces not yet given back
		files   []*File  // in the order they were added
		closed  bool
		seq     int
	}
}

// New starts a Fetcher reading from store until Close or until ctx ends.
func New(ctx context.Context, store objstore.Store, opt Options) *Fetcher {
	ctx, cancel := context.WithCancel(ctx)
	opt = opt.withDefaults()
	fe := &Fetcher{store: store, ctx: ctx, cancel: cancel, opt: opt, stats: opt.Stats}
	fe.mu.cond = sync.NewCond(&fe.mu.Mutex)
	for range opt.Requests {
		fe.wg.Go(fe.work)
	}
	// Wake waiting workers when the pass ends.
	fe.wg.Go(func() {
		<-ctx.Done()
		fe.mu.Lock()
		fe.mu.closed = true
		fe.mu.cond.Broadcast()
		fe.mu.Unlock()
	})
	return fe
}

// Close stops the Fetcher, waits for its requests and frees every piece.
// Reads of its files fail afterwards (or go to the store).
func (fe *Fetcher) Close() {
	fe.cancel()
	fe.wg.Wait()
	fe.mu.Lock()
	files := fe.mu.files
	fe.mu.files = nil
	fe.mu.Unlock()
	for _, h := range files {
		h.Release()
	}
}

// SetBudget changes the budget (Options.Budget) from now on: a reader
// that starts small raises it once it knows how large the row groups it
// reads are. Pieces already granted stay.
func (fe *Fetcher) SetBudget(n int64) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	fe.opt.Budget = max(1, n)
	fe.mu.cond.Broadcast()
}

// Budget is the budget in force.
func (fe *Fetcher) Budget() int64 {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return fe.opt.Budget
}

// Done is closed when the Fetcher has stopped (Close, or its context
// ended).
func (fe *Fetcher) Done() <-chan struct{} { return fe.ctx.Done() }

// Err is why the Fetcher stopped, nil while it runs.
func (fe *Fetcher) Err() error { return fe.ctx.Err() }

// piece is one ranged GET of a file.
type piece struct {
	h      *File
	off, n int64
	pinned bool // the tail and pieces of Pin: kept until the file is released
	done   chan struct{}

	// fe.mu
	urgent   bool // a reader waits for it
	granted  bool
	released bool // its bytes are back in the budget

	// h.mu
	needs   []*need // the needs it holds bytes of
	fetched bool    // data or err is set
	freed   bool
	data    []byte // from the buffer pool
	err     error
}

// need is one Claim: bytes one reader of the file will read.
type need struct {
	owner    int
	off, end int64      // the claim's span
	ranges   [][2]int64 // the bytes planned within it
	// low: the owner's reads in the span started at or past here, so it
	// reads no byte below it again (its reads start at offsets that only
	// grow); done: the owner let go of the claim.
	low    int64
	done   bool
	pieces []*piece // sorted by off
	next   int      // pieces[:next] end at or before low
}

// doneWith reports whether nd needs none of p's bytes any more.
func (nd *need) doneWith(p *piece) bool {
	return nd.done || p.off+p.n <= nd.low
}

// File is one object in a Fetcher: an io.ReaderAt over its fetched
// pieces.
type File struct {
	fe   *Fetcher
	key  string
	size int64
	seq  int
	prev *File // added before this one; nil for the first
	plan func(*File) error

	planned  chan struct{} // closed when the plan ran (or was abandoned)
	planOnce sync.Once
	planErr  error
	tail     *piece
	released atomic.Bool // Release was called, for fe.mu holders

	mu struct {
		sync.Mutex
		pieces   []*piece        // sorted by off, not overlapping
		needs    map[int][]*need // by owner, each sorted by off
		released bool
	}
}

// Add enters the object key of size bytes (from the log or a listing)
// into the Fetcher and queues its tail (TailSize) behind what was queued
// before. When the tail is fetched and the plans of the files added
// before have run, plan (when not nil) runs in the fetching goroutine:
// it reads the footer through the File and queues the ranges the
// decoders will read (Queue), so that pieces are queued in the order of
// the files. A size of 0 or less plans nothing: reads go to the store.
func (fe *Fetcher) Add(key string, size int64, plan func(*File) error) *File {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	h := &File{fe: fe, key: key, size: size, seq: fe.mu.seq, plan: plan, planned: make(chan struct{})}
	fe.mu.seq++
	if n := len(fe.mu.files); n > 0 {
		h.prev = fe.mu.files[n-1]
	}
	fe.mu.files = append(fe.mu.files, h)
	if size <= 0 {
		h.planDone()
		return h
	}
	tail := TailSize(size, fe.opt.TailMin, fe.opt.TailMax)
	h.tail = &piece{h: h, off: size - tail, n: tail, pinned: true, done: make(chan struct{})}
	h.mu.pieces = []*piece{h.tail}
	fe.mu.pending = append(fe.mu.pending, h.tail)
	fe.mu.cond.Broadcast()
	return h
}

// work is one I/O worker: it takes the first pending piece the budget
// and the window allow, fetches it, and after a tail runs its file's
// plan.
func (fe *Fetcher) work() {
	for {
		p := fe.next()
		if p == nil {
			return
		}
		fe.fetch(p)
		if p == p.h.tail {
			p.h.runPlan()
		}
	}
}

// next waits for a piece it may fetch; nil when the Fetcher stopped.
func (fe *Fetcher) next() *piece {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	for {
		if fe.mu.closed {
			return nil
		}
		if len(fe.mu.pending) > 0 {
			i := -1
			oldest := fe.oldestOpen()
			// The first piece within the window of files, if the budget
			// has room for it.
			for j, p := range fe.mu.pending {
				if fe.opt.Window > 0 && oldest != nil && p.h.seq >= oldest.seq+fe.opt.Window && !p.urgent {
					continue
				}
				if fe.mu.used+p.n <= fe.opt.Budget || fe.mu.used == 0 {
					i = j
				}
				break
			}
			if i < 0 && oldest != nil {
				// A reader of the oldest file waits: let its piece through.
				for j, p := range fe.mu.pending {
					if p.urgent && p.h == oldest {
						i = j
						break
					}
				}
			}
			if i >= 0 {
				p := fe.mu.pending[i]
				fe.mu.pending = slices.Delete(fe.mu.pending, i, i+1)
				p.granted = true
				fe.mu.used += p.n
				fe.stats.notePeak(fe.mu.used)
				return p
			}
		}
		fe.mu.cond.Wait()
	}
}

// oldestOpen is the first file not yet released (fe.mu).
func (fe *Fetcher) oldestOpen() *File {
	for _, h := range fe.mu.files {
		if !h.released.Load() {
			return h
		}
	}
	return nil
}

// fetch reads p from the store into a pooled buffer.
func (fe *Fetcher) fetch(p *piece) {
	defer close(p.done)
	buf := getBuffer(int(p.n))
	err := fe.read(p.h.key, p.off, buf)
	h := p.h
	h.mu.Lock()
	p.fetched = true
	if err != nil || h.mu.released || p.freed {
		p.err = err
		h.mu.Unlock()
		putBuffer(buf)
		fe.release(p)
		return
	}
	p.data = buf
	if h.unneeded(p) {
		h.free(p) // its needs were read or forgotten meanwhile
	}
	h.mu.Unlock()
}

// read is one counted ranged GET into p, checked for a short read.
func (fe *Fetcher) read(key string, off int64, p []byte) error {
	fe.stats.Requests.Add(1)
	n, err := objstore.GetRangeInto(fe.ctx, fe.store, key, off, p)
	fe.stats.Bytes.Add(int64(n))
	if err != nil {
		return fmt.Errorf("read bytes %d..%d: %w", off, off+int64(len(p)), err)
	}
	if n != len(p) {
		return fmt.Errorf("read bytes %d..%d: %w: got %d bytes", off, off+int64(len(p)), io.ErrUnexpectedEOF, n)
	}
	return nil
}

// release gives p's bytes back to the budget, once.
func (fe *Fetcher) release(p *piece) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if p.granted && !p.released {
		p.released = true
		fe.mu.used -= p.n
		fe.mu.cond.Broadcast()
	}
}

// free drops p's bytes (h.mu): its buffer goes back to the pool and, when
// it was fetched, its bytes back to the budget.
func (h *File) free(p *piece) {
	if p.freed {
		return
	}
	p.freed = true
	if p.data != nil {
		putBuffer(p.data)
		p.data = nil
	}
	if p.fetched {
		h.fe.release(p)
	}
}

// Key is the object's key.
func (h *File) Key() string { return h.key }

// Size is the object's length, as given to Add.
func (h *File) Size() int64 { return h.size }

// planDone marks the plan done (or abandoned).
func (h *File) planDone() { h.planOnce.Do(func() { close(h.planned) }) }

// runPlan runs the file's plan once its tail is fetched, after the plans
// of the files added before.
func (h *File) runPlan() {
	defer h.planDone()
	if h.prev != nil {
		select {
		case <-h.prev.planned:
		case <-h.fe.ctx.Done():
			h.planErr = h.fe.ctx.Err()
			return
		}
	}
	h.mu.Lock()
	err := h.tail.err
	h.mu.Unlock()
	switch {
	case err != nil:
		h.planErr = err // the reads of the file fail alike
	case h.plan != nil:
		h.planErr = h.plan(h)
	}
}

// Wait waits until the file's tail is fetched and its plan has run (or
// was abandoned: the file released, the Fetcher stopped). It marks the
// tail urgent first, should the Fetcher not have reached it.
func (h *File) Wait(ctx context.Context) error {
	fe := h.fe
	if h.tail != nil {
		fe.mu.Lock()
		if !h.tail.granted {
			h.tail.urgent = true
			fe.mu.cond.Broadcast()
		}
		fe.mu.Unlock()
	}
	select {
	case <-h.planned:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-fe.ctx.Done():
		return fe.ctx.Err()
	}
}

// PlanErr is the error of the file's plan, once Wait returned; a file
// whose plan failed is still read, from the store.
func (h *File) PlanErr() error {
	select {
	case <-h.planned:
		return h.planErr
	default:
		return nil
	}
}

// Pin fetches off..off+n now (a footer longer than the tail, a page
// index) as a piece kept until the file is released. It counts in the
// budget but does not wait for it. A failed fetch is left to the reads.
func (h *File) Pin(off, n int64) {
	off = max(0, off)
	n = min(n, h.size-off)
	if n <= 0 {
		return
	}
	fe := h.fe
	p := &piece{h: h, off: off, n: n, pinned: true, done: make(chan struct{})}
	fe.mu.Lock()
	p.granted = true
	fe.mu.used += n
	fe.stats.notePeak(fe.mu.used)
	fe.mu.Unlock()
	fe.fetch(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.err != nil || h.mu.released {
		return // released by fetch
	}
	if !h.insert(p) {
		h.free(p)
	}
}

// insert adds p to the file's pieces (h.mu), unless it overlaps one.
func (h *File) insert(p *piece) bool {
	i, _ := slices.BinarySearchFunc(h.mu.pieces, p.off, func(q *piece, off int64) int {
		switch {
		case q.off < off:
			return -1
		case q.off > off:
			return 1
		}
		return 0
	})
	if (i > 0 && h.mu.pieces[i-1].off+h.mu.pieces[i-1].n > p.off) || (i < len(h.mu.pieces) && h.mu.pieces[i].off < p.off+p.n) {
		return false
	}
	h.mu.pieces = slices.Insert(h.mu.pieces, i, p)
	return true
}

// NoOwner is the owner of the claims Queue makes and of the reads of
// File.ReadAt.
const NoOwner = -1

// Claim is what one reader of a file will read: its Owner (a number the
// caller gives each of the file's readers, read through Reader(Owner))
// reads the bytes Ranges, within Span, at offsets that only grow. The
// Owner's reads that start within Span count for the claim: a piece is
// freed once, for every claim holding bytes of it, the claim's Owner has
// started a read past the piece's end, or the claim ended (Done, Forget,
// Release). One Owner's claims have disjoint spans (the column chunks a
// decoder reads, in any order); claims of different Owners may overlap
// (several decoders reading parts of one column chunk, each from its own
// start), and their common bytes are fetched once.
type Claim struct {
	Owner  int
	Span   [2]int64
	Ranges [][2]int64
}

// Queue claims each of ranges for NoOwner (a claim per range, whose span
// is the range): Claim for readers of whole ranges read in order.
func (h *File) Queue(ranges [][2]int64) {
	claims := make([]Claim, 0, len(ranges))
	for _, r := range ranges {
		claims = append(claims, Claim{Owner: NoOwner, Span: r, Ranges: [][2]int64{r}})
	}
	h.Claim(claims)
}

// Claim queues the bytes of claims for fetching, in the order of claims
// (the order the readers will want them), behind everything queued
// before: each claim's ranges not held by a piece already (pinned, or of
// an earlier claim) are coalesced across gaps of at most
// Options.CoalesceGap, cut into pieces of at most Options.PieceSize, and
// queued. A file calls it once.
func (h *File) Claim(claims []Claim) {
	fe := h.fe
	h.mu.Lock()
	if h.mu.released {
		h.mu.Unlock()
		return
	}
	if h.mu.needs == nil {
		h.mu.needs = map[int][]*need{}
	}
	var needs []*need
	for _, c := range claims {
		nd := &need{owner: c.Owner, off: max(0, c.Span[0]), end: min(h.size, c.Span[1])}
		nd.low = nd.off
		for _, r := range c.Ranges {
			from, to := max(nd.off, r[0]), min(nd.end, r[1])
			if from < to {
				nd.ranges = append(nd.ranges, [2]int64{from, to})
			}
		}
		if len(nd.ranges) > 0 {
			slices.SortFunc(nd.ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
			needs = append(needs, nd)
		}
	}
	// Runs of the claimed bytes that no piece holds yet, in claim order,
	// each run taking in the bytes that follow it within CoalesceGap.
	var runs [][2]int64
	for _, nd := range needs {
		for _, r := range nd.ranges {
			for _, g := range subtract(r[0], r[1], h.mu.pieces) {
				if n := len(runs); n > 0 && g[0] >= runs[n-1][0] && g[0]-runs[n-1][1] <= fe.opt.CoalesceGap {
					runs[n-1][1] = max(runs[n-1][1], g[1])
					continue
				}
				runs = append(runs, g)
			}
		}
	}
	// Pieces of PieceSize bytes (the last of a run shorter), so that most
	// buffers are of one size and the pool serves them; bytes an earlier
	// run's pieces hold are left out, and a piece within a gap (a gap
	// longer than a piece) is not fetched.
	var fresh []*piece
	for _, run := range runs {
		for _, r := range subtract(run[0], run[1], h.mu.pieces) {
			for from := r[0]; from < r[1]; from += fe.opt.PieceSize {
				p := &piece{h: h, off: from, n: min(fe.opt.PieceSize, r[1]-from), done: make(chan struct{})}
				if slices.ContainsFunc(needs, func(nd *need) bool { return nd.holds(p) }) && h.insert(p) {
					fresh = append(fresh, p)
				}
			}
		}
	}
	// Each claim holds the pieces (other than pinned ones) with its bytes.
	for _, nd := range needs {
		first, last := nd.ranges[0][0], nd.ranges[len(nd.ranges)-1][1]
		i, _ := slices.BinarySearchFunc(h.mu.pieces, first, func(p *piece, off int64) int { return cmp.Compare(p.off+p.n, off+1) })
		for _, p := range h.mu.pieces[i:] {
			if p.off >= last {
				break
			}
			if !p.pinned && nd.holds(p) {
				nd.pieces = append(nd.pieces, p)
				p.needs = append(p.needs, nd)
			}
		}
		own := append(h.mu.needs[nd.owner], nd)
		slices.SortFunc(own, func(a, b *need) int { return cmp.Compare(a.off, b.off) })
		h.mu.needs[nd.owner] = own
	}
	h.mu.Unlock()
	fe.mu.Lock()
	fe.mu.pending = append(fe.mu.pending, fresh...)
	fe.mu.cond.Broadcast()
	fe.mu.Unlock()
}

// holds reports whether p holds bytes of nd's ranges.
func (nd *need) holds(p *piece) bool {
	for _, r := range nd.ranges {
		if r[0] < p.off+p.n && r[1] > p.off {
			return true
		}
	}
	return false
}

// subtract returns the parts of off..end no piece of ps covers.
func subtract(off, end int64, ps []*piece) [][2]int64 {
	out := [][2]int64{{off, end}}
	for _, p := range ps {
		var next [][2]int64
		for _, r := range out {
			pe := p.off + p.n
			if pe <= r[0] || p.off >= r[1] {
				next = append(next, r)
				continue
			}
			if p.off > r[0] {
				next = append(next, [2]int64{r[0], p.off})
			}
			if pe < r[1] {
				next = append(next, [2]int64{pe, r[1]})
			}
		}
		out = next
	}
	return out
}

// ReadAt serves a read by NoOwner (see Reader).
func (h *File) ReadAt(p []byte, off int64) (int, error) { return h.readAt(NoOwner, p, off) }

// Reader is the file as read by owner: its reads count for owner's
// claims (Claim).
func (h *File) Reader(owner int) *Reader { return &Reader{h: h, owner: owner} }

// Reader is a File read by one owner of claims.
type Reader struct {
	h     *File
	owner int
}

// ReadAt serves a read from the fetched pieces, waiting for those in
// flight (and marking them urgent); bytes no piece holds are read from
// the store, into p, and counted (Stats.Uncovered).
func (r *Reader) ReadAt(p []byte, off int64) (int, error) { return r.h.readAt(r.owner, p, off) }

// Size is the object's length.
func (r *Reader) Size() int64 { return r.h.size }

func (h *File) readAt(owner int, p []byte, off int64) (int, error) {
	if off >= h.size {
		return 0, io.EOF
	}
	want := p
	if off+int64(len(p)) > h.size {
		want = p[:h.size-off]
	}
	end := off + int64(len(want))
	fe := h.fe
	h.mu.Lock()
	var hit []*piece
	for _, q := range h.mu.pieces {
		if q.off >= end {
			break
		}
		if q.off+q.n > off && !q.freed {
			hit = append(hit, q)
		}
	}
	h.mu.Unlock()
	for _, q := range hit {
		select {
		case <-q.done:
			continue
		default:
		}
		fe.mu.Lock()
		if !q.granted {
			q.urgent = true
			fe.mu.cond.Broadcast()
		}
		fe.mu.Unlock()
		select {
		case <-q.done:
		case <-fe.ctx.Done():
			return 0, fe.ctx.Err()
		}
	}
	covered := off
	var gaps [][2]int64
	h.mu.Lock()
	for _, q := range hit {
		if q.err != nil {
			h.mu.Unlock()
			return 0, q.err
		}
		if q.data == nil {
			continue // freed meanwhile: read it from the store below
		}
		from, to := max(off, q.off), min(end, q.off+q.n)
		if from > covered {
			gaps = append(gaps, [2]int64{covered, from})
		}
		copy(want[from-off:to-off], q.data[from-q.off:to-q.off])
		covered = max(covered, to)
	}
	if covered < end {
		gaps = append(gaps, [2]int64{covered, end})
	}
	h.progress(owner, off)
	h.mu.Unlock()
	for _, g := range gaps {
		fe.stats.Uncovered.Add(1)
		if err := fe.read(h.key, g[0], want[g[0]-off:g[1]-off]); err != nil {
			return 0, err
		}
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(p), nil
}

// progress notes that owner started a read at off: its claim whose span
// holds off frees the pieces that end at or before off and that no other
// claim needs (h.mu).
func (h *File) progress(owner int, off int64) {
	own := h.mu.needs[owner]
	i, _ := slices.BinarySearchFunc(own, off, func(nd *need, off int64) int {
		if nd.off <= off {
			return -1
		}
		return 1
	})
	if i == 0 {
		return
	}
	nd := own[i-1] // the last claim starting at or before off
	if off >= nd.end || off <= nd.low {
		return
	}
	nd.low = off
	for ; nd.next < len(nd.pieces); nd.next++ {
		q := nd.pieces[nd.next]
		if q.off+q.n > off {
			break
		}
		if !q.freed && q.fetched && h.unneeded(q) {
			h.free(q)
		}
	}
}

// unneeded reports whether no need needs p's bytes any more (h.mu).
// Pinned pieces are always needed.
func (h *File) unneeded(p *piece) bool {
	if p.pinned {
		return false
	}
	for _, nd := range p.needs {
		if !nd.doneWith(p) {
			return false
		}
	}
	return true
}

// end ends the claim nd (h.mu): its pieces that no other claim needs are
// freed, or dropped from the queue when not yet fetched.
func (h *File) end(nd *need, drop map[*piece]bool) {
	if nd.done {
		return
	}
	nd.done = true
	for _, q := range nd.pieces {
		if q.freed || !h.unneeded(q) {
			continue
		}
		if q.fetched {
			h.free(q)
		} else {
			drop[q] = true
		}
	}
}

// dropPending takes the pieces of drop not yet granted out of the queue
// (h.mu): nobody needs them. Those already in flight are freed when they
// arrive.
func (h *File) dropPending(drop map[*piece]bool) {
	if len(drop) == 0 {
		return
	}
	fe := h.fe
	fe.mu.Lock()
	defer fe.mu.Unlock()
	fe.mu.pending = slices.DeleteFunc(fe.mu.pending, func(q *piece) bool {
		if drop[q] && !q.granted {
			q.freed = true
			close(q.done)
			return true
		}
		return false
	})
}

// Done ends the claims of owner, read or not (a reader that finished, or
// stopped early): their pieces are freed when no other claim holds them.
func (h *File) Done(owner int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	drop := map[*piece]bool{}
	for _, nd := range h.mu.needs[owner] {
		h.end(nd, drop)
	}
	h.dropPending(drop)
}

// Forget ends the claims (of any owner) whose spans lie within off..end,
// read or not (a decoder that stopped early, or skipped bytes it was
// planned to read): their pieces are freed when no other claim holds
// them.
func (h *File) Forget(off, end int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	drop := map[*piece]bool{}
	for _, own := range h.mu.needs {
		for _, nd := range own {
			if nd.off >= off && nd.end <= end {
				h.end(nd, drop)
			}
		}
	}
	h.dropPending(drop)
}

// Release frees every piece of the file; pieces still queued are
// dropped, those in flight freed when they arrive. Reads after it go to
// the store. It may be called more than once.
func (h *File) Release() {
	h.mu.Lock()
	if h.mu.released {
		h.mu.Unlock()
		return
	}
	h.mu.released = true
	h.released.Store(true)
	for _, q := range h.mu.pieces {
		if q.fetched {
			h.free(q)
		} else {
			q.freed = true // released by fetch when it arrives
		}
	}
	h.mu.pieces, h.mu.needs = nil, nil
	h.mu.Unlock()
	h.planDone()
	fe := h.fe
	fe.mu.Lock()
	fe.mu.pending = slices.DeleteFunc(fe.mu.pending, func(q *piece) bool { return q.h == h })
	fe.mu.cond.Broadcast()
	fe.mu.Unlock()
}
