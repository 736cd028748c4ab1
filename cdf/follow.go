package cdf

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// ErrLogCleanedUp: the commit of a version the follower needs was removed
// by log cleanup (commits older than the table's delta.logRetentionDuration
// go at checkpoints). Terminal: follow again from a version the log still
// holds.
var ErrLogCleanedUp = errors.New("commit removed by log cleanup")

// Start is where Follow begins: the first version whose changes it
// delivers.
type Start struct {
	kind    startKind
	version int64
	ts      time.Time
}

type startKind int

const (
	startVersion startKind = iota
	startAfter
	startTimestamp
	startLatest
)

// StartingVersion starts at version v (Spark's startingVersion). v may be
// the next version to be committed, which the follower waits for. The
// schema of v (after its own commit) is the one later batches are
// checked against, so following again from the version of a non-additive
// schema change is how a follower goes on past it.
func StartingVersion(v int64) Start { return Start{kind: startVersion, version: v} }

// After starts at the version after offset: how a follower resumes after
// the last version it processed. Unlike StartingVersion(offset+1), the
// schema of offset is the one the next versions are checked against, so
// a non-additive change right after the offset stops the follower too.
func After(offset int64) Start { return Start{kind: startAfter, version: offset} }

// StartingTimestamp starts at the first version committed at or after t
// (Spark's startingTimestamp); when none is yet, at the next one.
func StartingTimestamp(t time.Time) Start { return Start{kind: startTimestamp, ts: t} }

// Latest starts after the latest version when Follow starts: only
// changes committed from then on.
func Latest() Start { return Start{kind: startLatest} }

// String describes s, for messages.
func (s Start) String() string {
	switch s.kind {
	case startTimestamp:
		return "timestamp " + fmtTime(s.ts)
	case startLatest:
		return "latest"
	case startAfter:
		return fmt.Sprintf("after version %d", s.version)
	}
	return fmt.Sprintf("version %d", s.version)
}

// The defaults of a follower.
const (
	DefaultPollInterval    = 500 * time.Millisecond
	DefaultMaxPollInterval = 10 * time.Second
	// DefaultMaxFilesPerBatch is Spark's maxFilesPerTrigger default.
	DefaultMaxFilesPerBatch = 1000
	// DefaultMaxVersionsPerBatch bounds the commits a batch holds in
	// memory.
	DefaultMaxVersionsPerBatch = 1000
)

// WithPollInterval sets how long a caught-up follower waits before it
// looks for new versions (default DefaultPollInterval). Each look that
// finds nothing doubles the wait, up to WithMaxPollInterval; a version
// found resets it.
func WithPollInterval(d time.Duration) Option { return func(c *config) { c.poll = d } }

// WithMaxPollInterval caps the wait WithPollInterval doubles (default
// DefaultMaxPollInterval).
func WithMaxPollInterval(d time.Duration) Option { return func(c *config) { c.maxPoll = d } }

// WithTrigger makes a caught-up follower look for new versions when the
// caller sends on trigger, instead of polling. Closing trigger makes it
// deliver what is committed by then and end (Spark's
// Trigger.AvailableNow).
func WithTrigger(trigger <-chan struct{}) Option { return func(c *config) { c.trigger = trigger } }

// WithMaxVersionsPerBatch caps the versions of one batch (default
// DefaultMaxVersionsPerBatch).
func WithMaxVersionsPerBatch(n int) Option { return func(c *config) { c.maxVersions = n } }

// WithMaxFilesPerBatch caps the files one batch reads, as Spark's
// maxFilesPerTrigger (default DefaultMaxFilesPerBatch). Limits apply to
// whole versions: a version over a limit alone is delivered alone.
func WithMaxFilesPerBatch(n int) Option { return func(c *config) { c.maxFiles = n } }

// WithMaxBytesPerBatch caps the bytes of the files one batch reads, as
// Spark's maxBytesPerTrigger (default no cap). Limits apply to whole
// versions.
func WithMaxBytesPerBatch(n int64) Option { return func(c *config) { c.maxBytes = n } }

// Batch is the changes of a run of consecutive versions, First through
// Last, read under one schema (Last's). Its offset is Last: a consumer
// that has processed it records Last (OffsetStore.Save, or the target
// table's app transaction) and resumes with After(Last).
type Batch struct {
	First, Last int64
	// Timestamp is Last's commit timestamp.
	Timestamp time.Time
	// SchemaChanged is set when First's commit changed the table's
	// schema (additively: columns added or widened); every other version
	// of the batch keeps it.
	SchemaChanged bool
	feed          *Feed
}

