package cdf

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// The metadata columns every change row carries, after the table's
// columns, in this order: actions.ChangeTypeColumn (whose values are
// actions.ChangeInsert, ChangeDelete, ChangeUpdatePreimage and
// ChangeUpdatePostimage), then these.
const (
	CommitVersionColumn   = "_commit_version"
	CommitTimestampColumn = "_commit_timestamp"
)

var (
	// ErrNotRecorded: a version of the range was committed while the
	// feed was off (before it was enabled, or after it was disabled), so
	// its changes were not recorded. Terminal.
	ErrNotRecorded = errors.New("change data not recorded")
	// ErrSchemaChange: the range crosses a schema change that its rows
	// cannot be read across under the end version's schema (a column
	// dropped, renamed or narrowed, or the partitioning changed).
	// Terminal: ask for a range on one side of the change.
	ErrSchemaChange = errors.New("incompatible schema change in range")
	// ErrFileMissing: a file the range needs is gone from the store
	// (VACUUM removes the files of old versions). Terminal.
	ErrFileMissing = errors.New("change data file missing")
)

// metaFields are the metadata columns as table fields, for the output
// schema and for binding filters on them.
var metaFields = []*actions.StructField{
	{Name: actions.ChangeTypeColumn, Type: actions.TypeString, Nullable: false},
	{Name: CommitVersionColumn, Type: actions.TypeLong, Nullable: false},
	{Name: CommitTimestampColumn, Type: actions.TypeTimestamp, Nullable: false},
}

// Bounds is the range of a feed: versions, or commit timestamps. Both
// ends are inclusive.
type Bounds struct {
	fromV, toV int64
	fromT, toT time.Time
	byTime     bool
}

// Versions is the range of versions from through to (to < 0: the latest).
func Versions(from, to int64) Bounds { return Bounds{fromV: from, toV: to} }

// Timestamps is the range of versions committed from start through end
// (a zero end: the latest version), mapped to versions as Spark maps a
// feed's startingTimestamp and endingTimestamp: the first version
// committed at or after start through the last committed at or before
// end.
func Timestamps(start, end time.Time) Bounds {
	return Bounds{fromT: start, toT: end, byTime: true}
}

// Option configures a feed.
type Option func(*config)

type config struct {
	filter      expr.Expr
	columns     []string
	columnsSet  bool
	batchSize   int
	parallelism int
	mem         memory.Allocator
	emptyAfter  bool
	// Follow's: polling, the caller's trigger, the limits per batch.
	poll, maxPoll         time.Duration
	trigger               <-chan struct{}
	maxVersions, maxFiles int
	maxBytes              int64
}

// resolveConfig applies opts over the defaults.
func resolveConfig(opts []Option) config {
	cfg := config{batchSize: reader.DefaultBatchSize, parallelism: runtime.GOMAXPROCS(0),
		poll: DefaultPollInterval, maxPoll: DefaultMaxPollInterval,
		maxFiles: DefaultMaxFilesPerBatch, maxVersions: DefaultMaxVersionsPerBatch}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.parallelism <= 0 {
		cfg.parallelism = 1
	}
	return cfg
}

// WithFilter keeps only the change rows for which e is TRUE. Its
// conditions (top-level AND terms) on table columns are pushed down to
// the files: partition pruning, statistics skipping and the reader's row
// filter. Conditions on the metadata columns are evaluated on the change
// rows (with the table columns they name read along).
func WithFilter(e expr.Expr) Option { return func(c *config) { c.filter = e } }

// WithColumns projects the table's columns onto the named ones, in that
// order; the metadata columns always follow.
func WithColumns(names ...string) Option {
	return func(c *config) { c.columns = slices.Clone(names); c.columnsSet = true }
}

// WithBatchSize sets the most rows per batch read from a file.
func WithBatchSize(rows int) Option { return func(c *config) { c.batchSize = rows } }

// WithParallelism sets how many files are read at once (default
// GOMAXPROCS). Output order does not depend on it.
func WithParallelism(n int) Option { return func(c *config) { c.parallelism = n } }

// WithAllocator sets the Arrow allocator of the batches.
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// EmptyBeyondLatest makes a range that starts after the latest version
// an empty feed instead of an error (Spark's
// timestampOutOfRange.enabled).
func EmptyBeyondLatest() Option { return func(c *config) { c.emptyAfter = true } }

