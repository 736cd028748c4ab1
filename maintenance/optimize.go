package maintenance

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/parallel"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// DefaultTargetFileSize is OPTIMIZE's target when neither TargetSize nor
// the table's delta.targetFileSize sets one: 1 GiB, as Spark's
// spark.databricks.delta.optimize.maxFileSize.
const DefaultTargetFileSize = 1 << 30

// OptimizeOption configures Optimize.
type OptimizeOption func(*optimizeConfig)

type optimizeConfig struct {
	where          expr.Expr
	target         int64
	minFileSize    int64
	maxCommitBytes int64
	zorder         []string
	parallelism    int
	writerOpts     []writer.Option
	commit         []deltalog.CommitOption
	progress       func(done, total int)
	// Auto compaction's (autocompact.go): the partitions it chose (by
	// partitionKey; nil for all), the predicate naming them in
	// commitInfo, and the small files a partition needs to be compacted.
	auto        bool
	partitions  map[string]bool
	predicate   []string
	minNumFiles int
}

// Where limits OPTIMIZE to the partitions matching pred, which may read
// partition columns only (as in Spark).
func Where(pred expr.Expr) OptimizeOption { return func(c *optimizeConfig) { c.where = pred } }

// TargetSize is the size the rewritten files aim at (default the table's
// delta.targetFileSize, else DefaultTargetFileSize).
func TargetSize(bytes int64) OptimizeOption { return func(c *optimizeConfig) { c.target = bytes } }

// MinFileSize is the size under which a file counts as small and is
// compacted (default three quarters of the target size, so that the
// files a previous OPTIMIZE wrote are left alone). A file with a
// deletion vector is rewritten whatever its size.
func MinFileSize(bytes int64) OptimizeOption {
	return func(c *optimizeConfig) { c.minFileSize = bytes }
}

// MaxBytesPerCommit bounds the bytes of the files one commit rewrites: a
// large table is optimized in several commits, each a consistent state.
// The default is no bound (one commit).
func MaxBytesPerCommit(bytes int64) OptimizeOption {
	return func(c *optimizeConfig) { c.maxCommitBytes = bytes }
}

// ZOrderBy clusters the rows of each partition by the Z-order curve of
// the columns (see zorder.go) before writing them, so that range filters
// on any of them skip most files. Every file of the selected partitions
// is rewritten, as in Spark.
func ZOrderBy(cols ...string) OptimizeOption {
	return func(c *optimizeConfig) { c.zorder = slices.Clone(cols) }
}

// OptimizeParallelism sets how many bins are rewritten at once (default
// GOMAXPROCS).
func OptimizeParallelism(n int) OptimizeOption {
	return func(c *optimizeConfig) { c.parallelism = n }
}

// OptimizeWriterOptions passes options to the writer of the new files
// (compression, allocator, ...).
func OptimizeWriterOptions(opts ...writer.Option) OptimizeOption {
	return func(c *optimizeConfig) { c.writerOpts = append(c.writerOpts, opts...) }
}

// OptimizeCommitOptions sets how each of OPTIMIZE's commits is made
// (deltalog.CommitOption, the options every operation takes).
func OptimizeCommitOptions(opts ...deltalog.CommitOption) OptimizeOption {
	return func(c *optimizeConfig) { c.commit = append(c.commit, opts...) }
}

// OptimizeProgress reports the rewrite's progress in rows: fn is called
// as the bins' rows are read (after each batch, from one goroutine at a
// time) with the rows read so far and the rows of all bins (by the
// files' statistics, deleted rows left out; 0 when a file has none), so
// that an OPTIMIZE of one large bin moves too.
func OptimizeProgress(fn func(done, total int)) OptimizeOption {
	return func(c *optimizeConfig) { c.progress = fn }
}

// OptimizeMetrics are Spark's operationMetrics of OPTIMIZE, summed over
// its commits.
type OptimizeMetrics struct {
	NumAddedFiles, NumRemovedFiles int64
	NumAddedBytes, NumRemovedBytes int64
	// File sizes of the added files: minimum, quartiles, maximum.
	MinFileSize, P25FileSize, P50FileSize, P75FileSize, MaxFileSize int64
	NumDeletionVectorsRemoved                                       int64
	NumBatches                                                      int64 // bins rewritten
	TotalConsideredFiles                                            int64 // files in the selected partitions
}

