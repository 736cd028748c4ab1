package deltalog

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

// EngineInfo is written to every commitInfo.engineInfo.
var EngineInfo = "lakelog/0.1"

// Checker decides whether a transaction that lost the race for a version
// may rebase onto the winning commit (nil) or must abort (a *conflict.Error).
type Checker func(tx *conflict.Txn, winner *conflict.Winner) error

// Transaction collects the actions of one commit. It is not safe for
// concurrent use. Build it with Snapshot.NewTransaction or Create, add
// actions, then Commit once.
type Transaction struct {
	table
	snap        *Snapshot // nil when creating the table
	readVersion int64
	// protocol is a protocol set outright (Create, SetProtocol); nil
	// keeps the snapshot's, raised as the metadata and enable need.
	protocol *actions.Protocol
	metadata *actions.Metadata // set when the commit changes it
	enable   []string          // features enabled explicitly (EnableFeatures)
	// leaves caches the configuration the commit leaves (config), nil
	// when stale; leavesErr is its refusal.
	leaves      *actions.TableConfig
	leavesErr   error
	acts        []actions.Action // everything but commitInfo, protocol and metaData
	info        actions.CommitInfo
	readFiles   []string
	readPreds   []expr.Expr
	readAll     bool
	readAppIDs  []string
	isolation   conflict.Isolation
	blindAppend *bool
	cfg         commitConfig
	rowHWM      int64 // row ID high-water mark the next attempt builds on (rowtracking.go)
	committed   bool
}

// ErrTooManyAttempts is returned when a transaction lost the race for
// WithMaxAttempts versions in a row. Nothing was committed; it is safe to
// retry the whole operation.
var ErrTooManyAttempts = errors.New("too many commit attempts")

// ErrTableExists is returned when Create finds a table already there.
var ErrTableExists = errors.New("table already exists")

func newTxn(t table, snap *Snapshot, readVersion int64, opts []CommitOption) *Transaction {
	tx := &Transaction{
		table:       t,
		snap:        snap,
		readVersion: readVersion,
		cfg: commitConfig{
			maxAttempts:  1000,
			maxIOretries: 5,
			backoff:      time.Millisecond,
			maxBackoff:   20 * time.Millisecond,
			now:          time.Now,
			postCommit:   PostCommitAsync,
		},
	}
	for _, o := range opts {
		o(tx)
	}
	if a := tx.cfg.appTxn; a != nil {
		tx.SetTransaction(a.AppID, a.Version)
	}
	// A table being created has no metadata yet: Create enables the
	// features once it has set it.
	if len(tx.cfg.features) > 0 && snap != nil {
		if err := tx.EnableFeatures(tx.cfg.features...); err != nil {
			tx.cfg.optErr = err
		}
	}
	for _, d := range tx.cfg.domains {
		if err := tx.SetDomainMetadata(d.Domain, d.Configuration); err != nil && tx.cfg.optErr == nil {
			tx.cfg.optErr = err
		}
	}
	if tx.cfg.checker == nil {
		tx.cfg.checker = conflict.CheckCreate
		if snap != nil {
			tx.cfg.checker = conflict.NewChecker(snap.Config())
		}
	}
	return tx
}

// NewTransaction starts a transaction that reads this snapshot.
func (s *Snapshot) NewTransaction(opts ...CommitOption) *Transaction {
	return newTxn(s.table, s, s.version, opts)
}

