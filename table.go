// Package lakelog is the table handle: a Delta table opened or created
// once by its URI, then written, read and maintained through methods that
// each return one Result and leave the handle at the version they
// committed, as delta-rs's DeltaTable and iceberg-go's Table do.
//
//	t, err := lakelog.Create(ctx, "s3://lake/orders", schema, lakelog.PartitionBy("day"))
//	res, err := t.Append(ctx, batch)               // res.Version == 1
//	res, err = t.Delete(ctx, expr.Col("id").Eq(7))
//	res, err = t.Merge(updates...).On(expr.Col("t", "id").Eq(expr.Col("s", "id"))).
//		WhenMatchedUpdateAll(nil).WhenNotMatchedInsertAll(nil).Execute(ctx)
//	for rec, err := range t.Records(ctx) { ... }
//
// The packages below (deltalog, writer, dml, reader, cdf, maintenance,
// schema) stay for what the handle does not cover; Snapshot gives the
// handle's snapshot to them. A Table is safe for concurrent use: each
// method works on the snapshot the handle holds when it starts, and a
// write that commits moves the handle to its version (never back to an
// older one). Writes by other handles or processes are seen after
// Refresh; a write that raced one is rebased or fails with a conflict as
// in the packages below (deltalog.RetryOnConflict redoes it).
package lakelog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// ErrNilTable is returned by the methods of a nil *Table.
var ErrNilTable = errors.New("lakelog: the *Table is nil (Open or Create it first)")

// Table is a handle on one Delta table.
type Table struct {
	store  objstore.Store
	root   string
	commit []deltalog.CommitOption

	mu   sync.Mutex
	snap *deltalog.Snapshot
}

// Option configures Open and Create.
type Option func(*options)

type options struct {
	store      objstore.Store
	storage    objstore.Options
	partitions []string
	props      map[string]string
	commit     []deltalog.CommitOption
	open       []deltalog.Option
	createOnly []string // the create options given, refused by Open
}

// WithStore reads and writes the table through store (one configured
// with its own credentials, endpoint or retry policy); the URI is then the
// table's root inside it ("" for the store's root). Without it the URI is
// resolved by objstore.Open from the environment.
func WithStore(store objstore.Store) Option { return func(o *options) { o.store = store } }

// WithStorageOptions configures the store the URI names with these
// settings instead of the environment's (delta-rs's storage_options):
// AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, AZURE_STORAGE_CONNECTION_STRING,
// GOOGLE_APPLICATION_CREDENTIALS, STORAGE_EMULATOR_HOST and the rest of
// objstore.Options' keys.
func WithStorageOptions(opts map[string]string) Option {
	return func(o *options) { o.storage = opts }
}

// WithCommitOptions are given to every commit the handle makes (an
// application transaction, user metadata, isolation, hooks...).
func WithCommitOptions(opts ...deltalog.CommitOption) Option {
	return func(o *options) { o.commit = append(o.commit, opts...) }
}

// AtVersion opens the table at version v (time travel); writes through
// such a handle commit on top of v and so conflict with what came after.
func AtVersion(v int64) Option {
	return func(o *options) { o.open = append(o.open, deltalog.AtVersion(v)) }
}

// AtTime opens the table as it was at t.
func AtTime(t time.Time) Option {
	return func(o *options) { o.open = append(o.open, deltalog.AtTimestamp(t)) }
}

// PartitionBy (Create only) partitions the table by these columns.
func PartitionBy(columns ...string) Option {
	return func(o *options) {
		o.partitions = append(o.partitions, columns...)
		o.createOnly = append(o.createOnly, "PartitionBy")
	}
}

// Properties (Create only) are the table's properties
// (delta.enableChangeDataFeed, delta.enableDeletionVectors, ...).
func Properties(props map[string]string) Option {
	return func(o *options) {
		if o.props == nil {
			o.props = map[string]string{}
		}
		for k, v := range props {
			o.props[k] = v
		}
		o.createOnly = append(o.createOnly, "Properties")
	}
}

