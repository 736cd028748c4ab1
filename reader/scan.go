package reader

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/rangefetch"
	"github.com/lakelog/lakelog/objstore"
)

// ErrUnsupported is returned (wrapped) when a table or a data file uses a
// feature this reader cannot read correctly (Snapshot.Supports). It is terminal: the scan returns no rows rather than wrong
// ones. It is deltalog.ErrUnsupportedFeature: one error family for every
// feature lakelog cannot honour.
var ErrUnsupported = deltalog.ErrUnsupportedFeature

// ErrFileMissing is returned (wrapped, with objstore.ErrNotFound) when a
// data file the snapshot lists is gone from the store: VACUUM removes the
// files that only versions older than its retention read. Terminal for
// that version; a newer one may read.
var ErrFileMissing = errors.New("data file missing")

// missingFile is a data file the store does not have.
type missingFile struct {
	version int64
	key     string
	err     error
}

func (e *missingFile) Error() string {
	return fmt.Sprintf("reader: version %d: data file %s is missing (VACUUM removes the files only older versions read)", e.version, e.key)
}

func (e *missingFile) Unwrap() []error { return []error{ErrFileMissing, e.err} }

// fileError is err from opening or fetching a data file of the scan.
func (s *Scan) fileError(key string, err error) error {
	if errors.Is(err, objstore.ErrNotFound) {
		return &missingFile{version: s.snap.Version(), key: key, err: err}
	}
	return fmt.Errorf("reader: %s: %w", key, err)
}

// DefaultBatchSize is the number of rows per batch read from a data file.
const DefaultBatchSize = 64 * 1024

// Option configures a Scan.
type Option func(*config)

type config struct {
	filter       expr.Expr
	columns      []string
	columnsSet   bool
	limit        int64
	batchSize    int
	mem          memory.Allocator
	parallelism  int
	tx           *deltalog.Transaction  // RecordReads
	rowIndex     bool                   // WithRowIndex
	dictionaries bool                   // WithDictionaries
	rowTracking  bool                   // WithRowTracking
	extra        []*actions.StructField // WithFileColumns
	// fetchBudget and fetchConcurrency bound the I/O stage on object
	// stores (fetch.go).
	fetchBudget      int64
	fetchConcurrency int
	// decodeAhead bounds the decoded batches a parallel pass holds for
	// the consumer (records.go).
	decodeAhead int64
	views       bool // WithStringViews
}

// WithFilter keeps only the rows for which e is TRUE (not FALSE, not NULL).
// e is also used to plan: files whose partition values or statistics show
// that no row can match are not read.
func WithFilter(e expr.Expr) Option { return func(c *config) { c.filter = e } }

// WithColumns projects the scan onto the named top-level columns, in the
// given order. Names match the schema's case-insensitively, as in Spark;
// the batches carry the schema's spelling. Without it every column is
// returned, in schema order. An empty list gives batches without columns
// (row counts only).
func WithColumns(names ...string) Option {
	return func(c *config) { c.columns = slices.Clone(names); c.columnsSet = true }
}

// WithLimit stops the scan after n rows (n >= 0). Which rows is not
// specified beyond the order Records documents.
func WithLimit(n int64) Option { return func(c *config) { c.limit = n } }

// WithBatchSize sets the most rows per batch (default DefaultBatchSize).
func WithBatchSize(rows int) Option { return func(c *config) { c.batchSize = rows } }

// WithAllocator sets the Arrow allocator for every buffer the scan makes
// (default: Go memory, with buffers the scan or the caller releases
// pooled for reuse by later reads).
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// WithParallelism sets how many data files Records reads at once (default
// GOMAXPROCS; 1 reads one file after another).
func WithParallelism(n int) Option { return func(c *config) { c.parallelism = n } }

// WithStringViews returns the top-level string and binary columns as
// Arrow's view types (Utf8View, BinaryView) instead of offsets and one
// data buffer: values up to 12 bytes are held in the views themselves,
// longer ones of a dictionary page are referenced where they lie rather
// than copied into every batch. Columns nested in structs, lists and maps
// stay plain. Batches are otherwise the same; a consumer must take the
// view arrays (array.StringView, array.BinaryView). Without it, strings
// and binaries come as array.String and array.Binary: what expr's
// evaluation, arrow-go's compute kernels and lakelog's writers take.
func WithStringViews() Option { return func(c *config) { c.views = true } }

