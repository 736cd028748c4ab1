package reader

import (
	"context"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/rangefetch"
)

// Records reads the scan: the batches of every planned file, each of the
// scan's Schema, with the filter applied and at most the limit's rows.
//
// Order: files in path order (the order of Files), and within a file the
// rows in file order; this holds with any parallelism, so a scan's output
// is deterministic.
//
// With parallelism above 1, that many goroutines decode at once: the
// row groups of a file are cut into units (runs of row groups of at
// least a batch), and any unit of the files planned ahead may be decoded
// while the consumer reads an earlier one, so that a table of few large
// files uses every core as well as one of many small files. The batches
// decoded ahead of the consumer hold at most 32 MiB (the unit the
// consumer reads is never held back), so memory stays bounded whatever
// the table's size. On an object store the fetcher adds at most
// WithFetchBudget bytes of fetched data (fetch.go).
//
// Each batch is released when the loop body returns; Retain it to keep
// it. Stopping the loop early stops the readers and frees what they had
// decoded. An error ends the sequence.
func (s *Scan) Records(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if err := checkReadSupported(s.snap); err != nil {
			yield(nil, err)
			return
		}
		if s.cfg.limit == 0 {
			return
		}
		remaining := s.cfg.limit // < 0: no limit
		// out yields rec (which it owns) under the limit; false means stop.
		// A cancelled ctx ends the scan with its error, even where the
		// batches are already decoded.
		out := func(rec arrow.RecordBatch) bool {
			if err := ctx.Err(); err != nil {
				rec.Release()
				yield(nil, err)
				return false
			}
			if remaining >= 0 && rec.NumRows() > remaining {
				cut := rec.NewSlice(0, remaining)
				rec.Release()
				rec = cut
			}
			s.m.rowsReturned.Add(rec.NumRows())
			ok := yield(rec, nil)
			if remaining >= 0 {
				remaining -= rec.NumRows()
			}
			rec.Release()
			return ok && remaining != 0
		}
		if s.cfg.parallelism <= 1 && !remoteStore(s.snap.Store()) {
			s.recordsSerial(ctx, out, yield)
			return
		}
		s.recordsParallel(ctx, out, yield)
	}
}

func (s *Scan) recordsSerial(ctx context.Context, out func(arrow.RecordBatch) bool, yield func(arrow.RecordBatch, error) bool) {
	for f, err := range s.Files(ctx) {
		if err != nil {
			yield(nil, err)
			return
		}
		stopped := false
		err := s.readFile(ctx, f, nil, func(rec arrow.RecordBatch) bool {
			if !out(rec) {
				stopped = true
			}
			return !stopped
		})
		if stopped {
			return
		}
		if err != nil {
			yield(nil, err)
			return
		}
	}
}

// filesAhead is how many files planning runs ahead of the decoders on an
// object store, for the fetcher to read ahead.
const filesAhead = 16

// defaultDecodeAhead bounds the bytes of decoded batches a parallel pass
// holds for the consumer (see Records).
const defaultDecodeAhead = 32 << 20

// pass is one parallel pass of Records. The planner appends a job per
// planned file, in path order; workers open the files (their footers,
// their units: runs of row groups) and decode the units, any unit of any
// open file, in order of claim; the consumer takes the batches unit by
// unit, in path and row order. A unit other than the one the consumer
// reads waits while the batches held exceed the decode-ahead budget; the
// consumer's own unit never waits, so the pass cannot stall.
type pass struct {
	s      *Scan
	ctx    context.Context
	fe     *rangefetch.Fetcher // on an object store, else nil
	window int                 // most file jobs queued
	budget int64               // decode-ahead bytes

	mu struct {
		sync.Mutex
		cond     *sync.Cond
		jobs     []*fileJob // from the consumer's file on, in path order
		planned  bool       // the planner is done
		stopped  bool
		buffered int64 // bytes of batches held by units
	}
}