// OperationMetrics are the metrics as commitInfo.operationMetrics holds
// them: Spark's names and only those (NumBatches and
// TotalConsideredFiles are not in Spark's commit), string values.
func (m *OptimizeMetrics) OperationMetrics() map[string]any {
	s := func(n int64) string { return strconv.FormatInt(n, 10) }
	return map[string]any{
		"numAddedFiles":             s(m.NumAddedFiles),
		"numRemovedFiles":           s(m.NumRemovedFiles),
		"numAddedBytes":             s(m.NumAddedBytes),
		"numRemovedBytes":           s(m.NumRemovedBytes),
		"minFileSize":               s(m.MinFileSize),
		"p25FileSize":               s(m.P25FileSize),
		"p50FileSize":               s(m.P50FileSize),
		"p75FileSize":               s(m.P75FileSize),
		"maxFileSize":               s(m.MaxFileSize),
		"numDeletionVectorsRemoved": s(m.NumDeletionVectorsRemoved),
	}
}

// setFileSizes sets the file size metrics from the added files' sizes
// and returns the operation metrics.
func (m *OptimizeMetrics) setFileSizes(sizes []int64) map[string]any {
	slices.Sort(sizes)
	q := func(p int) int64 {
		if len(sizes) == 0 {
			return 0
		}
		return sizes[(len(sizes)-1)*p/100]
	}
	m.MinFileSize, m.P25FileSize, m.P50FileSize, m.P75FileSize, m.MaxFileSize = q(0), q(25), q(50), q(75), q(100)
	return m.OperationMetrics()
}

// OptimizeResult is the outcome of Optimize.
type OptimizeResult struct {
	// Commits are the OPTIMIZE commits, in order; none when there was
	// nothing to compact.
	Commits []*deltalog.CommitResult
	Metrics OptimizeMetrics
}

// bin is a set of files of one partition rewritten together.
type bin struct {
	files []*actions.Add
	bytes int64
}

