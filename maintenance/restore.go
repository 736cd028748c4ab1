package maintenance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/internal/parallel"
	"github.com/lakelog/lakelog/objstore"
)

// RestoreOption configures Restore.
type RestoreOption func(*restoreConfig)

type restoreConfig struct {
	version   int64
	timestamp *time.Time
	commit    []deltalog.CommitOption
}

// ToVersion restores the table to version v.
func ToVersion(v int64) RestoreOption {
	return func(c *restoreConfig) { c.version = v }
}

// ToTimestamp restores the table to the newest version committed at or
// before t, by time travel's rules (deltalog.AtTimestamp).
func ToTimestamp(t time.Time) RestoreOption {
	return func(c *restoreConfig) { c.timestamp = &t }
}

// RestoreCommitOptions sets how the restore commits
// (deltalog.CommitOption, the options every operation takes).
func RestoreCommitOptions(opts ...deltalog.CommitOption) RestoreOption {
	return func(c *restoreConfig) { c.commit = append(c.commit, opts...) }
}

// RestoreMetrics are Spark's operationMetrics of RESTORE.
type RestoreMetrics struct {
	TableSizeAfterRestore  int64 // bytes of the files live after the restore
	NumOfFilesAfterRestore int64
	NumRemovedFiles        int64 // live files the restore removed
	NumRestoredFiles       int64 // files of the target version it added back
	RemovedFilesSize       int64
	RestoredFilesSize      int64
}

// OperationMetrics are the metrics as commitInfo.operationMetrics holds
// them (Spark's names, string values).
func (m RestoreMetrics) OperationMetrics() map[string]any {
	return map[string]any{
		"tableSizeAfterRestore":  strconv.FormatInt(m.TableSizeAfterRestore, 10),
		"numOfFilesAfterRestore": strconv.FormatInt(m.NumOfFilesAfterRestore, 10),
		"numRemovedFiles":        strconv.FormatInt(m.NumRemovedFiles, 10),
		"numRestoredFiles":       strconv.FormatInt(m.NumRestoredFiles, 10),
		"removedFilesSize":       strconv.FormatInt(m.RemovedFilesSize, 10),
		"restoredFilesSize":      strconv.FormatInt(m.RestoredFilesSize, 10),
	}
}

// RestoreResult is the outcome of Restore.
type RestoreResult struct {
	// Commit is the RESTORE commit.
	Commit *deltalog.CommitResult
	// RestoredVersion is the version whose files the table now holds.
	RestoredVersion int64
	Metrics         RestoreMetrics
}

// MissingFilesError is returned by Restore, before anything is
// committed, when files the target version needs no longer exist
// (VACUUM deleted them, or someone else did).
type MissingFilesError struct {
	Version int64
	// Keys are the missing store keys (the first 100).
	Keys []string
	// Total is how many files are missing.
	Total int
}

func (e *MissingFilesError) Error() string {
	more := ""
	if e.Total > len(e.Keys) {
		more = fmt.Sprintf(" (and %d more)", e.Total-len(e.Keys))
	}
	return fmt.Sprintf("maintenance: restore to version %d: %d files it needs no longer exist (vacuumed or deleted), nothing was committed: %s%s",
		e.Version, e.Total, strings.Join(e.Keys, ", "), more)
}

// ErrNothingToRestore is returned when the target is the snapshot's own
// version (Spark refuses it too): nothing is committed.
var ErrNothingToRestore = errors.New("maintenance: restore: the table is already at that version")

// fileKey identifies a live file as log replay does: its canonical path
// and its deletion vector's unique id. A file whose deletion vector
// changed is another file.
type fileKey struct{ path, dv string }

func fileKeyOf(f deltalog.File) fileKey {
	return fileKey{f.CanonicalPath(), f.DeletionVectorID()}
}

