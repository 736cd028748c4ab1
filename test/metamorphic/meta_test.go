package metamorphic_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/lakelog/lakelog/test/metamorphic"
	"github.com/lakelog/lakelog/test/testseed"
)

var (
	long = flag.Bool("metamorphic.long", false, "run more and longer metamorphic runs")
	runs = flag.Int("metamorphic.runs", 0, "the number of runs (default 8, 40 with -metamorphic.long)")
	ops  = flag.Int("metamorphic.ops", 0, "operations per run (default 25, 80 with -metamorphic.long)")
)

// TestMetamorphic runs the generator from consecutive seeds (the first
// logged; METAMORPHIC_SEED replays it, and a failing run prints its own).
func TestMetamorphic(t *testing.T) {
	n, k := 8, 25
	if *long {
		n, k = 40, 80
	}
	if *runs > 0 {
		n = *runs
	}
	if *ops > 0 {
		k = *ops
	}
	seed := testseed.From(t, "METAMORPHIC_SEED")
	if os.Getenv("METAMORPHIC_SEED") != "" {
		n = 1
	}
	for i := range n {
		s := seed + uint64(i)
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			t.Parallel()
			res := metamorphic.Run(t, s, metamorphic.Options{Ops: k, Dir: t.TempDir(), EveryVersion: true})
			t.Logf("seed %d: %s; %d versions, %d rows", s, res.Config, res.Version+1, len(res.Rows))
			if testing.Verbose() {
				for i, o := range res.Ops {
					t.Logf("%3d. %s", i, o)
				}
			}
		})
	}
}
