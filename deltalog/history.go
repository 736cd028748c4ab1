package deltalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// Commit describes one version in the table's history.
type CommitEntry struct {
	Version int64
	// Timestamp is the commit's timestamp by time travel's rules (in-commit
	// timestamp, else the file time made monotonic).
	Timestamp time.Time
	// Info is the version's commitInfo, or nil when the writer wrote none.
	Info *actions.CommitInfo
	// Missing is set for a version inside the log's range whose commit
	// file is not there (a corrupt log); Timestamp and Info are then zero.
	Missing bool
}

// History returns the table's commits, newest first; limit >= 0 keeps
// only the newest limit versions, a negative limit keeps all. Versions
// whose commit files were cleaned up (older than the oldest commit kept)
// are not listed; a version missing between two commits is listed with
// Missing set.
func History(ctx context.Context, store objstore.Store, root string, limit int) ([]CommitEntry, error) {
	t := newTable(store, root)
	l, err := t.list(ctx, -1)
	if err != nil {
		return nil, err
	}
	if l.maxVersion < 0 {
		return nil, &notTableError{table: t.display()}
	}
	if err := t.fillListingGaps(ctx, l); err != nil {
		return nil, err
	}
	clock := t.newCommitClock(ctx, l)
	oldest := int64(-1)
	for v := range l.commits {
		if oldest < 0 || v < oldest {
			oldest = v
		}
	}
	var versions []int64
	if oldest >= 0 {
		for v := l.maxVersion; v >= oldest; v-- {
			_, commit := l.commits[v]
			_, checkpoint := l.checkpoints[v]
			if commit || !checkpoint {
				versions = append(versions, v)
			}
		}
	}
	if limit >= 0 && len(versions) > limit {
		versions = versions[:limit]
	}
	out := make([]CommitEntry, 0, len(versions))
	for _, v := range versions {
		f, ok := l.commits[v]
		if !ok {
			out = append(out, CommitEntry{Version: v, Missing: true})
			continue
		}
		ci, err := t.readCommitInfo(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, CommitEntry{Version: v, Timestamp: clock.at(v, ci), Info: ci})
	}
	return out, nil
}

// readCommitInfo returns a commit's commitInfo action, decoding only lines
// until it is found.
func (t *table) readCommitInfo(ctx context.Context, f logFile) (*actions.CommitInfo, error) {
	b, err := t.store.Get(ctx, f.Key)
	if err != nil {
		return nil, fmt.Errorf("deltalog: read %s: %w", f.Key, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("deltalog: %w: %s: empty commit file (%d bytes, no actions)", ErrLogCorrupt, f.Key, len(b))
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<30)
	line := 0
	for sc.Scan() {
		line++
		ln := bytes.TrimSpace(sc.Bytes())
		if !bytes.HasPrefix(ln, []byte(`{"commitInfo"`)) {
			continue
		}
		var a actions.Action
		if err := json.Unmarshal(ln, &a); err != nil {
			return nil, fmt.Errorf("deltalog: %w: %s: %w", ErrLogCorrupt, f.Key, &actions.LineError{Line: line, Err: err})
		}
		return a.CommitInfo, nil
	}
	return nil, nil
}

// commitClock gives commits their timestamps by Spark's rules: file
// modification times, each raised to one millisecond past its predecessor
// when the clock went backwards; from the in-commit timestamp enablement
// version on, the commits' inCommitTimestamp. It is built from a listing
// without reading commits; the in-commit timestamps come from the
// commitInfo the caller read.
type commitClock struct {
	ictFrom int64 // the enablement version; -1 when none
	// fromCommitInfo: a commit whose commitInfo carries an
	// inCommitTimestamp is timed by it, whatever ictFrom says
	// (commitInfoClock).
	fromCommitInfo bool
	fileTimes      map[int64]time.Time // versions before ictFrom, made monotonic
	files          map[int64]logFile
}

func (t *table) newCommitClock(ctx context.Context, l *listing) *commitClock {
	ictFrom := int64(-1)
	if len(l.commits) > 0 {
		if s, err := Open(ctx, t.store, t.root, withSkipGate()); err == nil && s.ict.enabled {
			ictFrom = s.ict.enablementVersion
		}
	}
	return fileClock(l, ictFrom)
}

// commitInfoClock is the clock of a caller that reads every commit of its
// range anyway (Commits): it needs no snapshot to learn where in-commit
// timestamps begin, because writers put an inCommitTimestamp in every
// commitInfo from the enablement version on, and only there. The file
// times before that version are the same as newCommitClock's, since each
// is raised only past its predecessors'.
func commitInfoClock(l *listing) *commitClock {
	c := fileClock(l, -1)
	c.fromCommitInfo = true
	return c
}

// fileClock times the versions before ictFrom (all when ictFrom < 0) by
// their commit files.
func fileClock(l *listing, ictFrom int64) *commitClock {
	c := &commitClock{ictFrom: ictFrom, fileTimes: make(map[int64]time.Time, len(l.commits)), files: l.commits}
	versions := make([]int64, 0, len(l.commits))
	for v := range l.commits {
		if c.ictFrom < 0 || v < c.ictFrom {
			versions = append(versions, v)
		}
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] < versions[j] })
	var prev time.Time
	for _, v := range versions {
		ts := l.commits[v].ModTime.Truncate(time.Millisecond)
		if !prev.IsZero() && !ts.After(prev) {
			ts = prev.Add(time.Millisecond)
		}
		c.fileTimes[v] = ts
		prev = ts
	}
	return c
}

// needsCommitInfo reports whether version v's timestamp is read from its
// commitInfo.
func (c *commitClock) needsCommitInfo(v int64) bool { return c.ictFrom >= 0 && v >= c.ictFrom }

