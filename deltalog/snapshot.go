package deltalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// table is a store and the table's root inside it.
type table struct {
	store objstore.Store
	root  string // "" or ends with '/'
}

func newTable(store objstore.Store, root string) table {
	root = strings.Trim(root, "/")
	if root != "" {
		root += "/"
	}
	return table{store: store, root: root}
}

func (t *table) logDir() string { return t.root + LogDir }

// Snapshot is the state of a table at one version: protocol, metadata,
// active files, app transaction versions and domain metadata. It is
// immutable and safe for concurrent use.
type Snapshot struct {
	table
	version    int64
	timestamp  time.Time            // commit timestamp of version
	config     *actions.TableConfig // protocol, metadata, properties and schema, joined once
	files      *fileSet             // active files, as columns
	tombstones []*actions.Remove    // removes not re-added, sorted by path
	txns       map[string]actions.Txn
	domains    map[string]actions.DomainMetadata
	ict        ictState
	lazy       *lazyStats // the stats of files from a checkpoint; nil when none are missing
}

// ictState records in-commit timestamp enablement, for time travel and for
// the next commit's timestamp.
type ictState struct {
	enabled           bool
	enablementVersion int64
	lastICT           int64 // ms; the snapshot version's inCommitTimestamp when enabled
}

// Option configures Open.
type Option func(*openConfig)

type openConfig struct {
	version     int64
	timestamp   *time.Time
	skipGate    bool
	maxCheckpnt int64
	stats       bool
}

// AtVersion opens the table as of version v (time travel).
func AtVersion(v int64) Option { return func(c *openConfig) { c.version = v } }

// AtTimestamp opens the newest version committed at or before t, by Spark's
// rules: commit timestamps are the in-commit timestamps where the table has
// them, else the commit files' modification times made monotonic. A t before
// the first version, or after the latest commit, is ErrVersionNotFound.
func AtTimestamp(t time.Time) Option { return func(c *openConfig) { c.timestamp = &t } }

// WithStats reads the stats of the files a checkpoint holds in the same
// pass as the rest of it, as LoadStats would after Open: for callers that
// read every file's Stats (data skipping, counts from stats, the next
// checkpoint), one read of the checkpoint instead of two. Without it Open
// leaves them to LoadStats.
func WithStats() Option { return func(c *openConfig) { c.stats = true } }

// Open loads the snapshot of the table at root (a key prefix in store, ""
// for the store's root). By default the latest version. A missing log is
// ErrNotTable; a table needing reader features lakelog lacks is
// ErrUnsupportedFeature.
func Open(ctx context.Context, store objstore.Store, root string, opts ...Option) (*Snapshot, error) {
	if store == nil {
		return nil, fmt.Errorf("deltalog: %w", ErrNoStore)
	}
	cfg := openConfig{version: -1, maxCheckpnt: anyCheckpoint}
	for _, o := range opts {
		o(&cfg)
	}
	t := newTable(store, root)
	if cfg.timestamp != nil {
		v, err := t.versionAt(ctx, *cfg.timestamp)
		if err != nil {
			return nil, err
		}
		cfg.version = v
	}
	maxCP := cfg.maxCheckpnt
	var broken error // the newest checkpoint that could not be read, if any
	for {
		seg, _, err := t.buildSegment(ctx, cfg.version, maxCP)
		if err != nil {
			if broken != nil {
				// Say why the checkpoint that would have served was passed
				// over, not only that nothing older serves.
				return nil, fmt.Errorf("%w; %w", broken, err)
			}
			return nil, err
		}
		s, err := t.replay(ctx, seg, cfg.stats)
		var ce *checkpointError
		if err != nil && seg.Checkpoint != nil && errors.As(err, &ce) {
			// A checkpoint a crash left broken: use an older one, or none.
			if broken == nil {
				broken = err
			}
			maxCP = seg.Checkpoint.Version - 1 // -1: replay from version 0
			continue
		}
		if err != nil {
			return nil, err
		}
		if !cfg.skipGate {
			if err := checkReadable(s.Protocol()); err != nil {
				return nil, fmt.Errorf("deltalog: %s: %w", t.display(), err)
			}
		}
		return s, nil
	}
}