// RecordReads records on tx what the scan reads, as the conflict checker
// needs it: when the scan is planned, its filter as a read predicate (the
// whole table when it has none); as planning keeps a file, that file as
// read. An operation that plans through such a scan cannot forget its
// read set. The scan serializes its calls on tx; tx must not be used
// concurrently elsewhere while the scan plans.
func RecordReads(tx *deltalog.Transaction) Option { return func(c *config) { c.tx = tx } }

// RowIndexColumn is the name of the column WithRowIndex adds.
const RowIndexColumn = "_row_index"

// WithRowIndex adds a last column, RowIndexColumn (long, not null): each
// row's position in its data file, counted from 0 over every row the file
// holds, before deletion vectors and the filter drop any. It is the row
// index deletion vectors are written against (Spark's
// _metadata.row_index).
func WithRowIndex() Option { return func(c *config) { c.rowIndex = true } }

// WithDictionaries returns a string or binary column's values as an Arrow
// dictionary array (int32 indices into the chunk's dictionary, shared by
// the batches of the chunk) when all of a batch's values of it come from
// one dictionary-encoded column chunk, instead of expanding them: a
// writer that re-encodes the rows (dml's copy-on-write rewrite) then
// takes the dictionary as it is rather than hashing every value again.
// Other batches of the column are plain. A batch's schema names the type
// each column has in it, so it may differ from the scan's Schema for such
// columns.
func WithDictionaries() Option { return func(c *config) { c.dictionaries = true } }

// WithFileColumns adds columns that data files may hold beside the
// table's schema (the change data feed's _change_type in _change_data
// files), after the projection: each is read by name from the file, null
// where a file lacks it. The names must not be the table's columns.
func WithFileColumns(fields ...*actions.StructField) Option {
	return func(c *config) { c.extra = slices.Clone(fields) }
}

// ScanFile is one data file a scan reads: the add action and what planning
// derived from it.
type ScanFile struct {
	// Add is the file's add action, shared with the snapshot: do not modify.
	Add *actions.Add
	// Key is the file's key in the snapshot's store.
	Key string
	// Stats are the parsed add.stats, nil when the file has none.
	Stats *actions.Stats
}

// ScanMetrics counts what a scan planned and read. Counters grow while the
// scan runs; read them after iteration ends for totals.
type ScanMetrics struct {
	// FilesConsidered is the number of active files planning looked at.
	FilesConsidered int64
	// FilesPrunedByPartition were dropped because their partition values
	// cannot satisfy the filter.
	FilesPrunedByPartition int64
	// FilesSkippedByStats were dropped because their min/max/null counts
	// show that no row can satisfy the filter.
	FilesSkippedByStats int64
	// FilesPlanned are the files planning kept (the files a pass of
	// Files or Records reads), BytesPlanned their sizes and RowsPlanned
	// their rows by their statistics (deleted rows too) or, once a file
	// without them is opened, its footer; RowsUnknown counts the planned
	// files whose row count is not known yet, so that RowsPlanned is the
	// whole count only when it is 0. A progress
	// line compares RowsRead+RowsSkippedByPageIndex with RowsPlanned.
	FilesPlanned, BytesPlanned, RowsPlanned, RowsUnknown int64
	// FilesRead is the number of data files opened.
	FilesRead int64
	// RowsRead is the number of rows decoded from data files, before the
	// filter.
	RowsRead int64
	// RowsReturned is the number of rows yielded.
	RowsReturned int64
	// FilesUsingPageIndex are the files read in which the Parquet page
	// index ruled rows out (pages, or whole row groups), and
	// RowsSkippedByPageIndex the rows it ruled out: they are not decoded,
	// so they are not in RowsRead.
	FilesUsingPageIndex, RowsSkippedByPageIndex int64
	// On an object store (a store that is not objstore.RandomAccess):
	// Requests is the number of ranged GETs the scan issued for data
	// files, BytesFetched the bytes they returned, UncoveredReads those
	// of them that served a read the fetcher had not planned, and
	// PeakBuffered the most bytes the fetcher held fetched or in flight
	// at once (bounded by WithFetchBudget).
	Requests, BytesFetched, UncoveredReads, PeakBuffered int64
}