func resolve(ctx context.Context, uri string, opts []Option) (*options, objstore.Store, string, error) {
	o := &options{}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	if o.store != nil {
		if len(o.storage) > 0 {
			return nil, nil, "", errors.New("lakelog: WithStore and WithStorageOptions: give the store its settings, or let the URI's store take them")
		}
		return o, o.store, uri, nil
	}
	st, err := objstore.OpenWith(ctx, uri, o.storage)
	if err != nil {
		return nil, nil, "", fmt.Errorf("lakelog: %w", err)
	}
	return o, st, "", nil
}

// Open opens the table at uri (a path, file://, s3://, gs://, az:// or
// mem:// URI, or the root inside the store given WithStore), at its
// latest version unless AtVersion or AtTime says otherwise.
func Open(ctx context.Context, uri string, opts ...Option) (*Table, error) {
	o, st, root, err := resolve(ctx, uri, opts)
	if err != nil {
		return nil, err
	}
	if len(o.createOnly) > 0 {
		return nil, fmt.Errorf("lakelog: Open of %s: %s applies to Create only", uri, o.createOnly[0])
	}
	snap, err := deltalog.Open(ctx, st, root, o.open...)
	if err != nil {
		return nil, err
	}
	return &Table{store: st, root: root, commit: o.commit, snap: snap}, nil
}

// Create creates an empty table at uri with the columns of schema
// (nullable as its fields say), PartitionBy's partition columns and
// Properties' properties, in one commit (version 0). It fails with
// deltalog.ErrTableExists when a table is there.
func Create(ctx context.Context, uri string, sc *arrow.Schema, opts ...Option) (*Table, error) {
	if sc == nil {
		return nil, errors.New("lakelog: Create needs the table's schema (it is nil)")
	}
	o, st, root, err := resolve(ctx, uri, opts)
	if err != nil {
		return nil, err
	}
	if len(o.open) > 0 {
		return nil, fmt.Errorf("lakelog: Create of %s: AtVersion and AtTime apply to Open only", uri)
	}
	delta, err := actions.FromArrowSchema(sc)
	if err != nil {
		return nil, fmt.Errorf("lakelog: Create of %s: %w", uri, err)
	}
	text, err := actions.SchemaString(delta)
	if err != nil {
		return nil, fmt.Errorf("lakelog: Create of %s: %w", uri, err)
	}
	md := &actions.Metadata{SchemaString: text, PartitionColumns: o.partitions, Configuration: o.props}
	res, err := writer.CreateTable(ctx, st, root, md, nil, writer.WithCommitOptions(o.commit...))
	if err != nil {
		return nil, err
	}
	snap, err := res.Snapshot()
	if err != nil {
		return nil, err
	}
	return &Table{store: st, root: root, commit: o.commit, snap: snap}, nil
}

// Snapshot is the snapshot the handle is at, for the packages below.
func (t *Table) Snapshot() *deltalog.Snapshot {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snap
}

// Version is the version the handle is at (-1 for a nil handle).
func (t *Table) Version() int64 {
	if s := t.Snapshot(); s != nil {
		return s.Version()
	}
	return -1
}

// Schema is the table's schema as Arrow sees it.
func (t *Table) Schema() (*arrow.Schema, error) {
	s := t.Snapshot()
	if s == nil {
		return nil, ErrNilTable
	}
	return actions.ToArrowSchema(s.Schema(), false, "")
}

// Refresh moves the handle to the table's latest version.
func (t *Table) Refresh(ctx context.Context) error {
	s := t.Snapshot()
	if s == nil {
		return ErrNilTable
	}
	latest, err := deltalog.Open(ctx, t.store, t.root)
	if err != nil {
		return err
	}
	t.advance(latest)
	return nil
}