// Schema is the schema of the batch's record batches: the table's
// columns at Last (projected by WithColumns), then the metadata columns.
func (b *Batch) Schema() *arrow.Schema { return b.feed.Schema() }

// TableSchema is the table's schema at Last (all its columns, before
// WithColumns).
func (b *Batch) TableSchema() *actions.StructType { return b.feed.end.Schema() }

// Metadata is the table's metadata at Last.
func (b *Batch) Metadata() *actions.Metadata { return b.feed.end.Metadata() }

// Records streams the batch's change rows in version order, as
// Feed.Records does. A batch may hold no rows (OPTIMIZE, metadata or
// app-transaction-only commits); its offset still counts.
func (b *Batch) Records(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return b.feed.Records(ctx)
}

// Follow streams the change data feed of the table at root as versions
// are committed: a batch of the changes of one or more new versions each
// time it finds some, starting at start, in version order, no version
// skipped or repeated. When caught up it waits (WithPollInterval, or
// WithTrigger) and looks again, until ctx ends (then it yields ctx's
// error, wrapped) or the trigger is closed.
//
// Batches respect the limits WithMaxVersionsPerBatch, WithMaxFilesPerBatch
// and WithMaxBytesPerBatch on whole versions, and end before a version
// that changes the schema additively (which starts the next batch, with
// SchemaChanged), so every batch is read under one schema. The feed
// options (WithColumns, WithFilter, WithBatchSize, WithParallelism,
// WithAllocator) apply to every batch.
//
// Errors, each ending the sequence and naming the version: a schema
// change that is not additive (ErrSchemaChange: a column dropped,
// renamed or narrowed, other partition columns; follow again from that
// version to go on under the new schema); a version committed with the
// feed off (ErrNotRecorded, from the batch's Records); a commit removed
// by log cleanup (ErrLogCleanedUp, naming delta.logRetentionDuration); a
// file VACUUM removed (ErrFileMissing, from Records, naming
// delta.deletedFileRetentionDuration); a start beyond the next version
// (deltalog.ErrVersionNotFound).
func Follow(ctx context.Context, store objstore.Store, root string, start Start, opts ...Option) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		fl, err := newFollower(ctx, store, root, start, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		wait := fl.cfg.poll
		drained := false // the trigger was closed: deliver what is there, then end
		for {
			b, err := fl.nextBatch(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			if b != nil {
				wait = fl.cfg.poll
				if !yield(b, nil) {
					return
				}
				continue
			}
			if drained {
				return
			}
			if fl.cfg.trigger != nil {
				select {
				case _, ok := <-fl.cfg.trigger:
					drained = !ok
				case <-ctx.Done():
				}
			} else {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				wait = min(2*wait, fl.cfg.maxPoll)
			}
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("cdf: follow %s: %w", fl.display, err))
				return
			}
		}
	}
}

// follower is Follow's state between batches.
type follower struct {
	store   objstore.Store
	root    string // as given
	logDir  string // root/_delta_log/
	display string
	cfg     config
	next    int64             // the next version to deliver
	md      *actions.Metadata // the metadata in force before next
	// snap has the metadata and protocol in force before next (it may be
	// of an earlier version): batches without a metadata or protocol
	// action are read through it, with no snapshot to load.
	snap  *deltalog.Snapshot
	first int64 // the start version: its own metadata is not checked
}