// Optimize compacts the small files of the table into files near the
// target size: Spark's OPTIMIZE (bin-packing, or Z-order with ZOrderBy).
// Files are grouped per partition; in each, the files under MinFileSize
// (and those with deletion vectors) are packed into bins of about the
// target size, a bin of one file without a deletion vector being left
// alone. Bins are rewritten in parallel, and committed in one commit, or
// in several when MaxBytesPerCommit bounds them.
//
// The commits change no data: their adds and removes carry dataChange
// false, and each transaction reads only the files it rewrites. So a
// concurrent append never aborts OPTIMIZE (it rebases over it), and
// OPTIMIZE fails with a conflict only when a concurrent DELETE, UPDATE or
// MERGE removed one of its files; the commits made before stay.
func Optimize(ctx context.Context, snap *deltalog.Snapshot, opts ...OptimizeOption) (*OptimizeResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("maintenance: %w", deltalog.ErrNoSnapshot)
	}
	cfg := optimizeConfig{parallelism: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		o(&cfg)
	}
	if err := snap.Supports(deltalog.OpOptimize); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	if cfg.target == 0 {
		cfg.target = snap.Properties().TargetFileSize
		if cfg.target == 0 {
			cfg.target = DefaultTargetFileSize
		}
	}
	if cfg.target <= 0 {
		return nil, fmt.Errorf("maintenance: optimize: target file size %d must be positive", cfg.target)
	}
	if cfg.minFileSize == 0 {
		cfg.minFileSize = cfg.target / 4 * 3
	}
	if cfg.parallelism < 1 {
		cfg.parallelism = 1
	}
	zorder, err := checkZOrderColumns(snap, cfg.zorder)
	if err != nil {
		return nil, err
	}
	// The commit options, checked before any file is written; an app
	// transaction already applied means the whole OPTIMIZE was.
	probe := snap.NewTransaction(cfg.commit...)
	if applied, err := probe.Start(); err != nil {
		return nil, fmt.Errorf("maintenance: optimize: %w", err)
	} else if applied != nil {
		return &OptimizeResult{Commits: []*deltalog.CommitResult{applied}}, nil
	}
	// The writer's settings, resolved once: the bins' files are written
	// with them, dataChange false, at the target size.
	settings, err := writer.Resolve(cfg.writerOpts...)
	if err != nil {
		return nil, fmt.Errorf("maintenance: optimize: %w", err)
	}
	if settings, err = settings.With(writer.WithDataChange(false), writer.WithTargetFileSize(cfg.target)); err != nil {
		return nil, fmt.Errorf("maintenance: optimize: %w", err)
	}
	predStrings := cfg.predicate
	files := slices.Collect(snap.Files())
	if cfg.partitions != nil {
		files = slices.DeleteFunc(files, func(f *actions.Add) bool { return !cfg.partitions[partitionKey(f.PartitionValues)] })
	}
	if cfg.where != nil {
		bound, err := expr.BindPredicate(cfg.where, snap.Schema())
		if err != nil {
			return nil, fmt.Errorf("maintenance: optimize: %w", err)
		}
		if !expr.IsPartitionOnly(bound, snap.PartitionColumns()) {
			return nil, fmt.Errorf("maintenance: optimize: the predicate %s reads columns that are not partition columns (%s); OPTIMIZE selects whole partitions", bound, strings.Join(snap.PartitionColumns(), ", "))
		}
		predStrings = []string{bound.String()}
		// Which partitions: planned as a scan of the predicate. It is not
		// recorded as a read: OPTIMIZE depends only on the files it
		// rewrites.
		sc, err := reader.NewScan(snap, reader.WithFilter(bound), reader.WithColumns())
		if err != nil {
			return nil, fmt.Errorf("maintenance: optimize: %w", err)
		}
		files = files[:0]
		for f, err := range sc.Files(ctx) {
			if err != nil {
				return nil, fmt.Errorf("maintenance: optimize: %w", err)
			}
			files = append(files, f.Add)
		}
	}
	if err := snap.LoadStats(ctx); err != nil { // the removes carry them
		return nil, err
	}
	res := &OptimizeResult{}
	res.Metrics.TotalConsideredFiles = int64(len(files))
	binCap := cfg.target
	if cfg.maxCommitBytes > 0 {
		binCap = min(binCap, cfg.maxCommitBytes)
	}
	bins := planBins(files, binCap, cfg.minFileSize, cfg.minNumFiles, zorder)
	if len(bins) == 0 {
		return res, nil
	}

	params := map[string]any{
		"predicate": actions.JSONText(orEmpty(predStrings)),
		"zOrderBy":  actions.JSONText(orEmpty(zorder)),
		"auto":      strconv.FormatBool(cfg.auto),
	}
	var sizes []int64
	progress := binProgress(bins, cfg.progress)
	for _, group := range commitGroups(bins, cfg.maxCommitBytes) {
		adds := make([][]*actions.Add, len(group))
		err := parallel.ForEach(ctx, len(group), cfg.parallelism, func(ctx context.Context, i int) error {
			a, err := rewriteBin(ctx, snap, group[i], zorder, settings, progress)
			if err != nil {
				return err
			}
			adds[i] = a
			return nil
		})
		if err != nil {
			return res, err
		}
		tx := snap.NewTransaction(cfg.commit...)
		changes := &deltalog.Changes{Operation: "OPTIMIZE", Parameters: params, Rearranged: true, Tags: rowTrackingTags(snap)}
		var m OptimizeMetrics
		for i, b := range group {
			for _, f := range b.files {
				changes.Removes = append(changes.Removes, f)
				m.NumRemovedFiles++
				m.NumRemovedBytes += f.Size
				if f.DeletionVector != nil {
					m.NumDeletionVectorsRemoved++
				}
			}
			for _, a := range adds[i] {
				changes.Adds = append(changes.Adds, a)
				m.NumAddedFiles++
				m.NumAddedBytes += a.Size
				sizes = append(sizes, a.Size)
			}
		}
		m.NumBatches = int64(len(group))
		m.TotalConsideredFiles = res.Metrics.TotalConsideredFiles
		var groupSizes []int64
		for _, as := range adds {
			for _, a := range as {
				groupSizes = append(groupSizes, a.Size)
			}
		}
		changes.Metrics = m.setFileSizes(groupSizes)
		if err := tx.Stage(changes); err != nil {
			return res, fmt.Errorf("maintenance: optimize: %w", err)
		}
		cr, err := tx.Commit(ctx)
		if err != nil {
			return res, fmt.Errorf("maintenance: optimize: %w", err)
		}
		res.Commits = append(res.Commits, cr)
		res.Metrics.NumAddedFiles += m.NumAddedFiles
		res.Metrics.NumRemovedFiles += m.NumRemovedFiles
		res.Metrics.NumAddedBytes += m.NumAddedBytes
		res.Metrics.NumRemovedBytes += m.NumRemovedBytes
		res.Metrics.NumDeletionVectorsRemoved += m.NumDeletionVectorsRemoved
		res.Metrics.NumBatches += m.NumBatches
	}
	res.Metrics.setFileSizes(sizes)
	return res, nil
}

// zorderTag tags the files a Z-order wrote with its columns (JSON), so
// that a later Z-order by the same columns leaves a partition alone when
// all its files carry it: only partitions that changed are rewritten
// (delta-rs rewrites the whole table every run).
const zorderTag = "lakelog.zOrderBy"

