package deltalog_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

var (
	replaySeed     = flag.Uint64("replay.seed", 0, "seed of TestRandomLogReplay (0: from the clock)")
	replayVersions = flag.Int("replay.versions", 40, "commits of each random log in TestRandomLogReplay")
)

// TestRandomLogReplay builds random logs (adds over partitions with stats,
// removes, re-adds of a path with a deletion vector, checkpoints at random
// versions), then opens every version through a store with read latency
// (so the commits after a checkpoint and the checkpoint's row groups are
// fetched concurrently) and compares the snapshot, with its stats loaded,
// against a model of the log folded in the test. Replay with:
// go test ./deltalog -run TestRandomLogReplay -replay.seed N.
func TestRandomLogReplay(t *testing.T) {
	seed := *replaySeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./deltalog -run TestRandomLogReplay -replay.seed %d)", seed, seed)
	for round := range 3 {
		s := seed + uint64(round)
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) { randomLogReplay(t, s, *replayVersions) })
	}
}

type modelFile struct {
	add   actions.Add
	stats string
}

func randomLogReplay(t *testing.T, seed uint64, versions int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	mem := objstore.NewMem()
	createTable(t, mem, map[string]string{"delta.checkpointInterval": "1000", "delta.enableDeletionVectors": "true"})
	snap := open(t, mem)
	live := map[string]actions.Add{} // by path; a path has one live add here
	var models []map[string]actions.Add
	models = append(models, map[string]actions.Add{})
	countries := []string{"de", "fr", "nl", "it"}
	next := 0
	for v := 1; v <= versions; v++ {
		tx := snap.NewTransaction(deltalog.WithPostCommit("off"))
		paths := slices.Sorted(maps.Keys(live))
		for range 1 + rng.IntN(6) {
			switch op := rng.IntN(10); {
			case op < 6 || len(paths) == 0: // a new file
				c := countries[rng.IntN(len(countries))]
				a := addFile(fmt.Sprintf("country=%s/f-%05d.parquet", c, next), c).Add
				next++
				a.Size = int64(100 + rng.IntN(10000))
				a.Stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, 1+rng.IntN(99), rng.IntN(1000), 1000+rng.IntN(1000))
				tx.Add(actions.Action{Add: a})
				live[a.Path] = *a
			case op < 8: // a remove
				p := paths[rng.IntN(len(paths))]
				old := live[p]
				tx.Add(actions.Action{Remove: &actions.Remove{Path: p, DataChange: true, DeletionVector: old.DeletionVector, PartitionValues: old.PartitionValues, Size: &old.Size}})
				delete(live, p)
				paths = slices.DeleteFunc(paths, func(q string) bool { return q == p })
			default: // a deletion vector on a live file without one
				p := paths[rng.IntN(len(paths))]
				old := live[p]
				if old.DeletionVector != nil {
					continue
				}
				tx.Add(actions.Action{Remove: &actions.Remove{Path: p, DataChange: true, PartitionValues: old.PartitionValues, Size: &old.Size}})
				a := old
				a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", Offset: new(int32(1)), SizeInBytes: 36, Cardinality: int64(1 + rng.IntN(5))}
				tx.Add(actions.Action{Add: &a})
				live[p] = a
				paths = slices.DeleteFunc(paths, func(q string) bool { return q == p })
			}
		}
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatalf("seed %d: commit %d: %v", seed, v, err)
		}
		if snap, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
		m := make(map[string]actions.Add, len(live))
		for p, a := range live {
			m[p] = a
		}
		models = append(models, m)
		if rng.IntN(6) == 0 {
			if _, err := snap.Checkpoint(ctx, time.Now()); err != nil {
				t.Fatalf("seed %d: checkpoint %d: %v", seed, v, err)
			}
		}
	}
	var reads atomic.Int64
	slow := objstore.Faulty(mem, objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op == objstore.OpGet || c.Op == objstore.OpGetRange {
			reads.Add(1)
			time.Sleep(time.Millisecond)
		}
		return nil, nil
	}))
	for v := 1; v <= versions; v++ {
		s, err := deltalog.Open(ctx, slow, "", deltalog.AtVersion(int64(v)))
		if err != nil {
			t.Fatalf("seed %d: open version %d: %v", seed, v, err)
		}
		if err := s.LoadStats(ctx); err != nil {
			t.Fatalf("seed %d: stats of version %d: %v", seed, v, err)
		}
		want := models[v]
		if s.NumFiles() != len(want) {
			t.Fatalf("seed %d: version %d has %d files, want %d", seed, v, s.NumFiles(), len(want))
		}
		prev := ""
		for f := range s.Files() {
			if f.Path < prev {
				t.Fatalf("seed %d: version %d: files out of order: %s after %s", seed, v, f.Path, prev)
			}
			prev = f.Path
			w, ok := want[f.Path]
			if !ok {
				t.Fatalf("seed %d: version %d: unexpected file %s", seed, v, f.Path)
			}
			if f.Size != w.Size || f.Stats != w.Stats || f.DeletionVector.UniqueID() != w.DeletionVector.UniqueID() ||
				*f.PartitionValues["country"] != *w.PartitionValues["country"] {
				t.Fatalf("seed %d: version %d: file %s is %+v, want %+v", seed, v, f.Path, *f, w)
			}
		}
	}
	t.Logf("seed %d: %d versions, %d files live at the end, %d reads", seed, versions, len(live), reads.Load())
}
