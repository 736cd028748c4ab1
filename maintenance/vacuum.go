package maintenance

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// VacuumOption configures Vacuum.
type VacuumOption func(*vacuumConfig)

type vacuumConfig struct {
	concurrency int
	retention   *time.Duration
	dryRun      bool
	force       bool
	now         func() time.Time
	progress    func(deleted, total int)
	commit      []deltalog.CommitOption
}

// Retain keeps what versions of the last d can reach; the default is the
// table's delta.deletedFileRetentionDuration (7 days when unset). A d
// under the table's is refused unless Force.
func Retain(d time.Duration) VacuumOption {
	return func(c *vacuumConfig) { c.retention = &d }
}

// DryRun lists what Vacuum would delete, deleting and committing nothing.
func DryRun() VacuumOption { return func(c *vacuumConfig) { c.dryRun = true } }

// Force allows a retention under the table's: Spark's
// retentionDurationCheck.enabled=false. A writer still writing files it
// has not committed may lose them.
func Force() VacuumOption { return func(c *vacuumConfig) { c.force = true } }

// VacuumClock sets the clock the retention window is measured from
// (tests); the commits' timestamps read it too.
func VacuumClock(now func() time.Time) VacuumOption {
	return func(c *vacuumConfig) { c.now = now }
}

// VacuumConcurrency bounds the requests Vacuum has in flight at once, to
// list the table and to delete files (default 16).
func VacuumConcurrency(n int) VacuumOption {
	return func(c *vacuumConfig) { c.concurrency = n }
}

// VacuumProgress is called after each batch of deletes with the number
// deleted so far and the total.
func VacuumProgress(fn func(deleted, total int)) VacuumOption {
	return func(c *vacuumConfig) { c.progress = fn }
}

// VacuumCommitOptions sets how the VACUUM START and END commits are made
// (deltalog.CommitOption, the options every operation takes).
func VacuumCommitOptions(opts ...deltalog.CommitOption) VacuumOption {
	return func(c *vacuumConfig) { c.commit = append(c.commit, opts...) }
}

// ErrRetentionTooShort is returned (wrapped) by Vacuum when the retention
// asked for is under the table's and Force was not given.
var ErrRetentionTooShort = errors.New("maintenance: vacuum retention is under the table's delta.deletedFileRetentionDuration")

// VacuumFile is a file Vacuum deleted, or would delete.
type VacuumFile struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// VacuumResult is the outcome of Vacuum.
type VacuumResult struct {
	DryRun bool
	// Cutoff is the start of the retention window: no file modified at
	// or after it is deleted, and tombstones removed at or after it keep
	// their files.
	Cutoff time.Time
	// Files are the files deleted (or, in a dry run, to delete), in key
	// order.
	Files []VacuumFile
	Bytes int64
	// StartVersion and EndVersion are the VACUUM START and VACUUM END
	// commits; -1 in a dry run.
	StartVersion, EndVersion int64
	// StartCommit and EndCommit are those commits' results (nil in a dry
	// run); a program about to exit waits for their checkpoints.
	StartCommit, EndCommit *deltalog.CommitResult
}

// defaultVacuumConcurrency is how many list and delete requests Vacuum
// has in flight by default.
const defaultVacuumConcurrency = 16

// filesPerRange is about how many known files each range of the table's
// listing holds (see listTable).
const filesPerRange = 2000