// at is version v's timestamp; ci is its commitInfo (needed only when
// needsCommitInfo; nil when the commit has none).
func (c *commitClock) at(v int64, ci *actions.CommitInfo) time.Time {
	if (c.fromCommitInfo || c.needsCommitInfo(v)) && ci != nil && ci.InCommitTimestamp != nil {
		return time.UnixMilli(*ci.InCommitTimestamp)
	}
	if ts, ok := c.fileTimes[v]; ok {
		return ts
	}
	return c.files[v].ModTime.Truncate(time.Millisecond)
}

// commitTimestamps gives every listed commit its timestamp (commitClock),
// reading the commitInfo of the versions with in-commit timestamps.
func (t *table) commitTimestamps(ctx context.Context, l *listing) (map[int64]time.Time, error) {
	c := t.newCommitClock(ctx, l)
	out := make(map[int64]time.Time, len(l.commits))
	for v, f := range l.commits {
		var ci *actions.CommitInfo
		if c.needsCommitInfo(v) {
			var err error
			if ci, err = t.readCommitInfo(ctx, f); err != nil {
				return nil, err
			}
		}
		out[v] = c.at(v, ci)
	}
	return out, nil
}

// versionAt resolves a timestamp to the newest version committed at or
// before it.
func (t *table) versionAt(ctx context.Context, ts time.Time) (int64, error) {
	l, err := t.list(ctx, -1)
	if err != nil {
		return 0, err
	}
	if l.maxVersion < 0 {
		return 0, &notTableError{table: t.display()}
	}
	times, err := t.commitTimestamps(ctx, l)
	if err != nil {
		return 0, err
	}
	// Only versions that can be reconstructed count: from the oldest
	// checkpoint (or version 0) on.
	earliest := int64(0)
	if _, ok := l.commits[0]; !ok {
		earliest = -1
		for v := range l.checkpoints {
			if earliest < 0 || v < earliest {
				earliest = v
			}
		}
	}
	best := int64(-1)
	var first, last time.Time
	firstV, lastV := int64(-1), int64(-1)
	for v, vt := range times {
		if earliest < 0 || v < earliest {
			continue
		}
		if firstV < 0 || v < firstV {
			firstV, first = v, vt
		}
		if v > lastV {
			lastV, last = v, vt
		}
		if !vt.After(ts) && v > best {
			best = v
		}
	}
	switch {
	case firstV < 0:
		return 0, fmt.Errorf("deltalog: %w: no reconstructable version in %s", ErrVersionNotFound, t.display())
	case ts.Before(first):
		return 0, fmt.Errorf("deltalog: %w: timestamp %s is before the earliest available version %d (%s)", ErrVersionNotFound, ts.UTC().Format(time.RFC3339Nano), firstV, first.UTC().Format(time.RFC3339Nano))
	case ts.After(last) && lastV < l.maxVersion:
		// Only checkpoint-only versions remain after the last commit.
		return lastV, nil
	case ts.After(last):
		return 0, fmt.Errorf("deltalog: %w: timestamp %s is after the latest version %d (%s)", ErrVersionNotFound, ts.UTC().Format(time.RFC3339Nano), lastV, last.UTC().Format(time.RFC3339Nano))
	}
	return best, nil
}

func withSkipGate() Option { return func(c *openConfig) { c.skipGate = true } }

// FindCommit looks for the commit whose commitInfo.txnId is txnID among
// the versions from version on, and returns its version, or -1 when no
// commit carries it. After a CommitUnknownError it tells whether the
// commit landed.
func FindCommit(ctx context.Context, store objstore.Store, root string, version int64, txnID string) (int64, error) {
	t := newTable(store, root)
	l, err := t.list(ctx, version)
	if err != nil {
		return -1, err
	}
	for v := version; v <= l.maxVersion; v++ {
		f, ok := l.commits[v]
		if !ok {
			continue
		}
		ci, err := t.readCommitInfo(ctx, f)
		if err != nil {
			return -1, err
		}
		if ci != nil && ci.TxnID == txnID {
			return v, nil
		}
	}
	return -1, nil
}

// VersionsBetween maps a time range to versions as Spark's change data
// feed maps its starting and ending timestamps: from is the first version
// committed at or after start, to the last committed at or before end (a
// zero end: the latest version). Commit times are time travel's (in-commit
// timestamps where enabled, else file times made increasing). When no
// version is committed at or after start the error wraps
// ErrVersionNotFound and names the latest version; when none lies between
// the two, from > to.
func VersionsBetween(ctx context.Context, store objstore.Store, root string, start, end time.Time) (from, to int64, err error) {
	t := newTable(store, root)
	l, err := t.list(ctx, -1)
	if err != nil {
		return 0, 0, err
	}
	if l.maxVersion < 0 {
		return 0, 0, &notTableError{table: t.display()}
	}
	times, err := t.commitTimestamps(ctx, l)
	if err != nil {
		return 0, 0, err
	}
	from, to = -1, -1
	for v, vt := range times {
		if !vt.Before(start) && (from < 0 || v < from) {
			from = v
		}
		if (end.IsZero() || !vt.After(end)) && v > to {
			to = v
		}
	}
	if from < 0 {
		latest := l.maxVersion
		return 0, 0, fmt.Errorf("deltalog: %w: timestamp %s of %s is after the latest version %d (%s)", ErrVersionNotFound, start.UTC().Format(time.RFC3339Nano), t.display(), latest, times[latest].UTC().Format(time.RFC3339Nano))
	}
	if to < 0 {
		to = from - 1
	}
	return from, to, nil
}