// fileJob is one planned file of a pass (pass.mu).
type fileJob struct {
	f   *ScanFile
	h   *fetchedFile // on an object store, its entry in the fetcher
	err error        // a planning error, or why the file could not be opened
	// lazy: past the rows a limit needs (by the files' stats), the file
	// is opened only when the consumer reaches it.
	lazy     bool
	opening  bool
	o        *openedFile
	units    []*unitJob
	claimed  int // units handed to workers
	finished int // units whose decoding ended
	consumed int // units the consumer is done with
	closed   bool
}

// unitJob is one unit of an open file: its decoded batches wait here for
// the consumer (pass.mu).
type unitJob struct {
	job     *fileJob
	u       fileUnit
	batches []arrow.RecordBatch
	done    bool
	err     error
}

func (s *Scan) recordsParallel(parent context.Context, out func(arrow.RecordBatch) bool, yield func(arrow.RecordBatch, error) bool) {
	// ctx, cancelled when the pass ends, interrupts reads in progress; a
	// cancellation of parent reaches the consumer as a unit's error.
	ctx, cancel := context.WithCancel(parent)
	p := &pass{s: s, ctx: ctx, window: s.cfg.parallelism, budget: max(1, s.cfg.decodeAhead)}
	p.mu.cond = sync.NewCond(&p.mu.Mutex)
	if remoteStore(s.snap.Store()) {
		// The fetcher reads the files ahead of the decoders, as far as its
		// byte budget allows; planning runs ahead to give it files.
		p.fe = s.newFetcher(ctx)
		p.window = max(p.window, filesAhead)
	}
	var wg sync.WaitGroup
	wg.Go(p.plan)
	for range s.cfg.parallelism {
		wg.Go(p.work)
	}
	err := p.consume(out)
	p.mu.Lock()
	p.mu.stopped = true
	p.mu.cond.Broadcast()
	p.mu.Unlock()
	cancel()
	wg.Wait()
	// Free what nobody will consume.
	for _, j := range p.mu.jobs {
		for _, u := range j.units {
			for _, rec := range u.batches {
				rec.Release()
			}
		}
		if j.o != nil && !j.closed {
			j.o.close()
		}
	}
	if p.fe != nil {
		p.fe.Close()
	}
	if err != nil {
		yield(nil, err)
	}
}

// plan appends a job per planned file, at most window ahead of the
// consumer. A planning error becomes a job that carries only it.
func (p *pass) plan() {
	s := p.s
	defer func() {
		p.mu.Lock()
		p.mu.planned = true
		p.mu.cond.Broadcast()
		p.mu.Unlock()
	}()
	var aheadRows int64
	for f, err := range s.Files(p.ctx) {
		j := &fileJob{f: f, err: err}
		if err == nil {
			// With a limit, only the files whose rows (by their stats)
			// the limit may need are opened ahead; a filter may need
			// more, which are opened when the consumer reaches them.
			j.lazy = s.cfg.limit >= 0 && aheadRows >= s.cfg.limit
			if f.Stats != nil && f.Stats.NumRecords > 0 {
				aheadRows += f.Stats.NumRecords
			}
			if p.fe != nil && !j.lazy {
				j.h = s.addFile(p.fe, f, true)
			}
		}
		p.mu.Lock()
		for !p.mu.stopped && len(p.mu.jobs) >= p.window {
			p.mu.cond.Wait()
		}
		if p.mu.stopped {
			p.mu.Unlock()
			if j.h != nil {
				j.h.Release()
			}
			return
		}
		p.mu.jobs = append(p.mu.jobs, j)
		p.mu.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// work opens files and decodes units until the pass ends.
func (p *pass) work() {
	for {
		j, u := p.take()
		switch {
		case j != nil:
			if p.fe != nil && j.h == nil {
				j.h = p.s.addFile(p.fe, j.f, true)
			}
			// A large row group is split among the workers (on an
			// object store, as the file's plan says).
			o, err := p.s.openFile(p.ctx, j.f, j.h, true)
			p.opened(j, o, err)
		case u != nil:
			err := p.s.readUnit(p.ctx, u.job.o, u.u, func(rec arrow.RecordBatch) bool { return p.put(u, rec) })
			p.finish(u, err)
		default:
			return
		}
	}
}

// take waits for work: a file to open (j) or a unit to decode (u), the
// earliest in path order; neither when the pass is over.
func (p *pass) take() (j *fileJob, u *unitJob) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.mu.stopped || p.mu.planned && len(p.mu.jobs) == 0 {
			return nil, nil
		}
		for i, job := range p.mu.jobs {
			switch {
			case job.err != nil:
			case job.o == nil:
				if !job.opening && (!job.lazy || i == 0) {
					job.opening = true
					return job, nil
				}
			case job.claimed < len(job.units):
				job.claimed++
				return nil, job.units[job.claimed-1]
			}
		}
		p.mu.cond.Wait()
	}
}

