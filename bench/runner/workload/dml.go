package workload

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// The DML workload (see the package doc): the DELETE predicate, the
// UPDATE's assignment and predicate, and the MERGE condition, as text
// both expr.Parse and delta-rs (DataFusion SQL) read.
const (
	DMLPredicate   = "v < 0.01"
	DMLUpdateCol   = "v"
	DMLUpdateValue = "v + 1"
	DMLMergeOn     = "target.id = source.id"
)

// DMLMergeShift is what a MERGE source row adds to v.
const DMLMergeShift = 2

// DMLMetadata is the DML table's metaData: the data-path columns, not
// partitioned, with deletion vectors enabled when dv is set.
func DMLMetadata(dv bool) *actions.Metadata {
	md := Metadata()
	md.PartitionColumns = []string{}
	if dv {
		md.Configuration = map[string]string{"delta.enableDeletionVectors": "true"}
	}
	return md
}

// CreateDMLTable writes the DML base table at root of store: rows [0, n)
// in exactly files data files of n/files consecutive rows each (the last
// takes the remainder), added in one commit (version 1) after an empty
// create (version 0).
func CreateDMLTable(ctx context.Context, store objstore.Store, n int64, files int, dv bool) (*deltalog.Snapshot, error) {
	tx, err := deltalog.Create(store, "", DMLMetadata(dv))
	if err != nil {
		return nil, err
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := res.Snapshot()
	if err != nil {
		return nil, err
	}
	per := n / int64(files)
	all := &writer.WriteResult{Metadata: snap.Metadata()}
	for f := range files {
		from, to := int64(f)*per, int64(f+1)*per
		if f == files-1 {
			to = n
		}
		// A target far above the chunk's size: one file per chunk.
		wr, err := writer.WriteFiles(ctx, snap, Range(nil, from, to), writer.WithTargetFileSize(1<<40))
		if err != nil {
			return nil, err
		}
		all.Adds = append(all.Adds, wr.Adds...)
		all.NumRows += wr.NumRows
		all.NumBytes += wr.NumBytes
	}
	stx := snap.NewTransaction()
	if err := stx.Stage(all.Changes("WRITE", map[string]any{"mode": "Append"}, nil)); err != nil {
		return nil, err
	}
	if res, err = stx.Commit(ctx); err != nil {
		return nil, err
	}
	return res.Snapshot()
}

// DMLSourceKeys are the ids of the MERGE source for a table of n rows:
// m = n/100 rows, the first m/2 existing ids spread evenly over the
// table (stride 2n/m), the other m - m/2 new ids n, n+1, ...
func DMLSourceKeys(n int64) iter.Seq[int64] {
	m := n / 100
	half := m / 2
	stride := max(1, n/max(1, half))
	return func(yield func(int64) bool) {
		for j := range half {
			if !yield(j * stride) {
				return
			}
		}
		for j := range m - half {
			if !yield(n + j) {
				return
			}
		}
	}
}

// DMLSource yields the MERGE source for a table of n rows: for each id k
// of DMLSourceKeys, the row of Batch with v + DMLMergeShift, in batches of
// BatchSize. The caller releases nothing; each batch is released when the
// loop body returns, as Batches does.
func DMLSource(mem memory.Allocator, n int64) iter.Seq2[arrow.RecordBatch, error] {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		var keys []int64
		flush := func() bool {
			rec := sourceBatch(mem, keys)
			keys = keys[:0]
			ok := yield(rec, nil)
			rec.Release()
			return ok
		}
		for k := range DMLSourceKeys(n) {
			keys = append(keys, k)
			if len(keys) == BatchSize && !flush() {
				return
			}
		}
		if len(keys) > 0 {
			flush()
		}
	}
}

