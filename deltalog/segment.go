package deltalog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

// logFile is a listed log file.
type logFile struct {
	LogPath
	Key     string
	Size    int64
	ModTime time.Time
}

// listing is what one listing of _delta_log/ found, grouped by kind.
type listing struct {
	commits     map[int64]logFile
	checkpoints map[int64][]checkpointCandidate
	compacted   []logFile
	others      map[int64][]string // checksum (.crc) keys by version
	lastCheck   bool               // _last_checkpoint exists
	maxVersion  int64
	minVersion  int64
}

// checkpointCandidate is one complete set of checkpoint files of a version.
type checkpointCandidate struct {
	Version int64
	Files   []logFile // one file, all parts in order, or the top-level V2 file
}

// list reads the names under _delta_log/ that sort after startVersion's
// prefix (startVersion < 0: from the beginning). Unknown names are ignored.
func (t *table) list(ctx context.Context, startVersion int64) (*listing, error) {
	l := &listing{
		commits:     map[int64]logFile{},
		checkpoints: map[int64][]checkpointCandidate{},
		others:      map[int64][]string{},
		maxVersion:  -1,
		minVersion:  -1,
	}
	prefix := t.logDir()
	startAfter := ""
	if startVersion > 0 {
		startAfter = prefix + versionPrefix(startVersion-1) + "~" // '~' sorts after every suffix we use
	}
	parts := map[int64]map[int]map[int]logFile{} // version -> numParts -> part -> file
	for obj, err := range t.store.List(ctx, prefix, startAfter) {
		if err != nil {
			return nil, fmt.Errorf("deltalog: list %s: %w", prefix, err)
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		if strings.Contains(name, "/") {
			continue // _sidecars/, .tmp/, ...
		}
		p, ok := ParseLogPath(name)
		if !ok {
			continue
		}
		f := logFile{LogPath: p, Key: obj.Key, Size: obj.Size, ModTime: obj.ModTime}
		switch p.Type {
		case Commit:
			l.commits[p.Version] = f
			if p.Version > l.maxVersion {
				l.maxVersion = p.Version
			}
			if l.minVersion < 0 || p.Version < l.minVersion {
				l.minVersion = p.Version
			}
		case Checkpoint, UUIDCheckpoint:
			l.checkpoints[p.Version] = append(l.checkpoints[p.Version], checkpointCandidate{Version: p.Version, Files: []logFile{f}})
		case MultiPartCheckpoint:
			if parts[p.Version] == nil {
				parts[p.Version] = map[int]map[int]logFile{}
			}
			if parts[p.Version][p.NumParts] == nil {
				parts[p.Version][p.NumParts] = map[int]logFile{}
			}
			parts[p.Version][p.NumParts][p.Part] = f
		case CompactedCommit:
			l.compacted = append(l.compacted, f)
		case Checksum:
			l.others[p.Version] = append(l.others[p.Version], f.Key)
		case LastCheckpoint:
			l.lastCheck = true
		}
	}
	// A multi-part checkpoint counts only when every part is there: a crash
	// mid-write leaves an incomplete set, which is never used.
	for v, byNum := range parts {
		for num, ps := range byNum {
			if len(ps) != num {
				continue
			}
			c := checkpointCandidate{Version: v}
			for i := 1; i <= num; i++ {
				c.Files = append(c.Files, ps[i])
			}
			l.checkpoints[v] = append(l.checkpoints[v], c)
		}
	}
	for v := range l.checkpoints {
		if v > l.maxVersion {
			l.maxVersion = v
		}
		// Prefer classic single files, then multi-part, then V2: all are
		// equivalent; the order only makes the choice deterministic.
		sort.SliceStable(l.checkpoints[v], func(i, j int) bool {
			return l.checkpoints[v][i].Files[0].Type < l.checkpoints[v][j].Files[0].Type
		})
	}
	return l, nil
}

// segment is the set of log files that reconstruct one version: the newest
// usable checkpoint at or before it and the commits after.
type segment struct {
	Version    int64
	Checkpoint *checkpointCandidate // nil: replay from version 0
	Commits    []logFile            // ascending, contiguous, after Checkpoint
	// CheckpointActions is the number of actions _last_checkpoint says
	// Checkpoint holds, 0 when unknown: a hint to size the replay's
	// slices by, never trusted beyond that.
	CheckpointActions int64
}

// errNotDelta is wrapped when the folder has no Delta log.
type notTableError struct{ table string }

func (e *notTableError) Error() string {
	return fmt.Sprintf("deltalog: %s is not a Delta table (no commits in %s)", e.table, LogDir)
}

func (e *notTableError) Is(target error) bool { return target == ErrNotTable }

// display names the table for messages: where its store is (as the user
// would write it) and the root inside it.
func (t table) display() string {
	loc := strings.TrimSuffix(objstore.Location(t.store), "/")
	if t.root == "" {
		return loc
	}
	return loc + "/" + strings.TrimSuffix(t.root, "/")
}

// buildSegment picks the files for version target (-1: the latest), with a
// checkpoint no newer than maxCheckpoint (anyCheckpoint: no limit; a
// negative value: no checkpoint at all).
func (t *table) buildSegment(ctx context.Context, target, maxCheckpoint int64) (*segment, *listing, error) {
	start := int64(-1)
	hint, hintActions := t.readLastCheckpointHint(ctx)
	if hint >= 0 && (target < 0 || hint <= target) && hint <= maxCheckpoint {
		start = hint
	}
	l, err := t.list(ctx, start)
	if err != nil {
		return nil, nil, err
	}
	if start >= 0 && len(l.checkpoints[start]) == 0 {
		// A stale or wrong _last_checkpoint: never fail the read, list it all.
		if l, err = t.list(ctx, -1); err != nil {
			return nil, nil, err
		}
	}
	if l.maxVersion < 0 {
		return nil, nil, &notTableError{table: t.display()}
	}
	// A listing is not a snapshot of the folder: one that ran while a
	// writer committed can show version n+1 but miss version n (ext4's
	// readdir does). Commits are never removed out of order, so a gap
	// below a listed commit is looked up by name before it counts.
	if err := t.fillListingGaps(ctx, l); err != nil {
		return nil, nil, err
	}
	latest := l.maxVersion
	if target < 0 {
		target = latest
	}
	if target > latest {
		return nil, nil, fmt.Errorf("deltalog: %w: version %d requested, latest is %d", ErrVersionNotFound, target, latest)
	}
	seg := &segment{Version: target}
	var cpVersions []int64
	for v := range l.checkpoints {
		if v <= target && v <= maxCheckpoint {
			cpVersions = append(cpVersions, v)
		}
	}
	sort.Slice(cpVersions, func(i, j int) bool { return cpVersions[i] > cpVersions[j] })
	from := int64(0)
	if len(cpVersions) > 0 {
		c := l.checkpoints[cpVersions[0]][0]
		seg.Checkpoint = &c
		from = c.Version + 1
		if c.Version == hint {
			seg.CheckpointActions = hintActions
		}
	}
	// Log compaction files (x.y.compacted.json) stand for commits x..y with
	// their actions reconciled; use the widest one at each step. The
	// target's own commit is always read, for its commitInfo.
	compacted := map[int64]logFile{}
	for _, c := range l.compacted {
		if c.EndVersion < target && (compacted[c.Version].Key == "" || c.EndVersion > compacted[c.Version].EndVersion) {
			compacted[c.Version] = c
		}
	}
	for v := from; v <= target; v++ {
		if c, ok := compacted[v]; ok {
			seg.Commits = append(seg.Commits, c)
			v = c.EndVersion
			continue
		}
		f, ok := l.commits[v]
		if !ok {
			if seg.Checkpoint == nil && v == 0 && l.minVersion > 0 {
				return nil, nil, fmt.Errorf("deltalog: %w: cannot reconstruct version %d: the log starts at version %d and has no checkpoint at or before it", ErrVersionNotFound, target, l.minVersion)
			}
			return nil, nil, fmt.Errorf("deltalog: %w: version %d is missing from %s (needed for version %d)", ErrLogCorrupt, v, t.display(), target)
		}
		seg.Commits = append(seg.Commits, f)
	}
	return seg, l, nil
}

// anyCheckpoint lets buildSegment use any checkpoint.
const anyCheckpoint = int64(math.MaxInt64)

// readLastCheckpointHint returns _last_checkpoint's version and number of
// actions, or -1 when it is missing or unreadable: it is only a hint.
func (t *table) readLastCheckpointHint(ctx context.Context) (version, actions int64) {
	lc, err := readLastCheckpoint(ctx, t.store, t.logDir())
	if err != nil || lc == nil {
		return -1, 0
	}
	return lc.Version, lc.Size
}

// fillListingGaps looks up, by name, the commits missing between the
// oldest listed commit and the latest listed version, and adds those that
// exist to the listing.
func (t *table) fillListingGaps(ctx context.Context, l *listing) error {
	if l.minVersion < 0 {
		return nil
	}
	for v := l.minVersion + 1; v < l.maxVersion; v++ {
		if _, ok := l.commits[v]; ok {
			continue
		}
		key := t.logDir() + CommitName(v)
		info, err := t.store.Head(ctx, key)
		if errors.Is(err, objstore.ErrNotFound) {
			continue // a real gap; buildSegment decides whether it matters
		}
		if err != nil {
			return fmt.Errorf("deltalog: look up %s: %w", key, err)
		}
		l.commits[v] = logFile{LogPath: LogPath{Name: CommitName(v), Type: Commit, Version: v}, Key: key, Size: info.Size, ModTime: info.ModTime}
	}
	return nil
}
