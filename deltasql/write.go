package deltasql

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// createTable is CREATE TABLE: deltalog.Create, as `lakelog create`, or
// writer.CreateTable for CREATE TABLE ... AS SELECT.
func (x *run) createTable(ctx context.Context, n *createTable) error {
	if n.cloneOf != nil {
		return x.clone(ctx, n)
	}
	t := n.table
	loc := t.path
	if t.name != "" {
		c := x.s.catalog
		if c == nil {
			return x.errorf(t.pos, "CREATE TABLE %s: there is no catalog to register the name in; name the table by its path: delta.`/path/to/%s`", t.name, t.name)
		}
		if old, ok := c.Location(t.name); ok && n.replace {
			loc = old
		} else if ok {
			if n.ifNotExists {
				x.r.Summary = fmt.Sprintf("table %s exists (%s); nothing was done", t.name, old)
				return nil
			}
			return x.errorf(t.pos, "table %s already exists in the catalog (at %s)", t.name, old)
		}
		if loc == "" {
			loc = n.location
		}
		if loc == "" {
			loc = c.defaultLocation(t.name)
		}
	} else if n.location != "" && n.location != t.path {
		return x.errorf(t.pos, "LOCATION '%s' differs from the table's path %s", n.location, t.path)
	}
	md := &actions.Metadata{PartitionColumns: n.partitionBy, Configuration: n.properties}
	if md.PartitionColumns == nil {
		md.PartitionColumns = []string{}
	}
	if n.comment != "" {
		md.Description = &n.comment
	}
	var batches iter.Seq2[arrow.RecordBatch, error]
	var schema *actions.StructType
	if n.query != nil {
		as, rows, err := x.query(ctx, n.query, nil)
		if err != nil {
			return err
		}
		if schema, err = actions.FromArrowSchema(as); err != nil {
			return x.errAt(n.query.pos, err)
		}
		batches = rows
	} else {
		var err error
		if schema, err = actions.ParseDDL(n.columns); err != nil {
			return x.errAt(n.columnsPos, err)
		}
	}
	ss, err := actions.SchemaString(schema)
	if err != nil {
		return x.errAt(t.pos, err)
	}
	md.SchemaString = ss
	if n.replace {
		done, err := x.replaceTable(ctx, n, loc, md, batches)
		if done || err != nil {
			return err
		}
	}
	st, err := objstore.Open(ctx, loc)
	if err != nil {
		return x.errAt(t.pos, err)
	}
	x.s.stores = append(x.s.stores, st)
	var res *deltalog.CommitResult
	if batches != nil {
		res, err = writer.CreateTable(ctx, st, "", md, batches)
	} else {
		var tx *deltalog.Transaction
		if tx, err = deltalog.Create(st, "", md); err == nil {
			res, err = tx.Commit(ctx)
		}
	}
	if errors.Is(err, deltalog.ErrTableExists) && n.ifNotExists {
		x.r.Summary = fmt.Sprintf("table %s exists; nothing was done", t.display())
		return x.register(t, loc)
	}
	if err != nil {
		return x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	x.r.committed(res)
	x.r.Summary = fmt.Sprintf("created table %s at version %d", t.display(), res.Version)
	return x.register(t, loc)
}

// register records a named table in the catalog.
func (x *run) register(t tableRef, loc string) error {
	if t.name == "" {
		return nil
	}
	if err := x.s.catalog.register(t.name, loc); err != nil {
		return x.errAt(t.pos, err)
	}
	return nil
}

// countRows counts the rows passing through.
func countRows(in iter.Seq2[arrow.RecordBatch, error], n *atomic.Int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range in {
			if err == nil {
				n.Add(rec.NumRows())
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// insert is INSERT INTO / OVERWRITE: writer.Append or writer.Overwrite,
// as `lakelog append`. VALUES and a query's columns are matched to the
// table's columns (or to the columns listed) by position, as Spark;
// INSERT ... BY NAME matches a query's columns by name.
func (x *run) insert(ctx context.Context, n *insert) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	schema := snap.Schema()
	targets := schema.Fields
	if n.columns != nil {
		targets = nil
		for _, c := range n.columns {
			f := schema.FieldFold(c)
			if f == nil {
				return x.errAt(n.table.pos, &expr.UnknownColumnError{Column: c, Known: schema.Names()})
			}
			targets = append(targets, f)
		}
	}
	if targets, err = x.withStatic(n, schema, targets); err != nil {
		return err
	}
	var batches iter.Seq2[arrow.RecordBatch, error]
	if n.values != nil {
		for _, row := range n.values {
			if len(row) != len(targets) {
				return x.errorf(row[0].Pos, "%d values for %d columns", len(row), len(targets))
			}
		}
		batches = x.valuesRows(n.values, targets)
	} else {
		hint := &actions.StructType{Fields: targets}
		as, rows, err := x.query(ctx, n.query, hint)
		if err != nil {
			return err
		}
		renamed, err := x.matchColumns(n.query.pos, as, targets, n.byName)
		if err != nil {
			return err
		}
		batches = mapBatches(rows, renamed)
	}
	var rowsIn atomic.Int64
	batches = countRows(batches, &rowsIn)
	var res *deltalog.CommitResult
	switch {
	case n.replaceWhere != nil:
		pred := predicate(n.replaceWhere, schema, n.table)
		res, err = dml.ReplaceWhere(ctx, snap, pred, batches)
		if err != nil && !errors.Is(err, writer.ErrEmptyInput) {
			return x.errAt(n.replaceWhere.Pos, err)
		}
	case n.overwrite:
		res, err = writer.Overwrite(ctx, snap, batches)
	default:
		res, err = writer.Append(ctx, snap, batches)
	}
	if err != nil && !errors.Is(err, writer.ErrEmptyInput) {
		return x.errAt(n.table.pos, err)
	}
	// Spark's INSERT returns no rows; the summary says what it did.
	x.r.committed(res)
	if res == nil {
		x.r.Summary = "INSERT: no rows; no version was committed"
	} else {
		x.r.Summary = fmt.Sprintf("INSERT: %d rows, version %d", rowsIn.Load(), res.Version)
	}
	return nil
}

// matchColumns maps a query's output columns to the target columns as
// Spark does: by position (the query returns one column for each target,
// whatever it names them), or with INSERT ... BY NAME by name (each
// output column names a distinct table column; the others are null).
func (x *run) matchColumns(pos int, out *arrow.Schema, targets []*actions.StructField, byName bool) (func(arrow.RecordBatch) (arrow.RecordBatch, error), error) {
	if byName {
		named := make([]*actions.StructField, out.NumFields())
		seen := map[string]bool{}
		for i, f := range out.Fields() {
			var t *actions.StructField
			for _, c := range targets {
				if strings.EqualFold(c.Name, f.Name) {
					t = c
				}
			}
			if t == nil {
				known := make([]string, len(targets))
				for j, c := range targets {
					known[j] = c.Name
				}
				return nil, x.errAt(pos, fmt.Errorf("INSERT BY NAME: %w", &expr.UnknownColumnError{Column: f.Name, Known: known}))
			}
			if seen[strings.ToLower(t.Name)] {
				return nil, x.errorf(pos, "INSERT BY NAME: the query returns column %s twice", t.Name)
			}
			seen[strings.ToLower(t.Name)] = true
			named[i] = t
		}
		return x.renameColumns(named), nil
	}
	if out.NumFields() != len(targets) {
		want := make([]string, len(targets))
		for i, t := range targets {
			want[i] = t.Name
		}
		return nil, x.errorf(pos, "the query returns %d columns for the %d table columns (%s): INSERT matches them by position (INSERT INTO t BY NAME SELECT ... matches by name)",
			out.NumFields(), len(targets), strings.Join(want, ", "))
	}
	return x.renameColumns(targets), nil
}

// renameColumns names a batch's columns, in order, and brings a number
// to its target column's number type as Spark's ANSI store assignment
// does (a BIGINT query column into an INT column: a value that does not
// fit is an error naming the column, never a wrapped number). targets
// holds, for each column, the table column it goes to.
func (x *run) renameColumns(targets []*actions.StructField) func(arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		fields := make([]arrow.Field, len(targets))
		cols := make([]arrow.Array, len(targets))
		defer func() {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, t := range targets {
			fields[i] = rec.Schema().Field(i)
			fields[i].Name = t.Name
			col := rec.Column(i)
			col.Retain()
			cols[i] = col
			want, err := actions.ArrowType(t.Type)
			if err != nil || arrow.TypeEqual(want, col.DataType()) || !isNumber(want) || !isNumber(col.DataType()) {
				continue
			}
			cast, err := compute.CastArray(context.Background(), col, compute.SafeCastOptions(want))
			if err != nil {
				return nil, fmt.Errorf("column %s: a %s value does not fit in %s: %s", t.Name, col.DataType(), t.Type, strings.TrimPrefix(err.Error(), "invalid: "))
			}
			col.Release()
			cols[i], fields[i].Type = cast, want
		}
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows()), nil
	}
}

// isNumber reports whether t is an integer, floating point or decimal
// type.
func isNumber(t arrow.DataType) bool {
	return arrow.IsInteger(t.ID()) || arrow.IsFloating(t.ID()) || arrow.IsDecimal(t.ID())
}

// valuesRows are the rows of VALUES: each value bound as an assignment to
// its column (as UPDATE's SET binds), one batch per row.
func (x *run) valuesRows(rows [][]Expr, targets []*actions.StructField) iter.Seq2[arrow.RecordBatch, error] {
	empty := &actions.StructType{}
	return func(yield func(arrow.RecordBatch, error) bool) {
		oneRow := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
		defer oneRow.Release()
		for _, row := range rows {
			cols := make([]arrow.Array, len(row))
			fields := make([]arrow.Field, len(row))
			fail := func(err error) {
				for _, c := range cols {
					if c != nil {
						c.Release()
					}
				}
				yield(nil, err)
			}
			for i, v := range row {
				b, err := expr.BindAssignment(v.Expr, empty, targets[i].Type)
				if err != nil {
					fail(x.errAt(v.Pos, fmt.Errorf("%s: %w", targets[i].Name, err)))
					return
				}
				a, err := expr.EvalScalar(b, oneRow, memory.DefaultAllocator)
				if err != nil {
					fail(x.errAt(v.Pos, fmt.Errorf("%s: %w", targets[i].Name, err)))
					return
				}
				if a.DataType().ID() == arrow.NULL {
					at, err := actions.ArrowType(targets[i].Type)
					if err != nil {
						fail(err)
						return
					}
					nulls := array.MakeArrayOfNull(memory.DefaultAllocator, at, a.Len())
					a.Release()
					a = nulls
				}
				cols[i] = a
				fields[i] = arrow.Field{Name: targets[i].Name, Type: a.DataType(), Nullable: true}
			}
			rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1)
			for _, c := range cols {
				c.Release()
			}
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				return
			}
		}
	}
}