// Create starts the transaction that creates a table at root with the given
// metadata (its ID, format and createdTime are filled in when empty). The
// protocol is the smallest that the schema and properties need unless
// SetProtocol overrides it. Property keys are normalised as Spark
// normalises them (actions.NormalizeTableProperties: delta.enablecdf in
// any case is delta.enableChangeDataFeed) and checked (CheckProperties).
// Commit fails with ErrTableExists when version 0
// exists.
func Create(store objstore.Store, root string, md *actions.Metadata, opts ...CommitOption) (*Transaction, error) {
	if store == nil {
		return nil, fmt.Errorf("deltalog: %w", ErrNoStore)
	}
	if md == nil {
		return nil, errors.New("deltalog: Create needs the table's metadata (md is nil)")
	}
	m := *md
	if m.ID == "" {
		m.ID = uuid.NewString()
	}
	if m.Format.Provider == "" {
		m.Format = actions.Format{Provider: "parquet", Options: map[string]string{}}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	conf, err := actions.NormalizeTableProperties(m.Configuration)
	if err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	conf, explicit, err := SplitFeatureProperties(conf)
	if err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	m.Configuration = conf
	if on, _ := actions.ParseBool(conf[actions.PropEnableRowTracking]); on {
		m.Configuration = MaterializedRowTrackingNames(conf)
	}
	schema, err := m.Schema()
	if err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	props := m.Properties()
	if err := checkProperties(&m, props); err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	for name := range props.Constraints {
		return nil, fmt.Errorf("deltalog: create: %s: CHECK constraints are added to an existing table (schema.AddConstraint), which checks the expression", actions.ConstraintKey(name))
	}
	if props.ColumnMappingMode != actions.ColumnMappingNone {
		if schema, err = mapColumns(&m, schema, props); err != nil {
			return nil, fmt.Errorf("deltalog: create: %w", err)
		}
		props = m.Properties()
	}
	for _, c := range m.PartitionColumns {
		f := schema.Field(c)
		if f == nil {
			return nil, fmt.Errorf("deltalog: create: partition column %q is not in the schema", c)
		}
		if _, ok := f.Type.(actions.PrimitiveType); !ok {
			if _, dec := f.Type.(*actions.DecimalType); !dec {
				return nil, fmt.Errorf("deltalog: create: partition column %q has type %s; partition columns must be primitive", c, f.Type)
			}
		}
	}
	if len(schema.Fields) > 0 && len(m.PartitionColumns) >= len(schema.Fields) {
		return nil, fmt.Errorf("deltalog: create: every column is a partition column (%s); a table needs at least one data column", strings.Join(m.PartitionColumns, ", "))
	}
	tx := newTxn(newTable(store, root), nil, -1, opts)
	if m.CreatedTime == nil {
		ms := tx.cfg.now().UnixMilli()
		m.CreatedTime = &ms
	}
	cfg, err := actions.NewTableConfig(nil, &m)
	if err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	tx.metadata, tx.protocol = &m, cfg.MinimalProtocol()
	if err := tx.EnableFeatures(append(explicit, tx.cfg.features...)...); err != nil {
		return nil, fmt.Errorf("deltalog: create: %w", err)
	}
	tx.info.Operation = "CREATE TABLE"
	tx.info.OperationParameters = map[string]any{
		"isManaged":   "false",
		"description": nil,
		"partitionBy": actions.JSONText(m.PartitionColumns),
		"properties":  actions.JSONText(m.Configuration),
	}
	return tx, nil
}

// mapColumns gives a new column-mapped table's columns (nested ones
// too) ids and physical names, as Spark does at CREATE TABLE: ids from 1
// (above any the schema already has), names "col-<uuid>", and
// delta.columnMapping.maxColumnId set to the largest id. md is changed
// in place (a copy of the caller's metadata); the mapped schema is
// returned.
func mapColumns(md *actions.Metadata, schema *actions.StructType, props *actions.TableProperties) (*actions.StructType, error) {
	mapped, maxID := actions.AssignColumnMapping(schema, props.ColumnMappingMaxColumnID, false)
	text, err := actions.SchemaString(mapped)
	if err != nil {
		return nil, err
	}
	md.SchemaString = text
	md.Configuration = maps.Clone(md.Configuration)
	md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	return mapped, nil
}

// CheckProperties refuses the table properties of md that Spark would
// refuse (an unknown delta.* key, a value of the wrong form, each error
// naming its property, a symlink manifest with deletion vectors, a
// UniForm setting its compatibility does not allow). delta.feature.*
// keys are refused here: SplitFeatureProperties takes them out first, as
// Create and SetMetadata do, and they enable their features. Create
// asks it, and so does an operation that changes properties (ALTER TABLE
// SET TBLPROPERTIES). Keys are matched exactly: normalise their case
// first (actions.NormalizeTableProperties), as Create does.
func CheckProperties(md *actions.Metadata) error {
	return checkProperties(md, md.Properties())
}

func checkProperties(md *actions.Metadata, props *actions.TableProperties) error {
	keys := slices.Sorted(maps.Keys(md.Configuration))
	for _, k := range keys {
		switch {
		case !actions.KnownTableProperty(k):
			return fmt.Errorf("unknown table property %q (Delta's own properties are listed in PROTOCOL.md and Spark's documentation; other keys must not start with \"delta.\")", k)
		case strings.HasPrefix(k, actions.PropFeaturePrefix):
			return fmt.Errorf("%w: %s: lakelog enables table features through their properties (delta.enableDeletionVectors, ...), not delta.feature.*", ErrUnsupportedFeature, k)
		}
	}
	if err := props.Err(); err != nil {
		return err
	}
	if on, _ := actions.ParseBool(md.Configuration[actions.PropSymlinkFormatManifest]); on && props.EnableDeletionVectors {
		// A manifest's readers read the data files as they are and would
		// see the rows deletion vectors delete (Spark refuses it too:
		// PersistentDeletionVectorsWithIncrementalManifestGeneration).
		return fmt.Errorf("%s=true and %s=true cannot be set together: the symlink manifest's readers would read the rows deletion vectors delete", actions.PropSymlinkFormatManifest, actions.PropEnableDeletionVectors)
	}
	return checkUniversalFormat(props)
}

// ReadVersion is the version the transaction read (-1 when creating).
func (tx *Transaction) ReadVersion() int64 { return tx.readVersion }

// Snapshot is the snapshot the transaction read, nil when creating.
func (tx *Transaction) Snapshot() *Snapshot { return tx.snap }

// Add appends actions to the commit. commitInfo actions are rejected (use
// SetOperation); protocol and metaData go through SetProtocol and
// SetMetadata.
func (tx *Transaction) Add(as ...actions.Action) {
	for _, a := range as {
		switch {
		case a.Protocol != nil:
			tx.SetProtocol(a.Protocol)
		case a.Metadata != nil:
			tx.SetMetadata(a.Metadata)
		case a.CommitInfo != nil:
			// commitInfo is built by Commit; keep the caller's extras.
			for k, v := range a.CommitInfo.Extra {
				if tx.info.Extra == nil {
					tx.info.Extra = map[string]json.RawMessage{}
				}
				tx.info.Extra[k] = v
			}
		default:
			tx.acts = append(tx.acts, a)
		}
	}
}

// Metadata is the table metadata the commit leaves: what SetMetadata set
// (for a new table, Create's, with its column mapping assigned), else the
// snapshot's. Data files written for the commit follow it.
func (tx *Transaction) Metadata() *actions.Metadata {
	if tx.metadata == nil && tx.snap != nil {
		return tx.snap.Metadata()
	}
	return tx.metadata
}

// SetMetadata changes the table's metadata in this commit. The protocol
// follows by one rule (actions.TableConfig.UpgradeProtocol, Spark's): a
// feature the new metadata needs is added to the protocol when Spark adds
// it by itself (a legacy feature, or one a property enables); one that
// must be asked for (timestampNtz for a new timestamp_ntz column) is
// refused with an *actions.FeatureNotEnabledError naming what enables
// it, here and at Commit, unless EnableFeatures asked for it. The
// protocol is never downgraded.
func (tx *Transaction) SetMetadata(md *actions.Metadata) error {
	tx.metadata = md
	tx.stale()
	if _, err := tx.config(); err != nil {
		return fmt.Errorf("deltalog: %w", err)
	}
	return nil
}

// EnableFeatures adds table features to the protocol in this commit, as
// Spark's delta.feature.NAME = 'supported' does: the way to enable a
// feature that metadata alone does not add (timestampNtz). A name lakelog
// does not know is refused.
func (tx *Transaction) EnableFeatures(names ...string) error {
	for _, name := range names {
		if featureByName[name] == nil {
			return fmt.Errorf("deltalog: %w: table feature %q (lakelog knows %s)", ErrUnsupportedFeature, name, quoteList(knownFeatureNames()))
		}
		if !slices.Contains(tx.enable, name) {
			tx.enable = append(tx.enable, name)
		}
	}
	tx.stale()
	if _, err := tx.config(); err != nil {
		return fmt.Errorf("deltalog: %w", err)
	}
	return nil
}

// SetsMetadata reports whether the commit changes the table's metadata
// (SetMetadata was called, or the transaction creates the table).
func (tx *Transaction) SetsMetadata() bool { return tx.metadata != nil }

// SetTag sets a commitInfo tag (commitInfo.tags, Spark's DeltaCommitTag):
// a flag for the conflict checker and readers of the history, such as
// delta.identity.schemaUpdate.
func (tx *Transaction) SetTag(key, value string) {
	if tx.info.Tags == nil {
		tx.info.Tags = map[string]string{}
	}
	tx.info.Tags[key] = value
}

// Config is the configuration of the table the commit leaves: the
// snapshot's, or the metadata SetMetadata set under the protocol it
// raises to. Data files written for the commit follow it. When the new
// metadata is refused (SetMetadata's error), it is the metadata under the
// protocol before the change.
func (tx *Transaction) Config() *actions.TableConfig {
	c, err := tx.config()
	if err != nil {
		base := tx.protocol
		if base == nil {
			base = tx.snap.Protocol()
		}
		c, _ = actions.NewTableConfig(base, tx.Metadata())
	}
	return c
}

// config is the configuration the commit leaves, computed once per
// change (stale).
func (tx *Transaction) config() (*actions.TableConfig, error) {
	if tx.leaves != nil || tx.leavesErr != nil {
		return tx.leaves, tx.leavesErr
	}
	if tx.snap != nil && tx.metadata == nil && tx.protocol == nil && len(tx.enable) == 0 {
		tx.leaves = tx.snap.Config()
		return tx.leaves, nil
	}
	base := tx.protocol
	if base == nil && tx.snap != nil {
		base = tx.snap.Protocol()
	}
	c, err := actions.NewTableConfig(base, tx.Metadata())
	if err == nil {
		var p *actions.Protocol
		if p, err = c.UpgradeProtocol(base, tx.enable...); err == nil {
			c = c.WithProtocol(p)
		}
	}
	if err != nil {
		tx.leavesErr = err
		return nil, err
	}
	tx.leaves = c
	return c, nil
}

// stale drops the cached configuration after a change.
func (tx *Transaction) stale() { tx.leaves, tx.leavesErr = nil, nil }

// changesProtocol reports whether the commit writes a protocol action:
// it creates the table or leaves another protocol than the snapshot's.
func (tx *Transaction) changesProtocol(c *actions.TableConfig) bool {
	return tx.snap == nil || c.Protocol() != tx.snap.Protocol()
}

// SetProtocol sets the table's protocol in this commit outright, before
// what the metadata needs is added (RESTORE's union of two versions'
// protocols).
func (tx *Transaction) SetProtocol(p *actions.Protocol) { tx.protocol = p; tx.stale() }

// SetOperation names the operation in commitInfo, with its parameters and
// metrics (values as Spark writes them: strings). Parameters given as
// commit options (WithOperationParameters) are added and win.
func (tx *Transaction) SetOperation(op string, params, metrics map[string]any) {
	tx.info.Operation = op
	if params != nil || tx.cfg.params != nil {
		merged := maps.Clone(params)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, tx.cfg.params)
		tx.info.OperationParameters = merged
	}
	if metrics != nil {
		tx.info.OperationMetrics = metrics
	}
}

