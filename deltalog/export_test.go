package deltalog

import (
	"iter"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
)

// CheckpointActions exposes the actions Checkpoint writes, so that tests
// can write the other checkpoint forms (multi-part, V2 with sidecars).
func CheckpointActions(s *Snapshot, now time.Time) iter.Seq2[actions.Action, error] {
	return s.checkpointActions(now, true)
}

// CheckpointFiles exposes what Checkpoint writes as checkpoint.WriteFiles
// takes it: the actions other than adds, and the adds as column rows.
func CheckpointFiles(s *Snapshot, now time.Time) (iter.Seq2[actions.Action, error], iter.Seq[checkpoint.FileRow]) {
	return s.checkpointActions(now, false), s.checkpointFiles()
}