// predicate is a statement's WHERE with the table's qualifiers removed
// (TRUE without one).
func predicate(where *Expr, schema *actions.StructType, t tableRef) expr.Expr {
	if where == nil {
		return expr.Lit(true)
	}
	unqualify(where.Expr, schema, t.qualifiers())
	return where.Expr
}

func wherePos(where *Expr, t tableRef) int {
	if where != nil {
		return where.Pos
	}
	return t.pos
}

// delete is DELETE FROM: dml.Delete, as `lakelog delete`.
func (x *run) delete(ctx context.Context, n *deleteStmt) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	res, err := dml.Delete(ctx, snap, predicate(n.where, snap.Schema(), n.table), x.dmlOptions("DELETE")...)
	if err != nil {
		return x.errAt(wherePos(n.where, n.table), err)
	}
	x.dmlResult("DELETE", res, res.Metrics["numDeletedRows"])
	return nil
}

// dmlResult is Spark's row for DELETE and UPDATE: num_affected_rows.
func (x *run) dmlResult(op string, res *dml.Result, affected int64) {
	x.r.committed(res.CommitResult)
	t := newRowTable(col("num_affected_rows", arrow.PrimitiveTypes.Int64))
	t.add(affected)
	x.r.set(t)
	x.r.Summary = op + ": nothing matched; no version was committed"
	if res.CommitResult != nil {
		x.r.Summary = fmt.Sprintf("%s: version %d", op, res.Version)
	}
}

