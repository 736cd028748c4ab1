package cdf_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

var (
	followSeed = flag.Uint64("follow.seed", 0, "replay TestFollowModel with this seed")
	followLong = flag.Bool("follow.long", false, "run TestFollowModel with more writers and operations")
)

// TestFollowModel: writers commit random appends, DELETEs and UPDATEs
// (with and without deletion vectors) and OPTIMIZEs concurrently, on
// local disk, while a follower with random limits runs and "crashes" at
// random points (mid-batch, after processing but before saving its
// offset, after saving it) and resumes from its saved offset. Each batch
// must start right after the offset saved; the batches processed,
// concatenated, must equal the closed-range feed of the same versions,
// and OPTIMIZE's versions must have no change rows.
func TestFollowModel(t *testing.T) {
	seed := *followSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -follow.seed %d)", seed, seed)
	writers, ops := 3, 12
	if *followLong {
		writers, ops = 4, 60
	}
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ft := newFollowTable(t, store, "id long, g long, v string", map[string]string{"delta.enableDeletionVectors": "true"})
	ctx, cancelAll := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancelAll()

	var final atomic.Int64
	final.Store(-1)
	var wg sync.WaitGroup
	var nextID atomic.Int64
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)+1))
			for range ops {
				if err := randomOp(ctx, ft, rng, &nextID); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					cancelAll()
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		s, err := deltalog.Open(ctx, store, ft.root)
		if err != nil {
			errs <- err
			cancelAll()
			return
		}
		final.Store(s.Version())
	}()

	// The follower.
	offsets := cdf.ObjectOffset(objstore.NewMem(), "offset")
	rng := rand.New(rand.NewPCG(seed, 0))
	var processed []string
	saved := int64(-1)
	restarts := 0
	for {
		if f := final.Load(); f >= 0 && saved >= f {
			break
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		start, err := cdf.Resume(ctx, offsets, cdf.StartingVersion(0))
		if err != nil {
			t.Fatal(err)
		}
		opts := []cdf.Option{cdf.WithPollInterval(time.Millisecond), cdf.WithMaxPollInterval(20 * time.Millisecond),
			cdf.WithParallelism(1 + rng.IntN(3))}
		switch rng.IntN(4) {
		case 0:
			opts = append(opts, cdf.WithMaxVersionsPerBatch(1+rng.IntN(3)))
		case 1:
			opts = append(opts, cdf.WithMaxFilesPerBatch(1+rng.IntN(4)))
		case 2:
			opts = append(opts, cdf.WithMaxBytesPerBatch(int64(500+rng.IntN(3000))))
		}
		runCtx, crash := context.WithCancel(ctx)
		// The follower looks for versions when triggered (every
		// millisecond) and, once the writers are done, drains what is
		// committed and ends: a closed trigger.
		trigger := make(chan struct{})
		go func() {
			for final.Load() < 0 {
				select {
				case trigger <- struct{}{}:
				case <-runCtx.Done():
					return
				case <-time.After(time.Millisecond):
				}
			}
			close(trigger)
		}()
		opts = append(opts, cdf.WithTrigger(trigger))
		for b, err := range cdf.Follow(runCtx, store, ft.root, start, opts...) {
			if err != nil {
				if runCtx.Err() != nil && ctx.Err() == nil {
					break
				}
				select {
				case werr := <-errs:
					t.Fatal(werr)
				default:
				}
				t.Fatalf("follow from %s: %v", start, err)
			}
			if b.First != saved+1 || b.Last < b.First {
				t.Fatalf("batch %d-%d after the saved offset %d: a version skipped or repeated", b.First, b.Last, saved)
			}
			var lines []string
			crashMid := rng.IntN(8) == 0
			for rec, err := range b.Records(runCtx) {
				if err != nil {
					if runCtx.Err() != nil {
						break
					}
					t.Fatalf("batch %d-%d: %v", b.First, b.Last, err)
				}
				lines = append(lines, changeLines(rec)...)
				if crashMid {
					crash() // dies while reading: nothing of the batch counts
				}
			}
			if runCtx.Err() != nil {
				break
			}
			if rng.IntN(8) == 0 {
				crash() // processed but not saved: the batch comes again
				break
			}
			processed = append(processed, lines...)
			if err := offsets.Save(ctx, b.Last); err != nil {
				t.Fatal(err)
			}
			saved = b.Last
			if f := final.Load(); f >= 0 && saved >= f {
				break
			}
			if rng.IntN(6) == 0 {
				crash() // after saving
				break
			}
		}
		crash()
		restarts++
	}
	f := final.Load()
	t.Logf("%d writers, %d ops each: %d versions, %d change rows, %d follower runs", writers, ops, f, len(processed), restarts)
	want := closedRange(t, store, ft.root, 0, f)
	if strings.Join(processed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("followed feed (%d rows) differs from the closed range (%d rows):\n%s", len(processed), len(want), firstDiff(processed, want))
	}
	optimized := map[string]bool{}
	for vc, err := range deltalog.Commits(ctx, store, ft.root, 0, f) {
		if err != nil {
			t.Fatal(err)
		}
		if vc.CommitInfo != nil && vc.CommitInfo.Operation == "OPTIMIZE" {
			optimized[fmt.Sprint(vc.Version)] = true
		}
	}
	for _, l := range processed {
		cols := strings.Split(l, "|")
		if optimized[cols[len(cols)-2]] {
			t.Fatalf("OPTIMIZE's version %s has a change row: %s", cols[len(cols)-2], l)
		}
	}
	if len(optimized) == 0 && *followLong {
		t.Errorf("no OPTIMIZE committed")
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("row %d: followed %q, closed range %q", i, g, w)
		}
	}
	return ""
}

// randomOp commits one random operation, retrying conflicts on a fresh
// snapshot.
func randomOp(ctx context.Context, ft *followTable, rng *rand.Rand, nextID *atomic.Int64) error {
	kind := rng.IntN(10)
	noDV := rng.IntN(2) == 0
	g := int64(rng.IntN(4))
	for attempt := 0; ; attempt++ {
		snap, err := deltalog.Open(ctx, ft.store, ft.root)
		if err != nil {
			return err
		}
		var dmlOpts []dml.Option
		if noDV {
			dmlOpts = append(dmlOpts, dml.WithoutDeletionVectors())
		}
		inG := &expr.Compare{Op: expr.Eq, Left: expr.Col("g"), Right: expr.Lit(g)}
		switch {
		case kind < 4:
			var rows []string
			for range 1 + rng.IntN(4) {
				id := nextID.Add(1)
				rows = append(rows, fmt.Sprintf(`{"id": %d, "g": %d, "v": "v%d"}`, id, id%4, id))
			}
			_, err = writer.Append(ctx, snap, ft.jsonRows(snap, "["+strings.Join(rows, ",")+"]"))
		case kind < 6:
			pred := expr.And(inG, &expr.Compare{Op: expr.Lt, Left: expr.Col("id"), Right: expr.Lit(nextID.Load() - int64(rng.IntN(5)))})
			_, err = dml.Delete(ctx, snap, pred, dmlOpts...)
		case kind < 9:
			set, perr := expr.ParseAssignment(fmt.Sprintf("v = 'u%d'", rng.IntN(100)))
			if perr != nil {
				return perr
			}
			_, err = dml.Update(ctx, snap, inG, []*expr.Assignment{set}, dmlOpts...)
		default:
			_, err = maintenance.Optimize(ctx, snap)
		}
		if errors.Is(err, conflict.ErrConflict) && attempt < 50 {
			continue
		}
		return err
	}
}
