package dml

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/parallel"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// The operation names commitInfo records, as Spark's.
const (
	opDelete = "DELETE"
	opUpdate = "UPDATE"
	opMerge  = "MERGE"
)

// target is one data file whose rows an operation changes.
type target struct {
	file *reader.ScanFile
	// all is set when every live row of the file is affected, known from
	// its partition values and stats without reading it.
	all bool
	// deleted and updated are the row indexes (positions in the file,
	// reader.WithRowIndex) of the rows that go and of those replaced by a
	// new version.
	deleted, updated *roaring64.Bitmap
	// merge holds MERGE's per-row decisions for updated rows.
	merge *mergeRows
}

func newTarget(f *reader.ScanFile) *target {
	return &target{file: f, deleted: roaring64.New(), updated: roaring64.New()}
}

func (t *target) touched() bool { return t.all || !t.deleted.IsEmpty() || !t.updated.IsEmpty() }

// liveRows is the number of rows the file holds before the operation, from
// its stats and deletion vector: -1 when unknown.
func (t *target) liveRows() int64 {
	if t.file.Stats == nil || t.file.Stats.NumRecords < 0 {
		return -1
	}
	n := t.file.Stats.NumRecords
	if dv := t.file.Add.DeletionVector; dv != nil {
		n -= dv.Cardinality
	}
	return n
}

// job is the shared machinery of DELETE, UPDATE and MERGE: given the
// target files and the rows of each that go or change, it writes the new
// data files (copy-on-write: every kept row of a touched file again;
// deletion vectors: only the new versions of updated rows), the change
// data files and the deletion vectors, and commits it all at once.
type job struct {
	ctx   context.Context
	snap  *deltalog.Snapshot
	cfg   *config
	mem   memory.Allocator
	tx    *deltalog.Transaction
	op    string
	start time.Time

	useDV bool // mark rows in deletion vectors instead of rewriting files
	// rowTracking: rewritten rows keep their row IDs (rowtracking.go).
	rowTracking bool
	cdf         bool // write change data files
	// allUpdated says that target.all means every row is updated (UPDATE)
	// rather than deleted.
	allUpdated bool
	// update returns the new versions of rows (the table's columns plus
	// the row index) of t.
	update func(t *target, rows arrow.RecordBatch) (arrow.RecordBatch, error)
	// inserts yields rows to add (MERGE's NOT MATCHED clauses), in the
	// table's columns; nil for none.
	inserts iter.Seq2[arrow.RecordBatch, error]

	mu      sync.Mutex
	metrics map[string]int64
	scanMs  int64
	// sourceMs is MERGE's time reading the source into memory
	// (materializeSourceTimeMs).
	sourceMs int64
	written  []string // keys of files written, removed again if the commit fails
}

func newJob(ctx context.Context, snap *deltalog.Snapshot, cfg *config, op string) *job {
	j := &job{ctx: ctx, snap: snap, cfg: cfg, op: op, start: time.Now(), metrics: map[string]int64{}}
	j.mem = cfg.writer.Allocator()
	j.tx = snap.NewTransaction(cfg.commit...)
	table := snap.Config()
	j.cdf = table.ChangeDataFeed()
	j.useDV = !cfg.noDV && table.DeletionVectors()
	j.rowTracking = table.RowTracking()
	return j
}

func (j *job) count(name string, n int64) {
	j.mu.Lock()
	j.metrics[name] += n
	j.mu.Unlock()
}

// forEachFile runs fn on every file of files, cfg.parallelism at a time,
// and stops at the first error.
func (j *job) forEachFile(files []*target, fn func(t *target) error) error {
	return parallel.ForEach(j.ctx, len(files), j.cfg.parallelism, func(_ context.Context, i int) error { return fn(files[i]) })
}