// checkpointError is a checkpoint that could not be read: the snapshot
// falls back to an older checkpoint or to the commits.
type checkpointError struct {
	version int64
	err     error
}

func (e *checkpointError) Error() string {
	return fmt.Sprintf("deltalog: the checkpoint of version %d is unreadable: %v", e.version, e.err)
}

func (e *checkpointError) Unwrap() error { return e.err }

// fileKey is the identity of a file action: its canonical path and its
// deletion vector's unique id (PROTOCOL.md: add and remove are keyed by
// (path, deletionVector.uniqueId)).
type fileKey struct {
	path string
	dv   string
}

// state is a snapshot under construction: the fold of log actions.
type state struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
	// base holds the files before the folded commits (a checkpoint's,
	// or the snapshot a commit builds on), as columns; active and
	// removed hold only what the commits added and removed, so that
	// opening a table from a checkpoint and a few commits builds no map
	// of a million entries. A base file is live unless a commit added or
	// removed its key.
	base        *fileSet
	baseRemoves []*actions.Remove
	active      map[fileKey]*actions.Add
	removed     map[fileKey]*actions.Remove
	txns        map[string]actions.Txn
	domains     map[string]actions.DomainMetadata
	lastICT     int64
	lazy        *lazyStats
	// pv shares equal partitionValues maps among the adds of a replay:
	// a million adds over a few partitions hold a few maps, not a million.
	pv    map[string]map[string]*string
	pvKey []byte
}

// maxSharedPartitions bounds the distinct partitionValues maps a replay
// shares; tables with more partitions than this keep a map per add past it.
const maxSharedPartitions = 4096

// sharedPartitionValues returns a map equal to m that earlier adds of the
// replay may already hold. Actions are shared and never modified, so
// equal maps can be one.
func (st *state) sharedPartitionValues(m map[string]*string) map[string]*string {
	if len(m) > 8 {
		return m
	}
	var keys [8]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b := st.pvKey[:0]
	for _, k := range ks {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		if v := m[k]; v != nil {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(*v)))
			b = append(b, *v...)
		} else {
			b = append(b, 0)
		}
	}
	st.pvKey = b
	if shared, ok := st.pv[string(b)]; ok {
		return shared
	}
	if st.pv == nil {
		st.pv = map[string]map[string]*string{}
	}
	if len(st.pv) < maxSharedPartitions {
		st.pv[string(b)] = m
	}
	return m
}

// applyCheckpoint folds in one action of a checkpoint other than an
// add (a checkpoint's adds are its base files). All of a checkpoint's
// actions come before any commit's.
func (st *state) applyCheckpoint(a *actions.Action) {
	if a.Remove != nil {
		st.baseRemoves = append(st.baseRemoves, a.Remove)
		return
	}
	st.apply(a)
}

func newState() *state {
	return &state{
		active:  map[fileKey]*actions.Add{},
		removed: map[fileKey]*actions.Remove{},
		txns:    map[string]actions.Txn{},
		domains: map[string]actions.DomainMetadata{},
	}
}

// apply folds one action in. Actions must come in log order.
func (st *state) apply(a *actions.Action) {
	switch {
	case a.Protocol != nil:
		st.protocol = a.Protocol
	case a.Metadata != nil:
		st.metadata = a.Metadata
	case a.Add != nil:
		k := fileKey{actions.CanonicalPath(a.Add.Path), a.Add.DeletionVector.UniqueID()}
		st.active[k] = a.Add
		delete(st.removed, k)
	case a.Remove != nil:
		k := fileKey{actions.CanonicalPath(a.Remove.Path), a.Remove.DeletionVector.UniqueID()}
		delete(st.active, k)
		st.removed[k] = a.Remove
	case a.Txn != nil:
		st.txns[a.Txn.AppID] = *a.Txn
	case a.DomainMetadata != nil:
		if a.DomainMetadata.Removed {
			delete(st.domains, a.DomainMetadata.Domain)
		} else {
			st.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
		}
	case a.CommitInfo != nil:
		if a.CommitInfo.InCommitTimestamp != nil {
			st.lastICT = *a.CommitInfo.InCommitTimestamp
		}
	}
}