// At is a new handle on the table at version v (the receiver stays).
func (t *Table) At(ctx context.Context, v int64) (*Table, error) {
	if t.Snapshot() == nil {
		return nil, ErrNilTable
	}
	snap, err := deltalog.Open(ctx, t.store, t.root, deltalog.AtVersion(v))
	if err != nil {
		return nil, err
	}
	return &Table{store: t.store, root: t.root, commit: t.commit, snap: snap}, nil
}

// AtTime is a new handle on the table as it was at ts.
func (t *Table) AtTime(ctx context.Context, ts time.Time) (*Table, error) {
	if t.Snapshot() == nil {
		return nil, ErrNilTable
	}
	snap, err := deltalog.Open(ctx, t.store, t.root, deltalog.AtTimestamp(ts))
	if err != nil {
		return nil, err
	}
	return &Table{store: t.store, root: t.root, commit: t.commit, snap: snap}, nil
}

// History is the table's commits, newest first, at most limit of them
// (limit < 0: all).
func (t *Table) History(ctx context.Context, limit int) ([]deltalog.CommitEntry, error) {
	if t.Snapshot() == nil {
		return nil, ErrNilTable
	}
	return deltalog.History(ctx, t.store, t.root, limit)
}

// advance moves the handle to snap unless it already is at a newer
// version.
func (t *Table) advance(snap *deltalog.Snapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if snap != nil && (t.snap == nil || snap.Version() > t.snap.Version()) {
		t.snap = snap
	}
}

// RetryOnConflict runs op with the handle at the table's latest version
// and, while op fails with a conflict, moves the handle to the new latest
// version and runs op again, under deltalog.RetryOnConflict's rules and
// options (every conflict kind retried, nothing else; backoff).
func (t *Table) RetryOnConflict(ctx context.Context, op func(*Table) error, opts ...deltalog.RetryOption) error {
	if t.Snapshot() == nil {
		return ErrNilTable
	}
	if op == nil {
		return errors.New("lakelog: RetryOnConflict needs an operation (op is nil)")
	}
	return deltalog.RetryOnConflict(ctx, t.store, t.root, func(s *deltalog.Snapshot) error {
		t.advance(s)
		return op(t)
	}, opts...)
}

// Result is what a write did.
type Result struct {
	// Version is the version committed, or the handle's version when the
	// operation committed nothing (Committed false).
	Version   int64
	Committed bool
	// AlreadyApplied: the write carried an application transaction
	// (deltalog.WithAppTransaction) the table already holds, so nothing
	// was committed; Version is the version that holds it.
	AlreadyApplied bool
	// Metrics are Spark's operationMetrics of the commit (numDeletedRows,
	// numTargetRowsUpdated, numAddedFiles...); several commits (OPTIMIZE
	// in parts, VACUUM's start and end) are summed.
	Metrics map[string]int64
	// Commits are the commits made, in order, for the packages below
	// (WaitHooks, CommitInfo, the snapshot after).
	Commits []*deltalog.CommitResult
}

// WaitHooks waits for the post-commit hooks of the commits (checkpoint,
// Iceberg conversion...) and returns their errors; a hook never fails
// the write itself.
func (r *Result) WaitHooks() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, c := range r.Commits {
		if err := c.WaitHooks(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// finish builds the Result of commits and moves the handle to the last.
func (t *Table) finish(commits ...*deltalog.CommitResult) (*Result, error) {
	res := &Result{Metrics: map[string]int64{}}
	for _, c := range commits {
		if c == nil {
			continue
		}
		res.Commits = append(res.Commits, c)
		res.Version = c.Version
		if c.AlreadyApplied {
			res.AlreadyApplied = true
			continue
		}
		res.Committed = true
		if ci := c.CommitInfo(); ci != nil {
			for k, v := range ci.OperationMetrics {
				if n, ok := metricValue(v); ok {
					res.Metrics[k] += n
				}
			}
		}
	}
	if !res.Committed {
		if !res.AlreadyApplied {
			res.Version = t.Version()
		}
		return res, nil
	}
	snap, err := res.Commits[len(res.Commits)-1].Snapshot()
	if err != nil {
		return res, err
	}
	t.advance(snap)
	return res, nil
}

// metricValue reads an operationMetrics value: a string of digits as
// Spark writes them, or a number.
func metricValue(v any) (int64, bool) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case float64:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// batches is an iterator over recs.
func batches(recs []arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if r != nil && !yield(r, nil) {
				return
			}
		}
	}
}