type metrics struct {
	considered, prunedPartition, skippedStats, filesRead, rowsRead, rowsReturned atomic.Int64
	filesPlanned, bytesPlanned, rowsPlanned, rowsUnknown                         atomic.Int64
	// footerRows and footersRead: the rows of opened files whose
	// statistics gave none, from their footers.
	footerRows, footersRead          atomic.Int64
	pageIndexFiles, pageIndexSkipped atomic.Int64
	fetch                            rangefetch.Stats // the object-store reads of every pass
}

// Scan is a planned read of one snapshot: which columns, which rows. It is
// immutable after NewScan except for its metrics, and safe for concurrent
// use; each call of Files or Records is an independent pass.
type Scan struct {
	snap     *deltalog.Snapshot
	cfg      config
	schema   *actions.StructType // the table's logical schema
	partCols map[string]bool     // logical partition column names
	filter   expr.Expr           // bound, or nil
	mapping  columnMapping       // how columns are found in data files
	pruner   *expr.Pruner        // nil when there is no filter
	// filterColumns are the top-level columns the filter reads.
	filterColumns []string
	// widened are the (physical) paths of struct-nested columns whose
	// type was widened (typeWidening): their stats may be in the old type.
	widened    [][]string
	outFields  []*actions.StructField
	readFields []*actions.StructField // outFields plus the filter's columns
	outSchema  *arrow.Schema
	readSchema *arrow.Schema
	// viewsAfterFilter: an output column is read plain (for the filter)
	// and made a view after it (WithStringViews).
	viewsAfterFilter bool
	// rowIndex: the assembled batches end with the row index
	// (WithRowIndex, or WithRowTracking, whose rt turns the assembled
	// batch, of schema assembled, into the output).
	rowIndex  bool
	rt        *rowTracking
	assembled *arrow.Schema
	m         metrics
	recordMu  sync.Mutex // serializes RecordReads' calls on cfg.tx
}

// NewScan plans a scan of snap. It fails when a column or the filter does
// not resolve against the table's schema, or when a column-mapped
// table's schema lacks a column's physical name (or, in mode id, its
// column id). A table whose data this reader cannot read
// (ErrUnsupported, Snapshot.Supports) can still be planned and counted
// from its log; Records and ReadFile refuse it before reading anything.
func NewScan(snap *deltalog.Snapshot, opts ...Option) (*Scan, error) {
	if snap == nil {
		return nil, fmt.Errorf("reader: %w", deltalog.ErrNoSnapshot)
	}
	cfg := config{limit: -1, batchSize: DefaultBatchSize, mem: defaultAllocator, parallelism: runtime.GOMAXPROCS(0),
		fetchBudget: DefaultFetchBudget, fetchConcurrency: DefaultFetchConcurrency, decodeAhead: defaultDecodeAhead}
	for _, o := range opts {
		o(&cfg)
	}
	return newScan(snap, cfg)
}

// Narrow derives a scan of the same snapshot under every planning rule of
// s (partition pruning, stats skipping, the widened columns' bounds, the
// filter's columns read along): a filter among opts is ANDed with s's, and
// the other options (projection, limit, batch size, allocator,
// parallelism) replace s's.
func (s *Scan) Narrow(opts ...Option) (*Scan, error) {
	cfg := s.cfg
	cfg.columns = slices.Clone(cfg.columns)
	prior := cfg.filter
	cfg.filter = nil
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case cfg.filter == nil:
		cfg.filter = prior
	case prior != nil:
		cfg.filter = expr.And(prior, cfg.filter)
	}
	return newScan(s.snap, cfg)
}

