package reader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/objstore"
)

// Reads from object stores (stores that are not objstore.RandomAccess:
// S3, GCS, Azure) go through a fetcher, an I/O stage apart from the
// decoding goroutines. For each file of a pass it reads the footer with
// one speculative ranged GET of the file's tail (a second only when the
// footer is larger, a third for the page index when the filter can use
// it and the tail missed it), works out the byte ranges the decoders will
// read (the projected columns' chunks in the row groups and pages the
// page index leaves), coalesces ranges whose gap is small, cuts runs into
// pieces of at most fetchPieceSize, and fetches the pieces with up to
// WithFetchConcurrency ranged GETs in flight, in file order, ahead of the
// decoders (the files being decoded and the next fetchFilesAhead). The decoders' ReadAt calls are served from the fetched
// pieces; a read the plan did not cover goes to the store directly and
// is counted (ScanMetrics.UncoveredReads).
//
// Memory: the pieces fetched or in flight and not yet consumed hold at
// most WithFetchBudget bytes. A piece is freed as soon as every range it
// was fetched for has been read, and all of a file's pieces when its
// decoding ends. The one exception keeps a scan from stalling: when the
// budget is full and the oldest file still being decoded waits for a
// piece, that piece is fetched beyond the budget (this happens only when
// one file's needed bytes exceed the budget). Decoding adds its own
// batches on top (Records: parallelism × 3 batches).

// Defaults of the object-store read path.
const (
	// DefaultFetchBudget is the default most bytes the I/O stage holds
	// fetched or in flight ahead of the decoders.
	DefaultFetchBudget = 128 << 20
	// DefaultFetchConcurrency is the default most ranged GETs in flight.
	DefaultFetchConcurrency = 16
)

// Fixed sizes of the plan.
var (
	// fetchPieceSize is the most bytes one ranged GET asks for: a larger
	// run is split into pieces fetched concurrently.
	fetchPieceSize int64 = 4 << 20
	// fetchCoalesceGap is the largest gap between two needed ranges that
	// is fetched (and thrown away) to save a request.
	fetchCoalesceGap int64 = 256 << 10
	// fetchTailMin and fetchTailMax bound the speculative tail read; in
	// between it is 1/32 of the file.
	fetchTailMin int64 = 64 << 10
	fetchTailMax int64 = 1 << 20
	// fetchFilesAhead is how many files beyond those being decoded are
	// fetched at once.
	fetchFilesAhead = 2
)

// remoteBufferSize is the buffer through which decoders read the pages of
// a column chunk on an object store when the filter may skip pages.
const remoteBufferSize = 16 << 10

// WithFetchBudget bounds the bytes a scan on an object store holds
// fetched or in flight ahead of its decoders (default DefaultFetchBudget).
// It does not apply on local disk, which is read in place.
func WithFetchBudget(bytes int64) Option { return func(c *config) { c.fetchBudget = bytes } }

// WithFetchConcurrency sets how many ranged GETs a scan on an object
// store keeps in flight at most (default DefaultFetchConcurrency),
// whatever its decode parallelism.
func WithFetchConcurrency(n int) Option { return func(c *config) { c.fetchConcurrency = n } }

// remoteStore reports whether reads of s go through the fetcher.
func remoteStore(s objstore.Store) bool {
	_, local := s.(objstore.RandomAccess)
	return !local
}

// fetcher is the I/O stage of one pass of a scan.
type fetcher struct {
	s      *Scan
	store  objstore.Store
	ctx    context.Context
	cancel context.CancelFunc
	budget int64
	// window is how many files, from the oldest still being decoded,
	// may be fetched at once: files further ahead wait, so that the
	// bandwidth goes to the files decoded next rather than shared by all.
	window int
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	pending []*piece // not yet granted, in grant order
	used    int64    // bytes of granted pieces not yet freed
	files   []*remoteFile
	closed  bool
	seq     int
}