// assignments are SET a = e, ... as the library takes them, the target's
// qualifiers removed from the columns set.
func assignments(set []assignment, schema *actions.StructType, names []string) []*expr.Assignment {
	out := make([]*expr.Assignment, len(set))
	for i, a := range set {
		c := a.column
		if len(c) > 1 && schema.FieldFold(c[0]) == nil {
			for _, q := range names {
				if strings.EqualFold(c[0], q) {
					c = c[1:]
					break
				}
			}
		}
		out[i] = &expr.Assignment{Column: expr.Col(c...), Value: a.value.Expr}
	}
	return out
}

// update is UPDATE: dml.Update, as `lakelog update`.
func (x *run) update(ctx context.Context, n *update) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	schema := snap.Schema()
	set := assignments(n.set, schema, n.table.qualifiers())
	for _, a := range set {
		unqualify(a.Value, schema, n.table.qualifiers())
	}
	var pred expr.Expr
	if n.where != nil {
		pred = predicate(n.where, schema, n.table)
	}
	res, err := dml.Update(ctx, snap, pred, set, x.dmlOptions("UPDATE")...)
	if err != nil {
		return x.errAt(x.updatePos(err, n), err)
	}
	x.dmlResult("UPDATE", res, res.Metrics["numUpdatedRows"])
	return nil
}