// planBins groups files by partition and packs each partition's small
// files (and files with deletion vectors) into bins of at most binCap
// bytes (the target size, or the bytes-per-commit bound when smaller),
// smallest first; a partition with fewer than minNumFiles such files is
// left alone (auto compaction's threshold). With zorder every file of a partition goes into one bin,
// as Spark's Z-order rewrites whole partitions, unless the partition is
// already Z-ordered by the same columns (zorderTag on every file, none
// with a deletion vector).
func planBins(files []*actions.Add, binCap, minSize int64, minNumFiles int, zorder []string) []*bin {
	parts := map[string][]*actions.Add{}
	var keys []string
	for _, f := range files {
		k := partitionKey(f.PartitionValues)
		if _, ok := parts[k]; !ok {
			keys = append(keys, k)
		}
		parts[k] = append(parts[k], f)
	}
	slices.Sort(keys)
	var bins []*bin
	for _, k := range keys {
		fs := parts[k]
		if zorder != nil {
			if zordered(fs, actions.JSONText(zorder)) {
				continue
			}
			b := &bin{files: fs}
			for _, f := range fs {
				b.bytes += f.Size
			}
			bins = append(bins, b)
			continue
		}
		var small []*actions.Add
		for _, f := range fs {
			if f.Size < minSize || f.DeletionVector != nil {
				small = append(small, f)
			}
		}
		if len(small) < minNumFiles {
			continue
		}
		slices.SortStableFunc(small, func(a, b *actions.Add) int { return cmp.Compare(a.Size, b.Size) })
		cur := &bin{}
		flush := func() {
			// A bin of one file gains nothing unless it drops deleted rows.
			if len(cur.files) > 1 || len(cur.files) == 1 && cur.files[0].DeletionVector != nil {
				bins = append(bins, cur)
			}
			cur = &bin{}
		}
		for _, f := range small {
			if len(cur.files) > 0 && cur.bytes+f.Size > binCap {
				flush()
			}
			cur.files = append(cur.files, f)
			cur.bytes += f.Size
		}
		flush()
	}
	return bins
}

// zordered reports whether every file was written by a Z-order by cols
// (JSON) and has no deletion vector.
func zordered(files []*actions.Add, cols string) bool {
	for _, f := range files {
		if f.Tags[zorderTag] != cols || f.DeletionVector != nil {
			return false
		}
	}
	return true
}