func (s *Scan) newFetcher(parent context.Context) *fetcher {
	ctx, cancel := context.WithCancel(parent)
	fe := &fetcher{s: s, store: s.snap.Store(), ctx: ctx, cancel: cancel, budget: max(1, s.cfg.fetchBudget),
		window: max(1, s.cfg.parallelism) + fetchFilesAhead}
	fe.cond = sync.NewCond(&fe.mu)
	for range max(1, s.cfg.fetchConcurrency) {
		fe.wg.Go(fe.work)
	}
	// Wake waiting workers when the pass is cancelled.
	fe.wg.Go(func() {
		<-ctx.Done()
		fe.mu.Lock()
		fe.closed = true
		fe.cond.Broadcast()
		fe.mu.Unlock()
	})
	return fe
}

// close stops the stage and frees every piece.
func (fe *fetcher) close() {
	fe.cancel()
	fe.wg.Wait()
	fe.mu.Lock()
	files := fe.files
	fe.files = nil
	fe.mu.Unlock()
	for _, h := range files {
		h.close()
	}
}

// piece is one ranged GET of a file.
type piece struct {
	h        *remoteFile
	off, n   int64
	pinned   bool // the tail, the footer or the page index: kept until close
	refs     int  // needs not yet served (h.mu)
	urgent   bool // a decoder waits for it (fe.mu)
	granted  bool // fe.mu
	freed    bool // h.mu
	fetched  bool // h.mu: data or err is set
	done     chan struct{}
	data     []byte
	err      error
	released bool // fe.mu: its bytes are back in the budget
}

// need is a range a decoder is planned to read, and the pieces holding it.
type need struct {
	off, end int64
	served   int64
	pieces   []*piece
}

// remoteFile is one data file in the fetcher: its pieces and plan.
type remoteFile struct {
	fe   *fetcher
	f    *ScanFile
	seq  int
	size int64
	prev *remoteFile // planned before this one; nil for the first

	planned chan struct{} // closed when the plan is done (or failed)
	planErr error
	tail    *piece

	mu       sync.Mutex
	pieces   []*piece // sorted by off, not overlapping
	needs    []*need  // sorted by off
	closed   bool
	isClosed atomic.Bool // closed, for fe.mu holders
	planOnce sync.Once
}

// planDone marks the plan done (or abandoned).
func (h *remoteFile) planDone() { h.planOnce.Do(func() { close(h.planned) }) }

// add enters f into the stage: its tail is fetched in turn, then its plan
// made and its pieces queued behind those of the files added before.
func (fe *fetcher) add(f *ScanFile) *remoteFile {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	h := &remoteFile{fe: fe, f: f, seq: fe.seq, size: f.Add.Size, planned: make(chan struct{})}
	fe.seq++
	if n := len(fe.files); n > 0 {
		h.prev = fe.files[n-1]
	}
	fe.files = append(fe.files, h)
	if h.size <= 0 {
		// No size in the log: plan nothing; reads go to the store.
		h.planDone()
		return h
	}
	tail := min(h.size, max(fetchTailMin, min(fetchTailMax, h.size/32)))
	h.tail = &piece{h: h, off: h.size - tail, n: tail, pinned: true, done: make(chan struct{})}
	h.pieces = []*piece{h.tail}
	fe.pending = append(fe.pending, h.tail)
	fe.cond.Broadcast()
	return h
}

// work is one I/O worker: it takes the first pending piece the budget
// allows, fetches it, and after a tail plans its file.
func (fe *fetcher) work() {
	for {
		p := fe.next()
		if p == nil {
			return
		}
		fe.fetch(p)
		if p == p.h.tail {
			p.h.plan()
		}
	}
}

