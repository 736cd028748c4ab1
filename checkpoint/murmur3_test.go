package checkpoint

import (
	"fmt"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

// TestSparkHash checks the hash against Spark's documented example:
// SELECT hash('Spark', array(123), 2) is -1321691492.
func TestSparkHash(t *testing.T) {
	h := sparkHashBytes([]byte("Spark"), sparkSeed)
	h = sparkHashInt(123, h)
	h = sparkHashInt(2, h)
	if int32(h) != -1321691492 {
		t.Errorf("hash('Spark', array(123), 2) = %d, want -1321691492", int32(h))
	}
}

// TestSparkPartitionMatchesSpark checks that every action of Spark's
// multi-part checkpoint in the corpus is in the part our hash gives it.
func TestSparkPartitionMatchesSpark(t *testing.T) {
	s := goldenStore(t)
	const n = 2
	files := 0
	for part := 1; part <= n; part++ {
		key := "multi-part-checkpoint/delta/_delta_log/" + MultiPartName(1, part, n)
		// Read the one part alone, which Read refuses.
		cfg, _ := newReadConfig(nil)
		r := &reader{store: s, cfg: cfg, randomAccess: true}
		err := r.run(t.Context(), []source{{key: key}}, everyKind, func(_ source, a actions.Action) error {
			if actionPath(&a) != nil {
				files++
			}
			if got := sparkPartition(actionPath(&a), n) + 1; got != part {
				t.Errorf("%s in part %d, our hash says %d", describe(&a), part, got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 10 {
		t.Errorf("only %d file actions checked", files)
	}
}

func describe(a *actions.Action) string {
	if p := actionPath(a); p != nil {
		return fmt.Sprintf("%s %s", a.Kind(), *p)
	}
	return a.Kind()
}