// newScan is the one place a scan is planned.
func newScan(snap *deltalog.Snapshot, cfg config) (*Scan, error) {
	if cfg.batchSize <= 0 {
		cfg.batchSize = DefaultBatchSize
	}
	if cfg.parallelism <= 0 {
		cfg.parallelism = 1
	}
	s := &Scan{snap: snap, cfg: cfg, schema: snap.Schema(), partCols: map[string]bool{}, rowIndex: cfg.rowIndex}
	extras := cfg.extra
	var err error
	if s.rt, err = planRowTracking(snap, cfg); err != nil {
		return nil, err
	}
	if s.rt != nil {
		extras = append(slices.Clone(extras), s.rt.fileFields()...)
		s.rowIndex = true
	}
	table := snap.Config()
	if s.mapping, err = newColumnMapping(table); err != nil {
		return nil, err
	}
	for _, c := range snap.PartitionColumns() {
		s.partCols[c] = true
	}
	if cfg.columnsSet {
		seen := map[string]bool{}
		for _, name := range cfg.columns {
			f := s.schema.FieldFold(name)
			if f == nil {
				return nil, fmt.Errorf("reader: column %q is not in the table (columns: %s)", name, strings.Join(s.schema.Names(), ", "))
			}
			if seen[f.Name] {
				return nil, fmt.Errorf("reader: column %q is selected twice", f.Name)
			}
			seen[f.Name] = true
			s.outFields = append(s.outFields, f)
		}
	} else {
		s.outFields = slices.Clone(s.schema.Fields)
	}
	for _, f := range extras {
		if s.schema.FieldFold(f.Name) != nil {
			return nil, fmt.Errorf("reader: file column %q is a column of the table", f.Name)
		}
		s.outFields = append(s.outFields, f)
	}
	s.readFields = s.outFields
	if cfg.filter != nil {
		bound, err := expr.BindPredicate(cfg.filter, s.schema)
		if err != nil {
			return nil, fmt.Errorf("reader: filter: %w", err)
		}
		s.filter = bound
		p, err := expr.NewPruner(bound, table)
		if err != nil {
			return nil, fmt.Errorf("reader: filter: %w", err)
		}
		s.pruner = p
		s.widened = table.WidenedPaths()
		// Read the filter's columns too, in schema order after the output.
		need := map[string]bool{}
		expr.Walk(bound, func(n expr.Expr) bool {
			if c, ok := n.(*expr.Column); ok && len(c.Path) > 0 && !need[c.Path[0]] {
				need[c.Path[0]] = true
				s.filterColumns = append(s.filterColumns, c.Path[0])
			}
			return true
		})
		have := map[string]bool{}
		for _, f := range s.outFields {
			have[f.Name] = true
		}
		extra := []*actions.StructField{}
		for _, f := range s.schema.Fields {
			if need[f.Name] && !have[f.Name] {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			s.readFields = append(slices.Clone(s.outFields), extra...)
		}
	}
	if cfg.tx != nil {
		if s.filter != nil {
			cfg.tx.ReadPredicates(s.filter)
		} else {
			cfg.tx.ReadWholeTable()
		}
	}
	if s.outSchema, err = arrowSchemaOf(s.outFields); err != nil {
		return nil, err
	}
	if s.readSchema, err = arrowSchemaOf(s.readFields); err != nil {
		return nil, err
	}
	if cfg.views {
		// Output columns become views; a column the filter reads is
		// decoded plain, for the filter, and made a view after it.
		s.outSchema = withViews(s.outSchema, nil)
		s.readSchema = withViews(s.readSchema, s.filterColumns)
		for i := range s.outFields {
			s.viewsAfterFilter = s.viewsAfterFilter || !arrow.TypeEqual(s.outSchema.Field(i).Type, s.readSchema.Field(i).Type)
		}
	}
	if s.rowIndex {
		if s.schema.FieldFold(RowIndexColumn) != nil {
			return nil, fmt.Errorf("reader: the table has a column %q, which WithRowIndex would shadow", RowIndexColumn)
		}
		ri := arrow.Field{Name: RowIndexColumn, Type: arrow.PrimitiveTypes.Int64}
		s.outSchema = arrow.NewSchema(append(slices.Clone(s.outSchema.Fields()), ri), nil)
		s.readSchema = arrow.NewSchema(append(slices.Clone(s.readSchema.Fields()), ri), nil)
	}
	s.assembled = s.outSchema
	if s.rt != nil {
		s.outSchema = s.rt.schema(s.assembled)
	}
	return s, nil
}

// withViews is sc with its top-level string and binary fields as view
// types, except those named in plain.
func withViews(sc *arrow.Schema, plain []string) *arrow.Schema {
	fields := slices.Clone(sc.Fields())
	for i, f := range fields {
		if slices.Contains(plain, f.Name) {
			continue
		}
		switch f.Type.ID() {
		case arrow.STRING:
			fields[i].Type = arrow.BinaryTypes.StringView
		case arrow.BINARY:
			fields[i].Type = arrow.BinaryTypes.BinaryView
		}
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md)
}

// arrowSchemaOf is the logical Arrow schema of some of a table's fields.
func arrowSchemaOf(fields []*actions.StructField) (*arrow.Schema, error) {
	sc, err := actions.ToArrowSchema(&actions.StructType{Fields: fields}, false, "")
	if err != nil {
		return nil, fmt.Errorf("reader: %w", err)
	}
	return sc, nil
}

// checkReadSupported asks the snapshot whether it can be scanned.
func checkReadSupported(snap *deltalog.Snapshot) error {
	return snap.Supports(deltalog.OpScan)
}

// dropBounds removes the min and max of the widened columns from stats: a
// file written before a column was widened holds bounds in the old type,
// whose text can denote a different value in the new one (a float's
// "3.4" is 3.4000000953674316 as a double, not 3.4). Null counts stay.
func dropBounds(st *actions.Stats, paths [][]string) {
	for _, p := range paths {
		for _, m := range []map[string]any{st.MinValues, st.MaxValues} {
			for i, k := range p {
				if m == nil {
					break
				}
				if i == len(p)-1 {
					delete(m, k)
					break
				}
				m, _ = m[k].(map[string]any)
			}
		}
	}
}

// Snapshot is the snapshot the scan reads.
func (s *Scan) Snapshot() *deltalog.Snapshot { return s.snap }

// Schema is the Arrow schema of every batch Records yields: the projected
// columns, logical names and types (actions.ToArrowSchema).
func (s *Scan) Schema() *arrow.Schema { return s.outSchema }

// Filter is the bound filter, or nil.
func (s *Scan) Filter() expr.Expr { return s.filter }

// AllMatch reports whether every row of f (a file Files planned) satisfies
// the scan's filter, as its partition values and stats prove without
// reading it: a DELETE removes such a file whole. Without a filter every
// row does. Like expr.Pruner.AllMatch it is conservative, and it reads
// the stats the scan trusts (not the bounds of widened columns), by the
// physical names the table's configuration gives.
func (s *Scan) AllMatch(f *ScanFile) bool {
	if s.pruner == nil {
		return true
	}
	return s.pruner.AllMatch(f.Add.PartitionValues, f.Stats)
}

// Metrics returns the counters accumulated by all passes so far.
func (s *Scan) Metrics() ScanMetrics {
	return ScanMetrics{
		FilesConsidered:        s.m.considered.Load(),
		FilesPrunedByPartition: s.m.prunedPartition.Load(),
		FilesSkippedByStats:    s.m.skippedStats.Load(),
		FilesPlanned:           s.m.filesPlanned.Load(),
		BytesPlanned:           s.m.bytesPlanned.Load(),
		RowsPlanned:            s.m.rowsPlanned.Load() + s.m.footerRows.Load(),
		RowsUnknown:            max(0, s.m.rowsUnknown.Load()-s.m.footersRead.Load()),
		FilesRead:              s.m.filesRead.Load(),
		RowsRead:               s.m.rowsRead.Load(),
		RowsReturned:           s.m.rowsReturned.Load(),
		FilesUsingPageIndex:    s.m.pageIndexFiles.Load(),
		RowsSkippedByPageIndex: s.m.pageIndexSkipped.Load(),
		Requests:               s.m.fetch.Requests.Load(),
		BytesFetched:           s.m.fetch.Bytes.Load(),
		UncoveredReads:         s.m.fetch.Uncovered.Load(),
		PeakBuffered:           s.m.fetch.Peak.Load(),
	}
}

// Files plans the scan: it yields, in path order, the active files that may
// hold matching rows. A file is dropped when its partition values or its
// statistics prove that no row satisfies the filter; files without stats
// are kept. A file with a deletion vector is planned like any other (its
// statistics still bound its live rows); reading it drops the rows the
// vector deletes. Files
// reads nothing but the snapshot (and, once per snapshot, the stats its
// checkpoint holds: Snapshot.LoadStats).
func (s *Scan) Files(ctx context.Context) iter.Seq2[*ScanFile, error] {
	return func(yield func(*ScanFile, error) bool) {
		if err := s.snap.LoadStats(ctx); err != nil {
			yield(nil, fmt.Errorf("reader: plan: %w", err))
			return
		}
		files := s.snap.ActiveFiles()
		// The filter is evaluated over the snapshot's columns, a batch
		// of files at a time (expr.Pruner.PruneBatch); only the files
		// it keeps become add actions.
		var partitions, stats []bool
		if s.pruner != nil {
			partitions, stats = make([]bool, files.Rows()), make([]bool, files.Rows())
			for _, b := range files.Batches() {
				if err := ctx.Err(); err != nil {
					yield(nil, fmt.Errorf("reader: plan: %w", err))
					return
				}
				end := b.Start + b.Len()
				s.pruner.PruneBatch(s.prunable(b.FileColumns), partitions[b.Start:end], stats[b.Start:end])
			}
		}
		for row, f := range files.All() {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("reader: plan: %w", err))
				return
			}
			s.m.considered.Add(1)
			if s.pruner != nil {
				if !partitions[row] {
					s.m.prunedPartition.Add(1)
					continue
				}
				if !stats[row] {
					s.m.skippedStats.Add(1)
					continue
				}
			}
			sf := &ScanFile{Add: f.Add(), Key: s.snap.TablePath(f.Path()), Stats: f.Stats()}
			if sf.Stats != nil && len(s.widened) > 0 {
				dropBounds(sf.Stats, s.widened)
			}
			s.m.planned(sf)
			if s.cfg.tx != nil {
				s.recordMu.Lock()
				s.cfg.tx.ReadFiles(sf.Add.Path)
				s.recordMu.Unlock()
			}
			if !yield(sf, nil) {
				return
			}
		}
	}
}

