package maintenance_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

var replaySeed = flag.Uint64("maint.seed", 0, "replay TestRestoreRandomHistories with this seed")

// A random history of appends, deletes (replaceWhere), OPTIMIZEs and
// RESTOREs: after each RESTORE the table holds exactly the files and rows
// of the version it restored, read by time travel. Each history's seed is
// in its subtest's name; -maint.seed=N replays history N.
func TestRestoreRandomHistories(t *testing.T) {
	base, n := uint64(time.Now().UnixNano()), 4
	if *replaySeed != 0 {
		base, n = *replaySeed, 1
	}
	for i := range n {
		seed := base + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(seed, 7))
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, "id long, region string", nil, "region")
			next := 0
			regions := []string{"US", "EU", "APAC"}
			for step := range 25 {
				switch op := rng.IntN(10); {
				case op < 5:
					var rows string
					for j := range 1 + rng.IntN(4) {
						if j > 0 {
							rows += ","
						}
						rows += fmt.Sprintf(`{"id":%d,"region":%q}`, next, regions[rng.IntN(3)])
						next++
					}
					snap = tabletest.Append(t, snap, "["+rows+"]")
				case op < 7:
					pred := fmt.Sprintf("id %% %d = %d", 2+rng.IntN(3), rng.IntN(2))
					if rng.IntN(2) == 0 {
						pred = fmt.Sprintf("region = '%s'", regions[rng.IntN(3)])
					}
					snap = deleteWhere(t, snap, pred, time.Now())
				case op < 8:
					if _, err := maintenance.Optimize(ctx, snap); err != nil {
						t.Fatalf("step %d: optimize: %v", step, err)
					}
					snap = tabletest.Open(t, store)
				default:
					if snap.Version() == 0 {
						continue
					}
					v := rng.Int64N(snap.Version())
					if _, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(v)); err != nil {
						t.Fatalf("step %d: restore to %d: %v", step, v, err)
					}
					target := tabletest.Open(t, store, deltalog.AtVersion(v))
					snap = tabletest.Open(t, store)
					if !slices.Equal(fileKeys(snap), fileKeys(target)) {
						t.Fatalf("step %d: after restore to %d: files %v, want %v", step, v, fileKeys(snap), fileKeys(target))
					}
					if got, want := tabletest.ScanLines(t, snap), tabletest.ScanLines(t, target); !slices.Equal(got, want) {
						t.Fatalf("step %d: after restore to %d: rows %v, want %v", step, v, got, want)
					}
				}
			}
		})
	}
}
