package cdf

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/parallel"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// jobKind says how a job's file becomes change rows.
type jobKind int

const (
	// allRows: every (live) row of the file is a change of changeType.
	allRows jobKind = iota
	// cdcRows: a change data file; each row carries its own change type.
	cdcRows
	// dvDiff: the rows whose deletion-vector bit changed between a remove
	// and an add of the same file: newly deleted rows are deletes,
	// restored rows inserts.
	dvDiff
)

// job is one file of one version to read, and where its batches go.
type job struct {
	version    int64
	ts         time.Time
	kind       jobKind
	changeType string
	file       *reader.ScanFile
	// dvDiff: the deletion vectors of the remove and of the add (nil: no
	// rows deleted).
	removedDV, addedDV *actions.DeletionVector
	err                error // a version that cannot be read: the error, in order
}

// jobAhead is how many batches a file's reader decodes ahead of the
// consumer.
const jobAhead = 2

// stream runs the feed: a planner reads the log through deltalog.Commits
// and turns each version into jobs, in order; up to parallelism jobs read
// their files at once, each at most jobAhead batches ahead; the batches
// are yielded job by job, so in version order (parallel.Stream). When it
// returns, every goroutine it started has ended and every batch it did
// not yield is released.
func (f *Feed) stream(parent context.Context, yield func(arrow.RecordBatch, error) bool) {
	jobs := func(ctx context.Context) iter.Seq2[*job, error] {
		return func(yieldJob func(*job, error) bool) {
			f.plan1(ctx, func(j *job) bool {
				if j.err != nil {
					return yieldJob(nil, j.err)
				}
				return yieldJob(j, nil)
			})
		}
	}
	for rec, err := range parallel.Stream(parent, jobs, f.cfg.parallelism, jobAhead, f.run, arrow.RecordBatch.Release) {
		if err != nil {
			if perr := parent.Err(); perr != nil && err == perr {
				err = fmt.Errorf("cdf: %s: %w", f.display, err)
			}
			yield(nil, err)
			return
		}
		ok := yield(rec, nil)
		rec.Release()
		if !ok {
			return
		}
	}
}

// plan1 walks the range's commits and emits each version's jobs in
// order; an error is emitted as a job carrying it, after which planning
// stops.
func (f *Feed) plan1(ctx context.Context, emit func(*job) bool) {
	md, props := f.startMD, f.startMD.Properties()
	var checked *actions.Metadata // the metadata last found readable
	for vc, err := range f.rangeCommits(ctx) {
		if err != nil {
			emit(&job{err: fmt.Errorf("cdf: %s: %w", f.display, err)})
			return
		}
		for i := range vc.Actions {
			if m := vc.Actions[i].Metadata; m != nil {
				md, props = m, m.Properties()
			}
		}
		if err := f.checkRecorded(vc.Version, props); err != nil {
			emit(&job{err: err})
			return
		}
		if md != checked {
			if err := f.checkSchema(vc.Version, md, props); err != nil {
				emit(&job{err: err})
				return
			}
			checked = md
		}
		if vc.Version == f.from {
			if err := f.checkFirstRemoves(ctx, vc); err != nil {
				emit(&job{err: err})
				return
			}
		}
		jobs, err := f.versionJobs(vc)
		if err != nil {
			emit(&job{err: err})
			return
		}
		for _, j := range jobs {
			if !emit(j) {
				return
			}
		}
	}
}