// plan finds the files predicate may match (all files when nil), recording
// the read on the transaction, and the matching rows of each (into
// target.updated when updated, else target.deleted).
func (j *job) plan(predicate expr.Expr, updated bool) ([]*target, error) {
	opts := []reader.Option{reader.WithColumns(), reader.WithRowIndex(), reader.WithAllocator(j.mem), reader.RecordReads(j.tx)}
	if predicate != nil {
		bound, err := expr.BindPredicate(predicate, j.snap.Schema())
		if err != nil {
			return nil, fmt.Errorf("dml: %s: %w", j.op, err)
		}
		opts = append(opts, reader.WithFilter(bound))
	}
	scan, err := reader.NewScan(j.snap, opts...)
	if err != nil {
		return nil, fmt.Errorf("dml: %s: %w", j.op, err)
	}
	var targets []*target
	for f, err := range scan.Files(j.ctx) {
		if err != nil {
			return nil, fmt.Errorf("dml: %s: %w", j.op, err)
		}
		t := newTarget(f)
		t.all = scan.AllMatch(f)
		if t.all && t.liveRows() < 0 {
			t.all = false // its row count is unknown: read it
		}
		targets = append(targets, t)
	}
	if err := j.matchRows(scan, targets, updated); err != nil {
		return nil, fmt.Errorf("dml: %s: %w", j.op, err)
	}
	return targets, nil
}

// matchRows reads, for each file of targets, the row indexes of the rows
// scan (a scan with the operation's predicate as filter, no columns and
// the row index) returns, into target.deleted or, with updated,
// target.updated.
func (j *job) matchRows(scan *reader.Scan, targets []*target, updated bool) error {
	t0 := time.Now()
	defer func() { j.scanMs += time.Since(t0).Milliseconds() }()
	var reads []*target
	for _, t := range targets {
		if !t.all {
			reads = append(reads, t)
		}
	}
	report := j.track("find", scan, reads)
	return j.forEachFile(reads, func(t *target) error {
		into := t.deleted
		if updated {
			into = t.updated
		}
		for rec, err := range scan.ReadFile(j.ctx, t.file) {
			if err != nil {
				return err
			}
			report()
			idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
			for _, v := range idx.Int64Values() {
				into.Add(uint64(v))
			}
		}
		return nil
	})
}

// track returns what reports the progress of reading targets' rows
// through scan in phase (WithProgress), to call after each batch: the
// rows scan has read since track was called, of the targets' rows.
func (j *job) track(phase string, scan *reader.Scan, targets []*target) func() {
	fn := j.cfg.progress
	if fn == nil || len(targets) == 0 {
		return func() {}
	}
	var total int64
	for _, t := range targets {
		st := t.file.Stats
		if st == nil || st.NumRecords < 0 {
			total = 0 // unknown
			break
		}
		total += st.NumRecords
	}
	read := func() int64 { m := scan.Metrics(); return m.RowsRead + m.RowsSkippedByPageIndex }
	base := read()
	fn(phase, 0, total)
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		fn(phase, read()-base, total)
	}
}

// outcome is what the rewrite wrote.
type outcome struct {
	data    *writer.WriteResult
	changes *writer.ChangeResult
	removed []*actions.Add // files removed whole
	dvAdds  []*actions.Add // files re-added with a new deletion vector
	dvOld   []*actions.Add // their previous add
	dvKeys  []string       // deletion vector files written
	touched int
	// highWaterMarks are the identity marks after the values MERGE's
	// inserts got (writer.Identity.HighWaterMarks).
	highWaterMarks map[string]int64
}