// opened records the outcome of opening j.
func (p *pass) opened(j *fileJob, o *openedFile, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j.opening = false
	if err != nil {
		j.err = err
		p.mu.cond.Broadcast()
		return
	}
	j.o = o
	for _, u := range o.units {
		j.units = append(j.units, &unitJob{job: j, u: u})
	}
	if len(j.units) == 0 {
		j.closed = true
		o.close()
	}
	p.mu.cond.Broadcast()
}

// head reports whether u is the unit the consumer reads (p.mu).
func (p *pass) head(u *unitJob) bool {
	if len(p.mu.jobs) == 0 || p.mu.jobs[0] != u.job {
		return false
	}
	j := u.job
	return j.consumed < len(j.units) && j.units[j.consumed] == u
}

// put hands a decoded batch of u to the consumer, waiting while the
// batches held exceed the budget (unless u is the consumer's unit); false
// when the pass is over (rec is released).
func (p *pass) put(u *unitJob, rec arrow.RecordBatch) bool {
	size := arrowbatch.Bytes(rec)
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.mu.stopped && p.mu.buffered > 0 && p.mu.buffered+size > p.budget && !p.head(u) {
		p.mu.cond.Wait()
	}
	if p.mu.stopped {
		rec.Release()
		return false
	}
	u.batches = append(u.batches, rec)
	p.mu.buffered += size
	p.mu.cond.Broadcast()
	return true
}

// finish records the end of u's decoding; the last unit of a file closes
// it.
func (p *pass) finish(u *unitJob, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u.done, u.err = true, err
	j := u.job
	if j.finished++; j.finished == len(j.units) && !j.closed {
		j.closed = true
		j.o.close()
	}
	p.mu.cond.Broadcast()
}

// consume hands the batches to out in path and row order, until out
// returns false, an error comes or the pass is done.
func (p *pass) consume(out func(arrow.RecordBatch) bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if len(p.mu.jobs) == 0 {
			if p.mu.planned {
				return nil
			}
			p.mu.cond.Wait()
			continue
		}
		j := p.mu.jobs[0]
		switch {
		case j.err != nil:
			return j.err
		case j.o == nil:
			p.mu.cond.Wait()
			continue
		case j.consumed == len(j.units):
			p.mu.jobs = p.mu.jobs[1:]
			p.mu.cond.Broadcast()
			continue
		}
		u := j.units[j.consumed]
		if len(u.batches) > 0 {
			rec := u.batches[0]
			u.batches[0] = nil
			u.batches = u.batches[1:]
			p.mu.buffered -= arrowbatch.Bytes(rec)
			p.mu.cond.Broadcast()
			p.mu.Unlock()
			ok := out(rec)
			p.mu.Lock()
			if !ok {
				return nil
			}
			continue
		}
		if !u.done {
			p.mu.cond.Wait()
			continue
		}
		if u.err != nil {
			return u.err
		}
		j.consumed++
		p.mu.cond.Broadcast()
	}
}