// checkFirstRemoves checks the schema the rows removed by the range's
// first commit were written under (checkRemovedSchema) when that commit
// changes the metadata; else it is the start's, checked already. Rows
// read from change data files were written under the commit's own
// schema. When the log no longer holds the version before, its schema
// is unknown and the rows are read as they are.
func (f *Feed) checkFirstRemoves(ctx context.Context, vc *deltalog.VersionCommit) error {
	if f.from == 0 {
		return nil
	}
	var changesMD, removes bool
	for i := range vc.Actions {
		a := &vc.Actions[i]
		switch {
		case a.CDC != nil:
			return nil
		case a.Metadata != nil:
			changesMD = true
		case a.Remove != nil && a.Remove.DataChange:
			removes = true
		}
	}
	if !changesMD || !removes {
		return nil
	}
	prev, err := deltalog.Open(ctx, f.store, f.root, deltalog.AtVersion(f.from-1))
	switch {
	case errors.Is(err, deltalog.ErrVersionNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("cdf: %w", err)
	}
	return f.checkRemovedSchema(prev.Metadata(), prev.Properties())
}

// rangeCommits are the range's commits: those a follower already read,
// else the log's.
func (f *Feed) rangeCommits(ctx context.Context) iter.Seq2[*deltalog.VersionCommit, error] {
	if f.commits == nil {
		return deltalog.Commits(ctx, f.store, f.root, f.from, f.to)
	}
	return func(yield func(*deltalog.VersionCommit, error) bool) {
		for _, vc := range f.commits {
			if !yield(vc, nil) {
				return
			}
		}
	}
}

// checkRecorded fails when version v's changes were not recorded.
func (f *Feed) checkRecorded(v int64, props *actions.TableProperties) error {
	if e := props.InvalidProperty(actions.PropEnableChangeDataFeed); e != nil {
		return fmt.Errorf("cdf: %s: version %d: %w", f.display, v, e)
	}
	if !props.EnableChangeDataFeed {
		return fmt.Errorf("cdf: %s: %w for version %d: %s is not true at that version (the range is %d to %d)", f.display, ErrNotRecorded, v, actions.PropEnableChangeDataFeed, f.from, f.to)
	}
	return nil
}

// versionJobs turns one commit into the jobs that read its changes, by
// PROTOCOL.md's Change Data Files rules.
func (f *Feed) versionJobs(vc *deltalog.VersionCommit) ([]*job, error) {
	var jobs []*job
	newJob := func(kind jobKind, changeType string, add *actions.Add, s *reader.Scan) (bool, error) {
		sf, keep, err := s.PlanFile(add)
		if err != nil {
			return false, fmt.Errorf("cdf: %s: version %d: %w", f.display, vc.Version, err)
		}
		if keep {
			jobs = append(jobs, &job{version: vc.Version, ts: vc.Timestamp, kind: kind, changeType: changeType, file: sf})
		}
		return keep, nil
	}
	hasCDC := false
	for i := range vc.Actions {
		if c := vc.Actions[i].CDC; c != nil {
			hasCDC = true
			if _, err := newJob(cdcRows, "", &actions.Add{Path: c.Path, PartitionValues: c.PartitionValues, Size: c.Size}, f.cdc); err != nil {
				return nil, err
			}
		}
	}
	if hasCDC {
		return jobs, nil
	}
	// No change data files: dataChange adds are inserts, dataChange
	// removes deletes; a remove and an add of one file differ by their
	// deletion vectors.
	removes := map[string]*actions.Remove{}
	var removeOrder []string
	for i := range vc.Actions {
		if r := vc.Actions[i].Remove; r != nil && r.DataChange {
			p := actions.CanonicalPath(r.Path)
			if _, dup := removes[p]; !dup {
				removeOrder = append(removeOrder, p)
			}
			removes[p] = r
		}
	}
	for i := range vc.Actions {
		a := vc.Actions[i].Add
		if a == nil || !a.DataChange {
			continue
		}
		p := actions.CanonicalPath(a.Path)
		if r, ok := removes[p]; ok {
			delete(removes, p)
			if r.DeletionVector.UniqueID() == a.DeletionVector.UniqueID() {
				continue // the same rows: no change
			}
			file := *a
			file.DeletionVector = nil
			keep, err := newJob(dvDiff, "", &file, f.indexed)
			if err != nil {
				return nil, err
			}
			if keep {
				jobs[len(jobs)-1].removedDV, jobs[len(jobs)-1].addedDV = r.DeletionVector, a.DeletionVector
			}
			continue
		}
		if _, err := newJob(allRows, actions.ChangeInsert, a, f.data); err != nil {
			return nil, err
		}
	}
	for _, p := range removeOrder {
		r, ok := removes[p]
		if !ok {
			continue
		}
		add, err := f.removedFile(vc.Version, r)
		if err != nil {
			return nil, err
		}
		if _, err := newJob(allRows, actions.ChangeDelete, add, f.data); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// removedFile is the file a remove names, as an add to read it by: the
// rows it still held (its deletion vector applied) are the deletes.
func (f *Feed) removedFile(v int64, r *actions.Remove) (*actions.Add, error) {
	size := int64(-1)
	if r.Size != nil {
		size = *r.Size
	}
	pv := r.PartitionValues
	if pv == nil {
		if len(f.end.PartitionColumns()) > 0 {
			return nil, fmt.Errorf("cdf: %s: version %d: the remove of %s has no partitionValues, so its rows cannot be read as deletes", f.display, v, r.Path)
		}
		pv = map[string]*string{}
	}
	return &actions.Add{Path: r.Path, PartitionValues: pv, Size: size, Stats: r.Stats, DeletionVector: r.DeletionVector}, nil
}

// run reads the rows of one job and emits them as changes.
func (f *Feed) run(ctx context.Context, j *job, emit func(arrow.RecordBatch) bool) error {
	var err error
	switch j.kind {
	case allRows:
		err = f.readRows(ctx, j, f.data, emit)
	case cdcRows:
		err = f.readRows(ctx, j, f.cdc, emit)
	case dvDiff:
		err = f.readDiff(ctx, j, emit)
	}
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			err = fmt.Errorf("%w: %w (VACUUM deletes the files of old versions once they are older than the table's %s, %s by default)", ErrFileMissing, err, actions.PropDeletedFileRetentionDuration, days(deltalog.DefaultDeletedFileRetention))
		}
		return fmt.Errorf("cdf: %s: version %d: %s: %w", f.display, j.version, j.file.Add.Path, err)
	}
	return nil
}

func (f *Feed) mem() memory.Allocator {
	if f.cfg.mem != nil {
		return f.cfg.mem
	}
	return memory.DefaultAllocator
}

// readRows reads a data or change data file through scan and sends its
// rows as changes.
func (f *Feed) readRows(ctx context.Context, j *job, scan *reader.Scan, emit func(arrow.RecordBatch) bool) error {
	for rec, err := range scan.ReadFile(ctx, j.file) {
		if err != nil {
			return err
		}
		var types arrow.Array
		if j.kind == cdcRows {
			types = rec.Column(f.nRead)
			if err := checkChangeTypes(types); err != nil {
				return err
			}
			types.Retain()
		} else {
			types = constantString(f.mem(), j.changeType, int(rec.NumRows()))
		}
		out, err := f.changeRows(ctx, j, rec, types)
		types.Release()
		if err != nil {
			return err
		}
		if out != nil && !emit(out) {
			return nil
		}
	}
	return nil
}

// checkChangeTypes fails on a _change_type that is null or not one of the
// four the protocol names.
func checkChangeTypes(a arrow.Array) error {
	s, ok := a.(*array.String)
	if !ok {
		return fmt.Errorf("column %s is %s, not a string", actions.ChangeTypeColumn, a.DataType())
	}
	for i := range s.Len() {
		if s.IsNull(i) {
			return fmt.Errorf("column %s is null in row %d (is %s a change data file?)", actions.ChangeTypeColumn, i, actions.ChangeTypeColumn)
		}
		switch v := s.Value(i); v {
		case actions.ChangeInsert, actions.ChangeDelete, actions.ChangeUpdatePreimage, actions.ChangeUpdatePostimage:
		default:
			return fmt.Errorf("column %s holds %q, which is not a change type", actions.ChangeTypeColumn, v)
		}
	}
	return nil
}

// readDiff reads a file whose deletion vector changed and sends the rows
// whose bit changed: newly deleted ones as deletes, restored ones as
// inserts.
func (f *Feed) readDiff(ctx context.Context, j *job, emit func(arrow.RecordBatch) bool) error {
	before, err := loadDV(ctx, f.end, j.removedDV)
	if err != nil {
		return err
	}
	after, err := loadDV(ctx, f.end, j.addedDV)
	if err != nil {
		return err
	}
	deleted := roaring64.AndNot(after, before)
	restored := roaring64.AndNot(before, after)
	if deleted.IsEmpty() && restored.IsEmpty() {
		return nil
	}
	mem := f.mem()
	for rec, err := range f.indexed.ReadFile(ctx, j.file) {
		if err != nil {
			return err
		}
		idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
		mask := array.NewBooleanBuilder(mem)
		types := array.NewStringBuilder(mem)
		for i := range idx.Len() {
			switch r := uint64(idx.Value(i)); {
			case deleted.Contains(r):
				mask.Append(true)
				types.Append(actions.ChangeDelete)
			case restored.Contains(r):
				mask.Append(true)
				types.Append(actions.ChangeInsert)
			default:
				mask.Append(false)
			}
		}
		m := mask.NewBooleanArray()
		mask.Release()
		t := types.NewStringArray()
		types.Release()
		if t.Len() == 0 {
			m.Release()
			t.Release()
			continue
		}
		kept, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), rec, m, compute.DefaultFilterOptions())
		m.Release()
		if err != nil {
			t.Release()
			return err
		}
		out, err := f.changeRows(ctx, j, kept, t)
		kept.Release()
		t.Release()
		if err != nil {
			return err
		}
		if out != nil && !emit(out) {
			return nil
		}
	}
	return nil
}

