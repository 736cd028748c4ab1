package deltalog

import (
	"iter"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// CheckpointActions exposes the actions Checkpoint writes, so that tests
// can write the other checkpoint forms (multi-part, V2 with sidecars).
func CheckpointActions(s *Snapshot, now time.Time) iter.Seq2[actions.Action, error] {
	return s.checkpointActions(now)
}
