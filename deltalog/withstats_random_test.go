package deltalog_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

var withStatsSeed = flag.Uint64("withstats.seed", 0, "seed of TestRandomOpenWithStats (0: from the clock)")

// TestRandomOpenWithStats builds random logs (adds over partitions with
// stats, some without, removes, deletion vectors) with checkpoints of every
// form at random versions (classic, multi-part, V2 with and without
// sidecars, stats only as stats_parsed), and checks at every version that Open WithStats yields exactly
// the files and tombstones of Open then LoadStats, reading the checkpoint
// once: its LoadStats reads nothing. Replay with:
// go test ./deltalog -run TestRandomOpenWithStats -withstats.seed N.
func TestRandomOpenWithStats(t *testing.T) {
	seed := *withStatsSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./deltalog -run TestRandomOpenWithStats -withstats.seed %d)", seed, seed)
	for round := range 4 {
		s := seed + uint64(round)
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) { randomOpenWithStats(t, s, 30) })
	}
}

func randomOpenWithStats(t *testing.T, seed uint64, versions int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	mem := objstore.NewMem()
	createTable(t, mem, map[string]string{
		"delta.checkpointInterval":    "1000",
		"delta.enableDeletionVectors": "true",
	})
	snap := open(t, mem)
	live := map[string]actions.Add{}
	countries := []string{"de", "fr", "nl", "it", ""}
	next := 0
	forms := map[string]int{}
	exactJSON := true // no checkpoint holds the stats only as a struct
	for v := 1; v <= versions; v++ {
		tx := snap.NewTransaction(deltalog.WithPostCommit("off"))
		paths := slices.Sorted(maps.Keys(live))
		for range 1 + rng.IntN(8) {
			switch op := rng.IntN(10); {
			case op < 6 || len(paths) == 0:
				c := countries[rng.IntN(len(countries))]
				a := addFile(fmt.Sprintf("country=%s/f-%05d.parquet", c, next), c).Add
				if c == "" {
					a.PartitionValues = map[string]*string{"country": nil}
				}
				next++
				a.Size = int64(100 + rng.IntN(10000))
				if rng.IntN(5) != 0 {
					a.Stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, 1+rng.IntN(99), rng.IntN(1000), 1000+rng.IntN(1000))
				}
				tx.Add(actions.Action{Add: a})
				live[a.Path] = *a
			case op < 8:
				p := paths[rng.IntN(len(paths))]
				old := live[p]
				tx.Add(actions.Action{Remove: &actions.Remove{Path: p, DataChange: true, DeletionVector: old.DeletionVector, PartitionValues: old.PartitionValues, Size: &old.Size, DeletionTimestamp: new(time.Now().UnixMilli())}})
				delete(live, p)
				paths = slices.DeleteFunc(paths, func(q string) bool { return q == p })
			default:
				p := paths[rng.IntN(len(paths))]
				old := live[p]
				if old.DeletionVector != nil {
					continue
				}
				tx.Add(actions.Action{Remove: &actions.Remove{Path: p, DataChange: true, PartitionValues: old.PartitionValues, Size: &old.Size, DeletionTimestamp: new(time.Now().UnixMilli())}})
				a := old
				a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", Offset: new(int32(1)), SizeInBytes: 36, Cardinality: int64(1 + rng.IntN(5))}
				tx.Add(actions.Action{Add: &a})
				live[p] = a
			}
		}
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatalf("seed %d: commit %d: %v", seed, v, err)
		}
		if snap, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(4) == 0 {
			var opts []checkpoint.WriteOption
			form := "classic"
			switch rng.IntN(5) {
			case 1:
				form = "multi-part"
				opts = append(opts, checkpoint.WithParts(2+rng.IntN(3)))
			case 2:
				form = "v2 with sidecars"
				opts = append(opts, checkpoint.WithV2(1+rng.IntN(7)))
			case 3:
				form = "v2"
				opts = append(opts, checkpoint.WithV2(0))
			case 4: // the reader renders stats_parsed back as JSON
				form = "stats as struct only"
				opts = append(opts, checkpoint.WithStatsAsStruct(snap.Config()), checkpoint.WithoutStatsJSON())
				exactJSON = false
			}
			if err := snap.LoadStats(ctx); err != nil {
				t.Fatal(err)
			}
			lc, err := checkpoint.Write(ctx, mem, "_delta_log", snap.Version(), deltalog.CheckpointActions(snap, time.Now()), opts...)
			if err != nil {
				t.Fatalf("seed %d: %s checkpoint %d: %v", seed, form, v, err)
			}
			if err := checkpoint.WriteLast(ctx, mem, "_delta_log", lc); err != nil {
				t.Fatal(err)
			}
			forms[form]++
		}
	}
	var reads, sidecarReads atomic.Int64
	counted := objstore.Faulty(mem, objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op == objstore.OpGet || c.Op == objstore.OpGetRange {
			reads.Add(1)
			if strings.Contains(c.Key, "_sidecars/") {
				sidecarReads.Add(1)
			}
		}
		return nil, nil
	}))
	withStatsFiles := 0
	for v := 1; v <= versions; v++ {
		want, err := deltalog.Open(ctx, mem, "", deltalog.AtVersion(int64(v)))
		if err != nil {
			t.Fatalf("seed %d: open version %d: %v", seed, v, err)
		}
		if err := want.LoadStats(ctx); err != nil {
			t.Fatalf("seed %d: stats of version %d: %v", seed, v, err)
		}
		got, err := deltalog.Open(ctx, counted, "", deltalog.AtVersion(int64(v)), deltalog.WithStats())
		if err != nil {
			t.Fatalf("seed %d: open version %d with stats: %v", seed, v, err)
		}
		before := reads.Load()
		if err := got.LoadStats(ctx); err != nil {
			t.Fatal(err)
		}
		if n := reads.Load() - before; n != 0 {
			t.Fatalf("seed %d: version %d: LoadStats after Open WithStats read %d objects, want none", seed, v, n)
		}
		gf, wf := slices.Collect(got.Files()), slices.Collect(want.Files())
		if len(gf) != len(wf) {
			t.Fatalf("seed %d: version %d: %d files with stats, %d after LoadStats", seed, v, len(gf), len(wf))
		}
		for i := range gf {
			g, w := gf[i], wf[i]
			if g.Path != w.Path || g.Size != w.Size || g.Stats != w.Stats || g.ModificationTime != w.ModificationTime ||
				g.DataChange != w.DataChange || g.DeletionVector.UniqueID() != w.DeletionVector.UniqueID() ||
				!equalPartitionValues(g.PartitionValues, w.PartitionValues) {
				t.Fatalf("seed %d: version %d: file %d is %+v with stats, %+v after LoadStats", seed, v, i, *g, *w)
			}
			if exactJSON && v == versions && w.Stats != live[w.Path].Stats {
				t.Fatalf("seed %d: version %d: file %s has stats %q, want %q", seed, v, w.Path, w.Stats, live[w.Path].Stats)
			}
			if w.Stats != "" {
				withStatsFiles++
			}
		}
		gt, wt := slices.Collect(got.Tombstones()), slices.Collect(want.Tombstones())
		if len(gt) != len(wt) {
			t.Fatalf("seed %d: version %d: %d tombstones with stats, %d after LoadStats", seed, v, len(gt), len(wt))
		}
		for i := range gt {
			if gt[i].Path != wt[i].Path || gt[i].DeletionVector.UniqueID() != wt[i].DeletionVector.UniqueID() {
				t.Fatalf("seed %d: version %d: tombstone %d is %s, want %s", seed, v, i, gt[i].Path, wt[i].Path)
			}
		}
	}
	if forms["v2 with sidecars"] > 0 && sidecarReads.Load() == 0 {
		t.Fatalf("seed %d: no sidecar was read: the V2 checkpoints were passed over", seed)
	}
	if withStatsFiles == 0 {
		t.Fatalf("seed %d: no file had stats: the comparison proved nothing", seed)
	}
	t.Logf("seed %d: %d versions, %d files live at the end, checkpoints %v", seed, versions, len(live), forms)
}

func equalPartitionValues(a, b map[string]*string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || (va == nil) != (vb == nil) || (va != nil && *va != *vb) {
			return false
		}
	}
	return true
}
