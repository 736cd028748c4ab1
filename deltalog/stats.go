package deltalog

import (
	"context"
	"fmt"
	"sync"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/objstore"
)

// lazyStats fills in, when first needed, the stats of the adds a snapshot
// took from a checkpoint. Open reads a checkpoint without its add.stats
// column: the JSON stats are most of a large checkpoint's bytes, and only
// data skipping, counting from stats and writing the next checkpoint read
// them. Snapshots derived from one another share it, as they share the
// adds.
type lazyStats struct {
	store   objstore.Store
	version int64
	parts   []checkpoint.Part
	mu      sync.Mutex
	adds    []*actions.Add // the checkpoint's adds in read order; nil once filled
}

// load reads the checkpoint's add paths and stats and sets each add's
// Stats. It runs once to success; an error (a cancelled context, a
// checkpoint removed since) leaves it to be tried again.
func (l *lazyStats) load(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.adds == nil {
		return nil
	}
	i := 0
	for a, err := range checkpoint.ReadAddStats(ctx, l.store, l.parts) {
		if err != nil {
			return fmt.Errorf("deltalog: read file stats from checkpoint %d: %w", l.version, err)
		}
		if i >= len(l.adds) || l.adds[i].Size != a.Size {
			return fmt.Errorf("deltalog: %w: checkpoint %d yields different adds on a second read (add %d)", ErrLogCorrupt, l.version, i)
		}
		l.adds[i].Stats = a.Stats
		i++
	}
	if i != len(l.adds) {
		return fmt.Errorf("deltalog: %w: checkpoint %d yields %d adds on a second read, %d on the first", ErrLogCorrupt, l.version, i, len(l.adds))
	}
	l.adds = nil
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