// rewrite writes what the operation changes in targets and commits it
// with params as operationParameters.
func (j *job) rewrite(targets []*target, params map[string]any) (*Result, error) {
	var touched []*target
	for _, t := range targets {
		if t.touched() {
			touched = append(touched, t)
		}
	}
	out := &outcome{touched: len(touched)}
	for _, t := range touched {
		switch {
		case t.all && j.allUpdated:
			j.count("updated", t.liveRows())
		case t.all:
			j.count("deleted", t.liveRows())
		default:
			j.count("deleted", int64(t.deleted.GetCardinality()))
			j.count("updated", int64(t.updated.GetCardinality()))
		}
	}
	t0 := time.Now()
	if err := j.writeRows(touched, out); err != nil {
		j.cleanup(out)
		return nil, err
	}
	if j.useDV {
		if err := j.writeDeletionVectors(touched, out); err != nil {
			j.cleanup(out)
			return nil, err
		}
	} else {
		for _, t := range touched {
			out.removed = append(out.removed, t.file.Add)
		}
	}
	rewriteMs := time.Since(t0).Milliseconds()
	if len(touched) == 0 && (out.data == nil || len(out.data.Adds) == 0) && !j.tx.HasAppTransaction() {
		// Nothing matched: Spark commits nothing either. With an app
		// transaction the commit still records its version, so that the
		// application knows this batch landed (exactly once).
		return &Result{Metrics: j.finalMetrics(out, rewriteMs)}, nil
	}
	res, err := j.commit(out, params, rewriteMs)
	if err != nil {
		// Only a commit known not to have landed gives its files up: after
		// an I/O error (deltalog.ErrCommitUnknown, say) the commit may be
		// in the log, and its files with it.
		if errors.Is(err, conflict.ErrConflict) {
			j.cleanup(out)
		}
		return nil, err
	}
	return res, nil
}

// needsRead reports whether t must be read in the rewrite: for change
// data, for the new versions of updated rows, and in copy-on-write for
// the rows a partly deleted file keeps.
func (j *job) needsRead(t *target) bool {
	switch {
	case j.cdf:
		return true
	case t.all:
		return j.allUpdated
	case !t.updated.IsEmpty():
		return true
	}
	return !j.useDV
}

// writeRows writes the new data files and the change data files.
func (j *job) writeRows(touched []*target, out *outcome) error {
	var reads []*target
	for _, t := range touched {
		if j.needsRead(t) {
			reads = append(reads, t)
		}
	}
	if len(reads) == 0 && j.inserts == nil {
		return nil
	}
	scanOpts := []reader.Option{reader.WithRowIndex(), reader.WithAllocator(j.mem)}
	if j.op != opMerge {
		// Dictionary-encoded string columns stay dictionaries into the
		// writer, which takes them without hashing every value again.
		// (MERGE joins target rows with its source's plain ones.)
		scanOpts = append(scanOpts, reader.WithDictionaries())
	}
	writeOpts := []writer.Option{writer.WithSettings(j.cfg.writer)}
	if j.rowTracking {
		scanOpts = append(scanOpts, reader.WithRowTracking())
		writeOpts = append(writeOpts, writer.WithMaterializedRowTracking())
	}
	full, err := reader.NewScan(j.snap, scanOpts...)
	if err != nil {
		return fmt.Errorf("dml: %w", err)
	}
	ctx, cancel := context.WithCancel(j.ctx)
	defer cancel()

	// Change rows go to their own writer, concurrently, through a channel.
	var cdc chan arrow.RecordBatch
	cdcDone := make(chan struct{})
	var cdcErr error
	if j.cdf {
		cdc = make(chan arrow.RecordBatch, 4)
		go func() {
			defer close(cdcDone)
			seq := func(yield func(arrow.RecordBatch, error) bool) {
				for rec := range cdc {
					ok := yield(rec, nil)
					rec.Release()
					if !ok {
						break
					}
				}
			}
			out.changes, cdcErr = writer.WriteChangeFiles(ctx, j.snap, seq, writer.WithSettings(j.cfg.writer))
			if cdcErr != nil {
				cancel()
			}
			for rec := range cdc { // after a failure, until the producer stops
				rec.Release()
			}
		}()
	} else {
		close(cdcDone)
	}
	emitChange := func(rec arrow.RecordBatch, kind string) error {
		if cdc == nil || rec.NumRows() == 0 {
			return nil
		}
		// The change writer reads rec's columns while the data writer
		// reads the same arrays (an update's post-image).
		arrowbatch.ShareDictionaries(rec)
		c, err := withChangeType(rec, kind, j.mem)
		if err != nil {
			return err
		}
		select {
		case cdc <- c:
			return nil
		case <-ctx.Done():
			c.Release()
			return ctx.Err()
		}
	}

	ids, err := writer.NewIdentity(j.snap.Schema())
	if err != nil || j.inserts == nil {
		ids = nil
	}
	if err != nil {
		return fmt.Errorf("dml: %s: %w", j.op, err)
	}
	rows := func(yield func(arrow.RecordBatch, error) bool) {
		if cdc != nil {
			defer close(cdc)
		}
		for rec, err := range j.rewriteFiles(ctx, full, reads, emitChange) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
		if j.inserts != nil {
			for rec, err := range j.inserts {
				if err != nil {
					yield(nil, err)
					return
				}
				// Inserted rows get identity values where their clause
				// gave none, in order, beyond the snapshot's marks.
				filled, err := ids.FillNulls(rec, j.mem)
				if err != nil {
					yield(nil, err)
					return
				}
				j.count("inserted", filled.NumRows())
				if err := emitChange(filled, actions.ChangeInsert); err != nil {
					filled.Release()
					yield(nil, err)
					return
				}
				ok := yield(filled, nil)
				filled.Release()
				if !ok {
					return
				}
			}
		}
	}
	// The rows hold their identity values: copies keep theirs, inserts
	// got theirs above.
	wr, err := writer.WriteFiles(ctx, j.snap, rows, append(writeOpts, writer.WithTableRows())...)
	if err == nil {
		out.highWaterMarks = ids.HighWaterMarks()
	}
	<-cdcDone
	if wr != nil {
		out.data = wr
	}
	if cdcErr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = cdcErr
	}
	var se *writer.SchemaError
	if errors.As(err, &se) {
		// The writer counts rows of its input, which the user never saw.
		c := *se
		c.Row = 0
		err = fmt.Errorf("a row it would write does not fit the table: %w", &c)
	}
	if err != nil {
		return fmt.Errorf("dml: %s: %w", j.op, err)
	}
	return nil
}