// Feed is a planned change data feed: a version range of one table, the
// schema its rows come out in, and the scans its files are read with.
// It is immutable and safe for concurrent use; each Records call is an
// independent pass.
type Feed struct {
	store    objstore.Store
	root     string
	from, to int64 // from > to: empty
	display  string
	cfg      config
	startMD  *actions.Metadata  // the metadata in force at from
	end      *deltalog.Snapshot // the table at to: the schema rows are read in
	// commits, when set, are the range's commits already read (a
	// follower's batch); otherwise the feed reads them with
	// deltalog.Commits.
	commits []*deltalog.VersionCommit
	// The scans, all over end: rows of data files; rows of change data
	// files with their _change_type; rows with their row index, for
	// deletion vector differences.
	data, cdc, indexed *reader.Scan
	// postFilter is the filter's part naming metadata columns, bound
	// against the table's schema and metaFields; nil when none.
	postFilter expr.Expr
	schema     *arrow.Schema // the output
	wide       *arrow.Schema // the columns read, then the metadata columns
	nRead      int           // the table columns read (wide's)
	nOut       int           // the table columns of the output (schema's)
}

// Open plans the change data feed of the table at root over b. It reads
// the log only: the snapshots at both ends of the range. Errors: the
// start beyond the latest version (ErrVersionNotFound, unless
// EmptyBeyondLatest), a table lakelog cannot read, a projection or filter
// that does not resolve. Whether every version of the range recorded its
// changes is checked as Records reaches it.
func Open(ctx context.Context, store objstore.Store, root string, b Bounds, opts ...Option) (*Feed, error) {
	if store == nil {
		return nil, fmt.Errorf("cdf: %w", deltalog.ErrNoStore)
	}
	cfg := resolveConfig(opts)
	f := &Feed{store: store, root: root, cfg: cfg, display: tableName(store, root)}
	latest, err := deltalog.Open(ctx, store, root)
	if err != nil {
		return nil, fmt.Errorf("cdf: %w", err)
	}
	if b.byTime {
		if !b.toT.IsZero() && b.toT.Before(b.fromT) {
			return nil, fmt.Errorf("cdf: %s: the ending timestamp %s is before the starting timestamp %s", f.display, fmtTime(b.toT), fmtTime(b.fromT))
		}
		f.from, f.to, err = deltalog.VersionsBetween(ctx, store, root, b.fromT, b.toT)
		if err != nil {
			if errors.Is(err, deltalog.ErrVersionNotFound) && cfg.emptyAfter {
				f.from, f.to = latest.Version()+1, latest.Version()
			} else {
				return nil, fmt.Errorf("cdf: %w", err)
			}
		}
	} else {
		f.from, f.to = b.fromV, b.toV
		if f.from < 0 {
			return nil, fmt.Errorf("cdf: %s: the starting version %d is negative", f.display, f.from)
		}
		if f.to >= 0 && f.to < f.from {
			return nil, fmt.Errorf("cdf: %s: the ending version %d is before the starting version %d", f.display, f.to, f.from)
		}
		switch {
		case f.from > latest.Version() && !cfg.emptyAfter:
			return nil, fmt.Errorf("cdf: %s: %w: the starting version %d is after the latest version %d", f.display, deltalog.ErrVersionNotFound, f.from, latest.Version())
		case f.from > latest.Version():
			f.from, f.to = latest.Version()+1, latest.Version()
		case f.to < 0 || f.to > latest.Version():
			// An end beyond the latest version is the latest, as in Spark.
			f.to = latest.Version()
		}
	}
	f.end = latest
	if f.to >= 0 && f.to != latest.Version() {
		if f.end, err = deltalog.Open(ctx, store, root, deltalog.AtVersion(f.to)); err != nil {
			return nil, fmt.Errorf("cdf: %w", err)
		}
	}
	if err := f.end.Supports(deltalog.OpChangeDataFeed); err != nil {
		return nil, fmt.Errorf("cdf: %w", err)
	}
	if f.from <= f.to {
		start := f.end
		if f.from != f.to {
			if start, err = deltalog.Open(ctx, store, root, deltalog.AtVersion(f.from)); err != nil {
				return nil, fmt.Errorf("cdf: %w", err)
			}
		}
		if err := start.Supports(deltalog.OpChangeDataFeed); err != nil {
			return nil, fmt.Errorf("cdf: %w", err)
		}
		f.startMD = start.Metadata()
	}
	if err := f.plan(); err != nil {
		return nil, err
	}
	return f, nil
}

