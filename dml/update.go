package dml

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
)

// Update sets columns of the rows for which predicate is TRUE: Spark's
// UPDATE t SET col = value, ... WHERE predicate (a nil predicate updates
// every row). Each assignment's value is an expression over the row's
// current values (expr.ParseAssignment reads "col = expr"), converted to
// the column's type as Spark's store assignment does; a value the column
// cannot hold (a null in a NOT NULL column, a number out of range) fails
// the update, naming the column, and nothing is committed.
//
// Files are planned and matched as Delete does. Copy-on-write rewrites
// each touched file with its rows updated; with deletion vectors the old
// versions are marked deleted and only the new versions are written. With
// delta.enableChangeDataFeed the old and new versions are written as
// update_preimage and update_postimage change rows.
func Update(ctx context.Context, snap *deltalog.Snapshot, predicate expr.Expr, set []*expr.Assignment, opts ...Option) (*Result, error) {
	if snap == nil {
		return nil, fmt.Errorf("dml: %w", deltalog.ErrNoSnapshot)
	}
	if err := snap.Supports(deltalog.OpUpdate); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("dml: UPDATE needs at least one assignment")
	}
	schema := snap.Schema()
	values := make([]expr.Expr, len(schema.Fields)) // by column; nil keeps it
	for _, a := range set {
		if len(a.Column.Path) != 1 {
			return nil, fmt.Errorf("dml: UPDATE: SET %s: only top-level columns can be assigned", a.Column)
		}
		i := schema.IndexFold(a.Column.Path[0])
		if i < 0 {
			return nil, fmt.Errorf("dml: UPDATE: SET %s: %w", a.Column, &expr.UnknownColumnError{Column: a.Column.Path[0], Known: schema.Names()})
		}
		if values[i] != nil {
			return nil, fmt.Errorf("dml: UPDATE: column %s is assigned twice", schema.Fields[i].Name)
		}
		if actions.IsIdentity(schema.Fields[i]) {
			return nil, fmt.Errorf("dml: UPDATE: SET %s: %s is an identity column, whose values cannot be updated", a.Column, schema.Fields[i].Name)
		}
		v, err := expr.BindAssignment(a.Value, schema, schema.Fields[i].Type)
		if err != nil {
			return nil, fmt.Errorf("dml: UPDATE: SET %s: %w", schema.Fields[i].Name, err)
		}
		values[i] = v
	}
	if err := generatedValues(schema, values, schema, func(i int) expr.Expr { return expr.Col(schema.Fields[i].Name) }, false); err != nil {
		return nil, fmt.Errorf("dml: UPDATE: %w", err)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	j := newJob(ctx, snap, cfg, opUpdate)
	if res, err := j.tx.Start(); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	} else if res != nil {
		return &Result{CommitResult: res}, nil
	}
	j.allUpdated = true
	j.update = func(_ *target, rows arrow.RecordBatch) (arrow.RecordBatch, error) {
		return j.assign(rows, values)
	}
	targets, err := j.plan(predicate, true)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"predicate": jsonText(predicateList(predicate))}
	return j.rewrite(targets, params)
}

// assign evaluates the new value of every column of rows (a batch of the
// table's columns, then possibly more) that values assigns, and keeps the
// others: a batch of the table's columns.
func (j *job) assign(rows arrow.RecordBatch, values []expr.Expr) (arrow.RecordBatch, error) {
	schema := j.snap.Schema()
	cols := make([]arrow.Array, len(schema.Fields))
	fields := make([]arrow.Field, len(schema.Fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range schema.Fields {
		fields[i] = rows.Schema().Field(i)
		if values[i] == nil {
			cols[i] = rows.Column(i)
			cols[i].Retain()
			continue
		}
		v, err := expr.EvalScalar(values[i], rows, j.mem)
		if err != nil {
			return nil, fmt.Errorf("SET %s: %w", f.Name, err) // the rewrite names the operation
		}
		if v.DataType().ID() == arrow.NULL {
			// An untyped NULL: the column's own type.
			nulls := array.MakeArrayOfNull(j.mem, fields[i].Type, v.Len())
			v.Release()
			v = nulls
		}
		cols[i] = v
		fields[i] = arrow.Field{Name: f.Name, Type: v.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rows.NumRows()), nil
}