// changeRows builds the feed's batch from a batch of table rows (its
// first nRead columns; anything after is dropped) and their change
// types, adding the version and timestamp; applies the filter's part on
// metadata columns, and projects away the columns read only for it. It
// returns nil when no row is left.
func (f *Feed) changeRows(ctx context.Context, j *job, rec arrow.RecordBatch, types arrow.Array) (arrow.RecordBatch, error) {
	mem := f.mem()
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, f.nRead+3)
	for i := range f.nRead {
		cols = append(cols, rec.Column(i))
	}
	versions := constantInt64(mem, j.version, n)
	defer versions.Release()
	stamps := constantTimestamp(mem, f.schema.Field(f.nOut+2).Type.(*arrow.TimestampType), j.ts, n)
	defer stamps.Release()
	cols = append(cols, types, versions, stamps)
	project := func(cols []arrow.Array, n int64) arrow.RecordBatch {
		out := append(slices.Clone(cols[:f.nOut]), cols[f.nRead:]...)
		return array.NewRecordBatch(f.schema, out, n)
	}
	if f.postFilter == nil {
		return project(cols, int64(n)), nil
	}
	wide := array.NewRecordBatch(f.wide, cols, int64(n))
	defer wide.Release()
	mask, err := expr.EvalPredicate(f.postFilter, wide, mem)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	kept, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), wide, mask, compute.DefaultFilterOptions())
	mask.Release()
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	defer kept.Release()
	if kept.NumRows() == 0 {
		return nil, nil
	}
	return project(kept.Columns(), kept.NumRows()), nil
}

func constantString(mem memory.Allocator, v string, n int) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.ReserveData(len(v) * n)
	for range n {
		b.Append(v)
	}
	return b.NewArray()
}

func constantInt64(mem memory.Allocator, v int64, n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.UnsafeAppend(v)
	}
	return b.NewArray()
}

func constantTimestamp(mem memory.Allocator, dt *arrow.TimestampType, t time.Time, n int) arrow.Array {
	v, _ := arrow.TimestampFromTime(t, dt.Unit)
	b := array.NewTimestampBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for range n {
		b.UnsafeAppend(v)
	}
	return b.NewArray()
}