// Start is what an operation asks of its transaction before it does any
// work: an error for commit options that are wrong (an app transaction
// without an id, an unknown post-commit mode), so that nothing is written
// for a commit that would be refused; else, when the table already holds
// the commit's app transaction (WithAppTransaction) at its version or a
// newer one, the result the commit reports (AlreadyApplied, at the
// snapshot's version), and the operation writes nothing; else nil, nil.
func (tx *Transaction) Start() (*CommitResult, error) {
	if err := tx.checkOptions(); err != nil {
		return nil, err
	}
	return tx.alreadyApplied(), nil
}

// alreadyApplied is Start's second answer (nil when not applied).
func (tx *Transaction) alreadyApplied() *CommitResult {
	if tx.snap == nil {
		return nil
	}
	for _, id := range tx.readAppIDs {
		if res, ok := tx.snap.AlreadyApplied(id, tx.ownTxnVersion(id)); ok {
			return res
		}
	}
	return nil
}

// checkOptions refuses wrong commit options.
func (tx *Transaction) checkOptions() error {
	if tx.cfg.optErr != nil {
		return tx.cfg.optErr
	}
	switch tx.cfg.postCommit {
	case PostCommitAsync, PostCommitSync, PostCommitOff:
	default:
		return fmt.Errorf("deltalog: commit: unknown post-commit mode %q (want %q, %q or %q)", tx.cfg.postCommit, PostCommitAsync, PostCommitSync, PostCommitOff)
	}
	for _, id := range tx.readAppIDs {
		if id == "" {
			return fmt.Errorf("deltalog: commit: an app transaction needs an app id")
		}
	}
	return nil
}