func newFollower(ctx context.Context, store objstore.Store, root string, start Start, opts []Option) (*follower, error) {
	if store == nil {
		return nil, fmt.Errorf("cdf: %w", deltalog.ErrNoStore)
	}
	cfg := resolveConfig(opts)
	switch {
	case cfg.poll <= 0:
		return nil, fmt.Errorf("cdf: the poll interval %s is not positive", cfg.poll)
	case cfg.maxFiles <= 0 || cfg.maxVersions <= 0 || cfg.maxBytes < 0:
		return nil, fmt.Errorf("cdf: the limits per batch must be positive (versions %d, files %d, bytes %d)", cfg.maxVersions, cfg.maxFiles, cfg.maxBytes)
	}
	cfg.maxPoll = max(cfg.maxPoll, cfg.poll)
	r := strings.Trim(root, "/")
	if r != "" {
		r += "/"
	}
	fl := &follower{store: store, root: root, logDir: r + deltalog.LogDir, display: tableName(store, root), cfg: cfg}
	latest, err := deltalog.Open(ctx, store, root)
	if err != nil {
		return nil, fmt.Errorf("cdf: %w", err)
	}
	switch start.kind {
	case startLatest:
		fl.next = latest.Version() + 1
	case startTimestamp:
		from, _, err := deltalog.VersionsBetween(ctx, store, root, start.ts, time.Time{})
		switch {
		case errors.Is(err, deltalog.ErrVersionNotFound):
			fl.next = latest.Version() + 1 // nothing committed at or after it yet
		case err != nil:
			return nil, fmt.Errorf("cdf: %w", err)
		default:
			fl.next = from
		}
	default:
		fl.next = start.version
		if start.kind == startAfter {
			fl.next++
		}
		if fl.next < 0 {
			return nil, fmt.Errorf("cdf: %s: the starting version %d is negative", fl.display, fl.next)
		}
		if fl.next > latest.Version()+1 {
			return nil, fmt.Errorf("cdf: %s: %w: the starting version %d is after the next version to be committed, %d", fl.display, deltalog.ErrVersionNotFound, fl.next, latest.Version()+1)
		}
	}
	// The schema later versions are checked against: the start version's
	// own (its change accepted), or after an offset the offset's.
	at := fl.next
	fl.first = fl.next
	if start.kind == startAfter || start.kind == startLatest {
		fl.first, at = -1, fl.next-1
	}
	at = min(at, latest.Version())
	if fl.next <= latest.Version() {
		// The commit of the first version must still be there.
		if _, err := fl.probe(ctx); err != nil {
			return nil, err
		}
	}
	snap := latest
	if at != latest.Version() && at >= 0 {
		if snap, err = deltalog.Open(ctx, store, root, deltalog.AtVersion(at)); err != nil {
			return nil, fmt.Errorf("cdf: %w", err)
		}
	}
	if err := snap.Supports(deltalog.OpChangeDataFeed); err != nil {
		return nil, fmt.Errorf("cdf: %w", err)
	}
	fl.md, fl.snap = snap.Metadata(), snap
	return fl, nil
}

// probe lists the log from fl.next on and returns the last version of the
// run of commits that starts there (fl.next-1 when fl.next is not
// committed yet), at most maxVersions of them. A later commit without
// fl.next's means log cleanup removed it.
func (fl *follower) probe(ctx context.Context) (int64, error) {
	startAfter := ""
	if fl.next > 0 {
		startAfter = fl.logDir + deltalog.CommitName(fl.next-1)
	}
	last := fl.next - 1
	for obj, err := range fl.store.List(ctx, fl.logDir, startAfter) {
		if err != nil {
			return 0, fmt.Errorf("cdf: follow %s: list %s: %w", fl.display, fl.logDir, err)
		}
		p, ok := deltalog.ParseLogPath(strings.TrimPrefix(obj.Key, fl.logDir))
		if !ok || p.Type != deltalog.Commit || p.Version <= last {
			continue
		}
		if p.Version > last+1 {
			if last < fl.next {
				return 0, fl.cleanedUp(p.Version)
			}
			break
		}
		last = p.Version
		if last-fl.next+1 >= int64(fl.cfg.maxVersions) {
			break
		}
	}
	return last, nil
}

func (fl *follower) cleanedUp(oldest int64) error {
	return fmt.Errorf("cdf: follow %s: %w: the commit of version %d is gone and the oldest kept is %d (commits older than the table's %s, %s by default, are removed at checkpoints); follow again from version %d or later",
		fl.display, ErrLogCleanedUp, fl.next, oldest, actions.PropLogRetentionDuration, days(deltalog.DefaultLogRetention), oldest)
}

// nextBatch is the batch of the versions from fl.next on that are
// committed and fit the limits; nil when there is none yet.
func (fl *follower) nextBatch(ctx context.Context) (*Batch, error) {
	last, err := fl.probe(ctx)
	if err != nil || last < fl.next {
		return nil, err
	}
	var (
		commits       []*deltalog.VersionCommit
		files         int
		bytes         int64
		schemaChanged bool
		md            = fl.md
	)
	for vc, err := range deltalog.Commits(ctx, fl.store, fl.root, fl.next, last) {
		if err != nil {
			if errors.Is(err, deltalog.ErrVersionNotFound) && len(commits) == 0 {
				if _, perr := fl.probe(ctx); perr != nil {
					return nil, perr
				}
			}
			return nil, fmt.Errorf("cdf: follow %s: %w", fl.display, err)
		}
		m := metadataOf(vc)
		if m != nil && vc.Version != fl.first && (m.SchemaString != md.SchemaString || !partitionsEqual(m, md)) {
			if err := fl.checkAdditive(vc.Version, md, m); err != nil {
				return nil, err
			}
			if len(commits) > 0 {
				break // the change starts the next batch
			}
			schemaChanged = true
		}
		if m != nil {
			md = m
		}
		n, b := readCost(vc)
		if len(commits) > 0 && (files+n > fl.cfg.maxFiles || fl.cfg.maxBytes > 0 && bytes+b > fl.cfg.maxBytes) {
			break
		}
		commits = append(commits, vc)
		files += n
		bytes += b
	}
	if len(commits) == 0 {
		return nil, nil
	}
	from, to := commits[0].Version, commits[len(commits)-1].Version
	end := fl.snap
	if slices.ContainsFunc(commits, changesTable) {
		var err error
		if end, err = deltalog.Open(ctx, fl.store, fl.root, deltalog.AtVersion(to)); err != nil {
			return nil, fmt.Errorf("cdf: follow %s: %w", fl.display, err)
		}
		if err := end.Supports(deltalog.OpChangeDataFeed); err != nil {
			return nil, fmt.Errorf("cdf: %w", err)
		}
	}
	f := &Feed{store: fl.store, root: fl.root, from: from, to: to, display: fl.display, cfg: fl.cfg,
		startMD: fl.md, end: end, commits: commits}
	if err := f.plan(); err != nil {
		return nil, err
	}
	fl.next, fl.md, fl.snap = to+1, end.Metadata(), end
	return &Batch{First: from, Last: to, Timestamp: commits[len(commits)-1].Timestamp, SchemaChanged: schemaChanged, feed: f}, nil
}