// plan builds the scans and the output schema. The filter's AND terms
// on table columns only are pushed down to the scans; the others (any
// term naming a metadata column) are evaluated on the change rows, for
// which the scans also read the table columns they name.
func (f *Feed) plan() error {
	var tableConds, postConds []expr.Expr
	if f.cfg.filter != nil {
		for _, c := range expr.Conjuncts(f.cfg.filter) {
			if slices.ContainsFunc(expr.Columns(c), isMetaColumn) {
				postConds = append(postConds, c)
			} else {
				tableConds = append(tableConds, c)
			}
		}
	}
	schema := f.end.Schema()
	var out []string // the table columns of the output
	if f.cfg.columnsSet {
		for _, c := range f.cfg.columns {
			if !isMetaColumn(c) { // always there, last
				out = append(out, c)
			}
		}
	} else {
		out = schema.Names()
	}
	read := slices.Clone(out)
	if len(postConds) > 0 {
		post := expr.And(postConds...)
		bound, err := expr.BindPredicate(post, &actions.StructType{Fields: append(slices.Clone(schema.Fields), metaFields...)})
		if err != nil {
			return fmt.Errorf("cdf: filter: %w", err)
		}
		f.postFilter = bound
		for _, c := range expr.Columns(post) {
			if !isMetaColumn(c) && !slices.ContainsFunc(read, func(r string) bool { return strings.EqualFold(r, c) }) {
				read = append(read, c)
			}
		}
	}
	opts := []reader.Option{reader.WithBatchSize(f.cfg.batchSize), reader.WithParallelism(1), reader.WithColumns(read...)}
	if f.cfg.mem != nil {
		opts = append(opts, reader.WithAllocator(f.cfg.mem))
	}
	if len(tableConds) > 0 {
		opts = append(opts, reader.WithFilter(expr.And(tableConds...)))
	}
	var err error
	if f.data, err = reader.NewScan(f.end, opts...); err != nil {
		return fmt.Errorf("cdf: %w", err)
	}
	if f.cdc, err = f.data.Narrow(reader.WithFileColumns(&actions.StructField{Name: actions.ChangeTypeColumn, Type: actions.TypeString, Nullable: true})); err != nil {
		return fmt.Errorf("cdf: %w", err)
	}
	if f.indexed, err = f.data.Narrow(reader.WithRowIndex()); err != nil {
		return fmt.Errorf("cdf: %w", err)
	}
	meta, err := actions.ToArrowSchema(&actions.StructType{Fields: metaFields}, false, "")
	if err != nil {
		return fmt.Errorf("cdf: %w", err)
	}
	readFields := f.data.Schema().Fields()
	f.nRead, f.nOut = len(readFields), len(out)
	f.wide = arrow.NewSchema(append(slices.Clone(readFields), meta.Fields()...), nil)
	f.schema = arrow.NewSchema(append(slices.Clone(readFields[:f.nOut]), meta.Fields()...), nil)
	return nil
}

func isMetaColumn(name string) bool {
	for _, m := range metaFields {
		if strings.EqualFold(m.Name, name) {
			return true
		}
	}
	return false
}

// Schema is the schema of the feed's batches: the (projected) table
// columns under the end version's schema, then _change_type (string),
// _commit_version (long) and _commit_timestamp (timestamp).
func (f *Feed) Schema() *arrow.Schema { return f.schema }

// Versions is the feed's range of versions, resolved; from > to when it
// is empty.
func (f *Feed) Versions() (from, to int64) { return f.from, f.to }

// Records streams the feed's change rows in version order. See the
// package documentation for the rules, the ordering and memory.
func (f *Feed) Records(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if f.from > f.to {
			return
		}
		f.stream(ctx, yield)
	}
}

func tableName(store objstore.Store, root string) string {
	if l, ok := store.(objstore.Locator); ok {
		loc := l.Location()
		if root == "" {
			return loc
		}
		return strings.TrimSuffix(loc, "/") + "/" + strings.TrimSuffix(root, "/")
	}
	if root == "" {
		return "table"
	}
	return strings.TrimSuffix(root, "/")
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