// SetUserMetadata sets commitInfo.userMetadata.
func (tx *Transaction) SetUserMetadata(s string) { tx.info.UserMetadata = s }

// ReadFiles records files the transaction read (add paths, as in the log):
// a winner that removes one of them aborts it.
func (tx *Transaction) ReadFiles(paths ...string) {
	for _, p := range paths {
		tx.readFiles = append(tx.readFiles, actions.CanonicalPath(p))
	}
}

// ReadPredicates records predicates (bound to the snapshot's schema) that
// the transaction read the table with: a winner that adds a file which may
// hold a matching row aborts it with ConcurrentAppend (which adds count
// depends on the isolation level).
func (tx *Transaction) ReadPredicates(es ...expr.Expr) { tx.readPreds = append(tx.readPreds, es...) }

// Now is the transaction's clock (WithClock; the wall clock by default):
// commit timestamps, remove and txn timestamps all read it.
func (tx *Transaction) Now() time.Time { return tx.cfg.now() }

// RemoveFile removes the active file add in this commit (dataChange false
// for a rearrangement such as OPTIMIZE), with the remove Spark writes
// (actions.RemoveOf, timestamped by the transaction's clock), and records
// the file as read: a transaction that removes a file depends on it, so a
// concurrent remove of it is a conflict.
func (tx *Transaction) RemoveFile(add *actions.Add, dataChange bool) {
	tx.acts = append(tx.acts, actions.Action{Remove: actions.RemoveOf(add, tx.cfg.now().UnixMilli(), dataChange)})
	tx.ReadFiles(add.Path)
}

// ReadWholeTable records that the transaction depends on every file.
func (tx *Transaction) ReadWholeTable() { tx.readAll = true }

// SetTransaction makes the commit idempotent for an application: it
// records txn(appID, version), and Commit skips the commit (reporting
// AlreadyApplied) when the table already has version or a newer one for
// appID, including when a concurrent writer wins the race with it.
func (tx *Transaction) SetTransaction(appID string, version int64) {
	now := tx.cfg.now().UnixMilli()
	tx.acts = append(tx.acts, actions.Action{Txn: &actions.Txn{AppID: appID, Version: version, LastUpdated: &now}})
	tx.readAppIDs = append(tx.readAppIDs, appID)
}

// HasAppTransaction reports whether the commit records an app
// transaction (SetTransaction, WithAppTransaction): such a commit is made
// even when it carries nothing else, so that the application knows its
// batch landed.
func (tx *Transaction) HasAppTransaction() bool { return len(tx.readAppIDs) > 0 }

// SetBlindAppend overrides whether commitInfo declares a blind append. By
// default a commit is a blind append when it only adds files with
// dataChange and read nothing.
func (tx *Transaction) SetBlindAppend(b bool) { tx.blindAppend = &b }

// CommitResult is the outcome of a successful Commit.
type CommitResult struct {
	// Version is the version the commit landed at (or, when AlreadyApplied,
	// the version that already held the application's txn).
	Version int64
	// Attempts is how many versions were tried (1 when there was no race).
	Attempts int
	// AlreadyApplied is set when an idempotent transaction was skipped
	// because its appId already had this txn version or a newer one.
	AlreadyApplied bool
	// TxnID is the commitInfo.txnId the commit carries.
	TxnID string

	table   table
	base    *Snapshot          // the snapshot the transaction read; nil on create
	applied [][]actions.Action // winners' commits, then ours, in version order
	hooks   chan error         // the post-commit hooks' outcome; nil when none ran
}

