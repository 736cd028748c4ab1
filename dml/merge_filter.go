package dml

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

// This file plans the target files a MERGE reads: pruned by the source's
// keys, each read for the columns ON and the clauses need.

// planTargets plans the target files that can hold a match and finds,
// reading only the columns ON and the clause conditions need, what
// happens to each of their rows.
func (m *merge) planTargets(keys []arrow.Array) ([]*target, error) {
	table := m.snap.Schema()
	need := map[string]bool{}
	for _, k := range m.keys {
		need[k.target.Name] = true
	}
	collect := func(e expr.Expr) {
		if e == nil {
			return
		}
		expr.Walk(e, func(n expr.Expr) bool {
			if c, ok := n.(*expr.Column); ok && len(c.Path) > 1 && strings.EqualFold(c.Path[0], m.tAlias) {
				need[c.Path[1]] = true
			}
			return true
		})
	}
	collect(m.residual)
	for _, c := range m.clauses {
		collect(c.cond)
	}
	var cols []string
	for _, f := range table.Fields {
		if need[f.Name] {
			cols = append(cols, f.Name)
		}
	}
	opts := []reader.Option{reader.WithColumns(cols...), reader.WithRowIndex(), reader.WithAllocator(m.mem), reader.RecordReads(m.tx)}
	if !m.hasNMBS {
		f, err := m.pruneFilter(keys)
		if err != nil {
			return nil, err
		}
		opts = append(opts, reader.WithFilter(f))
	}
	scan, err := reader.NewScan(m.snap, opts...)
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	var targets []*target
	for f, err := range scan.Files(m.ctx) {
		if err != nil {
			return nil, fmt.Errorf("dml: MERGE: %w", err)
		}
		targets = append(targets, newTarget(f))
	}
	// The filter only prunes files: every row of a planned file is joined.
	all, err := reader.NewScan(m.snap, reader.WithColumns(cols...), reader.WithRowIndex(), reader.WithAllocator(m.mem))
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	t0 := time.Now()
	report := m.track("find", all, targets)
	err = m.forEachFile(targets, func(t *target) error {
		for rec, err := range all.ReadFile(m.ctx, t.file) {
			if err != nil {
				return err
			}
			report()
			if err := m.joinBatch(t, rec); err != nil {
				return err
			}
		}
		return nil
	})
	m.scanMs += time.Since(t0).Milliseconds()
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	return targets, nil
}

// pruneFilter is a predicate on the target's key columns that every
// target row matching a source row satisfies: the keys' values (the
// source rows' keys, sourceKeys) when there are few, else their range.
// FALSE when no source row has a key.
func (m *merge) pruneFilter(keys []arrow.Array) (expr.Expr, error) {
	var conj []expr.Expr
	for i, k := range m.keys {
		arr := keys[i]
		distinct := map[any]bool{}
		var lo, hi any
		for r := 0; r < arr.Len(); r++ {
			v, ok := actions.ArrowValue(arr, r)
			if !ok || v == nil {
				continue
			}
			if len(distinct) <= maxInList {
				distinct[fmt.Sprint(v)] = true
			}
			if lo == nil {
				lo, hi = v, v
				continue
			}
			if c, err := actions.CompareValues(v, lo); err == nil && c < 0 {
				lo = v
			}
			if c, err := actions.CompareValues(v, hi); err == nil && c > 0 {
				hi = v
			}
		}
		col := expr.Col(k.target.Name)
		switch {
		case lo == nil:
			return expr.Lit(false), nil
		case len(distinct) <= maxInList:
			seen := map[string]bool{}
			var list []expr.Expr
			for r := 0; r < arr.Len(); r++ {
				v, ok := actions.ArrowValue(arr, r)
				if !ok || v == nil || seen[fmt.Sprint(v)] {
					continue
				}
				seen[fmt.Sprint(v)] = true
				list = append(list, literalOf(v, k.target.Type))
			}
			conj = append(conj, &expr.In{X: col, List: list})
		default:
			conj = append(conj, &expr.Compare{Op: expr.Ge, Left: col, Right: literalOf(lo, k.target.Type)},
				&expr.Compare{Op: expr.Le, Left: col, Right: literalOf(hi, k.target.Type)})
		}
	}
	return expr.And(conj...), nil
}

// maxInList is the most distinct source keys pruned by value (an IN list);
// with more, by their range.
const maxInList = 64

func literalOf(v any, t actions.DataType) expr.Expr {
	return &expr.Literal{Value: v, DataType: t}
}
