package deltalog

import (
	"cmp"
	"container/heap"
	"iter"
	"slices"
	"sort"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
)

// fileSet is a snapshot's live files: batches of add actions held as
// columns (checkpoint.FileColumns, shared by the snapshots derived from
// one another), which of their rows are live, and the live rows in path
// order. Rows are numbered across the batches, in batch order. A
// fileSet is immutable.
type fileSet struct {
	batches []*checkpoint.FileColumns
	starts  []int    // starts[b] is batch b's first row; starts[len(batches)] the row count
	dead    []uint64 // rows a later commit removed or replaced; nil: none
	order   []int32  // the live rows, by (path, deletion vector id)
}

var emptyFiles = &fileSet{starts: []int{0}}

// newFileSet makes the set of every row of batches.
func newFileSet(batches []*checkpoint.FileColumns) *fileSet {
	fs := &fileSet{batches: batches, starts: make([]int, len(batches)+1)}
	for b, c := range batches {
		fs.starts[b+1] = fs.starts[b] + c.Len()
	}
	fs.order = fs.sortedRows(0)
	return fs
}

// rows is the number of rows of every batch, live or not.
func (fs *fileSet) rows() int { return fs.starts[len(fs.batches)] }

// locate returns the batch and the row in it of row r.
func (fs *fileSet) locate(r int32) (*checkpoint.FileColumns, int) {
	b := fs.batchOf(r)
	return fs.batches[b], int(r) - fs.starts[b]
}

// batchOf returns the index of the batch that holds row r.
func (fs *fileSet) batchOf(r int32) int {
	return sort.Search(len(fs.batches), func(b int) bool { return fs.starts[b+1] > int(r) })
}

func (fs *fileSet) isDead(r int) bool {
	return fs.dead != nil && fs.dead[r>>6]&(1<<(r&63)) != 0
}

// compareRows orders two files by path, then deletion vector id.
func compareRows(a *checkpoint.FileColumns, i int, b *checkpoint.FileColumns, j int) int {
	if c := strings.Compare(a.Path(i), b.Path(j)); c != 0 {
		return c
	}
	return cmp.Compare(a.DeletionVectorID(i), b.DeletionVectorID(j))
}