// WaitHooks waits for the post-commit hooks this commit started (the
// checkpoint the interval asks for, the Iceberg metadata of a UniForm
// table, the symlink manifest: see PostCommitHook) and returns their
// failures, each a *HookError, joined; nil when all succeeded or none
// ran. The commit itself succeeded either way, and the next commit (or
// the hook's own command, lakelog uniform sync) retries what failed. A
// program that exits right after committing should call it, or the
// hooks' work is cut short (harmlessly: the next commit catches up).
func (r *CommitResult) WaitHooks() error {
	if r == nil || r.hooks == nil {
		return nil
	}
	err := <-r.hooks
	r.hooks <- err // let a second call see it too
	return err
}

// CommitInfo is the commitInfo action the commit wrote (operation,
// operationParameters, operationMetrics, ...); nil for an AlreadyApplied
// result, which wrote none.
func (r *CommitResult) CommitInfo() *actions.CommitInfo {
	if r == nil || r.AlreadyApplied || len(r.applied) == 0 {
		return nil
	}
	for _, a := range r.applied[len(r.applied)-1] {
		if a.CommitInfo != nil {
			return a.CommitInfo
		}
	}
	return nil
}

// Snapshot returns the table as of the commit's version without reading
// the log again: the read snapshot plus the winning commits the transaction
// rebased over plus its own actions. For an AlreadyApplied result it is the
// read snapshot plus the winners seen.
func (r *CommitResult) Snapshot() (*Snapshot, error) {
	if s, ok := r.appendedSnapshot(); ok {
		return s, nil
	}
	st := newState()
	if r.base != nil {
		st = stateOf(r.base)
	}
	for _, as := range r.applied {
		st.lastICT = 0
		for i := range as {
			st.apply(&as[i])
		}
	}
	version := r.Version
	return st.finish(r.table, version, time.Time{})
}

// appendedSnapshot is Snapshot's fast path for the commonest case, commits
// that only add new files: the read snapshot's sorted files merged with the
// new ones, without rebuilding the whole state. ok is false when the
// commits do anything else (remove, re-add a live path, change metadata or
// protocol).
func (r *CommitResult) appendedSnapshot() (*Snapshot, bool) {
	base := r.base
	if base == nil {
		return nil, false
	}
	var adds []*actions.Add
	txns, copied := base.txns, false
	domains, dcopied := base.domains, false
	lastICT := base.ict.lastICT
	for _, as := range r.applied {
		lastICT = 0
		for _, a := range as {
			switch {
			case a.Add != nil:
				if len(base.files.find(a.Add.Path)) > 0 {
					return nil, false
				}
				adds = append(adds, a.Add)
			case a.CommitInfo != nil:
				if a.CommitInfo.InCommitTimestamp != nil {
					lastICT = *a.CommitInfo.InCommitTimestamp
				}
			case a.Txn != nil:
				if !copied { // snapshots are immutable: never write the base's map
					txns, copied = maps.Clone(base.txns), true
				}
				txns[a.Txn.AppID] = *a.Txn
			case a.DomainMetadata != nil:
				if !dcopied {
					domains, dcopied = maps.Clone(base.domains), true
				}
				if a.DomainMetadata.Removed {
					delete(domains, a.DomainMetadata.Domain)
				} else {
					domains[a.DomainMetadata.Domain] = *a.DomainMetadata
				}
			case a.Remove != nil, a.Metadata != nil, a.Protocol != nil:
				return nil, false
			}
		}
	}
	slices.SortFunc(adds, func(a, b *actions.Add) int { return cmp.Compare(a.Path, b.Path) })
	for i := 1; i < len(adds); i++ {
		if adds[i].Path == adds[i-1].Path {
			return nil, false // one path added twice: let the full fold decide
		}
	}
	batch, err := addsBatch(base.Config(), adds)
	if err != nil {
		return nil, false
	}
	s := *base
	s.version = r.Version
	s.timestamp = time.Time{}
	s.txns = txns
	s.domains = domains
	s.files = base.files.with(nil, batch)
	s.ict.lastICT = lastICT
	if s.ict.enabled && lastICT > 0 && s.version >= s.ict.enablementVersion {
		s.timestamp = time.UnixMilli(lastICT)
	}
	return &s, true
}