// Restore puts the table of snap back to an earlier version (ToVersion or
// ToTimestamp) in one commit that copies no data: Spark's RESTORE TABLE.
// Files of the target version that are not live now are added back (with
// dataChange true and the deletion vector they had then), and live files
// the target does not hold are removed. Files are matched by path and
// deletion-vector id, as log replay matches them, so a file whose
// deletion vector changed since comes back with its old one. The target's
// metadata is restored; the protocol is never downgraded (the commit keeps
// the union of both). Before committing it checks that every file to add
// back (and its deletion vector file) still exists, and fails with a
// *MissingFilesError when one does not. The transaction reads the whole
// table: any concurrent change to it aborts the restore.
func Restore(ctx context.Context, snap *deltalog.Snapshot, opts ...RestoreOption) (*RestoreResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("maintenance: %w", deltalog.ErrNoSnapshot)
	}
	cfg := restoreConfig{version: -1}
	for _, o := range opts {
		o(&cfg)
	}
	if (cfg.version >= 0) == (cfg.timestamp != nil) {
		return nil, fmt.Errorf("maintenance: restore needs a version or a timestamp, not both")
	}
	if err := snap.Supports(deltalog.OpRestore); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	at := deltalog.AtVersion(cfg.version)
	if cfg.timestamp != nil {
		at = deltalog.AtTimestamp(*cfg.timestamp)
	}
	// The target's stats are read with it, in one pass: its re-added
	// files carry them, as Spark's do.
	target, err := deltalog.Open(ctx, snap.Store(), snap.Root(), at, deltalog.WithStats())
	if err != nil {
		return nil, fmt.Errorf("maintenance: restore: %w", err)
	}
	if target.Version() == snap.Version() {
		return nil, fmt.Errorf("%w (version %d)", ErrNothingToRestore, snap.Version())
	}
	if target.Version() > snap.Version() {
		return nil, fmt.Errorf("maintenance: restore: version %d is newer than the snapshot's version %d", target.Version(), snap.Version())
	}
	if target.Metadata().ID != snap.Metadata().ID {
		return nil, fmt.Errorf("maintenance: restore: version %d belongs to another table (id %s, now %s): the table was replaced since", target.Version(), target.Metadata().ID, snap.Metadata().ID)
	}
	// The removes carry stats, as Spark's do (free when snap was opened
	// WithStats).
	if err := snap.LoadStats(ctx); err != nil {
		return nil, err
	}
	// Both versions' files are compared by key on their columns; only
	// the files that move become add actions.
	live := map[fileKey]bool{}
	for _, f := range snap.ActiveFiles().All() {
		live[fileKeyOf(f)] = true
	}
	wanted := map[fileKey]bool{}
	var toAdd []*actions.Add
	for _, f := range target.ActiveFiles().All() {
		k := fileKeyOf(f)
		wanted[k] = true
		if !live[k] {
			toAdd = append(toAdd, f.Add())
		}
	}
	var toRemove []*actions.Add
	for _, f := range snap.ActiveFiles().All() {
		if !wanted[fileKeyOf(f)] {
			toRemove = append(toRemove, f.Add())
		}
	}
	if err := checkExist(ctx, target, toAdd); err != nil {
		return nil, err
	}

	tx := snap.NewTransaction(cfg.commit...)
	if res, err := tx.Start(); err != nil {
		return nil, fmt.Errorf("maintenance: restore: %w", err)
	} else if res != nil {
		return &RestoreResult{Commit: res, RestoredVersion: target.Version()}, nil
	}
	tx.ReadWholeTable()
	m := RestoreMetrics{
		TableSizeAfterRestore:  target.SizeInBytes(),
		NumOfFilesAfterRestore: int64(target.NumFiles()),
		NumRemovedFiles:        int64(len(toRemove)),
		NumRestoredFiles:       int64(len(toAdd)),
	}
	changes := &deltalog.Changes{Operation: "RESTORE", Removes: toRemove}
	for _, f := range toAdd {
		a := *f
		a.DataChange = true
		changes.Adds = append(changes.Adds, &a)
		m.RestoredFilesSize += f.Size
	}
	for _, f := range toRemove {
		m.RemovedFilesSize += f.Size
	}
	md, err := restoredMetadata(target, snap)
	if err != nil {
		return nil, err
	}
	if !sameJSON(md, snap.Metadata()) {
		changes.Metadata = md
	}
	// The protocol is both versions' (never downgraded), set before the
	// metadata so that the restored schema's features are there.
	if p := actions.MergeProtocols(target.Protocol(), snap.Protocol()); p != snap.Protocol() {
		tx.SetProtocol(p)
	}
	changes.Parameters = map[string]any{"version": nil, "timestamp": nil}
	if cfg.timestamp != nil {
		changes.Parameters["timestamp"] = cfg.timestamp.UTC().Format("2006-01-02 15:04:05.000")
	} else {
		changes.Parameters["version"] = strconv.FormatInt(target.Version(), 10)
	}
	changes.Metrics = m.OperationMetrics()
	if err := tx.Stage(changes); err != nil {
		return nil, fmt.Errorf("maintenance: restore to version %d: %w", target.Version(), err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("maintenance: restore to version %d: %w", target.Version(), err)
	}
	return &RestoreResult{Commit: res, RestoredVersion: target.Version(), Metrics: m}, nil
}

// checkExist fails with a *MissingFilesError when a file of adds, or its
// deletion vector's file, is missing from the store. Absolute paths on
// another store (a URI with a scheme) are not checked: the store cannot
// see them.
func checkExist(ctx context.Context, snap *deltalog.Snapshot, adds []*actions.Add) error {
	var keys []string
	for _, a := range adds {
		if !strings.Contains(a.Path, "://") {
			keys = append(keys, snap.TablePath(a.Path))
		}
		k, err := dvKey(snap, a.DeletionVector)
		if err != nil {
			return fmt.Errorf("maintenance: restore: %s: %w", a.Path, err)
		}
		if k != "" && !strings.Contains(k, "://") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	missing := make([]bool, len(keys))
	err := parallel.ForEach(ctx, len(keys), headParallelism, func(ctx context.Context, i int) error {
		_, err := snap.Store().Head(ctx, keys[i])
		if errors.Is(err, objstore.ErrNotFound) {
			missing[i] = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("maintenance: restore: %s: %w", keys[i], err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	e := &MissingFilesError{Version: snap.Version()}
	for i, m := range missing {
		if !m {
			continue
		}
		e.Total++
		if len(e.Keys) < 100 {
			e.Keys = append(e.Keys, keys[i])
		}
	}
	if e.Total > 0 {
		return e
	}
	return nil
}

// restoredMetadata is the target version's metadata as a restore commits
// it, with what must not go backwards kept from the current version, as
// Spark's RestoreTableCommand keeps it: the identity high-water marks
// where the current ones are farther (values generated after the
// restored version are never generated again), and a column-mapped
// table's delta.columnMapping.maxColumnId (a column added after the
// restored version keeps its id to itself: a later column gets a new
// one).
func restoredMetadata(target, current *deltalog.Snapshot) (*actions.Metadata, error) {
	md := *target.Metadata()
	restored := target.Schema()
	if merged := actions.MergeIdentityHighWaterMarks(restored, current.Schema()); merged != restored {
		s, err := actions.SchemaString(merged)
		if err != nil {
			return nil, fmt.Errorf("maintenance: restore: %w", err)
		}
		md.SchemaString = s
	}
	if cur := current.Properties().ColumnMappingMaxColumnID; target.Config().ColumnMapped() && cur > target.Properties().ColumnMappingMaxColumnID {
		md.Configuration = maps.Clone(md.Configuration)
		md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(cur, 10)
	}
	return &md, nil
}