// updatePos is where an UPDATE's error is: the assignment it names, else
// the WHERE.
func (x *run) updatePos(err error, n *update) int {
	msg := err.Error()
	for _, a := range n.set {
		if strings.Contains(msg, "SET "+a.column[len(a.column)-1]) {
			return a.pos
		}
	}
	return wherePos(n.where, n.table)
}

// merge is MERGE INTO: dml.Merge, as `lakelog merge`.
func (x *run) merge(ctx context.Context, n *merge) error {
	snap, err := x.snapshot(ctx, n.target)
	if err != nil {
		return err
	}
	schema := snap.Schema()
	targetAlias := firstOf(n.target.alias, n.target.name, "target")
	var src *rowSource
	var sourceAlias string
	switch {
	case n.source.sub != nil:
		src, err = x.openSource(ctx, n.source, nil, nil, schema)
		sourceAlias = n.source.alias
	case n.source.changes != nil:
		src, err = x.openSource(ctx, n.source, nil, nil, schema)
		sourceAlias = "source"
	default:
		src, err = x.openSource(ctx, n.source, nil, nil, schema)
		sourceAlias = firstOf(n.source.table.alias, n.source.table.name, "source")
	}
	if err != nil {
		return err
	}
	var clauses []dml.Clause
	for _, c := range n.clauses {
		dc, err := mergeClauseOf(c, schema, targetAlias)
		if err != nil {
			return x.errorf(c.pos, "%v", err)
		}
		clauses = append(clauses, dc)
	}
	opts := append([]dml.Option{dml.WithAliases(targetAlias, sourceAlias)}, x.dmlOptions("MERGE")...)
	if n.evolve || x.s.autoMerge {
		opts = append(opts, dml.WithSchemaEvolution())
	}
	batches, err := src.orEmpty()
	if err != nil {
		return x.errAt(n.source.pos(), err)
	}
	res, err := dml.Merge(ctx, snap, batches, n.on.Expr, clauses, opts...)
	if err != nil {
		return x.errAt(n.on.Pos, err)
	}
	x.r.committed(res.CommitResult)
	m := res.Metrics
	t := newRowTable(col("num_affected_rows", arrow.PrimitiveTypes.Int64), col("num_updated_rows", arrow.PrimitiveTypes.Int64),
		col("num_deleted_rows", arrow.PrimitiveTypes.Int64), col("num_inserted_rows", arrow.PrimitiveTypes.Int64))
	t.add(m["numTargetRowsUpdated"]+m["numTargetRowsDeleted"]+m["numTargetRowsInserted"], m["numTargetRowsUpdated"], m["numTargetRowsDeleted"], m["numTargetRowsInserted"])
	x.r.set(t)
	x.r.Summary = "MERGE: nothing changed; no version was committed"
	if res.CommitResult != nil {
		x.r.Summary = fmt.Sprintf("MERGE: version %d", res.Version)
	}
	return nil
}

