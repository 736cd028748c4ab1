package dml

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/arrowconv"
)

// This file computes the rows a MERGE writes: the new versions of
// updated target rows and the rows NOT MATCHED clauses insert.

// updateRows computes the new versions of a target file's updated rows
// (the table's columns and the row index).
func (m *merge) updateRows(t *target, rows arrow.RecordBatch) (arrow.RecordBatch, error) {
	idx := rows.Column(int(rows.NumCols()) - 1).(*array.Int64).Int64Values()
	byClause := map[int][]int{}
	for i, ri := range idx {
		r, ok := t.merge.row[ri]
		if !ok {
			return nil, fmt.Errorf("dml: MERGE: %s: no decision for row %d", t.file.Add.Path, ri)
		}
		byClause[r.clause] = append(byClause[r.clause], i)
	}
	var parts []arrow.RecordBatch
	var order []int // the rows of parts, by their index in rows
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, ci := range slices.Sorted(maps.Keys(byClause)) {
		pos := byClause[ci]
		tRows := make([]int32, len(pos))
		var sRows []int32
		for k, p := range pos {
			tRows[k] = int32(p)
			if s := t.merge.row[idx[p]].source; s >= 0 {
				sRows = append(sRows, s)
			}
		}
		if len(sRows) != len(pos) {
			sRows = nil
		}
		j, err := m.joinedBatch(rows, tRows, m.src, sRows, len(pos))
		if err != nil {
			return nil, err
		}
		tcol := j.Column(0).(*array.Struct)
		out, err := m.evalValues(m.clauses[ci], j, tcol)
		j.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, out)
		order = append(order, pos...)
	}
	all, err := arrowbatch.Concat(parts, m.mem)
	if err != nil || slices.IsSorted(order) {
		return all, err
	}
	// The rows come out in the order of rows (the row IDs of row tracking
	// and the change rows are matched to them by position), not grouped
	// by clause.
	defer all.Release()
	b := array.NewInt32Builder(m.mem)
	defer b.Release()
	perm := make([]int32, len(order))
	for k, r := range order {
		perm[r] = int32(k)
	}
	b.AppendValues(perm, nil)
	ind := b.NewArray()
	defer ind.Release()
	out, err := compute.Take(compute.WithAllocator(m.ctx, m.mem), *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(all), compute.NewDatumWithoutOwning(ind))
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	return out.(*compute.RecordDatum).Value, nil
}

// evalValues evaluates a clause's values over a joined batch; a column
// without a value keeps the target's (keep non-nil) or is NULL.
func (m *merge) evalValues(c *boundClause, j arrow.RecordBatch, keep *array.Struct) (arrow.RecordBatch, error) {
	table := m.table
	sc, err := actions.ToArrowSchema(table, false, "")
	if err != nil {
		return nil, err
	}
	n := int(j.NumRows())
	cols := make([]arrow.Array, len(table.Fields))
	defer arrowbatch.Release(cols)
	for i, f := range table.Fields {
		dt := sc.Field(i).Type
		var v arrow.Array
		switch {
		case c.values[i] != nil:
			if v, err = expr.EvalScalar(c.values[i], j, m.mem); err != nil {
				return nil, fmt.Errorf("dml: MERGE: %s: column %s: %w", c.Kind, f.Name, err)
			}
		case keep != nil && i < keep.NumField():
			// The target's columns come first in an evolved schema; the
			// new ones (i beyond) the target row does not have are NULL.
			v = keep.Field(i)
			v.Retain()
		default:
			v = array.MakeArrayOfNull(m.mem, dt, n)
		}
		if v.DataType().ID() == arrow.NULL {
			v.Release()
			v = array.MakeArrayOfNull(m.mem, dt, n)
		}
		cols[i], err = arrowconv.Conform(m.ctx, m.mem, v, dt)
		v.Release()
		if err != nil {
			return nil, fmt.Errorf("dml: MERGE: %s: column %s: %w", c.Kind, f.Name, err)
		}
	}
	return array.NewRecordBatch(sc, cols, int64(n)), nil
}

// insertRows yields the rows the NOT MATCHED clauses insert.
func (m *merge) insertRows(yield func(arrow.RecordBatch, error) bool) {
	var open []int32
	for i, hit := range m.matched {
		if !hit {
			open = append(open, int32(i))
		}
	}
	for ci, c := range m.clauses {
		if c.Kind != NotMatchedInsert || len(open) == 0 {
			continue
		}
		j, err := m.joinedBatch(nil, nil, m.src, open, len(open))
		if err != nil {
			yield(nil, err)
			return
		}
		var take []int32
		rest := open[:0:0]
		if c.cond != nil {
			mask, err := expr.EvalPredicate(c.cond, j, m.mem)
			if err != nil {
				j.Release()
				yield(nil, fmt.Errorf("dml: MERGE: clause %d condition: %w", ci+1, err))
				return
			}
			for i, s := range open {
				if mask.IsValid(i) && mask.Value(i) {
					take = append(take, s)
				} else {
					rest = append(rest, s)
				}
			}
			mask.Release()
		} else {
			take = open
		}
		j.Release()
		open = rest
		if len(take) == 0 {
			continue
		}
		j, err = m.joinedBatch(nil, nil, m.src, take, len(take))
		if err != nil {
			yield(nil, err)
			return
		}
		out, err := m.evalValues(c, j, nil)
		j.Release()
		if err != nil {
			yield(nil, err)
			return
		}
		ok := yield(out, nil)
		out.Release()
		if !ok {
			return
		}
	}
}
