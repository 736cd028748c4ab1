package rangefetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/objstoretest"
	"github.com/lakelog/lakelog/test/testseed"
)

func TestMain(m *testing.M) {
	Poison = true // a read of a freed piece shows as wrong bytes
	os.Exit(m.Run())
}

var errInjected = errors.New("injected")

func object(t *testing.T, s objstore.Store, key string, n int, seed uint64) []byte {
	t.Helper()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := s.Put(context.Background(), key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTailSize(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{0, 0}, {10, 10}, {64 << 10, 64 << 10}, {1 << 20, 64 << 10}, {8 << 20, 256 << 10}, {32 << 20, 1 << 20}, {1 << 30, 1 << 20},
	} {
		if got := TailSize(c.size, 0, 0); got != c.want {
			t.Errorf("TailSize(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	if got := TailSize(1<<20, 8<<10, 16<<10); got != 16<<10 {
		t.Errorf("TailSize with bounds 8..16 KiB = %d", got)
	}
}

func TestBuffers(t *testing.T) {
	for _, n := range []int{1, classStep - 1, classStep, classStep + 1, DefaultPieceSize, maxPooled, maxPooled + 1} {
		b := getBuffer(n)
		if len(b) != n {
			t.Fatalf("getBuffer(%d): len %d", n, len(b))
		}
		if n <= maxPooled && (cap(b)%classStep != 0 || cap(b) < n || cap(b)-n >= classStep) {
			t.Errorf("getBuffer(%d): cap %d, want the next multiple of %d", n, cap(b), classStep)
		}
		putBuffer(b)
		if c := getBuffer(n); len(c) != n {
			t.Fatalf("getBuffer(%d) after a put: len %d", n, len(c))
		}
	}
}

// TestRandomReads queues random ranges of random objects, then reads
// them (and other ranges) concurrently, in random pieces: every read
// returns the object's bytes, planned reads are served from pieces, and
// the bytes held stay within the budget.
func TestRandomReads(t *testing.T) {
	seed := testseed.From(t, "RANGEFETCH_SEED")
	rng := rand.New(rand.NewPCG(seed, 3))
	mem := objstore.NewMem()
	rs := objstoretest.NewRemote(mem, 2*time.Millisecond, seed)
	const files = 6
	objs := make([][]byte, files)
	for i := range objs {
		objs[i] = object(t, mem, fmt.Sprint("f", i), 20_000+rng.IntN(200_000), seed+uint64(i))
	}
	budget := int64(100_000 + rng.IntN(200_000))
	stats := new(Stats)
	fe := New(context.Background(), rs, Options{Budget: budget, Requests: 1 + rng.IntN(8), PieceSize: int64(4096 + rng.IntN(40_000)),
		CoalesceGap: int64(rng.IntN(10_000)), TailMin: 1024, TailMax: 8192, Window: rng.IntN(3), Stats: stats})
	defer fe.Close()
	type plan struct {
		h      *File
		ranges [][2]int64
	}
	plans := make([]plan, files)
	for i := range plans {
		size := int64(len(objs[i]))
		var ranges [][2]int64
		for range 1 + rng.IntN(12) {
			from := rng.Int64N(size)
			ranges = append(ranges, [2]int64{from, min(size, from+1+rng.Int64N(30_000))})
		}
		// Needs of one file do not overlap (column chunks).
		slices.SortFunc(ranges, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		var disjoint [][2]int64
		for _, r := range ranges {
			if n := len(disjoint); n > 0 && r[0] < disjoint[n-1][1] {
				continue
			}
			disjoint = append(disjoint, r)
		}
		plans[i].ranges = disjoint
		plans[i].h = fe.Add(fmt.Sprint("f", i), size, func(h *File) error {
			tail := make([]byte, 8)
			if _, err := h.ReadAt(tail, size-8); err != nil {
				return err
			}
			if !bytes.Equal(tail, objs[i][size-8:]) {
				return errors.New("wrong tail")
			}
			h.Queue(disjoint)
			return nil
		})
	}
	var wg sync.WaitGroup
	for i := range plans {
		p := plans[i]
		wg.Go(func() {
			defer p.h.Release()
			if err := p.h.Wait(context.Background()); err != nil {
				t.Error(err)
				return
			}
			if err := p.h.PlanErr(); err != nil {
				t.Error(err)
				return
			}
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for _, nd := range p.ranges {
				// Read the need sequentially in random steps.
				for off := nd[0]; off < nd[1]; {
					n := min(nd[1]-off, 1+r.Int64N(9000))
					buf := make([]byte, n)
					if _, err := p.h.ReadAt(buf, off); err != nil {
						t.Errorf("file %d: ReadAt(%d, %d): %v", i, off, n, err)
						return
					}
					if !bytes.Equal(buf, objs[i][off:off+n]) {
						t.Errorf("file %d: ReadAt(%d, %d) returned other bytes", i, off, n)
						return
					}
					off += n
				}
			}
			// A read nobody planned, past the end too.
			off := r.Int64N(p.h.Size())
			buf := make([]byte, 5000)
			k, err := p.h.ReadAt(buf, off)
			if err != nil && err != io.EOF || !bytes.Equal(buf[:k], objs[i][off:min(p.h.Size(), off+5000)]) {
				t.Errorf("file %d: unplanned ReadAt(%d): %d bytes, %v", i, off, k, err)
			}
		})
	}
	wg.Wait()
	_, requests := rs.MaxInFlight()
	t.Logf("%d requests, %d bytes, %d uncovered, peak %d of budget %d, at most %d in flight", stats.Requests.Load(), stats.Bytes.Load(),
		stats.Uncovered.Load(), stats.Peak.Load(), budget, requests)
	if stats.Uncovered.Load() > files {
		t.Errorf("%d uncovered reads: only the %d unplanned reads may be", stats.Uncovered.Load(), files)
	}
}

// TestBudgetAndFree: a file whose needs exceed the budget is read whole
// (its waiting pieces go through), and pieces are freed as the reads
// pass them: the bytes held never exceed the budget by more than one
// piece, and nothing but the tail is held once the reader is done.
func TestBudgetAndFree(t *testing.T) {
	mem := objstore.NewMem()
	obj := object(t, mem, "big", 1<<20, 1)
	rs := objstoretest.NewRemote(mem, time.Millisecond, 1)
	stats := new(Stats)
	const budget, piece = 64 << 10, 16 << 10
	fe := New(context.Background(), rs, Options{Budget: budget, Requests: 8, PieceSize: piece, TailMin: 4096, TailMax: 4096, Stats: stats})
	defer fe.Close()
	size := int64(len(obj))
	h := fe.Add("big", size, func(h *File) error {
		h.Queue([][2]int64{{0, size - 4096}})
		return nil
	})
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10_000)
	for off := int64(0); off < size-4096; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-4096-off)
		if _, err := h.ReadAt(buf[:n], off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:n], obj[off:off+n]) {
			t.Fatalf("bytes at %d differ", off)
		}
	}
	if p := stats.Peak.Load(); p > budget+piece {
		t.Errorf("peak %d bytes held, budget %d", p, budget)
	}
	fe.mu.Lock()
	used := fe.mu.used
	fe.mu.Unlock()
	if used > 4096+piece {
		t.Errorf("%d bytes held after the file was read, want the tail's 4096 and at most the last piece", used)
	}
	h.Done(NoOwner)
	fe.mu.Lock()
	used = fe.mu.used
	fe.mu.Unlock()
	if used != 4096 {
		t.Errorf("%d bytes held after the reader was done, want the tail's 4096", used)
	}
	h.Release()
	fe.mu.Lock()
	used = fe.mu.used
	fe.mu.Unlock()
	if used != 0 {
		t.Errorf("%d bytes held after Release", used)
	}
	if u := stats.Uncovered.Load(); u != 0 {
		t.Errorf("%d uncovered reads", u)
	}
}