// Commit writes the transaction as the next version with create-if-absent.
// When another writer took the version it reads the winning commit and asks
// the checker: on rebase it tries the following version, else it returns
// the checker's *conflict.Error. A lost response (the create happened but
// the reply did not arrive) is detected by commitInfo.txnId and reported as
// success. Errors: *conflict.Error (terminal), ErrTableExists,
// ErrTooManyAttempts (nothing committed), *CommitUnknownError wrapping
// ErrCommitUnknown (outcome not known: see FindCommit),
// ErrUnsupportedFeature.
func (tx *Transaction) Commit(ctx context.Context) (*CommitResult, error) {
	if tx.committed {
		return nil, errors.New("deltalog: transaction already committed")
	}
	if err := tx.validate(); err != nil {
		return nil, err
	}
	txnID := uuid.NewString()
	if res := tx.alreadyApplied(); res != nil {
		return res, nil
	}
	ctxn := tx.conflictTxn()
	version := tx.readVersion + 1
	if tx.rowTracked() {
		hwm, err := tx.startHighWaterMark()
		if err != nil {
			return nil, err
		}
		tx.rowHWM = hwm
	}
	lastICT := int64(0)
	if tx.snap != nil && tx.snap.ict.enabled {
		lastICT = tx.snap.ict.lastICT
	}
	ioFailures := 0
	unsureAt := int64(-1) // a version an earlier try may have created
	// retryUnknown handles a failure that leaves the commit's outcome
	// unknown: after a backoff the same version is tried again, until the
	// retries or the context run out and the outcome is reported unknown.
	retryUnknown := func(cause error, what string) error {
		ioFailures++
		if ioFailures > tx.cfg.maxIOretries || ctx.Err() != nil {
			return &CommitUnknownError{Version: version, TxnID: txnID, Err: fmt.Errorf("deltalog: commit version %d of %s: %w: %s%w", version, tx.display(), ErrCommitUnknown, what, cause)}
		}
		if err := sleep(ctx, tx.backoff(ioFailures)); err != nil {
			return &CommitUnknownError{Version: version, TxnID: txnID, Err: fmt.Errorf("deltalog: commit version %d of %s: %w: %w", version, tx.display(), ErrCommitUnknown, err)}
		}
		return nil
	}
	var winners [][]actions.Action
	result := func(version int64, attempt int, body []byte, applied bool) (*CommitResult, error) {
		res := &CommitResult{Version: version, Attempts: attempt, TxnID: txnID, AlreadyApplied: applied, table: tx.table, base: tx.snap, applied: winners}
		if body != nil {
			ours, err := actions.ParseCommit(bytes.NewReader(body))
			if err != nil {
				return nil, fmt.Errorf("deltalog: reread own commit: %w", err)
			}
			res.applied = append(res.applied, ours)
			tx.committed = true
			tx.runHooks(ctx, res)
		}
		return res, nil
	}
	for attempt := 1; ; attempt++ {
		if attempt > tx.cfg.maxAttempts {
			return nil, fmt.Errorf("deltalog: commit to %s: %w (%d)", tx.display(), ErrTooManyAttempts, tx.cfg.maxAttempts)
		}
		body, err := tx.encode(version, txnID, lastICT)
		if err != nil {
			return nil, err
		}
		key := tx.logDir() + CommitName(version)
		err = tx.store.Put(ctx, key, bytes.NewReader(body), objstore.PutOptions{IfAbsent: true, Size: int64(len(body))})
		if err == nil {
			return result(version, attempt, body, false)
		}
		if errors.Is(err, objstore.ErrRefused) && unsureAt != version {
			// The store refused the create before applying it (no bucket,
			// no access), and no earlier try of this version may have
			// landed: nothing was committed.
			return nil, fmt.Errorf("deltalog: commit version %d of %s: %w", version, tx.display(), err)
		}
		if !errors.Is(err, objstore.ErrExists) {
			// The create may or may not have happened. Try the same version
			// again: ErrExists then tells us, by txnId, whose it is.
			unsureAt = version
			if err := retryUnknown(err, ""); err != nil {
				return nil, err
			}
			attempt--
			continue
		}
		// The version is taken: by us (after a lost response) or a winner.
		f := logFile{LogPath: LogPath{Name: CommitName(version), Type: Commit, Version: version}, Key: key}
		winActs, rerr := tx.readCommit(ctx, f)
		if rerr != nil {
			// Whose commit it is stays unknown until it can be read.
			if errors.Is(rerr, ErrLogCorrupt) {
				ioFailures = tx.cfg.maxIOretries
			}
			if err := retryUnknown(rerr, "read back: "); err != nil {
				return nil, err
			}
			attempt--
			continue
		}
		if isOurs(winActs, txnID) {
			return result(version, attempt, body, false)
		}
		if tx.readVersion < 0 {
			return nil, fmt.Errorf("deltalog: create %s: %w (version 0 exists)", tx.display(), ErrTableExists)
		}
		// Catch up: on a busy table more commits may have landed after
		// this one. Check every winner, then aim past the newest, so that
		// a loser never falls behind a fast writer one version at a time.
		racing, lerr := tx.commitsAfter(ctx, version)
		if lerr != nil {
			return nil, lerr
		}
		for i, wa := range append([][]actions.Action{winActs}, racing...) {
			w := &conflict.Winner{Version: version + int64(i), Actions: wa}
			winners = append(winners, wa)
			if appliedTxn(w, tx.readAppIDs, tx.ownTxnVersion) {
				return result(w.Version, attempt, nil, true)
			}
			if err := tx.cfg.checker(ctxn, w); err != nil {
				return nil, err
			}
			if tx.rowHWM, err = winnerHighWaterMark(tx.rowHWM, wa); err != nil {
				return nil, err
			}
			for _, a := range wa {
				if a.CommitInfo != nil && a.CommitInfo.InCommitTimestamp != nil {
					lastICT = *a.CommitInfo.InCommitTimestamp
				}
			}
		}
		version += int64(1 + len(racing))
		ioFailures = 0
		if attempt > 8 { // a writer that keeps losing steps aside briefly
			if err := sleep(ctx, tx.backoff(attempt-8)); err != nil {
				return nil, fmt.Errorf("deltalog: commit: %w", err)
			}
		}
	}
}