// rewriteFiles reads the files of reads, cfg.parallelism at a time, and
// yields what rewriteBatch makes of them, in no particular order. Each
// batch is released when the loop body returns.
func (j *job) rewriteFiles(ctx context.Context, full *reader.Scan, reads []*target, emit func(arrow.RecordBatch, string) error) iter.Seq2[arrow.RecordBatch, error] {
	type item struct {
		rec arrow.RecordBatch
		err error
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := make(chan item, j.cfg.parallelism)
		var next atomic.Int64
		var wg sync.WaitGroup
		report := j.track("rewrite", full, reads)
		send := func(it item) bool {
			select {
			case out <- it:
				return true
			case <-ctx.Done():
				if it.rec != nil {
					it.rec.Release()
				}
				return false
			}
		}
		work := func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(reads) {
					return
				}
				t := reads[i]
				for rec, err := range full.ReadFile(ctx, t.file) {
					if err != nil {
						send(item{err: err})
						return
					}
					report()
					outs, err := j.rewriteBatch(t, rec, emit)
					if err != nil {
						send(item{err: err})
						return
					}
					for k, o := range outs {
						if !send(item{rec: o}) {
							for _, r := range outs[k+1:] {
								r.Release()
							}
							return
						}
					}
				}
			}
		}
		for range min(j.cfg.parallelism, len(reads)) {
			wg.Add(1)
			go work()
		}
		go func() {
			wg.Wait()
			close(out)
		}()
		defer func() {
			cancel()
			for it := range out { // until every worker has stopped
				if it.rec != nil {
					it.rec.Release()
				}
			}
		}()
		for it := range out {
			if it.err != nil {
				yield(nil, it.err)
				return
			}
			ok := yield(it.rec, nil)
			it.rec.Release()
			if !ok {
				return
			}
		}
	}
}