// prunable is the view of a batch of files the pruner reads: the batch
// itself, or, when the table has widened columns, the batch without
// those columns' bounds (see dropBounds).
func (s *Scan) prunable(b expr.FileBatch) expr.FileBatch {
	if len(s.widened) == 0 {
		return b
	}
	return widenedBatch{FileBatch: b, widened: s.widened}
}

// widenedBatch hides the bounds of widened columns.
type widenedBatch struct {
	expr.FileBatch
	widened [][]string
}

func (w widenedBatch) isWidened(path []string) bool {
	return slices.ContainsFunc(w.widened, func(p []string) bool { return slices.Equal(p, path) })
}

func (w widenedBatch) MinColumn(path []string) arrow.Array {
	if w.isWidened(path) {
		return nil
	}
	return w.FileBatch.MinColumn(path)
}

func (w widenedBatch) MaxColumn(path []string) arrow.Array {
	if w.isWidened(path) {
		return nil
	}
	return w.FileBatch.MaxColumn(path)
}

func (w widenedBatch) FileValues(i int, paths [][]string) (map[string]*string, *actions.Stats) {
	pv, st := w.FileBatch.FileValues(i, paths)
	if st != nil {
		dropBounds(st, w.widened)
	}
	return pv, st
}

// PlanFile plans a file that need not be in the scan's snapshot (a file
// an earlier version added or removed, a change data file) under the
// scan's rules: keep is false when its partition values or statistics
// prove that no row satisfies the filter. The file is read with ReadFile.
func (s *Scan) PlanFile(add *actions.Add) (f *ScanFile, keep bool, err error) {
	s.m.considered.Add(1)
	return s.planFile(add)
}

