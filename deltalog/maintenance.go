package deltalog

import (
	"context"
	"fmt"
	"iter"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
)

// Defaults of the table properties that govern checkpoints and cleanup
// (PROTOCOL.md and Spark's DeltaConfigs), as actions defines them.
const (
	DefaultCheckpointInterval   = actions.DefaultCheckpointInterval
	DefaultLogRetention         = actions.DefaultLogRetention
	DefaultDeletedFileRetention = actions.DefaultDeletedFileRetention
)

// CheckpointInterval is the table's delta.checkpointInterval (default 10).
func (s *Snapshot) CheckpointInterval() int64 { return s.Properties().CheckpointInterval }

// checkpointActions yields the reconciled state of s as checkpoint rows:
// protocol, metadata, app transactions (unexpired), domain metadata, the
// remove tombstones still inside delta.deletedFileRetentionDuration, and
// with adds the active files (else they are checkpointFiles).
func (s *Snapshot) checkpointActions(now time.Time, adds bool) iter.Seq2[actions.Action, error] {
	return func(yield func(actions.Action, error) bool) {
		if !yield(actions.Action{Protocol: s.Protocol()}, nil) || !yield(actions.Action{Metadata: s.Metadata()}, nil) {
			return
		}
		txnCutoff := int64(-1)
		if d := s.Properties().SetTransactionRetention; d > 0 {
			txnCutoff = now.Add(-d).UnixMilli()
		}
		appIDs := make([]string, 0, len(s.txns))
		for id := range s.txns {
			appIDs = append(appIDs, id)
		}
		sort.Strings(appIDs)
		for _, id := range appIDs {
			t := s.txns[id]
			if txnCutoff >= 0 && t.LastUpdated != nil && *t.LastUpdated < txnCutoff {
				continue
			}
			if !yield(actions.Action{Txn: &t}, nil) {
				return
			}
		}
		domains := make([]string, 0, len(s.domains))
		for d := range s.domains {
			domains = append(domains, d)
		}
		sort.Strings(domains)
		for _, d := range domains {
			dm := s.domains[d]
			if !yield(actions.Action{DomainMetadata: &dm}, nil) {
				return
			}
		}
		if adds {
			for a := range s.Files() {
				if !yield(actions.Action{Add: a}, nil) {
					return
				}
			}
		}
		cutoff := now.Add(-s.Properties().DeletedFileRetention).UnixMilli()
		for _, r := range s.tombstones {
			if r.DeletionTimestamp == nil || *r.DeletionTimestamp <= cutoff {
				continue
			}
			if !yield(actions.Action{Remove: r}, nil) {
				return
			}
		}
	}
}

// checkpointFiles yields the active files as rows of their columns, in
// path order, for checkpoint.WriteFiles: a checkpoint is written from
// the columns the snapshot holds, without an *actions.Add per file.
func (s *Snapshot) checkpointFiles() iter.Seq[checkpoint.FileRow] {
	return func(yield func(checkpoint.FileRow) bool) {
		for _, f := range s.ActiveFiles().All() {
			if !yield(checkpoint.FileRow{Columns: f.FileColumns, Row: f.Row}) {
				return
			}
		}
	}
}

// CheckpointOption configures Snapshot.Checkpoint.
type CheckpointOption func(*checkpointConfig)

type checkpointConfig struct {
	progress func(done, total int64)
}

// CheckpointProgress reports the checkpoint's progress to fn: the active
// files written so far of their number (checkpoint.WithProgress).
func CheckpointProgress(fn func(done, total int64)) CheckpointOption {
	return func(c *checkpointConfig) { c.progress = fn }
}

// Checkpoint writes a Parquet checkpoint of the snapshot's version and
// then _last_checkpoint: a V2 checkpoint (UUID-named, with a
// checkpointMetadata action) where the table's configuration asks for it
// (delta.checkpointPolicy=v2 and the v2Checkpoint feature), else a
// classic one. The checkpoint appears whole or not at all; a failure
// leaves the table as it was (readers use the previous checkpoint).
//
// CheckpointProgress reports the writing of the files' rows.
func (s *Snapshot) Checkpoint(ctx context.Context, now time.Time, opts ...CheckpointOption) (checkpoint.LastCheckpoint, error) {
	var cfg checkpointConfig
	for _, o := range opts {
		o(&cfg)
	}
	if s.checkpointProtected() {
		// checkpointProtection: a checkpoint is written only for a
		// protocol lakelog writes (its requirement for versions before
		// the protected boundary, checked here for every version).
		if err := s.supports(opCommit); err != nil {
			return checkpoint.LastCheckpoint{}, fmt.Errorf("deltalog: checkpoint version %d of %s: the table protects its checkpoints (checkpointProtection) and %w", s.version, s.display(), err)
		}
	}
	if err := s.LoadStats(ctx); err != nil {
		return checkpoint.LastCheckpoint{}, err
	}
	wopts := checkpoint.TableOptions(s.config)
	if s.config.V2Checkpoints() {
		wopts = append(wopts, checkpoint.WithV2(0))
	}
	if cfg.progress != nil {
		wopts = append(wopts, checkpoint.WithProgress(int64(s.NumFiles()), cfg.progress))
	}
	lc, err := checkpoint.WriteFiles(ctx, s.store, s.logDir(), s.version, s.checkpointActions(now, false), s.checkpointFiles(), wopts...)
	if err != nil {
		return lc, fmt.Errorf("deltalog: checkpoint version %d of %s: %w", s.version, s.display(), err)
	}
	// A newer checkpoint may have been written meanwhile; never move the
	// hint backwards.
	if prev, err := checkpoint.ReadLast(ctx, s.store, s.logDir()); err == nil && prev != nil && prev.Version > lc.Version {
		return lc, nil
	}
	if err := checkpoint.WriteLast(ctx, s.store, s.logDir(), lc); err != nil {
		return lc, fmt.Errorf("deltalog: write _last_checkpoint of %s: %w", s.display(), err)
	}
	return lc, nil
}