// sortedRows returns the live rows of the batches from batch first on,
// in order: each batch's rows sorted on their own (most often they
// already are: checkpoints are written in path order), then merged.
func (fs *fileSet) sortedRows(first int) []int32 {
	var runs [][]int32
	for b, c := range fs.batches {
		if b < first {
			continue
		}
		run := make([]int32, 0, c.Len())
		sorted := true
		for i := 0; i < c.Len(); i++ {
			r := fs.starts[b] + i
			if fs.isDead(r) {
				continue
			}
			if sorted && len(run) > 0 {
				p := int(run[len(run)-1]) - fs.starts[b]
				sorted = compareRows(c, p, c, i) <= 0
			}
			run = append(run, int32(r))
		}
		if !sorted {
			start := fs.starts[b]
			slices.SortFunc(run, func(x, y int32) int { return compareRows(c, int(x)-start, c, int(y)-start) })
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
	}
	return fs.mergeRuns(runs)
}

// mergeRuns merges sorted runs of rows into one.
func (fs *fileSet) mergeRuns(runs [][]int32) []int32 {
	runs = slices.DeleteFunc(runs, func(r []int32) bool { return len(r) == 0 })
	switch len(runs) {
	case 0:
		return nil
	case 1:
		return runs[0]
	}
	n := 0
	inOrder := true
	for k, run := range runs {
		n += len(run)
		if k > 0 && inOrder {
			pc, pi := fs.locate(runs[k-1][len(runs[k-1])-1])
			c, i := fs.locate(run[0])
			inOrder = compareRows(pc, pi, c, i) <= 0
		}
	}
	out := make([]int32, 0, n)
	if inOrder {
		for _, run := range runs {
			out = append(out, run...)
		}
		return out
	}
	h := &runHeap{fs: fs}
	for _, run := range runs {
		c, i := fs.locate(run[0])
		h.items = append(h.items, runHead{run: run, c: c, i: i})
	}
	heap.Init(h)
	for h.Len() > 0 {
		top := &h.items[0]
		out = append(out, top.run[0])
		top.run = top.run[1:]
		if len(top.run) == 0 {
			heap.Pop(h)
			continue
		}
		top.c, top.i = fs.locate(top.run[0])
		heap.Fix(h, 0)
	}
	return out
}

type runHead struct {
	run []int32
	c   *checkpoint.FileColumns
	i   int
}

type runHeap struct {
	fs    *fileSet
	items []runHead
}

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(a, b int) bool {
	x, y := &h.items[a], &h.items[b]
	return compareRows(x.c, x.i, y.c, y.i) < 0
}
func (h *runHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(runHead)) }
func (h *runHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// find returns the live rows whose path is exactly p, by binary search
// of the order.
func (fs *fileSet) find(p string) []int32 {
	lo := sort.Search(len(fs.order), func(k int) bool {
		c, i := fs.locate(fs.order[k])
		return c.Path(i) >= p
	})
	hi := lo
	for hi < len(fs.order) {
		c, i := fs.locate(fs.order[hi])
		if c.Path(i) != p {
			break
		}
		hi++
	}
	return fs.order[lo:hi]
}

// canonicalPathsDiffer reports whether some batch has a path whose
// canonical form may differ from it.
func (fs *fileSet) canonicalPathsDiffer() bool {
	for _, c := range fs.batches {
		if c.CanonicalPathsDiffer() {
			return true
		}
	}
	return false
}

// rowsOf returns the live rows whose key is among keys (canonical path,
// deletion vector id); raw gives, for each key, the paths as the log
// wrote them (which binary search can find directly).
func (fs *fileSet) rowsOf(keys map[fileKey][]string) []int32 {
	var out []int32
	missing := map[fileKey]bool{}
	for k, raws := range keys {
		found := false
		for _, p := range append(raws, k.path) {
			for _, r := range fs.find(p) {
				c, i := fs.locate(r)
				if c.DeletionVectorID(i) == k.dv && c.CanonicalPath(i) == k.path {
					out = append(out, r)
					found = true
				}
			}
			if found {
				break
			}
		}
		if !found {
			missing[k] = true
		}
	}
	if len(missing) > 0 && fs.canonicalPathsDiffer() {
		// A path written escaped one way and named another: compare
		// every live file's canonical path.
		for _, r := range fs.order {
			c, i := fs.locate(r)
			if !c.CanonicalPathsDiffer() {
				continue
			}
			if missing[fileKey{c.CanonicalPath(i), c.DeletionVectorID(i)}] {
				out = append(out, r)
			}
		}
	}
	return out
}

// with returns the set without the rows in dead and with the files of
// batch added (nil: none).
func (fs *fileSet) with(dead []int32, batch *checkpoint.FileColumns) *fileSet {
	if len(dead) == 0 && (batch == nil || batch.Len() == 0) {
		return fs
	}
	out := &fileSet{batches: fs.batches, starts: fs.starts}
	if batch != nil && batch.Len() > 0 {
		out.batches = append(slices.Clip(fs.batches), batch)
		out.starts = append(slices.Clip(fs.starts), fs.starts[len(fs.starts)-1]+batch.Len())
	}
	if len(dead) > 0 {
		out.dead = make([]uint64, (out.rows()+63)/64)
		copy(out.dead, fs.dead)
		for _, r := range dead {
			out.dead[r>>6] |= 1 << (r & 63)
		}
	} else if fs.dead != nil {
		out.dead = slices.Clone(fs.dead)
		if need := (out.rows() + 63) / 64; need > len(out.dead) {
			out.dead = append(out.dead, make([]uint64, need-len(out.dead))...)
		}
	}
	// The old order without the dead rows, merged with the new batch's.
	kept := fs.order
	if len(dead) > 0 {
		kept = make([]int32, 0, len(fs.order))
		for _, r := range fs.order {
			if !out.isDead(int(r)) {
				kept = append(kept, r)
			}
		}
	}
	runs := [][]int32{kept}
	if batch != nil && batch.Len() > 0 {
		runs = append(runs, out.sortedRows(len(out.batches)-1))
	}
	out.order = out.mergeRuns(runs)
	return out
}

// addsBatch builds a batch of adds laid out by the table's layout.
func addsBatch(table *actions.TableConfig, adds []*actions.Add) (*checkpoint.FileColumns, error) {
	if len(adds) == 0 {
		return nil, nil
	}
	l, err := checkpoint.NewFileLayout(table)
	if err != nil {
		return nil, err
	}
	b := checkpoint.NewFilesBuilder(l, len(adds), true)
	for _, a := range adds {
		b.AppendAdd(a)
	}
	return b.Finish(), nil
}

// File is one live file of a snapshot: a row of the columns that hold
// it. Its methods read the columns; Add builds the add action.
type File struct {
	*checkpoint.FileColumns
	// Row is the file's row in FileColumns.
	Row int
}

// Add builds the file's add action (a new value on each call).
func (f File) Add() *actions.Add { return f.FileColumns.Add(f.Row) }

// Path is the file's add.path as the log holds it.
func (f File) Path() string { return f.FileColumns.Path(f.Row) }

// CanonicalPath is the file's path in the form two file actions are
// compared in (actions.CanonicalPath).
func (f File) CanonicalPath() string { return f.FileColumns.CanonicalPath(f.Row) }

// Size is the file's size in bytes.
func (f File) Size() int64 { return f.FileColumns.Size(f.Row) }

// ModificationTime is the file's modificationTime.
func (f File) ModificationTime() int64 { return f.FileColumns.ModificationTime(f.Row) }

// PartitionValues is the file's partitionValues (shared: do not modify).
func (f File) PartitionValues() map[string]*string { return f.FileColumns.PartitionValues(f.Row) }

// DeletionVector is the file's deletion vector descriptor, nil without.
func (f File) DeletionVector() *actions.DeletionVector { return f.FileColumns.DeletionVector(f.Row) }

// DeletionVectorID is the file's deletion vector's unique id, "" without.
func (f File) DeletionVectorID() string { return f.FileColumns.DeletionVectorID(f.Row) }

// DeletedRows is the cardinality of the file's deletion vector.
func (f File) DeletedRows() int64 { return f.FileColumns.DeletedRows(f.Row) }

// NumRecords is the file's numRecords stat; ok is false without one.
func (f File) NumRecords() (int64, bool) { return f.FileColumns.NumRecords(f.Row) }

// Stats is the file's stats as actions.ParseStats gives them, nil
// without.
func (f File) Stats() *actions.Stats { return f.FileColumns.FileStats(f.Row, nil) }

// ActiveFiles is a snapshot's live files as the column batches that hold
// them: the view that planning reads (partition values and stats as
// typed columns), and the files one by one in path order. It reads
// nothing but the snapshot; stats left to LoadStats are absent until it
// is called.
type ActiveFiles struct{ set *fileSet }

// ActiveFiles returns the snapshot's live files as columns.
func (s *Snapshot) ActiveFiles() *ActiveFiles { return &ActiveFiles{set: s.files} }

// Len is the number of live files.
func (a *ActiveFiles) Len() int { return len(a.set.order) }

// Rows is the number of rows of every batch, live or not: the length of
// a mask over Batches' rows.
func (a *ActiveFiles) Rows() int { return a.set.rows() }

// Batch is one batch of files: its columns, where its rows start among
// the ActiveFiles' rows, and whether a row is live.
type Batch struct {
	*checkpoint.FileColumns
	// Start is the batch's first row among every batch's rows.
	Start int
	set   *fileSet
}

// Live reports whether row i of the batch is a live file of the
// snapshot (a later commit may have removed it).
func (b Batch) Live(i int) bool { return !b.set.isDead(b.Start + i) }

// Batches returns the batches that hold the files.
func (a *ActiveFiles) Batches() []Batch {
	out := make([]Batch, len(a.set.batches))
	for k, c := range a.set.batches {
		out[k] = Batch{FileColumns: c, Start: a.set.starts[k], set: a.set}
	}
	return out
}

// All yields the live files in path order (then deletion vector id),
// with each one's row among every batch's rows (for a mask indexed as
// Batches' rows are).
func (a *ActiveFiles) All() iter.Seq2[int, File] {
	return func(yield func(int, File) bool) {
		fs := a.set
		b := 0
		for _, r := range fs.order {
			if int(r) < fs.starts[b] || int(r) >= fs.starts[b+1] {
				b = fs.batchOf(r)
			}
			if !yield(int(r), File{FileColumns: fs.batches[b], Row: int(r) - fs.starts[b]}) {
				return
			}
		}
	}
}
