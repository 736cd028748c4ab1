package dml

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/arrowconv"
	"github.com/lakelog/lakelog/reader"
)

// This file joins target rows with source rows and decides, per target
// row, which clause acts on it.

// mergeRows are MERGE's decisions for one target file's updated rows:
// which clause and which source row (-1 for none) each row index takes.
type mergeRows struct {
	row map[int64]mergeRow
}

type mergeRow struct {
	clause int
	source int32
}

// joinBatch joins one batch of a target file (the needed columns and the
// row index) with the source and records what happens to each row.
func (m *merge) joinBatch(t *target, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64).Int64Values()
	tkeys := make([]arrow.Array, len(m.keys))
	for i, k := range m.keys {
		c := rec.Column(rec.Schema().FieldIndices(k.target.Name)[0])
		var err error
		if tkeys[i], err = arrowconv.Conform(m.ctx, m.mem, c, k.arrowDT); err != nil {
			arrowbatch.Release(tkeys)
			return err
		}
	}
	defer arrowbatch.Release(tkeys)
	// Candidate pairs (target row, source row) by key.
	var tRows, sRows []int32
	ints := intKeys(tkeys)
	var buf []byte
	for i := range n {
		var s int32 = -1
		if ints != nil {
			if !tkeys[0].IsNull(i) {
				if f, ok := m.firstI[ints(i)]; ok {
					s = f
				}
			}
		} else {
			var ok bool
			if buf, ok = appendKey(buf[:0], tkeys, i); ok {
				if f, found := m.first[string(buf)]; found {
					s = f
				}
			}
		}
		for ; s >= 0; s = m.next[s] {
			tRows = append(tRows, int32(i))
			sRows = append(sRows, s)
		}
	}
	if m.residual != nil && len(tRows) > 0 {
		j, err := m.joinedBatch(rec, tRows, m.src, sRows, len(tRows))
		if err != nil {
			return err
		}
		mask, err := expr.EvalPredicate(m.residual, j, m.mem)
		j.Release()
		if err != nil {
			return fmt.Errorf("ON: %w", err)
		}
		k := 0
		for i := range tRows {
			if mask.IsValid(i) && mask.Value(i) {
				tRows[k], sRows[k] = tRows[i], sRows[i]
				k++
			}
		}
		mask.Release()
		tRows, sRows = tRows[:k], sRows[:k]
	}
	matchedTarget := make([]bool, n)
	firstSource := map[int32]int32{}
	// A target row matched twice is ambiguous for an update or a
	// conditional delete; with one unconditional DELETE as the only
	// WHEN MATCHED clause it is deleted once, as Spark allows.
	onlyDelete := m.onlyUnconditionalDelete()
	k := 0
	for i, tr := range tRows {
		if matchedTarget[tr] && m.hasMatched {
			if !onlyDelete {
				return fmt.Errorf("%w: %s: the target row with %s (row %d of the file) is matched by source rows %d and %d (counting from 1); deduplicate the source on the join keys",
					ErrDuplicateMatch, t.file.Add.Path, m.keyText(tkeys, int(tr)), idx[tr]+1, firstSource[tr]+1, sRows[i]+1)
			}
			m.mmu.Lock()
			m.matched[sRows[i]] = true // it matched, though the row is deleted once
			m.mmu.Unlock()
			continue
		}
		matchedTarget[tr] = true
		firstSource[tr] = sRows[i]
		tRows[k], sRows[k] = tRows[i], sRows[i]
		k++
	}
	tRows, sRows = tRows[:k], sRows[:k]
	if len(sRows) > 0 {
		m.mmu.Lock()
		for _, s := range sRows {
			m.matched[s] = true
		}
		m.mmu.Unlock()
	}
	if m.hasMatched && len(tRows) > 0 {
		if err := m.decide(t, rec, tRows, sRows, idx, true); err != nil {
			return err
		}
	}
	if m.hasNMBS {
		var rest []int32
		for i := range n {
			if !matchedTarget[i] {
				rest = append(rest, int32(i))
			}
		}
		if len(rest) > 0 {
			if err := m.decide(t, rec, rest, nil, idx, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// decide runs the matched (or not-matched-by-source) clauses in order on
// the given target rows (with their source rows, or none) and records the
// first clause that acts on each.
func (m *merge) decide(t *target, rec arrow.RecordBatch, tRows, sRows []int32, idx []int64, matched bool) error {
	j, err := m.joinedBatch(rec, tRows, m.src, sRows, len(tRows))
	if err != nil {
		return err
	}
	defer j.Release()
	open := make([]bool, len(tRows))
	for i := range open {
		open[i] = true
	}
	for ci, c := range m.clauses {
		isMatched := c.Kind == MatchedUpdate || c.Kind == MatchedDelete
		isNMBS := c.Kind == NotMatchedBySourceUpdate || c.Kind == NotMatchedBySourceDelete
		if matched && !isMatched || !matched && !isNMBS {
			continue
		}
		var mask *array.Boolean
		if c.cond != nil {
			if mask, err = expr.EvalPredicate(c.cond, j, m.mem); err != nil {
				return fmt.Errorf("clause %d condition: %w", ci+1, err)
			}
		}
		for i := range open {
			if !open[i] || mask != nil && !(mask.IsValid(i) && mask.Value(i)) {
				continue
			}
			open[i] = false
			ri := idx[tRows[i]]
			switch c.Kind {
			case MatchedDelete, NotMatchedBySourceDelete:
				t.deleted.Add(uint64(ri))
				if matched {
					m.count("matchedDeleted", 1)
				}
			default:
				var s int32 = -1
				if sRows != nil {
					s = sRows[i]
				}
				t.updated.Add(uint64(ri))
				if t.merge == nil {
					t.merge = &mergeRows{row: map[int64]mergeRow{}}
				}
				t.merge.row[ri] = mergeRow{clause: ci, source: s}
				if matched {
					m.count("matchedUpdated", 1)
				}
			}
		}
		if mask != nil {
			mask.Release()
		}
	}
	return nil
}

// joinedBatch is a batch of two struct columns, the target's (rows tRows
// of tRec; all NULL when tRec is nil) and the source's (rows sRows of
// sRec; all NULL when sRows is nil and tRec is not), n rows.
func (m *merge) joinedBatch(tRec arrow.RecordBatch, tRows []int32, sRec arrow.RecordBatch, sRows []int32, n int) (arrow.RecordBatch, error) {
	side := func(rec arrow.RecordBatch, rows []int32, schema *actions.StructType, useAll bool) (arrow.Array, error) {
		if rec == nil || (rows == nil && !useAll) {
			dt, err := actions.ArrowType(schema)
			if err != nil {
				return nil, err
			}
			return array.MakeArrayOfNull(m.mem, dt, n), nil
		}
		fields := rec.Schema().Fields()
		cols := make([]arrow.Array, 0, len(fields))
		names := make([]string, 0, len(fields))
		// A closure: the deferred call must see the columns appended
		// below (NewStructArray takes its own references to them).
		defer func() { arrowbatch.Release(cols) }()
		var ind arrow.Array
		if rows != nil {
			b := array.NewInt32Builder(m.mem)
			b.AppendValues(rows, nil)
			ind = b.NewArray()
			b.Release()
			defer ind.Release()
		}
		for i, f := range fields {
			if f.Name == reader.RowIndexColumn {
				continue
			}
			c := rec.Column(i)
			if ind != nil {
				taken, err := compute.TakeArray(m.ctx, c, ind)
				if err != nil {
					return nil, err
				}
				cols = append(cols, taken)
			} else {
				c.Retain()
				cols = append(cols, c)
			}
			names = append(names, f.Name)
		}
		return array.NewStructArray(cols, names)
	}
	t, err := side(tRec, tRows, m.snap.Schema(), false)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	s, err := side(sRec, sRows, m.srcSchema, tRec == nil)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: m.tAlias, Type: t.DataType(), Nullable: true}, {Name: m.sAlias, Type: s.DataType(), Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{t, s}, int64(n)), nil
}

// onlyUnconditionalDelete reports whether the only WHEN MATCHED clause is
// a DELETE without a condition.
func (m *merge) onlyUnconditionalDelete() bool {
	n, del := 0, false
	for _, c := range m.clauses {
		if c.Kind == MatchedUpdate || c.Kind == MatchedDelete {
			n++
			del = c.Kind == MatchedDelete && c.Condition == nil
		}
	}
	return n == 1 && del
}

// keyText is a target row's join key values: id = 2, day = DATE '2026-03-01'.
func (m *merge) keyText(tkeys []arrow.Array, row int) string {
	parts := make([]string, len(m.keys))
	for i, k := range m.keys {
		v, ok := actions.ArrowValue(tkeys[i], row)
		switch {
		case !ok:
			parts[i] = k.target.Name + " = ?"
		case v == nil:
			parts[i] = k.target.Name + " = NULL"
		default:
			parts[i] = k.target.Name + " = " + expr.Lit(v).String()
		}
	}
	return strings.Join(parts, ", ")
}