// commitsAfter reads the contiguous commits after version, in order.
func (tx *Transaction) commitsAfter(ctx context.Context, version int64) ([][]actions.Action, error) {
	l, err := tx.list(ctx, version+1)
	if err != nil {
		return nil, err
	}
	var out [][]actions.Action
	for v := version + 1; ; v++ {
		f, ok := l.commits[v]
		if !ok {
			return out, nil
		}
		as, err := tx.readCommit(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, as)
	}
}

// validate checks the transaction against the protocol before any write.
func (tx *Transaction) validate() error {
	if err := tx.checkOptions(); err != nil {
		return err
	}
	if tx.snap == nil && (tx.protocol == nil || tx.metadata == nil) {
		return fmt.Errorf("deltalog: commit: the first commit needs protocol and metadata")
	}
	c, err := tx.config()
	if err != nil {
		return fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
	}
	props := c.Properties()
	if tx.metadata != nil {
		if err := props.Err(); err != nil {
			return fmt.Errorf("deltalog: commit: %w", err)
		}
	}
	if err := check(c, opCommit); err != nil {
		return fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
	}
	if err := tx.checkDomains(c.Protocol()); err != nil {
		return fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
	}
	if tx.metadata != nil {
		if err := checkColumnMapping(tx.snap, c); err != nil {
			return fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
		}
	}
	if props.AppendOnly {
		for _, a := range tx.acts {
			if a.Remove != nil && a.Remove.DataChange {
				return fmt.Errorf("deltalog: commit to %s: table is append-only (delta.appendOnly=true): cannot remove %s", tx.display(), a.Remove.Path)
			}
		}
	}
	return nil
}

// ownTxnVersion is the txn version this transaction writes for appID.
func (tx *Transaction) ownTxnVersion(appID string) int64 {
	for _, a := range tx.acts {
		if a.Txn != nil && a.Txn.AppID == appID {
			return a.Txn.Version
		}
	}
	return -1
}

// appliedTxn reports whether a winner already committed one of our app
// transactions at our version or later.
func appliedTxn(w *conflict.Winner, appIDs []string, own func(string) int64) bool {
	for _, a := range w.Actions {
		if a.Txn == nil {
			continue
		}
		for _, id := range appIDs {
			if a.Txn.AppID == id && a.Txn.Version >= own(id) {
				return true
			}
		}
	}
	return false
}

func (tx *Transaction) conflictTxn() *conflict.Txn {
	iso := tx.conflictIsolation()
	all := append([]actions.Action(nil), tx.acts...)
	if tx.metadata != nil {
		all = append(all, actions.Action{Metadata: tx.metadata})
	}
	if c, err := tx.config(); err == nil && tx.changesProtocol(c) {
		all = append(all, actions.Action{Protocol: c.Protocol()})
	}
	var readProto *actions.Protocol
	if tx.snap != nil {
		readProto = tx.snap.Protocol()
	}
	return &conflict.Txn{
		ReadProtocol:   readProto,
		ReadVersion:    tx.readVersion,
		Isolation:      iso,
		ReadFiles:      tx.readFiles,
		ReadPredicates: tx.readPreds,
		ReadWholeTable: tx.readAll,
		ReadAppIDs:     tx.readAppIDs,
		Actions:        all,
		IsBlindAppend:  tx.isBlindAppend(),
	}
}

// isBlindAppend: only data-changing adds, nothing read.
func (tx *Transaction) isBlindAppend() bool {
	if tx.blindAppend != nil {
		return *tx.blindAppend
	}
	if tx.readAll || len(tx.readFiles) > 0 || len(tx.readPreds) > 0 {
		return false
	}
	for _, a := range tx.acts {
		if a.Remove != nil || (a.Add != nil && !a.Add.DataChange) {
			return false
		}
	}
	return true
}