// Vacuum deletes the files under the table's root that no version inside
// the retention window can reach: Spark's VACUUM. It works on the latest
// version of snap's table, whichever version snap is. A file is kept when a
// live file or its deletion vector is it, when a remove newer than the
// window start (deletionTimestamp) names it or its deletion vector, or
// when it was modified inside the window (a writer may be about to commit
// it). Everything else is deleted: data files of old removes, deletion
// vector files, change data files (_change_data/) and files no version
// ever referenced (a crashed writer's). Nothing under _delta_log/ is ever
// touched, nor, as in Spark, a hidden file or folder (a name starting
// with '.' or '_', except _change_data and partition folders), nor the
// Iceberg metadata (metadata/) of a UniForm table.
//
// Unless DryRun, a VACUUM START commit records what is about to be
// deleted and a VACUUM END commit the outcome (status COMPLETED or
// FAILED), as Spark writes them.
//
// On object stores the table is listed in key ranges concurrently (cut
// at the keys of the files the log names), and the files are deleted in
// batches (S3's DeleteObjects, Azure's blob batch, GCS's JSON API batch:
// objstore.DeleteKeys), keys a batch fails retried, with at most
// VacuumConcurrency requests in flight.
func Vacuum(ctx context.Context, snap *deltalog.Snapshot, opts ...VacuumOption) (*VacuumResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("maintenance: %w", deltalog.ErrNoSnapshot)
	}
	cfg := vacuumConfig{now: time.Now, concurrency: defaultVacuumConcurrency}
	for _, o := range opts {
		o(&cfg)
	}
	// What is live is decided on the latest version, as Spark does: a
	// snapshot a newer commit superseded would have VACUUM delete that
	// commit's files. A newer commit is found with one Head.
	_, err := snap.Store().Head(ctx, snap.Root()+deltalog.LogDir+deltalog.CommitName(snap.Version()+1))
	switch {
	case err == nil:
		if snap, err = deltalog.Open(ctx, snap.Store(), snap.Root()); err != nil {
			return nil, fmt.Errorf("maintenance: vacuum: %w", err)
		}
	case !errors.Is(err, objstore.ErrNotFound):
		return nil, fmt.Errorf("maintenance: vacuum: %w", err)
	}
	if err := snap.Supports(deltalog.OpVacuum); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	tableRetention := snap.Properties().DeletedFileRetention
	retention := tableRetention
	if cfg.retention != nil {
		retention = *cfg.retention
		if retention < 0 {
			return nil, fmt.Errorf("maintenance: vacuum: the retention %s is negative", retention)
		}
		if retention < tableRetention && !cfg.force {
			return nil, fmt.Errorf("%w (%s < %s): a writer still writing may lose files it has not committed yet; give maintenance.Force() if no operation is running on the table", ErrRetentionTooShort, retention, tableRetention)
		}
	}
	cutoff := cfg.now().Add(-retention)

	valid, splits, err := validFiles(ctx, snap, cutoff)
	if err != nil {
		return nil, err
	}
	res := &VacuumResult{DryRun: cfg.dryRun, Cutoff: cutoff, StartVersion: -1, EndVersion: -1}
	root := snap.Root()
	for o, err := range objstore.ListRanges(ctx, snap.Store(), root, splits, max(cfg.concurrency, 1)) {
		if err != nil {
			return nil, fmt.Errorf("maintenance: vacuum: list %s: %w", objstore.Location(snap.Store()), err)
		}
		rel := strings.TrimPrefix(o.Key, root)
		if strings.HasPrefix(rel, deltalog.LogDir) || hidden(rel, snap.PartitionColumns()) || icebergMetadata(rel, snap) {
			continue
		}
		if valid[o.Key] || !o.ModTime.Before(cutoff) {
			continue
		}
		res.Files = append(res.Files, VacuumFile{Key: o.Key, Size: o.Size, ModTime: o.ModTime})
		res.Bytes += o.Size
	}
	if cfg.dryRun {
		return res, nil
	}

	txnOpts := append([]deltalog.CommitOption{deltalog.WithClock(cfg.now)}, cfg.commit...)
	start := snap.NewTransaction(txnOpts...)
	if _, err := start.Start(); err != nil {
		return nil, fmt.Errorf("maintenance: vacuum: %w", err)
	}
	params := map[string]any{
		"retentionCheckEnabled":  strconv.FormatBool(!cfg.force),
		"defaultRetentionMillis": strconv.FormatInt(tableRetention.Milliseconds(), 10),
	}
	if cfg.retention != nil {
		params["specifiedRetentionMillis"] = strconv.FormatInt(retention.Milliseconds(), 10)
	}
	if err := start.Stage(&deltalog.Changes{Operation: "VACUUM START", Parameters: params, Metrics: map[string]any{
		"numFilesToDelete":   strconv.Itoa(len(res.Files)),
		"sizeOfDataToDelete": strconv.FormatInt(res.Bytes, 10),
	}}); err != nil {
		return nil, fmt.Errorf("maintenance: vacuum: %w", err)
	}
	sr, err := start.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("maintenance: vacuum: commit VACUUM START: %w", err)
	}
	res.StartVersion, res.StartCommit = sr.Version, sr

	keys := make([]string, len(res.Files))
	for i, f := range res.Files {
		keys[i] = f.Key
	}
	deleted, derr := objstore.DeleteKeys(ctx, snap.Store(), keys, objstore.DeleteOptions{
		Concurrency: max(cfg.concurrency, 1),
		Progress: func(n int) {
			if cfg.progress != nil {
				cfg.progress(n, len(keys))
			}
		},
	})
	if derr != nil {
		derr = fmt.Errorf("maintenance: vacuum: delete: %w", derr)
	}
	status := "COMPLETED"
	if derr != nil {
		status = "FAILED"
	}
	// The END commit goes in even when a delete failed, as Spark's does;
	// a cancelled context cannot commit it.
	end := snap.NewTransaction(txnOpts...)
	// Object stores have no folders; none are deleted.
	err = end.Stage(&deltalog.Changes{Operation: "VACUUM END", Parameters: map[string]any{"status": status}, Metrics: map[string]any{
		"numDeletedFiles":        strconv.Itoa(deleted),
		"numVacuumedDirectories": "0",
	}})
	var er *deltalog.CommitResult
	if err == nil {
		er, err = end.Commit(context.WithoutCancel(ctx))
	}
	if derr != nil {
		return res, errors.Join(derr, err)
	}
	if err != nil {
		return res, fmt.Errorf("maintenance: vacuum: commit VACUUM END: %w", err)
	}
	res.EndVersion, res.EndCommit = er.Version, er
	return res, nil
}