// commitGroups splits bins into the groups committed together: each at
// most maxBytes of input (a bin larger than that alone), or all in one
// when maxBytes is 0.
func commitGroups(bins []*bin, maxBytes int64) [][]*bin {
	if maxBytes <= 0 {
		return [][]*bin{bins}
	}
	var out [][]*bin
	var cur []*bin
	var n int64
	for _, b := range bins {
		if len(cur) > 0 && n+b.bytes > maxBytes {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, b)
		n += b.bytes
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// rewriteBin reads the bin's files (without the rows their deletion
// vectors delete) and writes them again as files of about the target
// size, with dataChange false (settings carry both). With zorder the rows
// are sorted by their Z-order value first.
func rewriteBin(ctx context.Context, snap *deltalog.Snapshot, b *bin, zorder []string, settings *writer.Settings, progress func(rows int64)) ([]*actions.Add, error) {
	mem := settings.Allocator()
	ropts, wopts := rowTrackingOptions(snap)
	sc, err := reader.NewScan(snap, append(ropts, reader.WithAllocator(mem))...)
	if err != nil {
		return nil, fmt.Errorf("maintenance: optimize: %w", err)
	}
	rows := materializedRows(snap, counted(prefetched(ctx, snap, sc, b.files), progress))
	if zorder != nil {
		rows = zorderRows(rows, zorder, mem)
	} else {
		rows = coalesce(rows, mem)
	}
	wr, err := writer.WriteFiles(ctx, snap, rows, append([]writer.Option{writer.WithSettings(settings)}, wopts...)...)
	if err != nil {
		return nil, fmt.Errorf("maintenance: optimize: rewrite %d files of partition %s: %w", len(b.files), partitionKey(b.files[0].PartitionValues), err)
	}
	if zorder != nil {
		tag := actions.JSONText(zorder)
		for _, a := range wr.Adds {
			a.Tags = maps.Clone(a.Tags)
			if a.Tags == nil {
				a.Tags = map[string]string{}
			}
			a.Tags[zorderTag] = tag
		}
	}
	return wr.Adds, nil
}

// binProgress returns what counts the rows read of bins for fn
// (OptimizeProgress): nil without fn.
func binProgress(bins []*bin, fn func(done, total int)) func(rows int64) {
	if fn == nil {
		return nil
	}
	var total int64
bins:
	for _, b := range bins {
		for _, f := range b.files {
			st, err := actions.ParseStats(f.Stats)
			if err != nil || st == nil || st.NumRecords < 0 {
				total = 0 // unknown
				break bins
			}
			total += st.NumRecords
			if f.DeletionVector != nil {
				total -= f.DeletionVector.Cardinality
			}
		}
	}
	var mu sync.Mutex
	var done int64
	fn(0, int(total))
	return func(rows int64) {
		mu.Lock()
		defer mu.Unlock()
		done += rows
		fn(int(done), int(total))
	}
}

// counted passes batches through, telling progress (if any) their rows.
func counted(batches iter.Seq2[arrow.RecordBatch, error], progress func(rows int64)) iter.Seq2[arrow.RecordBatch, error] {
	if progress == nil {
		return batches
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range batches {
			if err == nil {
				progress(rec.NumRows())
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// prefetchBatches is how many batches the reader of a bin may run ahead
// of its writer.
const prefetchBatches = 4

// prefetched yields the rows of files, read one file after another on a
// goroutine of its own up to prefetchBatches batches ahead of the
// consumer, so that reading a bin's next files overlaps encoding the
// rows already read. Each batch is released after the consumer's yield
// returns, as Scan.ReadFile releases them; when the consumer stops, the
// reader is cancelled and what it read ahead is released.
func prefetched(ctx context.Context, snap *deltalog.Snapshot, sc *reader.Scan, files []*actions.Add) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		type item struct {
			rec arrow.RecordBatch
			err error
		}
		ch := make(chan item, prefetchBatches)
		go func() {
			defer close(ch)
			for _, f := range files {
				sf := &reader.ScanFile{Add: f, Key: snap.TablePath(f.Path)}
				for rec, err := range sc.ReadFile(ctx, sf) {
					if rec != nil {
						rec.Retain()
					}
					select {
					case ch <- item{rec, err}:
					case <-ctx.Done():
						if rec != nil {
							rec.Release()
						}
						return
					}
					if err != nil {
						return
					}
				}
			}
		}()
		defer func() {
			cancel()
			for it := range ch { // until the reader has stopped
				if it.rec != nil {
					it.rec.Release()
				}
			}
		}()
		for it := range ch {
			ok := yield(it.rec, it.err)
			if it.rec != nil {
				it.rec.Release()
			}
			if !ok || it.err != nil {
				return
			}
		}
	}
}

// coalesceRows is the size coalesce gathers small files' batches to.
const coalesceRows = 64 << 10

// coalesce joins consecutive batches into batches of about coalesceRows
// rows: small files yield small batches, and the writer's cost is per
// batch as much as per row.
func coalesce(in iter.Seq2[arrow.RecordBatch, error], mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var pending []arrow.RecordBatch
		var n int64
		release := func() {
			for _, r := range pending {
				r.Release()
			}
			pending, n = pending[:0], 0
		}
		defer release()
		flush := func() bool {
			if len(pending) == 0 {
				return true
			}
			if len(pending) == 1 {
				ok := yield(pending[0], nil)
				release()
				return ok
			}
			rec, err := arrowbatch.Concat(pending, mem)
			release()
			if err != nil {
				yield(nil, fmt.Errorf("maintenance: optimize: %w", err))
				return false
			}
			ok := yield(rec, nil)
			rec.Release()
			return ok
		}
		for rec, err := range in {
			if err != nil {
				yield(nil, err)
				return
			}
			if rec.NumRows() >= coalesceRows {
				if !flush() || !yield(rec, nil) {
					return
				}
				continue
			}
			rec.Retain()
			pending = append(pending, rec)
			n += rec.NumRows()
			if n >= coalesceRows && !flush() {
				return
			}
		}
		flush()
	}
}

// partitionKey names a partition by its values, in column order.
func partitionKey(pv map[string]*string) string {
	if len(pv) == 0 {
		return "(unpartitioned)"
	}
	keys := make([]string, 0, len(pv))
	for k := range pv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte('/')
		}
		sb.WriteString(k)
		sb.WriteByte('=')
		if v := pv[k]; v != nil {
			sb.WriteString(strconv.Quote(*v))
		} else {
			sb.WriteString("null")
		}
	}
	return sb.String()
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