// planFile decides whether add may hold matching rows.
func (s *Scan) planFile(add *actions.Add) (*ScanFile, bool, error) {
	if s.pruner != nil && !s.pruner.MayMatch(add.PartitionValues, nil) {
		s.m.prunedPartition.Add(1)
		return nil, false, nil
	}
	stats, err := actions.ParseStats(add.Stats)
	if err != nil {
		// Bad stats only cost skipping: read the file.
		stats = nil
	}
	if stats != nil && len(s.widened) > 0 {
		dropBounds(stats, s.widened)
	}
	if s.pruner != nil && stats != nil && !s.pruner.MayMatch(add.PartitionValues, stats) {
		s.m.skippedStats.Add(1)
		return nil, false, nil
	}
	sf := &ScanFile{Add: add, Key: s.snap.TablePath(add.Path), Stats: stats}
	s.m.planned(sf)
	return sf, true, nil
}

// planned counts a file planning kept.
func (m *metrics) planned(f *ScanFile) {
	m.filesPlanned.Add(1)
	m.bytesPlanned.Add(f.Add.Size)
	if f.Stats != nil && f.Stats.NumRecords >= 0 {
		m.rowsPlanned.Add(f.Stats.NumRecords)
	} else {
		m.rowsUnknown.Add(1)
	}
}