// CleanupResult says what CleanupLog removed.
type CleanupResult struct {
	// KeptFrom is the oldest version whose files remain (the checkpoint
	// that reconstructs the oldest retained version), or -1 when nothing
	// could be removed.
	KeptFrom int64
	// Deleted are the removed keys.
	Deleted []string
}

// CleanupLog removes log files that only serve versions older than
// delta.logRetentionDuration (default 30 days) before now: commits,
// checkpoints, checksums and compacted files of versions before the newest
// checkpoint that still reconstructs the oldest retained version. Every
// version inside the retention window stays readable by time travel. It
// does nothing when delta.enableExpiredLogCleanup is false.
func (s *Snapshot) CleanupLog(ctx context.Context, now time.Time) (CleanupResult, error) {
	res := CleanupResult{KeptFrom: -1}
	if !s.Properties().EnableExpiredLogCleanup {
		return res, nil
	}
	if e := s.Properties().InvalidProperty(actions.PropLogRetentionDuration); e != nil {
		return res, fmt.Errorf("deltalog: cleanup: %w", e)
	}
	cutoff := now.Add(-s.Properties().LogRetention)
	l, err := s.list(ctx, -1)
	if err != nil {
		return res, err
	}
	times, err := s.commitTimestamps(ctx, l)
	if err != nil {
		return res, err
	}
	// The oldest retained version: the first whose commit is not expired.
	// The latest version is always retained.
	oldest := l.maxVersion
	for v, ts := range times {
		if !ts.Before(cutoff) && v < oldest {
			oldest = v
		}
	}
	keep := int64(-1)
	for v := range l.checkpoints {
		if v <= oldest && v > keep {
			keep = v
		}
	}
	if keep <= 0 {
		return res, nil
	}
	protected := s.checkpointProtected()
	if b := s.protectedBefore(); protected && keep < b {
		// checkpointProtection: the checkpoints before the boundary stay
		// until one cleanup removes all the history before it.
		return res, nil
	}
	res.KeptFrom = keep
	var doomed []string
	for v, f := range l.commits {
		if v < keep {
			doomed = append(doomed, f.Key)
		}
	}
	for v, cs := range l.checkpoints {
		if v < keep {
			for _, c := range cs {
				for _, f := range c.Files {
					doomed = append(doomed, f.Key)
				}
			}
		}
	}
	for _, f := range l.compacted {
		if f.EndVersion < keep {
			doomed = append(doomed, f.Key)
		}
	}
	for v, f := range l.others {
		if v < keep {
			doomed = append(doomed, f...)
		}
	}
	// Oldest first: a crash midway leaves a log that still starts at a
	// complete prefix-free state (files after the deleted ones).
	sort.Strings(doomed)
	if protected {
		// checkpointProtection: commits go before checkpoints.
		sort.SliceStable(doomed, func(i, j int) bool {
			return !isCheckpointKey(doomed[i]) && isCheckpointKey(doomed[j])
		})
	}
	for _, k := range doomed {
		if err := s.store.Delete(ctx, k); err != nil {
			return res, fmt.Errorf("deltalog: cleanup %s: %w", k, err)
		}
		res.Deleted = append(res.Deleted, k)
	}
	return res, nil
}

// CheckpointAndCleanup checkpoints the snapshot, then cleans up the log.
// It is what runs after every delta.checkpointInterval-th commit.
func (s *Snapshot) CheckpointAndCleanup(ctx context.Context, now time.Time) error {
	if _, err := s.Checkpoint(ctx, now); err != nil {
		return err
	}
	_, err := s.CleanupLog(ctx, now)
	return err
}

// checkpointProtected reports whether the protocol has the
// checkpointProtection feature.
func (s *Snapshot) checkpointProtected() bool {
	return s.config.Supports(actions.FeatureCheckpointProtection)
}

// protectedBefore is delta.requireCheckpointProtectionBeforeVersion, 0
// when unset or not a version.
func (s *Snapshot) protectedBefore() int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s.Metadata().Configuration[actions.PropRequireCheckpointProtectionBeforeVersion]), 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// isCheckpointKey reports whether a log key names a checkpoint file.
func isCheckpointKey(k string) bool {
	p, ok := ParseLogPath(path.Base(k))
	return ok && (p.Type == Checkpoint || p.Type == MultiPartCheckpoint || p.Type == UUIDCheckpoint)
}
