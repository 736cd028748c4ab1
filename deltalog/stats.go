package deltalog

import (
	"context"
	"fmt"
	"sync"

	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/objstore"
)

// lazyStats fills in, when first needed, the stats of the files a
// snapshot took from a checkpoint. Open reads a checkpoint without its
// add.stats column: the JSON stats are most of a large checkpoint's
// bytes, and only data skipping, counting from stats and writing the
// next checkpoint read them. Snapshots derived from one another share
// it, as they share the checkpoint's batches of files.
type lazyStats struct {
	store   objstore.Store
	version int64
	parts   []checkpoint.Part
	layout  *checkpoint.FileLayout
	mu      sync.Mutex
	batches []*checkpoint.FileColumns // the checkpoint's files in read order; nil once filled
}

// load reads the checkpoint's adds again, with their stats, and attaches
// the stats to the batches read the first time. It runs once to
// success; an error (a cancelled context, a checkpoint removed since)
// leaves it to be tried again.
func (l *lazyStats) load(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batches == nil {
		return nil
	}
	col, err := checkpoint.ReadFiles(ctx, l.store, l.parts, checkpoint.WithLayout(l.layout), checkpoint.OnlyKinds(checkpoint.KindAdd))
	if err != nil {
		return fmt.Errorf("deltalog: read file stats from checkpoint %d: %w", l.version, err)
	}
	if len(col.Files) != len(l.batches) {
		return fmt.Errorf("deltalog: %w: checkpoint %d yields %d batches of adds on a second read, %d on the first", ErrLogCorrupt, l.version, len(col.Files), len(l.batches))
	}
	for k, b := range col.Files {
		first := l.batches[k]
		if b.Len() != first.Len() {
			return fmt.Errorf("deltalog: %w: checkpoint %d yields different adds on a second read (batch %d)", ErrLogCorrupt, l.version, k)
		}
		for i := 0; i < b.Len(); i++ {
			if b.Path(i) != first.Path(i) {
				return fmt.Errorf("deltalog: %w: checkpoint %d yields different adds on a second read (%s)", ErrLogCorrupt, l.version, b.Path(i))
			}
		}
	}
	for k, b := range col.Files {
		l.batches[k].SetStats(b.Stats())
	}
	l.batches = nil
	return nil
}

// LoadStats makes the Stats of every active file available. Files that
// came from a checkpoint have an empty Stats until it returns nil: Open
// defers reading them, which makes opening a table of a million files
// about twice as fast and much smaller (Open with WithStats reads them
// with the checkpoint instead, and LoadStats has nothing to do). Scans,
// counts, overwrites and Checkpoint call it themselves; callers of Files
// that read Stats must call it first. It reads the checkpoint's stats once for all snapshots
// derived from this one, and is safe for concurrent use.
func (s *Snapshot) LoadStats(ctx context.Context) error {
	if s.lazy == nil {
		return nil
	}
	return s.lazy.load(ctx)
}