// rewriteBatch splits one batch of a target file (the table's columns and
// the row index) into the rows written again (kept rows in copy-on-write,
// new versions of updated rows) and sends the change rows to emit.
func (j *job) rewriteBatch(t *target, rec arrow.RecordBatch, emit func(arrow.RecordBatch, string) error) ([]arrow.RecordBatch, error) {
	var ids *rowIDs
	if j.rowTracking {
		rec, ids = j.splitRowIDs(rec)
		defer rec.Release()
		defer ids.release()
	}
	n := int(rec.NumRows())
	idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64).Int64Values()
	del, upd := make([]bool, n), make([]bool, n)
	var nDel, nUpd int
	switch {
	case t.all && j.allUpdated:
		for i := range upd {
			upd[i] = true
		}
		nUpd = n
	case t.all:
		for i := range del {
			del[i] = true
		}
		nDel = n
	default:
		nDel = markRows(t.deleted, idx, del)
		nUpd = markRows(t.updated, idx, upd)
	}
	var outs []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, o := range outs {
			o.Release()
		}
		return nil, err
	}
	if !j.useDV {
		keep := make([]bool, n)
		for i := range keep {
			keep[i] = !del[i] && !upd[i]
		}
		kept, err := j.take(rec, keep, n-nDel-nUpd, false)
		if err == nil && kept != nil && ids != nil {
			kept, err = j.attachRowIDs(ids, kept, keep, n-nDel-nUpd, true)
		}
		if err != nil {
			return fail(err)
		}
		if kept != nil {
			j.count("copied", kept.NumRows())
			outs = append(outs, kept)
		}
	}
	if nDel > 0 {
		if j.cdf {
			gone, err := j.take(rec, del, nDel, false)
			if err != nil {
				return fail(err)
			}
			err = emit(gone, actions.ChangeDelete)
			gone.Release()
			if err != nil {
				return fail(err)
			}
		}
	}
	if nUpd > 0 {
		pre, err := j.take(rec, upd, nUpd, true)
		if err != nil {
			return fail(err)
		}
		post, err := j.update(t, pre)
		if err != nil {
			pre.Release()
			return fail(err)
		}
		if j.cdf {
			tablePre := dropLast(pre)
			err = emit(tablePre, actions.ChangeUpdatePreimage)
			tablePre.Release()
			if err == nil {
				err = emit(post, actions.ChangeUpdatePostimage)
			}
		}
		pre.Release()
		if err == nil && ids != nil {
			post, err = j.attachRowIDs(ids, post, upd, nUpd, false)
			if err != nil {
				return fail(err)
			}
		}
		if err != nil {
			post.Release()
			return fail(err)
		}
		outs = append(outs, post)
	}
	return outs, nil
}

// markRows sets mark[i] for each row whose index idx[i] is in b (idx
// ascending) and returns how many it set.
func markRows(b *roaring64.Bitmap, idx []int64, mark []bool) int {
	if b.IsEmpty() || len(idx) == 0 {
		return 0
	}
	it := b.Iterator()
	it.AdvanceIfNeeded(uint64(idx[0]))
	n, i := 0, 0
	for it.HasNext() && i < len(idx) {
		v := it.PeekNext()
		for i < len(idx) && uint64(idx[i]) < v {
			i++
		}
		if i == len(idx) {
			break
		}
		if uint64(idx[i]) == v {
			mark[i] = true
			n++
			i++
		}
		it.Next()
		if i < len(idx) {
			it.AdvanceIfNeeded(uint64(idx[i]))
		}
	}
	return n
}

