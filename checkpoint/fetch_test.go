package checkpoint

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// latencyStore delays every read of inner by d and records the most
// reads in flight at once.
type latencyStore struct {
	*objstore.FaultyStore
	inflight, most atomic.Int64
}

func newLatencyStore(inner objstore.Store, d time.Duration) *latencyStore {
	ls := &latencyStore{}
	ls.FaultyStore = objstore.Faulty(inner, objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op != objstore.OpGet && c.Op != objstore.OpGetRange {
			return nil, nil
		}
		n := ls.inflight.Add(1)
		for {
			m := ls.most.Load()
			if n <= m || ls.most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(d)
		ls.inflight.Add(-1)
		return nil, nil
	}))
	return ls
}

// TestReadFetchesConcurrently reads multi-part and V2 checkpoints with
// sidecars from a store with 20 ms of latency per read and one decoding
// worker: the actions must be those of a plain read, the row groups'
// bytes must be fetched with several requests in flight (at most
// fetchRequests, and the footers read ahead), and the requests must stay
// one per piece of coalesced chunks (16 KiB here) plus a tail read per
// file.
func TestReadFetchesConcurrently(t *testing.T) {
	ctx := context.Background()
	for _, form := range []string{"multi-part", "v2-sidecars"} {
		t.Run(form, func(t *testing.T) {
			mem := objstore.NewMem()
			var parts []Part
			files := 0
			if form == "multi-part" {
				lc, err := Write(ctx, mem, "_delta_log", 7, synthState(6000), WithParts(2), WithRowGroupSize(250))
				if err != nil {
					t.Fatal(err)
				}
				for i := 1; i <= int(*lc.Parts); i++ {
					parts = append(parts, Part{Key: "_delta_log/" + MultiPartName(7, i, int(*lc.Parts))})
				}
				files = len(parts)
			} else {
				lc, err := Write(ctx, mem, "_delta_log", 7, synthState(6000), WithV2(3000), WithRowGroupSize(250))
				if err != nil {
					t.Fatal(err)
				}
				parts = keyParts("_delta_log/" + lc.V2Checkpoint.Path)
				files = 1 + len(lc.V2Checkpoint.SidecarFiles)
				if len(lc.V2Checkpoint.SidecarFiles) < 2 {
					t.Fatalf("%d sidecars, want several", len(lc.V2Checkpoint.SidecarFiles))
				}
			}
			for i := range parts {
				info, err := mem.Head(ctx, parts[i].Key)
				if err != nil {
					t.Fatal(err)
				}
				parts[i].Size = info.Size
			}
			want := readAll(t, mem, parts)

			slow := newLatencyStore(mem, 20*time.Millisecond)
			cs := objstore.Counting(slow)
			start := time.Now()
			const piece = 16 << 10
			got := readAll(t, cs, parts, WithConcurrency(1), withWholeFileLimit(0), withFetchPieceSize(piece))
			elapsed := time.Since(start)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d actions through the slow store, %d directly, or they differ", len(got), len(want))
			}
			most := slow.most.Load()
			t.Logf("%s: %d files, %d range gets, %d gets, %d heads, at most %d reads in flight, %s",
				form, files, cs.Count(objstore.OpGetRange), cs.Count(objstore.OpGet), cs.Count(objstore.OpHead), most, elapsed)
			if most < 8 || most > fetchRequests+openAhead {
				t.Errorf("at most %d reads in flight, want 8..%d", most, fetchRequests+openAhead)
			}
			// The chunks of each file, coalesced, in pieces of 16 KiB,
			// plus a tail read per file (and, for a sidecar, whose size
			// is a hint, a Head).
			var bytes int64
			for info, err := range mem.List(ctx, "_delta_log/", "") {
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(info.Key, ".parquet") {
					bytes += info.Size
				}
			}
			if n := cs.Count(objstore.OpGetRange); n > int(bytes/piece)+2*files {
				t.Errorf("%d range gets for %d files of %d bytes in pieces of %d", n, files, bytes, piece)
			}
			if n := cs.Count(objstore.OpGet); n != 0 {
				t.Errorf("%d whole-object gets, want none", n)
			}
		})
	}
}

// TestReadFetchCancelled stops a read through a slow store early and
// cancels another: both return promptly and leave no goroutine blocked
// (the race detector and the test's end would show a leak as a hang).
func TestReadFetchCancelled(t *testing.T) {
	mem := objstore.NewMem()
	if _, err := Write(context.Background(), mem, "", 9, synthState(20000), WithRowGroupSize(500)); err != nil {
		t.Fatal(err)
	}
	parts := keyParts(ClassicName(9))
	slow := newLatencyStore(mem, 5*time.Millisecond)
	n := 0
	for _, err := range Read(context.Background(), slow, parts, WithConcurrency(1), withWholeFileLimit(0)) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 10 {
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var last error
	go func() {
		defer wg.Done()
		for _, err := range Read(ctx, slow, parts, WithConcurrency(1), withWholeFileLimit(0)) {
			if err != nil {
				last = err
			}
		}
	}()
	time.Sleep(30 * time.Millisecond)
	cancel()
	wg.Wait()
	if last == nil || !strings.Contains(last.Error(), "context canceled") {
		t.Fatalf("cancelled read ended with %v", last)
	}
}
