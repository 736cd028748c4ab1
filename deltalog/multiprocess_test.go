package deltalog_test

import (
	"os"
	"testing"

	"github.com/lakelog/lakelog/test/multiwriter"
)

func TestMain(m *testing.M) {
	multiwriter.MaybeChild()
	os.Exit(m.Run())
}

// Sixteen OS processes commit to one local table at once, fifty commits
// each: versions 1..800 are contiguous and hold every commit exactly once.
func TestConcurrentProcessesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 16 processes")
	}
	multiwriter.Run(t, "file://"+t.TempDir(), 16, 50)
}