// take returns the rows of rec where mask is set (count of them), without
// the row index column unless withIndex; nil when count is 0.
func (j *job) take(rec arrow.RecordBatch, mask []bool, count int, withIndex bool) (arrow.RecordBatch, error) {
	if count == 0 {
		return nil, nil
	}
	src := rec
	if !withIndex {
		src = dropLast(rec)
		defer src.Release()
	}
	if count == len(mask) {
		src.Retain()
		return src, nil
	}
	b := array.NewBooleanBuilder(j.mem)
	defer b.Release()
	b.AppendValues(mask, nil)
	m := b.NewBooleanArray()
	defer m.Release()
	out, err := compute.FilterRecordBatch(compute.WithAllocator(j.ctx, j.mem), src, m, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("dml: %s: %w", j.op, err)
	}
	return out, nil
}

// dropLast is rec without its last column (the row index), retained.
func dropLast(rec arrow.RecordBatch) arrow.RecordBatch {
	k := int(rec.NumCols()) - 1
	fields := rec.Schema().Fields()[:k]
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns()[:k], rec.NumRows())
}

// withChangeType is rec with a last column _change_type = kind.
func withChangeType(rec arrow.RecordBatch, kind string, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(n * len(kind))
	for range n {
		b.Append(kind)
	}
	ct := b.NewArray()
	defer ct.Release()
	fields := append(slices.Clone(rec.Schema().Fields()), arrow.Field{Name: actions.ChangeTypeColumn, Type: arrow.BinaryTypes.String})
	cols := append(slices.Clone(rec.Columns()), ct)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows()), nil
}

// commit commits the outcome: removes, adds, deletion vector pairs and
// change files, the identity marks, and commitInfo with Spark's metrics,
// through the one assembler (Transaction.Stage).
func (j *job) commit(out *outcome, params map[string]any, rewriteMs int64) (*Result, error) {
	m := j.finalMetrics(out, rewriteMs)
	metrics := map[string]any{}
	for k, v := range m {
		metrics[k] = strconv.FormatInt(v, 10)
	}
	c := &deltalog.Changes{Operation: j.op, Parameters: params, Metrics: metrics,
		Removes: out.removed, IdentityMarks: out.highWaterMarks}
	for i, a := range out.dvAdds {
		c.Vectors = append(c.Vectors, deltalog.VectorChange{Old: out.dvOld[i], New: a})
	}
	if out.data != nil {
		c.Adds = out.data.Adds
	}
	if out.changes != nil {
		c.ChangeData = out.changes.Files
	}
	if j.rowTracking {
		c.Tags = map[string]string{actions.TagRowTrackingPreserved: "true"}
	}
	if err := j.tx.Stage(c); err != nil {
		return nil, fmt.Errorf("dml: %s: %w", j.op, err)
	}
	res, err := j.tx.Commit(j.ctx)
	if err != nil {
		return nil, fmt.Errorf("dml: %s: commit: %w", j.op, err)
	}
	return &Result{CommitResult: res, Metrics: m}, nil
}

// cleanup deletes the files an operation wrote that failed before its
// commit or whose commit was refused: no version references them, so
// this only saves VACUUM the work.
func (j *job) cleanup(out *outcome) {
	var keys []string
	if out.data != nil {
		for _, a := range out.data.Adds {
			keys = append(keys, j.snap.TablePath(a.Path))
		}
	}
	if out.changes != nil {
		for _, c := range out.changes.Files {
			keys = append(keys, j.snap.TablePath(c.Path))
		}
	}
	keys = append(keys, out.dvKeys...)
	ctx := context.WithoutCancel(j.ctx)
	for _, k := range keys {
		_ = j.snap.Store().Delete(ctx, k)
	}
}

// Result is what an operation did: the commit (nil when nothing matched
// and nothing was committed) and Spark's operationMetrics for it.
type Result struct {
	*deltalog.CommitResult
	Metrics map[string]int64
}

// jsonText is an operationParameters value: JSON text, as Spark writes
// it (actions.JSONText).
func jsonText(v any) string { return actions.JSONText(v) }

// predicateList is a predicate as Spark records it in operationParameters:
// a list of SQL texts.
func predicateList(p expr.Expr) []string {
	if p == nil {
		return []string{}
	}
	return []string{p.String()}
}