func sourceBatch(mem memory.Allocator, keys []int64) arrow.RecordBatch {
	id := array.NewInt64Builder(mem)
	p := array.NewStringBuilder(mem)
	v := array.NewFloat64Builder(mem)
	s := array.NewStringBuilder(mem)
	for _, k := range keys {
		id.Append(k)
		p.Append(pValues[k%NumPartitions])
		v.Append(V(k) + DMLMergeShift)
		s.Append(sValues[(k*7919)%100000])
	}
	cols := []arrow.Array{id.NewArray(), p.NewArray(), v.NewArray(), s.NewArray()}
	for _, b := range []interface{ Release() }{id, p, v, s} {
		b.Release()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(ArrowSchema, cols, int64(len(keys)))
}

// DMLChecksum summarises a DML table's rows exactly: the row count, the
// sum of id, the bytes of p and s, and the sum of v·2^32, which is an
// integer for every v the workload writes (V is k/2^32, and the DML adds
// 1 or 2), so the sums of two engines agree whatever the row order.
type DMLChecksum struct {
	Rows     int64 `json:"rows"`
	SumID    int64 `json:"sum_id"`
	StrBytes int64 `json:"str_bytes"`
	SumV32   int64 `json:"sum_v32"`
	// NotInt counts values of v·2^32 that were not integers (or nulls);
	// any is a wrong result.
	NotInt int64 `json:"not_int,omitempty"`
}

// Add folds a batch with the data-path columns (found by name) into c.
func (c *DMLChecksum) Add(rec arrow.RecordBatch) {
	var base Checksum
	base.Add(rec)
	c.Rows += base.Rows
	c.SumID += base.SumID
	c.StrBytes += base.StrBytes
	for i, f := range rec.Schema().Fields() {
		col, ok := rec.Column(i).(*array.Float64)
		if !ok || f.Name != "v" {
			continue
		}
		for j, x := range col.Float64Values() {
			y := x * (1 << 32)
			if col.IsNull(j) || y != float64(int64(y)) {
				c.NotInt++
				continue
			}
			c.SumV32 += int64(y)
		}
	}
}

func (c *DMLChecksum) row(id int64, v float64) {
	c.Rows++
	c.SumID += id
	c.StrBytes += int64(len(pValues[id%NumPartitions]) + 7)
	c.SumV32 += int64(v * (1 << 32))
}

// DMLExpect is the checksum of the DML table of n rows after op:
// "delete" (DMLPredicate), "update" (DMLUpdateCol = DMLUpdateValue where
// DMLPredicate), "merge" (DMLSource, update all matched, insert all not
// matched), or "" (the base table). It also returns the rows the
// operation changed (deleted, updated, or updated + inserted).
func DMLExpect(op string, n int64) (DMLChecksum, int64) {
	var c DMLChecksum
	var changed int64
	var src map[int64]bool
	if op == "merge" {
		src = map[int64]bool{}
		for k := range DMLSourceKeys(n) {
			src[k] = true
		}
	}
	for i := range n {
		v := V(i)
		switch {
		case op == "delete" && v < 0.01:
			changed++
			continue
		case op == "update" && v < 0.01:
			changed++
			v++
		case src[i]:
			changed++
			v += DMLMergeShift
			delete(src, i)
		}
		c.row(i, v)
	}
	for k := range DMLSourceKeys(n) {
		if src[k] {
			changed++
			c.row(k, V(k)+DMLMergeShift)
		}
	}
	return c, changed
}

// DMLScale is the DML workload's size: Rows rows in Files data files.
type DMLScale struct {
	Rows  int64
	Files int
}

// DMLScales are the DML suite's sizes for the runner's -scale.
var DMLScales = map[string]DMLScale{
	"small": {Rows: 200_000, Files: 10},
	"full":  {Rows: 10_000_000, Files: 100},
}

// RunDML runs op ("delete", "update" or "merge") on snap through package
// dml with the given predicate (MERGE's ON), UPDATE assignments (column
// to expression) and MERGE source, and returns the result and the rows
// the operation's metrics say it deleted, updated or inserted. MERGE's
// clauses are WHEN MATCHED UPDATE SET * and WHEN NOT MATCHED INSERT *.
func RunDML(ctx context.Context, snap *deltalog.Snapshot, op, predicate string, set map[string]string,
	source iter.Seq2[arrow.RecordBatch, error], opts ...dml.Option) (*dml.Result, int64, error) {
	var pred expr.Expr
	if predicate != "" {
		var err error
		if pred, err = expr.Parse(predicate); err != nil {
			return nil, 0, err
		}
	}
	var assign []*expr.Assignment
	for col, val := range set {
		a, err := expr.ParseAssignment(col + " = " + val)
		if err != nil {
			return nil, 0, err
		}
		assign = append(assign, a)
	}
	var res *dml.Result
	var err error
	switch op {
	case "delete":
		if res, err = dml.Delete(ctx, snap, pred, opts...); err == nil {
			return res, res.Metrics["numDeletedRows"], nil
		}
	case "update":
		if res, err = dml.Update(ctx, snap, pred, assign, opts...); err == nil {
			return res, res.Metrics["numUpdatedRows"], nil
		}
	case "merge":
		clauses := []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}
		if res, err = dml.Merge(ctx, snap, source, pred, clauses, opts...); err == nil {
			return res, res.Metrics["numTargetRowsUpdated"] + res.Metrics["numTargetRowsInserted"], nil
		}
	default:
		err = fmt.Errorf("workload: unknown DML operation %q", op)
	}
	return nil, 0, err
}

// DMLSet is UPDATE's assignments in the DML workload.
func DMLSet() map[string]string { return map[string]string{DMLUpdateCol: DMLUpdateValue} }

// DMLPredicateOf is the predicate (MERGE's ON) of op in the DML workload.
func DMLPredicateOf(op string) string {
	if op == "merge" {
		return DMLMergeOn
	}
	return DMLPredicate
}

// Collect retains and returns every batch of seq, so that a measured
// operation does not time building its input; Release releases them.
func Collect(seq iter.Seq2[arrow.RecordBatch, error]) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for rec, err := range seq {
		if err != nil {
			Release(out)
			return nil, err
		}
		rec.Retain()
		out = append(out, rec)
	}
	return out, nil
}

// Release releases batches Collect returned.
func Release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// Replay yields recs, for an operation that takes batches as a sequence.
func Replay(recs []arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}
