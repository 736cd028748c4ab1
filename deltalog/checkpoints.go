package deltalog

import (
	"context"

	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/objstore"
)

// readLastCheckpoint reads _last_checkpoint; nil when missing. Errors
// (corrupt files included) only cost the hint: the caller lists the log.
func readLastCheckpoint(ctx context.Context, st objstore.Store, logDir string) (*checkpoint.LastCheckpoint, error) {
	return checkpoint.ReadLast(ctx, st, logDir)
}

// readCheckpointFiles reads one complete checkpoint with its adds as
// columns. Snapshot replay needs no commitInfo or cdc columns, which the
// reader skips. Unless stats, the adds' stats are left out (see
// lazyStats).
func readCheckpointFiles(ctx context.Context, st objstore.Store, cp *checkpointCandidate, stats bool) (*checkpoint.Columnar, error) {
	if stats {
		return checkpoint.ReadFiles(ctx, st, checkpointParts(cp))
	}
	return checkpoint.ReadFiles(ctx, st, checkpointParts(cp), checkpoint.WithoutStats())
}

// checkpointParts are the files of cp for checkpoint.Read.
func checkpointParts(cp *checkpointCandidate) []checkpoint.Part {
	parts := make([]checkpoint.Part, len(cp.Files))
	for i, f := range cp.Files {
		parts[i] = checkpoint.Part{Key: f.Key, Size: f.Size}
	}
	return parts
}