// validFiles are the store keys a version inside the window may read:
// the live files and the files of removes at or after cutoff, with their
// deletion vectors' files. splits are keys that cut the table's listing
// into ranges of about filesPerRange known files each.
func validFiles(ctx context.Context, snap *deltalog.Snapshot, cutoff time.Time) (map[string]bool, []string, error) {
	valid := map[string]bool{}
	var known []string
	add := func(path string, dv func() *actions.DeletionVector) error {
		if k, ok := tableKey(snap, path); ok {
			valid[k] = true
			known = append(known, k)
		}
		d := dv()
		if d == nil {
			return nil
		}
		k, err := dvKey(snap, d)
		if err != nil {
			return fmt.Errorf("maintenance: vacuum: %s: %w", path, err)
		}
		if k != "" {
			valid[k] = true
		}
		return nil
	}
	// The live files are read from the snapshot's columns: no add action
	// is built for them.
	for _, f := range snap.ActiveFiles().All() {
		if err := add(f.Path(), f.DeletionVector); err != nil {
			return nil, nil, err
		}
	}
	ms := cutoff.UnixMilli()
	for r := range snap.Tombstones() {
		// A remove without a timestamp counts as removed at 0 (Spark's
		// rule): its file is past any window.
		if r.DeletionTimestamp == nil || *r.DeletionTimestamp < ms {
			continue
		}
		if err := add(r.Path, func() *actions.DeletionVector { return r.DeletionVector }); err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(known)
	var splits []string
	for i := filesPerRange; i < len(known); i += filesPerRange {
		splits = append(splits, known[i])
	}
	// Partition folders split too: files nobody referenced (a crashed
	// writer's) sit beside the live ones.
	for _, k := range known {
		if dir := k[:strings.LastIndexByte(k, '/')+1]; len(dir) > len(snap.Root()) {
			splits = append(splits, dir)
		}
	}
	slices.Sort(splits)
	splits = slices.Compact(splits)
	if len(splits) > maxRanges {
		// Enough ranges to keep every request slot busy, not one per
		// partition of a table of many.
		sampled := make([]string, 0, maxRanges)
		for i := range maxRanges {
			sampled = append(sampled, splits[i*len(splits)/maxRanges])
		}
		splits = sampled
	}
	return valid, splits, ctx.Err()
}

// maxRanges bounds the ranges Vacuum lists a table in.
const maxRanges = 512

// tableKey is the store key of a file action's path when the file is
// inside the table: a relative path, or an absolute one under the table's
// location. ok is false for a file elsewhere, which Vacuum never deletes.
func tableKey(snap *deltalog.Snapshot, p string) (string, bool) {
	k := snap.TablePath(p)
	if !strings.Contains(p, "://") && !strings.HasPrefix(actions.CanonicalPath(p), "/") {
		return k, true
	}
	loc := strings.TrimSuffix(objstore.Location(snap.Store()), "/")
	if snap.Root() != "" {
		loc += "/" + strings.TrimSuffix(snap.Root(), "/")
	}
	abs := k
	if u, err := url.Parse(k); err == nil && u.Scheme == "file" {
		abs = u.Path
	}
	if rest, ok := strings.CutPrefix(abs, loc+"/"); ok {
		return snap.Root() + rest, true
	}
	return "", false
}

// icebergMetadataDir is where UniForm writes a table's Iceberg metadata
// (uniform.MetadataDir).
const icebergMetadataDir = "metadata/"

// icebergMetadata reports whether a key relative to the table is UniForm's
// Iceberg metadata, which no Delta version references and VACUUM must
// keep, as Spark treats the folder as hidden on a UniForm table.
func icebergMetadata(rel string, snap *deltalog.Snapshot) bool {
	return strings.HasPrefix(rel, icebergMetadataDir) && snap.Config().UniversalFormat("iceberg")
}

// hidden reports whether a key relative to the table has a hidden part,
// by Spark's rule (DeltaTableUtils.isHiddenDirectory): a name starting
// with '.' or '_', except _change_data, _delta_index and partition
// folders (partitionColumn=value).
func hidden(rel string, partitionColumns []string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" || part[0] != '.' && part[0] != '_' {
			continue
		}
		if strings.HasPrefix(part, "_change_data") || strings.HasPrefix(part, "_delta_index") {
			continue
		}
		isPartition := false
		for _, c := range partitionColumns {
			if strings.HasPrefix(part, c+"=") {
				isPartition = true
				break
			}
		}
		if !isPartition {
			return true
		}
	}
	return false
}