// stateOf reopens a finished snapshot for further folding.
func stateOf(s *Snapshot) *state {
	st := newState()
	st.protocol, st.metadata = s.Protocol(), s.Metadata()
	st.base = s.files
	st.baseRemoves = s.tombstones
	for k, v := range s.txns {
		st.txns[k] = v
	}
	for k, v := range s.domains {
		st.domains[k] = v
	}
	st.lastICT = s.ict.lastICT
	st.lazy = s.lazy
	return st
}

// finish turns the fold into a snapshot of version, whose commit file
// time is modTime (zero when unknown).
func (st *state) finish(t table, version int64, modTime time.Time) (*Snapshot, error) {
	if st.protocol == nil {
		return nil, fmt.Errorf("deltalog: %w: no protocol action up to version %d of %s", ErrLogCorrupt, version, t.display())
	}
	if st.metadata == nil {
		return nil, fmt.Errorf("deltalog: %w: no metaData action up to version %d of %s", ErrLogCorrupt, version, t.display())
	}
	config, err := actions.NewTableConfig(st.protocol, st.metadata)
	if err != nil {
		return nil, fmt.Errorf("deltalog: version %d of %s: %w", version, t.display(), err)
	}
	s := &Snapshot{
		table:   t,
		version: version,
		config:  config,
		txns:    st.txns,
		domains: st.domains,
		lazy:    st.lazy,
	}
	files, err := st.files(config)
	if err != nil {
		return nil, fmt.Errorf("deltalog: version %d of %s: %w", version, t.display(), err)
	}
	s.files = files
	s.tombstones = st.tombstones()
	props := config.Properties()
	s.ict = ictState{
		enabled:           props.EnableInCommitTimestamps,
		enablementVersion: props.InCommitTimestampEnablementVersion,
		lastICT:           st.lastICT,
	}
	switch {
	case s.ict.enabled && st.lastICT > 0 && version >= s.ict.enablementVersion:
		s.timestamp = time.UnixMilli(st.lastICT)
	case !modTime.IsZero():
		s.timestamp = modTime
	}
	return s, nil
}

// files is the fold's live files: the base's, less those whose keys a
// commit added or removed, plus the commits' adds.
func (st *state) files(table *actions.TableConfig) (*fileSet, error) {
	base := st.base
	if base == nil {
		base = emptyFiles
	}
	var dead []int32
	if base.rows() > 0 && len(st.active)+len(st.removed) > 0 {
		touched := make(map[fileKey][]string, len(st.active)+len(st.removed))
		for k, a := range st.active {
			touched[k] = append(touched[k], a.Path)
		}
		for k, r := range st.removed {
			touched[k] = append(touched[k], r.Path)
		}
		dead = base.rowsOf(touched)
	}
	var adds []*actions.Add
	if len(st.active) > 0 {
		adds = make([]*actions.Add, 0, len(st.active))
		for _, a := range st.active {
			adds = append(adds, a)
		}
	}
	batch, err := addsBatch(table, adds)
	if err != nil {
		return nil, err
	}
	return base.with(dead, batch), nil
}