// next waits for a piece it may fetch; nil when the stage is closed.
func (fe *fetcher) next() *piece {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	for {
		if fe.closed {
			return nil
		}
		if len(fe.pending) > 0 {
			i := -1
			oldest := fe.oldestOpen()
			// The first piece within the window of files, if the budget
			// has room for it.
			for j, p := range fe.pending {
				if oldest != nil && p.h.seq >= oldest.seq+fe.window && !p.urgent {
					continue
				}
				if fe.used+p.n <= fe.budget || fe.used == 0 {
					i = j
				}
				break
			}
			if i < 0 && oldest != nil {
				// The oldest file's decoder waits: let its piece through.
				for j, p := range fe.pending {
					if p.urgent && p.h == oldest {
						i = j
						break
					}
				}
			}
			if i >= 0 {
				p := fe.pending[i]
				fe.pending = slices.Delete(fe.pending, i, i+1)
				p.granted = true
				fe.used += p.n
				fe.s.m.noteBuffered(fe.used)
				return p
			}
		}
		fe.cond.Wait()
	}
}

// oldestOpen is the first file whose decoding has not ended (fe.mu).
func (fe *fetcher) oldestOpen() *remoteFile {
	for _, h := range fe.files {
		if !h.isClosed.Load() {
			return h
		}
	}
	return nil
}

// fetch reads p from the store.
func (fe *fetcher) fetch(p *piece) {
	defer close(p.done)
	b, err := fe.getRange(p.h.f.Key, p.off, p.n)
	p.h.mu.Lock()
	p.fetched = true
	if err != nil || p.h.closed || p.freed {
		p.err = err
		p.h.mu.Unlock()
		fe.release(p)
		return
	}
	p.data = b
	p.h.mu.Unlock()
}

// getRange is one counted ranged GET, checked for a short read.
func (fe *fetcher) getRange(key string, off, n int64) ([]byte, error) {
	fe.s.m.rangeRequests.Add(1)
	b, err := fe.store.GetRange(fe.ctx, key, off, n)
	fe.s.m.bytesFetched.Add(int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("read bytes %d..%d: %w", off, off+n, err)
	}
	if int64(len(b)) != n {
		return nil, fmt.Errorf("read bytes %d..%d: %w: got %d bytes", off, off+n, io.ErrUnexpectedEOF, len(b))
	}
	return b, nil
}

// release gives p's bytes back to the budget, once.
func (fe *fetcher) release(p *piece) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if p.granted && !p.released {
		p.released = true
		fe.used -= p.n
		fe.cond.Broadcast()
	}
}

// plan reads the footer from the tail, decides what the decoder will
// read, and queues it. It runs once, in the worker that fetched the tail.
func (h *remoteFile) plan() {
	defer h.planDone()
	if h.prev != nil {
		select {
		case <-h.prev.planned:
		case <-h.fe.ctx.Done():
			h.planErr = h.fe.ctx.Err()
			return
		}
	}
	if err := h.planRanges(); err != nil {
		// The decoder opens the file itself and reports what is wrong.
		h.planErr = err
	}
}