// encode renders the commit for version: commitInfo first, then protocol,
// metadata and the rest. With in-commit timestamps the timestamp is
// max(now, previous + 1 ms), as the protocol requires.
func (tx *Transaction) encode(version int64, txnID string, lastICT int64) ([]byte, error) {
	c, err := tx.config()
	if err != nil {
		return nil, fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
	}
	info := tx.info
	now := tx.cfg.now().UnixMilli()
	info.Timestamp = &now
	md := tx.metadata
	if c.Properties().EnableInCommitTimestamps {
		ict := max(now, lastICT+1)
		if tx.snap != nil && !tx.snap.Properties().EnableInCommitTimestamps && md != nil {
			// Enabled by this commit, as Spark enables it on an existing
			// table: the commit records where in-commit timestamps begin,
			// its own version and timestamp (after the commit it read).
			ict = max(ict, tx.snap.Timestamp().UnixMilli()+1)
			m := *md
			m.Configuration = maps.Clone(md.Configuration)
			m.Configuration[actions.PropInCommitTimestampEnablementVer] = strconv.FormatInt(version, 10)
			m.Configuration[actions.PropInCommitTimestampEnablementTime] = strconv.FormatInt(ict, 10)
			md = &m
		}
		info.InCommitTimestamp = &ict
		info.Timestamp = &ict
	}
	if tx.readVersion >= 0 {
		rv := tx.readVersion
		info.ReadVersion = &rv
	}
	info.IsolationLevel = string(tx.conflictIsolation())
	blind := tx.isBlindAppend()
	info.IsBlindAppend = &blind
	info.EngineInfo = EngineInfo
	info.TxnID = txnID
	as := make([]actions.Action, 0, len(tx.acts)+3)
	as = append(as, actions.Action{CommitInfo: &info})
	if tx.changesProtocol(c) {
		as = append(as, actions.Action{Protocol: c.Protocol()})
	}
	if md != nil {
		as = append(as, actions.Action{Metadata: md})
	}
	acts := tx.acts
	if c.AssignsRowIDs() {
		if acts, err = assignRowIDs(acts, tx.rowHWM, version); err != nil {
			return nil, fmt.Errorf("deltalog: commit to %s: %w", tx.display(), err)
		}
	}
	as = append(as, acts...)
	b, err := actions.MarshalCommit(as)
	if err != nil {
		return nil, fmt.Errorf("deltalog: encode version %d: %w", version, err)
	}
	return b, nil
}

// conflictIsolation is the transaction's isolation level: its own
// (WithIsolation), else the table's delta.isolationLevel, else
// WriteSerializable. It is decided here only.
func (tx *Transaction) conflictIsolation() conflict.Isolation {
	if tx.isolation != "" {
		return tx.isolation
	}
	if tx.snap != nil && tx.snap.Properties().IsolationLevel != "" {
		return conflict.Isolation(tx.snap.Properties().IsolationLevel)
	}
	return conflict.WriteSerializable
}

func isOurs(as []actions.Action, txnID string) bool {
	for _, a := range as {
		if a.CommitInfo != nil {
			return a.CommitInfo.TxnID == txnID
		}
	}
	return false
}

// backoff is the jittered exponential delay after n failures.
func (tx *Transaction) backoff(n int) time.Duration {
	return backoffDelay(tx.cfg.backoff, tx.cfg.maxBackoff, n)
}

// backoffDelay is the nth backoff from base, doubling up to max, with
// full jitter.
func backoffDelay(base, max time.Duration, n int) time.Duration {
	d := base << min(n, 16)
	if d > max || d <= 0 {
		d = max
	}
	j, err := rand.Int(rand.Reader, big.NewInt(int64(d)+1))
	if err != nil {
		return d
	}
	return time.Duration(j.Int64())
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// AlreadyApplied reports whether the snapshot already holds appID's
// transaction version (or a newer one), and then returns the result an
// idempotent commit of it reports: AlreadyApplied, at the snapshot's
// version, whose Snapshot is s. Writers call it before doing any work.
func (s *Snapshot) AlreadyApplied(appID string, version int64) (*CommitResult, bool) {
	if v, ok := s.TxnVersion(appID); ok && v >= version {
		return &CommitResult{Version: s.version, AlreadyApplied: true, table: s.table, base: s}, true
	}
	return nil, false
}

// checkColumnMapping checks new metadata of a table (snap nil: a new
// table) as Spark does before committing it
// (DeltaColumnMapping.verifyAndUpdateMetadataChange): a column-mapped
// schema gives every column an id and a physical name (unique, no id
// above maxColumnId); the mode changes only from none to name (which
// keeps the columns' names as their physical names); and no column keeps
// its id under another physical name, nor the largest id goes down, so
// that data files written before the change are read the same after it.
func checkColumnMapping(snap *Snapshot, c *actions.TableConfig) error {
	schema, props := c.Schema(), c.Properties()
	mode := props.ColumnMappingMode
	if mode != actions.ColumnMappingNone {
		if err := actions.CheckColumnMapping(schema, props.ColumnMappingMaxColumnID); err != nil {
			return err
		}
	}
	if snap == nil {
		return nil
	}
	old := snap.Properties().ColumnMappingMode
	if old != mode && !(old == actions.ColumnMappingNone && mode == actions.ColumnMappingName) {
		return fmt.Errorf("%w: changing %s from %q to %q is not supported (only from %q to %q, as Spark)", ErrUnsupportedFeature,
			actions.PropColumnMappingMode, old, mode, actions.ColumnMappingNone, actions.ColumnMappingName)
	}
	if old == actions.ColumnMappingNone || mode == actions.ColumnMappingNone {
		return nil
	}
	if props.ColumnMappingMaxColumnID < snap.Properties().ColumnMappingMaxColumnID {
		return fmt.Errorf("%s would go down from %d to %d", actions.PropColumnMappingMaxColumnID, snap.Properties().ColumnMappingMaxColumnID, props.ColumnMappingMaxColumnID)
	}
	before := actions.PhysicalNamesByID(snap.Schema())
	for id, name := range actions.PhysicalNamesByID(schema) {
		if was, ok := before[id]; ok && was != name {
			return fmt.Errorf("column mapping: the column with id %d would change its physical name from %q to %q", id, was, name)
		}
	}
	return nil
}