// Append adds the rows of recs to the table (Spark's mode "append").
// Nothing is committed for no rows (writer.ErrEmptyInput).
func (t *Table) Append(ctx context.Context, recs ...arrow.RecordBatch) (*Result, error) {
	return t.AppendSeq(ctx, batches(recs))
}

// AppendSeq is Append of a stream of batches (writer.Option: file sizes,
// merge schema...).
func (t *Table) AppendSeq(ctx context.Context, seq iter.Seq2[arrow.RecordBatch, error], opts ...writer.Option) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	c, err := writer.Append(ctx, snap, seq, append([]writer.Option{writer.WithCommitOptions(t.commit...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return t.finish(c)
}

// Overwrite replaces the table's rows with those of recs (Spark's mode
// "overwrite"); no batches empties the table.
func (t *Table) Overwrite(ctx context.Context, recs ...arrow.RecordBatch) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	c, err := writer.Overwrite(ctx, snap, batches(recs), writer.WithCommitOptions(t.commit...))
	if err != nil {
		return nil, err
	}
	return t.finish(c)
}

// dmlOptions are the handle's commit options before opts.
func (t *Table) dmlOptions(opts []dml.Option) []dml.Option {
	return append([]dml.Option{dml.WithCommitOptions(t.commit...)}, opts...)
}

func (t *Table) dmlResult(r *dml.Result, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	if r == nil {
		return t.finish()
	}
	res, err := t.finish(r.CommitResult)
	if res != nil && len(r.Metrics) > 0 {
		res.Metrics = r.Metrics
	}
	return res, err
}

// Delete deletes the rows where pred is true (nil: every row).
func (t *Table) Delete(ctx context.Context, pred expr.Expr, opts ...dml.Option) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	return t.dmlResult(dml.Delete(ctx, snap, pred, t.dmlOptions(opts)...))
}

// Update sets columns of the rows where pred is true (nil: every row):
// set maps a column to its new value, an expr.Expr (expr.Col("x")) or a
// Go value taken as a literal.
func (t *Table) Update(ctx context.Context, pred expr.Expr, set map[string]any, opts ...dml.Option) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	return t.dmlResult(dml.Update(ctx, snap, pred, assignments(set), t.dmlOptions(opts)...))
}