func (h *remoteFile) planRanges() error {
	fe := h.fe
	// The decoder may close the file (a limit reached, the scan stopped)
	// while it is planned: its pieces are read under h.mu.
	h.mu.Lock()
	closed, tail, terr := h.closed, h.tail.data, h.tail.err
	h.mu.Unlock()
	if closed {
		return errors.New("closed before its plan")
	}
	if terr != nil {
		return terr
	}
	if len(tail) < 8 {
		return errors.New("file too small for a Parquet footer")
	}
	footer := int64(binary.LittleEndian.Uint32(tail[len(tail)-8:])) + 8
	if footer > h.size {
		return errors.New("footer length beyond the file")
	}
	if footer > h.tail.n {
		// The footer is larger than the tail: one more read for the rest.
		h.pin(h.size-footer, footer-h.tail.n)
	}
	s := fe.s
	// The plan decodes metadata only, with Go's allocator: nothing of it
	// outlives the plan, and the scan's allocator accounts for batches.
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err := file.NewParquetReader(io.NewSectionReader(h, 0, h.size), file.WithReadProps(props))
	if err != nil {
		return err
	}
	defer pf.Close()
	md := pf.MetaData()
	if s.pruner != nil {
		// The page index, when the filter may use it: one read unless
		// the tail holds it.
		lo, hi := int64(-1), int64(-1)
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			for c := 0; c < md.NumColumns(); c++ {
				cc, err := md.RowGroup(rg).ColumnChunk(c)
				if err != nil {
					continue
				}
				if ci := cc.GetColumnIndexLocation(); ci != nil && ci.Length > 0 {
					lo, hi = span(lo, hi, ci.Offset, ci.Offset+int64(ci.Length))
				}
				if oi := cc.GetOffsetIndexLocation(); oi != nil && oi.Length > 0 {
					lo, hi = span(lo, hi, oi.Offset, oi.Offset+int64(oi.Length))
				}
			}
		}
		held := h.size - max(footer, h.tail.n) // from here on the file is fetched
		if lo >= 0 && hi <= h.size && lo < held {
			h.pin(lo, min(hi, held)-lo)
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	sources, err := s.columnSources(h.f)
	if err != nil {
		return err
	}
	_, err = s.resolveSources(pf, fr, sources)
	defer closeSources(sources)
	if err != nil {
		return err
	}
	cols := fileColumns(sources)
	sel := s.pageSelection(pf, sources, h.f.Add.PartitionValues)
	var pir *metadata.PageIndexReader
	if sel != nil {
		pir = pf.GetPageIndexReader()
	}
	padded := md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
	var needs []*need
	var base int64
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		rows := md.RowGroup(rg).NumRows()
		rgSel := overlapping(sel, base, base+rows)
		if sel != nil && len(rgSel) == 0 {
			base += rows
			continue // no row of it is read
		}
		for _, c := range cols {
			cc, err := md.RowGroup(rg).ColumnChunk(c)
			if err != nil {
				return err
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
			end := start + cc.TotalCompressedSize()
			if padded {
				end = min(h.size, end+100) // arrow-go's PARQUET-816 padding
			}
			if start == end {
				continue // an empty chunk: nothing is read
			}
			if start < 0 || end > h.size || start > end {
				return fmt.Errorf("column chunk %d of row group %d lies outside the file (bytes %d..%d of %d)", c, rg, start, end, h.size)
			}
			if ranges := pageRanges(pir, rg, c, start, end, base, rows, rgSel); ranges != nil {
				for _, r := range ranges {
					needs = append(needs, &need{off: r[0], end: r[1]})
				}
				continue
			}
			needs = append(needs, &need{off: start, end: end})
		}
		base += rows
	}
	h.queue(needs)
	return nil
}

// span widens lo..hi (lo < 0: empty) to hold from..to.
func span(lo, hi, from, to int64) (int64, int64) {
	if lo < 0 {
		return from, to
	}
	return min(lo, from), max(hi, to)
}

// overlapping returns the parts of sel within from..to; nil when sel is.
func overlapping(sel []rowRange, from, to int64) []rowRange {
	var out []rowRange
	for _, r := range sel {
		if r.end > from && r.start < to {
			out = append(out, rowRange{max(r.start, from), min(r.end, to)})
		}
	}
	return out
}

// pageRanges returns the byte ranges of column c in row group rg that
// reading the rows rgSel (file rows; rg starts at file row base) touches:
// the dictionary, the first page and each page holding a selected row,
// and the page after each selected run (the decoder starts those before
// seeking), each run with what the decoder's buffer reads past it. nil
// means the whole chunk.
func pageRanges(pir *metadata.PageIndexReader, rg, c int, start, end, base, rows int64, rgSel []rowRange) [][2]int64 {
	if pir == nil || len(rgSel) == 0 {
		return nil
	}
	rgIdx, err := pir.RowGroup(rg)
	if err != nil || rgIdx == nil {
		return nil
	}
	oi, err := rgIdx.GetOffsetIndex(c)
	if err != nil || oi == nil {
		return nil
	}
	locs := oi.GetPageLocations()
	if len(locs) == 0 || locs[0].Offset < start {
		return nil
	}
	var out [][2]int64
	add := func(from, to int64) {
		if n := len(out); n > 0 && out[n-1][1] >= from {
			out[n-1][1] = max(out[n-1][1], to)
			return
		}
		out = append(out, [2]int64{from, to})
	}
	if locs[0].Offset > start {
		add(start, locs[0].Offset) // the dictionary page
	}
	prevSel := false
	for i, l := range locs {
		first := base + l.FirstRowIndex
		last := base + rows
		if i+1 < len(locs) {
			last = base + locs[i+1].FirstRowIndex
		}
		pend := l.Offset + int64(l.CompressedPageSize)
		if pend > end || l.Offset < start {
			return nil
		}
		isSel := len(overlapping(rgSel, first, last)) > 0
		if isSel || prevSel || i == 0 { // the first page is read before seeking
			add(l.Offset, pend)
		}
		prevSel = isSel
	}
	// The decoder reads pages through a buffer of remoteBufferSize, which
	// reads on past a run's last page.
	for i := range out {
		out[i][1] = min(end, out[i][1]+remoteBufferSize)
	}
	return out
}

// pin fetches off..off+n now, as a piece kept until the file closes.
func (h *remoteFile) pin(off, n int64) {
	if n <= 0 {
		return
	}
	fe := h.fe
	p := &piece{h: h, off: off, n: n, pinned: true, done: make(chan struct{})}
	fe.mu.Lock()
	p.granted = true
	fe.used += n
	fe.s.m.noteBuffered(fe.used)
	fe.mu.Unlock()
	fe.fetch(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.err != nil || h.closed {
		return // released by fetch
	}
	h.insert(p)
}

// insert adds p to h.pieces (h.mu), dropping it where it overlaps one.
func (h *remoteFile) insert(p *piece) {
	i, _ := slices.BinarySearchFunc(h.pieces, p.off, func(q *piece, off int64) int {
		switch {
		case q.off < off:
			return -1
		case q.off > off:
			return 1
		}
		return 0
	})
	if (i > 0 && h.pieces[i-1].off+h.pieces[i-1].n > p.off) || (i < len(h.pieces) && h.pieces[i].off < p.off+p.n) {
		h.fe.release(p)
		return
	}
	h.pieces = slices.Insert(h.pieces, i, p)
}

// queue turns needs into pieces (coalesced, split, minus what pinned
// pieces hold) and queues them.
func (h *remoteFile) queue(needs []*need) {
	slices.SortFunc(needs, func(a, b *need) int { return int(min(max(a.off-b.off, -1), 1)) })
	h.mu.Lock()
	pinned := slices.Clone(h.pieces)
	// Runs of needed bytes not held by a pinned piece.
	var runs [][2]int64
	for _, nd := range needs {
		for _, r := range subtract(nd.off, nd.end, pinned) {
			if n := len(runs); n > 0 && r[0]-runs[n-1][1] <= fetchCoalesceGap {
				runs[n-1][1] = max(runs[n-1][1], r[1])
				continue
			}
			runs = append(runs, r)
		}
	}
	var fresh []*piece
	for _, r := range runs {
		n := r[1] - r[0]
		k := (n + fetchPieceSize - 1) / fetchPieceSize
		for i := range k {
			from := r[0] + n*i/k
			to := r[0] + n*(i+1)/k
			p := &piece{h: h, off: from, n: to - from, done: make(chan struct{})}
			fresh = append(fresh, p)
			h.insert(p)
		}
	}
	for _, nd := range needs {
		for _, p := range h.pieces {
			if p.off < nd.end && p.off+p.n > nd.off && !p.pinned {
				nd.pieces = append(nd.pieces, p)
				p.refs++
			}
		}
	}
	h.needs = needs
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	fe := h.fe
	fe.mu.Lock()
	fe.pending = append(fe.pending, fresh...)
	fe.cond.Broadcast()
	fe.mu.Unlock()
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

// Size is the file's length.
func (h *remoteFile) Size() int64 { return h.size }

// ReadAt serves a decoder's read from the fetched pieces, waiting for
// those in flight; bytes no piece holds are read from the store.
func (h *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= h.size {
		return 0, io.EOF
	}
	want := p
	if off+int64(len(p)) > h.size {
		want = p[:h.size-off]
	}
	end := off + int64(len(want))
	h.mu.Lock()
	var hit []*piece
	for _, q := range h.pieces {
		if q.off < end && q.off+q.n > off && !q.freed {
			hit = append(hit, q)
		}
	}
	h.mu.Unlock()
	// Wait for the pieces, marking them urgent for the budget.
	for _, q := range hit {
		select {
		case <-q.done:
			continue
		default:
		}
		fe := h.fe
		fe.mu.Lock()
		if !q.granted {
			q.urgent = true
			fe.cond.Broadcast()
		}
		fe.mu.Unlock()
		select {
		case <-q.done:
		case <-fe.ctx.Done():
			return 0, fe.ctx.Err()
		}
	}
	covered := off
	h.mu.Lock()
	var gaps [][2]int64
	for _, q := range hit {
		if q.err != nil {
			h.mu.Unlock()
			return 0, q.err
		}
		if q.data == nil {
			continue // freed meanwhile: read it again below
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
	h.served(off, end)
	h.mu.Unlock()
	for _, g := range gaps {
		h.fe.s.m.uncoveredReads.Add(1)
		b, err := h.fe.getRange(h.f.Key, g[0], g[1]-g[0])
		if err != nil {
			return 0, err
		}
		copy(want[g[0]-off:], b)
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(p), nil
}

// served notes that off..end was read: a need read whole releases its
// pieces' claim, and a piece no need claims any more is freed (h.mu).
func (h *remoteFile) served(off, end int64) {
	for _, nd := range h.needs {
		if nd.off >= end {
			break
		}
		if nd.end <= off || nd.served >= nd.end-nd.off {
			continue
		}
		nd.served += min(end, nd.end) - max(off, nd.off)
		if nd.served < nd.end-nd.off {
			continue
		}
		for _, q := range nd.pieces {
			q.refs--
			if q.refs <= 0 && !q.freed && q.fetched {
				q.freed, q.data = true, nil
				h.fe.release(q)
			}
		}
	}
}

// Close implements objstore.ReadAtCloser; the file is closed by close.
func (h *remoteFile) Close() error { return nil }

// close frees every piece of the file; pieces still queued are dropped.
func (h *remoteFile) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.isClosed.Store(true)
	var done []*piece // in flight ones are released by fetch
	for _, q := range h.pieces {
		if q.fetched {
			done = append(done, q)
		}
		q.freed, q.data = true, nil
	}
	h.pieces, h.needs = nil, nil
	h.mu.Unlock()
	h.planDone()
	fe := h.fe
	fe.mu.Lock()
	fe.pending = slices.DeleteFunc(fe.pending, func(q *piece) bool { return q.h == h })
	fe.cond.Broadcast()
	fe.mu.Unlock()
	for _, q := range done {
		fe.release(q)
	}
}

// wait waits for the file's plan (or the end of the pass).
func (h *remoteFile) wait(ctx context.Context) error {
	// Fetch the tail now if the stage has not reached it.
	fe := h.fe
	if h.tail != nil {
		fe.mu.Lock()
		if !h.tail.granted {
			h.tail.urgent = true
			fe.cond.Broadcast()
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