// tombstones are the fold's removes not re-added, sorted by path and
// deletion vector id: the commits' and the base's that no commit touched.
func (st *state) tombstones() []*actions.Remove {
	out := make([]*actions.Remove, 0, len(st.removed)+len(st.baseRemoves))
	for _, r := range st.baseRemoves {
		k := fileKey{actions.CanonicalPath(r.Path), r.DeletionVector.UniqueID()}
		if _, ok := st.active[k]; ok {
			continue
		}
		if _, ok := st.removed[k]; ok {
			continue
		}
		out = append(out, r)
	}
	for _, r := range st.removed {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *actions.Remove) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return cmp.Compare(a.DeletionVector.UniqueID(), b.DeletionVector.UniqueID())
	})
	return out
}

// replay folds the segment's checkpoint and commits into a snapshot.
// With stats, the checkpoint's add stats are read with it; without, they
// are left to LoadStats.
func (t *table) replay(ctx context.Context, seg *segment, stats bool) (*Snapshot, error) {
	st := newState()
	if cp := seg.Checkpoint; cp != nil {
		col, err := readCheckpointFiles(ctx, t.store, cp, stats)
		if err != nil {
			return nil, &checkpointError{version: cp.Version, err: err}
		}
		for i := range col.Actions {
			st.applyCheckpoint(&col.Actions[i])
		}
		st.base = newFileSet(col.Files)
		if col.NumFiles > 0 && !stats {
			st.lazy = &lazyStats{store: t.store, version: cp.Version, parts: checkpointParts(cp), layout: col.Layout, batches: col.Files}
		}
	}
	var lastModTime time.Time
	i := 0
	for as, err := range t.readCommitsAhead(ctx, seg.Commits) {
		if err != nil {
			return nil, err
		}
		f := seg.Commits[i]
		i++
		st.lastICT = 0 // only the snapshot version's own in-commit timestamp counts
		if f.Type == CompactedCommit {
			// Writers put a compacted range newest first, without always
			// reconciling it (Databricks keeps both the add and the later
			// remove of a file): the first action of a key wins, which is
			// the forward fold of the lines in reverse.
			slices.Reverse(as)
		}
		for i := range as {
			if add := as[i].Add; add != nil { // read here, so ours to share
				add.PartitionValues = st.sharedPartitionValues(add.PartitionValues)
			}
			st.apply(&as[i])
		}
		lastModTime = f.ModTime
	}
	s, err := st.finish(*t, seg.Version, lastModTime)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// readCommit reads and decodes one commit file.
func (t *table) readCommit(ctx context.Context, f logFile) ([]actions.Action, error) {
	b, err := t.store.Get(ctx, f.Key)
	if err != nil {
		return nil, fmt.Errorf("deltalog: read %s: %w", f.Key, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// No engine writes an empty commit; replaying one as "no actions"
		// would silently lose what that version did.
		return nil, fmt.Errorf("deltalog: %w: %s: empty commit file (%d bytes, no actions)", ErrLogCorrupt, f.Key, len(b))
	}
	as, err := actions.ParseCommitBytes(b)
	if err != nil {
		return nil, fmt.Errorf("deltalog: %w: %s: %w", ErrLogCorrupt, f.Key, err)
	}
	return as, nil
}

// Version is the snapshot's table version.
func (s *Snapshot) Version() int64 { return s.version }

// Timestamp is the commit timestamp of the snapshot's version: its
// in-commit timestamp where enabled, else the commit file's modification
// time (zero when the version came only from a checkpoint).
func (s *Snapshot) Timestamp() time.Time { return s.timestamp }

// Protocol is the table's protocol action.
func (s *Snapshot) Protocol() *actions.Protocol { return s.config.Protocol() }

// Metadata is the table's metaData action.
func (s *Snapshot) Metadata() *actions.Metadata { return s.config.Metadata() }

// Properties are the table's properties (metaData.configuration), typed:
// parsed once when the snapshot was built, by the one parser of them
// (actions.ParseTableProperties). Every reader of a property reads it
// here. Invalid values hold the defaults and are listed in Invalid;
// Supports refuses writes to a table that has one. The value is shared:
// do not modify it.
func (s *Snapshot) Properties() *actions.TableProperties { return s.config.Properties() }

// Schema is the table's logical schema.
func (s *Snapshot) Schema() *actions.StructType { return s.config.Schema() }

// PartitionColumns are the logical partition column names.
func (s *Snapshot) PartitionColumns() []string { return s.config.PartitionColumns() }

// Config is the table's configuration at this version: its protocol,
// metadata and properties joined, with the rules every reader and writer
// follows (column mapping, the features in force, what writes must do).
// Pruners, scans, writers and the conflict checker take it; it is built
// once per snapshot.
func (s *Snapshot) Config() *actions.TableConfig { return s.config }

// Store is the store the table lives in.
func (s *Snapshot) Store() objstore.Store { return s.store }

// FileStore is the store to read the table's data and deletion vector
// files from, by the keys TablePath gives: the table's store, and for a
// file action whose path is absolute (a SHALLOW CLONE's log names the
// source table's files) the store of that location
// (objstore.Resolving). Nothing is written through it.
func (s *Snapshot) FileStore() objstore.Store { return objstore.Resolving(s.store) }

// Root is the table's key prefix in the store ("" or ending in '/').
func (s *Snapshot) Root() string { return s.root }

// NumFiles is the number of active files.
func (s *Snapshot) NumFiles() int { return len(s.files.order) }

// SizeInBytes is the total size of the active files.
func (s *Snapshot) SizeInBytes() int64 {
	var n int64
	for _, f := range s.ActiveFiles().All() {
		n += f.Size()
	}
	return n
}

// Files yields the active files' add actions in path order (then
// deletion vector id). The snapshot holds its files as columns
// (ActiveFiles), and each Add is built as it is yielded: callers that
// read a few fields of many files should read ActiveFiles instead. The
// Adds' partitionValues maps are shared: do not modify them. Files from
// a checkpoint have an empty Stats until LoadStats, unless the snapshot
// was opened WithStats.
func (s *Snapshot) Files() iter.Seq[*actions.Add] {
	return func(yield func(*actions.Add) bool) {
		for _, f := range s.ActiveFiles().All() {
			if !yield(f.Add()) {
				return
			}
		}
	}
}

// Tombstones yields the remove actions of files not re-added, in path order.
func (s *Snapshot) Tombstones() iter.Seq[*actions.Remove] { return slices.Values(s.tombstones) }

// TxnVersion is the latest version committed by appID, for idempotent
// writes; ok is false when the app never committed.
func (s *Snapshot) TxnVersion(appID string) (version int64, ok bool) {
	t, ok := s.txns[appID]
	return t.Version, ok
}

// Txns returns a copy of every app's latest txn action.
func (s *Snapshot) Txns() map[string]actions.Txn {
	out := make(map[string]actions.Txn, len(s.txns))
	for k, v := range s.txns {
		out[k] = v
	}
	return out
}

// Domain returns the live domain metadata named domain.
func (s *Snapshot) Domain(domain string) (actions.DomainMetadata, bool) {
	d, ok := s.domains[domain]
	return d, ok
}

// Domains returns a copy of the live domain metadata.
func (s *Snapshot) Domains() map[string]actions.DomainMetadata {
	out := make(map[string]actions.DomainMetadata, len(s.domains))
	for k, v := range s.domains {
		out[k] = v
	}
	return out
}

// TablePath resolves a file action's path to a store key: a relative path
// is decoded and joined to the table root; an absolute URI is returned as
// decoded (the caller decides whether its store can reach it).
func (s *Snapshot) TablePath(p string) string {
	c := actions.CanonicalPath(p)
	if strings.Contains(p, "://") || strings.HasPrefix(c, "/") {
		return c
	}
	return s.root + c
}

// OpenURI opens the table at uri: a path, file://, mem://, or a cloud URI
// whose store package is imported (s3://, gs://, az://; see objstore.Open).
func OpenURI(ctx context.Context, uri string, opts ...Option) (*Snapshot, error) {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("deltalog: %w", err)
	}
	return Open(ctx, st, "", opts...)
}