// checkAdditive fails with ErrSchemaChange when version v's metadata
// next cannot be read as a continuation of prev: a column dropped,
// renamed or narrowed (under column mapping: a column whose physical
// name or id changed), other partition columns.
func (fl *follower) checkAdditive(v int64, prev, next *actions.Metadata) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("cdf: follow %s: %w: version %d %s; a follower goes on only across additive changes: to go on under the new schema, follow again from version %d",
			fl.display, ErrSchemaChange, v, fmt.Sprintf(format, args...), v)
	}
	props := next.Properties()
	if e := props.InvalidProperty(actions.PropColumnMappingMode); e != nil {
		return fail("has column mapping mode %q, which is not none, name or id", e.Value)
	}
	if !partitionsEqual(prev, next) {
		return fail("partitions the table by [%s] instead of [%s]", strings.Join(next.PartitionColumns, ", "), strings.Join(prev.PartitionColumns, ", "))
	}
	old, err := actions.NewTableConfig(fl.snap.Protocol(), prev)
	if err != nil {
		return fmt.Errorf("cdf: follow %s: version %d: %w", fl.display, v, err)
	}
	cur, err := actions.NewTableConfig(fl.snap.Protocol(), next)
	if err != nil {
		return fmt.Errorf("cdf: follow %s: version %d: %w", fl.display, v, err)
	}
	if path, why := readableAs(old, cur); why != "" {
		return fail("changes column %s, which %s", path, strings.Replace(why, "the end version's schema", "the new schema", 1))
	}
	return nil
}

// changesTable reports a commit that changes the metadata or the
// protocol.
func changesTable(vc *deltalog.VersionCommit) bool {
	return slices.ContainsFunc(vc.Actions, func(a actions.Action) bool { return a.Metadata != nil || a.Protocol != nil })
}

func metadataOf(vc *deltalog.VersionCommit) *actions.Metadata {
	var md *actions.Metadata
	for i := range vc.Actions {
		if m := vc.Actions[i].Metadata; m != nil {
			md = m
		}
	}
	return md
}

func partitionsEqual(a, b *actions.Metadata) bool {
	if len(a.PartitionColumns) != len(b.PartitionColumns) {
		return false
	}
	for i := range a.PartitionColumns {
		if !strings.EqualFold(a.PartitionColumns[i], b.PartitionColumns[i]) {
			return false
		}
	}
	return true
}

// readCost is the number and bytes of the files the feed reads for a
// version: its change data files when it has any, else its data-changing
// adds and removes.
func readCost(vc *deltalog.VersionCommit) (files int, bytes int64) {
	var cdcFiles, dataFiles int
	var cdcBytes, dataBytes int64
	for i := range vc.Actions {
		a := &vc.Actions[i]
		switch {
		case a.CDC != nil:
			cdcFiles++
			cdcBytes += a.CDC.Size
		case a.Add != nil && a.Add.DataChange:
			dataFiles++
			dataBytes += a.Add.Size
		case a.Remove != nil && a.Remove.DataChange:
			dataFiles++
			if a.Remove.Size != nil {
				dataBytes += *a.Remove.Size
			}
		}
	}
	if cdcFiles > 0 {
		return cdcFiles, cdcBytes
	}
	return dataFiles, dataBytes
}

// days writes d in days when it is whole days ("7 days").
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		n := int(d / (24 * time.Hour))
		if n == 1 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", n)
	}
	return d.String()
}