// TestForget: a need dropped unread frees its pieces.
func TestForget(t *testing.T) {
	mem := objstore.NewMem()
	object(t, mem, "o", 200_000, 2)
	fe := New(context.Background(), objstoretest.NewRemote(mem, 0, 2), Options{PieceSize: 10_000, TailMin: 1000, TailMax: 1000})
	defer fe.Close()
	h := fe.Add("o", 200_000, func(h *File) error {
		h.Queue([][2]int64{{0, 50_000}, {100_000, 150_000}})
		return nil
	})
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Wait for the pieces of both needs to arrive (reading a byte of
	// each as another owner than the claims', which frees nothing), then
	// forget the first. (Waiting for the first need's alone left the
	// count to the workers: one not yet woken to take the second need's
	// last piece made 41000 bytes held, in 1 of 50 -race runs on a loaded
	// machine.)
	probe := h.Reader(7)
	for _, start := range []int64{0, 100_000} {
		for off := start + 5; off < start+50_000; off += 10_000 {
			if _, err := probe.ReadAt(make([]byte, 1), off); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.Forget(0, 50_000)
	fe.mu.Lock()
	used := fe.mu.used
	fe.mu.Unlock()
	if used != 1000+50_000 {
		t.Errorf("%d bytes held, want the tail and the second need's 50000", used)
	}
}

// TestErrorsAndCancel: a failed GET fails the reads that need its bytes
// with the store's error; Close ends reads in progress.
func TestErrorsAndCancel(t *testing.T) {
	mem := objstore.NewMem()
	object(t, mem, "o", 100_000, 3)
	rs := objstoretest.NewRemote(mem, 0, 3)
	rs.FailFrom("o", 60_000, errInjected)
	fe := New(context.Background(), rs, Options{PieceSize: 10_000, TailMin: 1000, TailMax: 1000})
	h := fe.Add("o", 100_000, func(h *File) error {
		h.Queue([][2]int64{{0, 99_000}})
		return nil
	})
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.PlanErr(); !errors.Is(err, errInjected) {
		t.Fatalf("plan error %v: the tail lies past the failure", err)
	}
	fe.Close()

	slow := objstoretest.NewRemote(mem, time.Second, 3)
	fe = New(context.Background(), slow, Options{PieceSize: 10_000, TailMin: 1000, TailMax: 1000})
	h = fe.Add("o", 100_000, nil)
	done := make(chan error)
	go func() {
		_, err := h.ReadAt(make([]byte, 10), 99_990)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	fe.Close()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("read during Close: %v, want context.Canceled", err)
	}
	// The tail fetched, a later piece failing: reads of it fail.
	rs = objstoretest.NewRemote(mem, 0, 3)
	fe = New(context.Background(), rs, Options{PieceSize: 10_000, TailMin: 1000, TailMax: 1000})
	defer fe.Close()
	h = fe.Add("o", 100_000, func(h *File) error {
		rs.FailFrom("o", 50_000, errInjected)
		h.Queue([][2]int64{{0, 99_000}})
		return nil
	})
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReadAt(make([]byte, 100), 10_000); err != nil {
		t.Errorf("a read before the failure: %v", err)
	}
	if _, err := h.ReadAt(make([]byte, 100), 70_000); !errors.Is(err, errInjected) {
		t.Errorf("a read of a failed piece: %v, want the store's error", err)
	}
}

// TestClaimsOfSeveralReaders: a file of column chunks read by several
// owners at once, as a row group split into ranges of rows is: each owner
// claims, in each chunk, the chunk's first bytes (its dictionary and
// first page) and a run of later bytes of its own (its pages), which
// overlaps the runs of the owners before and after it; it reads the
// first bytes, then jumps to its run and reads on, each read starting at
// or after the one before (a buffered reader re-reads what it had read
// ahead of a jump), its chunks on goroutines of their own, and owners in
// random order. Every read must be served from the pieces (no uncovered
// read: pieces are freed only once no owner will read them), return the
// object's bytes (freed buffers are poisoned), the bytes held stay within
// the budget and the pieces the waiting readers let through (a few per
// reader), and nothing but the tail is held once every owner is done.
func TestClaimsOfSeveralReaders(t *testing.T) {
	seed := testseed.From(t, "RANGEFETCH_SEED")
	for round := range 6 {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		mem := objstore.NewMem()
		size := 50_000 + rng.IntN(400_000)
		obj := object(t, mem, "f", size, seed+uint64(round))
		rs := objstoretest.NewRemote(mem, time.Duration(rng.IntN(3))*time.Millisecond, seed)
		stats := new(Stats)
		const tail = 2048
		opt := Options{Budget: int64(20_000 + rng.IntN(200_000)), Requests: 1 + rng.IntN(8), PieceSize: int64(1024 + rng.IntN(30_000)),
			CoalesceGap: int64(rng.IntN(5000)), TailMin: tail, TailMax: tail, Stats: stats}
		fe := New(context.Background(), rs, opt)
		// Chunks: consecutive spans of the file before the tail.
		body := int64(size - tail)
		var chunks [][2]int64
		for from := int64(0); from < body; {
			to := min(body, from+1000+rng.Int64N(body/2+1))
			chunks = append(chunks, [2]int64{from, to})
			from = to
		}
		owners := 1 + rng.IntN(6)
		type read struct{ off, n int64 }
		plan := make([][][]read, owners) // owner, chunk: its reads in order
		var claims []Claim
		for o := range owners {
			plan[o] = make([][]read, len(chunks))
			for c, ch := range chunks {
				n := ch[1] - ch[0]
				prefix := ch[0] + 1 + rng.Int64N(min(n, 3000))
				// The owner's run: its share of the chunk, and a little of
				// the next owner's (the page a range of rows ends in).
				from := ch[0] + n*int64(o)/int64(owners)
				to := min(ch[1], ch[0]+n*int64(o+1)/int64(owners)+rng.Int64N(2000))
				from = max(from, prefix)
				ranges := [][2]int64{{ch[0], prefix}}
				if from < to {
					ranges = append(ranges, [2]int64{from, to})
				}
				claims = append(claims, Claim{Owner: o, Span: ch, Ranges: ranges})
				// Reads: through the prefix, then the run, in steps that
				// may overlap the step before (never starting before it).
				var rd []read
				last := int64(-1)
				for _, r := range ranges {
					for off := r[0]; off < r[1]; {
						k := min(r[1]-off, 1+rng.Int64N(4000))
						start := off
						if back := rng.Int64N(500); rng.IntN(4) == 0 && start-back > max(last, r[0]) {
							start -= back // a re-read of what was read ahead
						}
						rd = append(rd, read{start, off + k - start})
						last = start
						off += k
					}
				}
				plan[o][c] = rd
			}
		}
		rng.Shuffle(len(claims), func(i, j int) { claims[i], claims[j] = claims[j], claims[i] })
		h := fe.Add("f", int64(size), func(h *File) error {
			h.Claim(claims)
			return nil
		})
		if err := h.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for o := range owners {
			wg.Go(func() {
				defer h.Done(o)
				r := h.Reader(o)
				var cw sync.WaitGroup
				for c := range chunks {
					cw.Go(func() {
						for _, rd := range plan[o][c] {
							buf := make([]byte, rd.n)
							if _, err := r.ReadAt(buf, rd.off); err != nil {
								t.Errorf("round %d owner %d: ReadAt(%d, %d): %v", round, o, rd.off, rd.n, err)
								return
							}
							if !bytes.Equal(buf, obj[rd.off:rd.off+rd.n]) {
								t.Errorf("round %d owner %d: ReadAt(%d, %d) returned other bytes", round, o, rd.off, rd.n)
								return
							}
						}
					})
				}
				cw.Wait()
			})
		}
		wg.Wait()
		fe.mu.Lock()
		used := fe.mu.used
		fe.mu.Unlock()
		readers := int64(owners * len(chunks))
		t.Logf("round %d: %d bytes, %d chunks, %d owners: %d requests, %d bytes, peak %d, budget %d, pieces of %d", round, size, len(chunks), owners,
			stats.Requests.Load(), stats.Bytes.Load(), stats.Peak.Load(), opt.Budget, opt.PieceSize)
		if u := stats.Uncovered.Load(); u != 0 {
			t.Errorf("round %d: %d uncovered reads", round, u)
		}
		if used != tail {
			t.Errorf("round %d: %d bytes held after every owner was done, want the tail's %d", round, used, tail)
		}
		// Beyond the budget: the pieces waiting readers let through. A
		// reader holds the piece it reads in and waits for one more; the
		// pieces it passed that other owners share (a chunk's first
		// bytes, the ends of the runs next to its own) wait for them.
		if p := stats.Peak.Load(); p > opt.Budget+tail+4*readers*opt.PieceSize {
			t.Errorf("round %d: peak %d over the budget %d and four pieces per reader", round, p, opt.Budget)
		}
		h.Release()
		fe.Close()
	}
}