// toAssignments turns INSERT's columns and values into the parser's
// assignments.
func toAssignments(values []*expr.Assignment) []assignment {
	out := make([]assignment, len(values))
	for i, v := range values {
		out[i] = assignment{column: v.Column.Path, value: Expr{Expr: v.Value}}
	}
	return out
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// mergeClauseOf is a parsed WHEN clause as dml takes it; columns set are
// stripped of the target's alias.
func mergeClauseOf(c mergeClause, schema *actions.StructType, targetAlias string) (dml.Clause, error) {
	var cond expr.Expr
	if c.cond != nil {
		cond = c.cond.Expr
	}
	names := []string{targetAlias}
	switch c.matched + " " + c.action {
	case "MATCHED UPDATE":
		if c.star {
			return dml.WhenMatchedUpdateAll(cond), nil
		}
		return dml.WhenMatchedUpdate(cond, assignments(c.set, schema, names)...), nil
	case "MATCHED DELETE":
		return dml.WhenMatchedDelete(cond), nil
	case "NOT MATCHED INSERT":
		if c.star {
			return dml.WhenNotMatchedInsertAll(cond), nil
		}
		set := make([]assignment, len(c.columns))
		for i, col := range c.columns {
			set[i] = assignment{column: strings.Split(col, "."), value: c.values[i]}
		}
		return dml.WhenNotMatchedInsert(cond, assignments(set, schema, names)...), nil
	case "NOT MATCHED BY SOURCE UPDATE":
		if c.star {
			return dml.Clause{}, fmt.Errorf("WHEN NOT MATCHED BY SOURCE THEN UPDATE SET * has no source row to take values from; name the columns")
		}
		return dml.WhenNotMatchedBySourceUpdate(cond, assignments(c.set, schema, names)...), nil
	case "NOT MATCHED BY SOURCE DELETE":
		return dml.WhenNotMatchedBySourceDelete(cond), nil
	}
	return dml.Clause{}, fmt.Errorf("WHEN %s THEN %s is not a MERGE clause", c.matched, c.action)
}

// MergeClause reads one MERGE clause as the lakelog merge verb's flags
// give it: when is MATCHED, NOT MATCHED or NOT MATCHED BY SOURCE, and
// text the rest of Spark's clause, "[AND condition THEN] action":
//
//	AND source.op = 'delete' THEN DELETE
//	UPDATE SET name = source.name, amount = target.amount + source.amount
//	INSERT (id, name) VALUES (source.id, upper(source.name))
//
// schema is the target table's; columns set may be qualified by
// targetAlias. An error is an *Error whose position counts within text.
func MergeClause(schema *actions.StructType, when, text, targetAlias string) (dml.Clause, error) {
	trimmed := strings.TrimSpace(text)
	lead := len(text) - len(strings.TrimLeft(text, " \t\n\r"))
	added := ""
	if upper := strings.ToUpper(trimmed); !strings.HasPrefix(upper, "AND ") && !strings.HasPrefix(upper, "AND(") && !strings.HasPrefix(upper, "THEN ") {
		added = "THEN "
	}
	prefix := "WHEN " + when + " " + added
	full := prefix + trimmed
	fail := func(err error) (dml.Clause, error) {
		var e *Error
		if errors.As(err, &e) {
			return dml.Clause{}, errAt(text, max(0, e.Pos-len(prefix))+lead, e.Err, "%s", e.Msg)
		}
		return dml.Clause{}, err
	}
	p := &parser{orig: full, src: full, lx: lexer{src: full}}
	if err := p.advance(); err != nil {
		return fail(err)
	}
	c, err := p.whenClause()
	if err != nil {
		return fail(err)
	}
	if p.tok.kind != tokEOF {
		return fail(p.unexpected("the end of the clause"))
	}
	dc, err := mergeClauseOf(c, schema, targetAlias)
	if err != nil {
		return fail(errAt(full, c.pos, nil, "%v", err))
	}
	return dc, nil
}

// dmlOptions are the session's DML options and, with WithProgress, the
// operation's progress in rows: read to find the rows it changes, then
// rewritten.
func (x *run) dmlOptions(op string) []dml.Option {
	opts := slices.Clone(x.s.dmlOpts)
	if fn := x.s.progress; fn != nil {
		opts = append(opts, dml.WithProgress(func(phase string, done, total int64) {
			what := strings.ToLower(op) + ": rows read"
			if phase == "rewrite" {
				what = strings.ToLower(op) + ": rows rewritten"
			}
			fn(what, int(done), int(total))
		}))
	}
	return opts
}
