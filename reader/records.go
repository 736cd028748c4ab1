package reader

import (
	"context"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/internal/rangefetch"
)

// Records reads the scan: the batches of every planned file, each of the
// scan's Schema, with the filter applied and at most the limit's rows.
//
// Order: files in path order (the order of Files), and within a file the
// rows in file order; this holds with any parallelism, so a scan's output
// is deterministic.
//
// With parallelism above 1, that many files are decoded at once by
// separate goroutines, each running at most two batches ahead of the
// consumer, so memory stays bounded by about parallelism × 3 batches
// whatever the table's size. On an object store the fetcher adds at
// most WithFetchBudget bytes of fetched data (fetch.go).
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
		out := func(rec arrow.RecordBatch) bool {
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

// fileJob is one file handed to a worker, with the channel its batches
// come back on, in order. The worker closes out when it is done.
type fileJob struct {
	f   *ScanFile
	h   *rangefetch.File // on an object store, its entry in the fetcher
	out chan batchOrErr
}

type batchOrErr struct {
	rec arrow.RecordBatch
	err error
}

// filesAhead is how many files planning runs ahead of the decoders on an
// object store, for the fetcher to read ahead.
const filesAhead = 16

// perFileAhead is how many decoded batches a worker may hold for the
// consumer.
const perFileAhead = 2

func (s *Scan) recordsParallel(parent context.Context, out func(arrow.RecordBatch) bool, yield func(arrow.RecordBatch, error) bool) {
	// stop ends the pipeline when the consumer is done; ctx (cancelled with
	// it) interrupts reads in progress. Sends wait on stop, not on ctx, so
	// that a cancellation of parent still reaches the consumer as an error.
	ctx, cancel := context.WithCancel(parent)
	stop := make(chan struct{})
	n := s.cfg.parallelism
	ahead := n
	var fe *rangefetch.Fetcher
	if remoteStore(s.snap.Store()) {
		// The fetcher reads the files ahead of the decoders, as far as its
		// byte budget allows; planning runs ahead to give it files.
		fe = s.newFetcher(ctx)
		ahead = max(n, filesAhead)
	}
	order := make(chan *fileJob, ahead) // jobs in path order, for the consumer
	jobs := make(chan *fileJob, ahead)  // the same jobs, for the workers
	var wg sync.WaitGroup

	// Planner: files in path order, each to both queues. A planning error
	// becomes a job that carries only the error.
	wg.Go(func() {
		defer close(order)
		defer close(jobs)
		var aheadRows int64
		for f, err := range s.Files(ctx) {
			j := &fileJob{f: f, out: make(chan batchOrErr, perFileAhead)}
			if err != nil {
				j.out <- batchOrErr{err: err}
				close(j.out)
				select {
				case order <- j:
				case <-stop:
				}
				return
			}
			if fe != nil && (s.cfg.limit < 0 || aheadRows < s.cfg.limit) {
				// Read ahead only the files a limit may need: their rows
				// by the stats (a filter may need more: those files are
				// fetched when their decoding starts).
				j.h = s.addFile(fe, f)
				if f.Stats != nil && f.Stats.NumRecords > 0 {
					aheadRows += f.Stats.NumRecords
				}
			}
			select {
			case order <- j:
			case <-stop:
				return
			}
			select {
			case jobs <- j:
			case <-stop:
				return
			}
		}
	})
	for range n {
		wg.Go(func() {
			for j := range jobs {
				stopped := false
				if fe != nil && j.h == nil {
					j.h = s.addFile(fe, j.f)
				}
				err := s.readFile(ctx, j.f, j.h, func(rec arrow.RecordBatch) bool {
					select {
					case j.out <- batchOrErr{rec: rec}:
						return true
					case <-stop:
						rec.Release()
						stopped = true
						return false
					}
				})
				if err != nil && !stopped {
					select {
					case j.out <- batchOrErr{err: err}:
					case <-stop:
					}
				}
				close(j.out)
			}
		})
	}

	// finish stops everything and frees batches nobody will consume: in
	// cur (the job being consumed, or nil) and in the jobs not reached.
	finish := func(cur *fileJob) {
		close(stop)
		cancel()
		wg.Wait()
		if fe != nil {
			fe.Close()
		}
		if cur != nil {
			drain(cur.out)
		}
		for j := range order {
			drain(j.out)
		}
	}
	for j := range order {
		for item := range j.out {
			if item.err != nil {
				finish(j)
				yield(nil, item.err)
				return
			}
			if !out(item.rec) {
				finish(j)
				return
			}
		}
	}
	finish(nil)
}

// drain releases what is buffered in a job's channel without waiting for
// more (call it after the workers have stopped, or from the consumer).
func drain(ch chan batchOrErr) {
	for {
		select {
		case item, ok := <-ch:
			if !ok {
				return
			}
			if item.rec != nil {
				item.rec.Release()
			}
		default:
			return
		}
	}
}
