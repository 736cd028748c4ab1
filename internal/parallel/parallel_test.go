package parallel

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestForEachRunsEveryIndexOnce: every index is called exactly once, and
// never more than limit at a time.
func TestForEachRunsEveryIndexOnce(t *testing.T) {
	for _, limit := range []int{0, 1, 3, 64} {
		const n = 200
		var calls [n]atomic.Int32
		var running, peak atomic.Int32
		err := ForEach(context.Background(), n, limit, func(_ context.Context, i int) error {
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			time.Sleep(50 * time.Microsecond)
			running.Add(-1)
			calls[i].Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("limit %d: index %d called %d times", limit, i, c)
			}
		}
		if want := int32(max(limit, 1)); peak.Load() > want {
			t.Fatalf("limit %d: %d ran at once", limit, peak.Load())
		}
	}
}

// TestForEachFirstErrorByIndex: the error of the lowest failing index is
// returned whatever the order of failures, no index starts after a
// failure is seen, and the others see their context cancelled.
func TestForEachFirstErrorByIndex(t *testing.T) {
	for range 20 {
		var started atomic.Int32
		err := ForEach(context.Background(), 100, 4, func(ctx context.Context, i int) error {
			started.Add(1)
			switch i {
			case 7:
				time.Sleep(2 * time.Millisecond)
				return fmt.Errorf("index %d", i)
			case 5:
				return fmt.Errorf("index %d", i)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Millisecond):
			}
			return nil
		})
		if err == nil || err.Error() != "index 5" {
			t.Fatalf("err %v", err)
		}
		if started.Load() == 100 {
			t.Fatal("every index started after a failure")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ForEach(ctx, 10, 2, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled parent: %v", err)
	}
}

// seqJobs yields 0..n-1, with an error in place of fail (when >= 0).
func seqJobs(n, fail int) func(context.Context) iter.Seq2[int, error] {
	return func(ctx context.Context) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for i := range n {
				if i == fail {
					yield(0, fmt.Errorf("job %d", i))
					return
				}
				if !yield(i, nil) {
					return
				}
			}
		}
	}
}

// TestStreamInOrder: random run times and output counts; the outputs come
// in job order, every one once, with at most limit runs at once.
func TestStreamInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		n, limit, ahead := 1+r.IntN(40), r.IntN(5), r.IntN(4)
		counts := make([]int, n)
		delays := make([]time.Duration, n)
		for i := range n {
			counts[i] = r.IntN(5)
			delays[i] = time.Duration(r.IntN(300)) * time.Microsecond
		}
		var running, peak atomic.Int32
		run := func(ctx context.Context, j int, emit func([2]int) bool) error {
			r := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			time.Sleep(delays[j])
			for k := range counts[j] {
				if !emit([2]int{j, k}) {
					return nil
				}
			}
			return nil
		}
		var got [][2]int
		for v, err := range Stream(context.Background(), seqJobs(n, -1), limit, ahead, run, func([2]int) {}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		var want [][2]int
		for j := range n {
			for k := range counts[j] {
				want = append(want, [2]int{j, k})
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: got %v, want %v", round, got, want)
		}
		if p := peak.Load(); p > int32(max(limit, 1)) {
			t.Fatalf("round %d: %d runs at once, limit %d", round, p, limit)
		}
	}
}

// TestStreamErrorsAndStops: an error from the jobs or a run comes after
// the outputs before it and ends the stream; a consumer that stops early
// or a context that ends leaves every emitted output released or yielded,
// and no goroutine behind.
func TestStreamErrorsAndStops(t *testing.T) {
	var live atomic.Int64 // emitted and neither yielded nor released
	run := func(fail int) func(ctx context.Context, j int, emit func(int) bool) error {
		return func(ctx context.Context, j int, emit func(int) bool) error {
			for k := range 3 {
				live.Add(1)
				if !emit(j*10 + k) {
					return nil
				}
			}
			if j == fail {
				return fmt.Errorf("run %d", j)
			}
			return nil
		}
	}
	release := func(int) { live.Add(-1) }
	collect := func(seq iter.Seq2[int, error], stopAfter int) ([]int, error) {
		var got []int
		for v, err := range seq {
			if err != nil {
				return got, err
			}
			live.Add(-1)
			got = append(got, v)
			if len(got) == stopAfter {
				break
			}
		}
		return got, nil
	}
	got, err := collect(Stream(context.Background(), seqJobs(10, 4), 3, 1, run(-1), release), -1)
	if err == nil || err.Error() != "job 4" || len(got) != 12 {
		t.Fatalf("jobs error: %v after %v", err, got)
	}
	got, err = collect(Stream(context.Background(), seqJobs(10, -1), 3, 2, run(2), release), -1)
	if err == nil || err.Error() != "run 2" || len(got) != 9 {
		t.Fatalf("run error: %v after %v", err, got)
	}
	got, err = collect(Stream(context.Background(), seqJobs(100, -1), 4, 2, run(-1), release), 7)
	if err != nil || len(got) != 7 {
		t.Fatalf("early stop: %v after %v", err, got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq := Stream(ctx, seqJobs(1000, -1), 4, 2, run(-1), release)
	var n int
	for _, err := range seq {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("after cancel: %v", err)
			}
			break
		}
		live.Add(-1)
		if n++; n == 5 {
			cancel()
		}
	}
	if l := live.Load(); l != 0 {
		t.Fatalf("%d outputs neither yielded nor released", l)
	}
}