// assignments are set's assignments in column order.
func assignments(set map[string]any) []*expr.Assignment {
	cols := make([]string, 0, len(set))
	for c := range set {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	var out []*expr.Assignment
	for _, c := range cols {
		v, ok := set[c].(expr.Expr)
		if !ok {
			v = expr.Lit(set[c])
		}
		out = append(out, &expr.Assignment{Column: expr.Col(c), Value: v})
	}
	return out
}

// Merge starts a MERGE of source into the table, as delta-rs's
// merge(...).when_matched_update_all()...execute(): give the join with
// On, the clauses in order, and run it with Execute. The target is
// aliased "t" and the source "s" unless Aliases says otherwise.
func (t *Table) Merge(source ...arrow.RecordBatch) *MergeBuilder {
	return &MergeBuilder{t: t, source: batches(source), target: "t", src: "s"}
}

// MergeSeq is Merge of a stream of source batches.
func (t *Table) MergeSeq(source iter.Seq2[arrow.RecordBatch, error]) *MergeBuilder {
	return &MergeBuilder{t: t, source: source, target: "t", src: "s"}
}

// MergeBuilder collects a MERGE's join, clauses and options.
type MergeBuilder struct {
	t           *Table
	source      iter.Seq2[arrow.RecordBatch, error]
	on          expr.Expr
	target, src string
	clauses     []dml.Clause
	opts        []dml.Option
}

// On is the join condition, over the aliases (t.id = s.id).
func (m *MergeBuilder) On(cond expr.Expr) *MergeBuilder { m.on = cond; return m }

// Aliases names the target and the source in the conditions.
func (m *MergeBuilder) Aliases(target, source string) *MergeBuilder {
	m.target, m.src = target, source
	return m
}

// add appends a clause, in order.
func (m *MergeBuilder) add(c dml.Clause) *MergeBuilder {
	m.clauses = append(m.clauses, c)
	return m
}

// WhenMatchedUpdateAll sets every column from the source where cond
// (nil: always) holds for a matched row.
func (m *MergeBuilder) WhenMatchedUpdateAll(cond expr.Expr) *MergeBuilder {
	return m.add(dml.WhenMatchedUpdateAll(cond))
}

// WhenMatchedUpdate sets the columns of set (values as in Table.Update)
// where cond holds for a matched row.
func (m *MergeBuilder) WhenMatchedUpdate(cond expr.Expr, set map[string]any) *MergeBuilder {
	return m.add(dml.WhenMatchedUpdate(cond, assignments(set)...))
}

// WhenMatchedDelete deletes a matched row where cond holds.
func (m *MergeBuilder) WhenMatchedDelete(cond expr.Expr) *MergeBuilder {
	return m.add(dml.WhenMatchedDelete(cond))
}

// WhenNotMatchedInsertAll inserts a source row without a match where
// cond holds.
func (m *MergeBuilder) WhenNotMatchedInsertAll(cond expr.Expr) *MergeBuilder {
	return m.add(dml.WhenNotMatchedInsertAll(cond))
}

// WhenNotMatchedInsert inserts the values of set for a source row
// without a match where cond holds.
func (m *MergeBuilder) WhenNotMatchedInsert(cond expr.Expr, set map[string]any) *MergeBuilder {
	return m.add(dml.WhenNotMatchedInsert(cond, assignments(set)...))
}

// WhenNotMatchedBySourceDelete deletes a target row no source row
// matches where cond holds.
func (m *MergeBuilder) WhenNotMatchedBySourceDelete(cond expr.Expr) *MergeBuilder {
	return m.add(dml.WhenNotMatchedBySourceDelete(cond))
}

// WhenNotMatchedBySourceUpdate sets the columns of set of a target row
// no source row matches where cond holds.
func (m *MergeBuilder) WhenNotMatchedBySourceUpdate(cond expr.Expr, set map[string]any) *MergeBuilder {
	return m.add(dml.WhenNotMatchedBySourceUpdate(cond, assignments(set)...))
}

// Options adds dml options (schema evolution, parallelism...).
func (m *MergeBuilder) Options(opts ...dml.Option) *MergeBuilder {
	m.opts = append(m.opts, opts...)
	return m
}

// Execute runs the MERGE and commits it.
func (m *MergeBuilder) Execute(ctx context.Context) (*Result, error) {
	snap := m.t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	opts := m.t.dmlOptions(append([]dml.Option{dml.WithAliases(m.target, m.src)}, m.opts...))
	return m.t.dmlResult(dml.Merge(ctx, snap, m.source, m.on, m.clauses, opts...))
}

// Scan plans a read of the handle's version (reader.Option: columns,
// filter, batch size...).
func (t *Table) Scan(opts ...reader.Option) (*reader.Scan, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	return reader.NewScan(snap, opts...)
}

// Records reads the handle's version: Scan(opts...).Records(ctx).
func (t *Table) Records(ctx context.Context, opts ...reader.Option) iter.Seq2[arrow.RecordBatch, error] {
	sc, err := t.Scan(opts...)
	if err != nil {
		return func(yield func(arrow.RecordBatch, error) bool) { yield(nil, err) }
	}
	return sc.Records(ctx)
}

// Changes is the change data feed of versions from through to (to < 0:
// the latest).
func (t *Table) Changes(ctx context.Context, from, to int64, opts ...cdf.Option) (*cdf.Feed, error) {
	if t.Snapshot() == nil {
		return nil, ErrNilTable
	}
	return cdf.Open(ctx, t.store, t.root, cdf.Versions(from, to), opts...)
}

// Follow is the change data feed of versions as they are committed, from
// start on, until ctx ends.
func (t *Table) Follow(ctx context.Context, start cdf.Start, opts ...cdf.Option) iter.Seq2[*cdf.Batch, error] {
	if t.Snapshot() == nil {
		return func(yield func(*cdf.Batch, error) bool) { yield(nil, ErrNilTable) }
	}
	return cdf.Follow(ctx, t.store, t.root, start, opts...)
}

// Optimize compacts small files (and Z-orders with
// maintenance.ZOrderBy).
func (t *Table) Optimize(ctx context.Context, opts ...maintenance.OptimizeOption) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	r, err := maintenance.Optimize(ctx, snap, append([]maintenance.OptimizeOption{maintenance.OptimizeCommitOptions(t.commit...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return t.finish(r.Commits...)
}

// Vacuum deletes the files no version inside the retention window reads.
func (t *Table) Vacuum(ctx context.Context, opts ...maintenance.VacuumOption) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	r, err := maintenance.Vacuum(ctx, snap, append([]maintenance.VacuumOption{maintenance.VacuumCommitOptions(t.commit...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return t.finish(r.StartCommit, r.EndCommit) // VACUUM END's metrics count the files deleted
}

// Restore makes the table hold the files of an earlier version
// (maintenance.ToVersion) or time (maintenance.ToTimestamp).
func (t *Table) Restore(ctx context.Context, opts ...maintenance.RestoreOption) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	r, err := maintenance.Restore(ctx, snap, append([]maintenance.RestoreOption{maintenance.RestoreCommitOptions(t.commit...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return t.finish(r.Commit)
}

// AlterColumns applies one schema change (schema.AddColumns,
// RenameColumn, DropColumns, ChangeColumnType...) to the handle's
// snapshot, e.g. t.AlterColumns(ctx, func(ctx context.Context, s
// *deltalog.Snapshot) (*deltalog.CommitResult, error) { return
// schema.RenameColumn(ctx, s, "a", "b") }); AddColumns and RenameColumn
// below are the common ones.
func (t *Table) AlterColumns(ctx context.Context, change func(context.Context, *deltalog.Snapshot) (*deltalog.CommitResult, error)) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	if change == nil {
		return nil, errors.New("lakelog: AlterColumns needs a change (it is nil)")
	}
	c, err := change(ctx, snap)
	if err != nil {
		return nil, err
	}
	return t.finish(c)
}

// AddColumns adds nullable columns at the end of the schema.
func (t *Table) AddColumns(ctx context.Context, cols ...schema.Column) (*Result, error) {
	return t.AlterColumns(ctx, func(ctx context.Context, s *deltalog.Snapshot) (*deltalog.CommitResult, error) {
		return schema.AddColumns(ctx, s, cols, schema.WithCommitOptions(t.commit...))
	})
}

// RenameColumn renames a column (the table must use column mapping).
func (t *Table) RenameColumn(ctx context.Context, column, newName string) (*Result, error) {
	return t.AlterColumns(ctx, func(ctx context.Context, s *deltalog.Snapshot) (*deltalog.CommitResult, error) {
		return schema.RenameColumn(ctx, s, column, newName, schema.WithCommitOptions(t.commit...))
	})
}

// SetProperties sets table properties in one commit.
func (t *Table) SetProperties(ctx context.Context, props map[string]string) (*Result, error) {
	snap := t.Snapshot()
	if snap == nil {
		return nil, ErrNilTable
	}
	c, err := maintenance.SetProperties(ctx, snap, props, t.commit...)
	if err != nil {
		return nil, err
	}
	return t.finish(c)
}
