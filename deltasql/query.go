package deltasql

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowconv"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer/input"
)

// rowSource is what a query reads.
type rowSource struct {
	schema   *actions.StructType // its columns, to bind expressions to
	batches  iter.Seq2[arrow.RecordBatch, error]
	filtered bool     // the WHERE is applied already (pushed into the scan)
	names    []string // the names that may qualify its columns (alias, table name)
}

// unqualify rewrites, in place, columns qualified by one of names (a
// table's alias or name: t.id) to the bare column (id), unless the table
// has a column of that name (a struct: s.x).
func unqualify(e expr.Expr, schema *actions.StructType, names []string) {
	if e == nil {
		return
	}
	expr.Walk(e, func(n expr.Expr) bool {
		c, ok := n.(*expr.Column)
		if !ok || len(c.Path) < 2 || schema.FieldFold(c.Path[0]) != nil {
			return true
		}
		for _, q := range names {
			if q != "" && strings.EqualFold(c.Path[0], q) {
				c.Path = c.Path[1:]
				break
			}
		}
		return true
	})
}

// qualifiers are the names that may qualify a table's columns.
func (t tableRef) qualifiers() []string {
	var out []string
	if t.alias != "" {
		out = append(out, t.alias)
	}
	if t.name != "" {
		out = append(out, t.name)
	}
	return out
}

// openSource opens what a query reads. A Delta table is scanned with the
// WHERE pushed into the scan (partition pruning, stats skipping);
// columns names the columns the query needs (nil: all). hint, when
// given, is the schema of the table the rows go to: files are then
// decoded as a MERGE source or an INSERT is (input.SourceSchema), with
// the table's types.
func (x *run) openSource(ctx context.Context, src source, where *Expr, columns []string, hint *actions.StructType) (*rowSource, error) {
	switch {
	case src.none:
		one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
		return &rowSource{schema: &actions.StructType{}, batches: func(yield func(arrow.RecordBatch, error) bool) {
			yield(one, nil)
		}}, nil
	case src.changes != nil:
		return x.openChanges(ctx, src.changes, where)
	case src.sub != nil:
		schema, rows, err := x.query(ctx, src.sub, hint)
		if err != nil {
			return nil, err
		}
		ds, err := actions.FromArrowSchema(schema)
		if err != nil {
			return nil, x.errAt(src.sub.pos, err)
		}
		return &rowSource{schema: ds, batches: rows, names: []string{src.alias}}, nil
	case src.table.format != "":
		return x.openFiles(ctx, *src.table, hint)
	}
	t := *src.table
	snap, err := x.snapshot(ctx, t)
	if err != nil {
		return nil, err
	}
	rs := &rowSource{schema: snap.Schema(), names: t.qualifiers(), filtered: true}
	var opts []reader.Option
	if where != nil {
		unqualify(where.Expr, rs.schema, rs.names)
		opts = append(opts, reader.WithFilter(where.Expr))
	}
	if columns != nil {
		var keep []string
		for _, c := range columns {
			if f := rs.schema.FieldFold(c); f != nil && !slices.Contains(keep, f.Name) {
				keep = append(keep, f.Name)
			}
		}
		if len(keep) > 0 {
			opts = append(opts, reader.WithColumns(keep...))
		}
	}
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		pos := t.pos
		if where != nil {
			pos = where.Pos
		}
		return nil, x.errAt(pos, err)
	}
	if columns != nil {
		if rs.schema, err = actions.FromArrowSchema(sc.Schema()); err != nil {
			return nil, x.errAt(t.pos, err)
		}
	}
	rs.batches = sc.Records(ctx)
	return rs, nil
}

// orEmpty is the source's batches, or one batch without rows when it
// yields none, so that a consumer that needs the schema (MERGE binds its
// clauses to it) gets it from an empty table too.
func (s *rowSource) orEmpty() (iter.Seq2[arrow.RecordBatch, error], error) {
	sc, err := actions.ToArrowSchema(s.schema, false, "")
	if err != nil {
		return nil, err
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		any := false
		for rec, err := range s.batches {
			any = true
			if !yield(rec, err) {
				return
			}
		}
		if !any {
			cols := make([]arrow.Array, sc.NumFields())
			for i, f := range sc.Fields() {
				cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			}
			rec := array.NewRecordBatch(sc, cols, 0)
			for _, c := range cols {
				c.Release()
			}
			defer rec.Release()
			yield(rec, nil)
		}
	}, nil
}

// openFiles reads files as a table: csv.`x.csv`, json.`x.jsonl`,
// parquet.`x.parquet`, read_files('x.csv', header => true, ...). Without
// a hint or read_files' schema option, column types are inferred as
// `lakelog append --merge-schema` infers them (CSV as Spark's
// inferSchema does, unless inferSchema => false).
func (x *run) openFiles(ctx context.Context, t tableRef, hint *actions.StructType) (*rowSource, error) {
	var opts []input.Option
	if t.header != nil {
		opts = append(opts, input.WithHeader(*t.header))
	}
	if t.inferSchema != nil {
		opts = append(opts, input.WithInferSchema(*t.inferSchema))
	}
	if t.delimiter != 0 {
		opts = append(opts, input.WithComma(t.delimiter))
	}
	switch t.format {
	case "csv":
		opts = append(opts, input.WithFormat(input.CSV))
	case "json":
		opts = append(opts, input.WithFormat(input.JSONL))
	case "parquet":
		opts = append(opts, input.WithFormat(input.Parquet))
	default:
		for _, f := range t.files {
			if _, err := input.FormatOf(f); err != nil {
				return nil, x.errAt(t.pos, err)
			}
		}
	}
	var schema *actions.StructType
	var err error
	if t.schema != "" {
		if schema, err = actions.ParseDDL(t.schema); err != nil {
			return nil, x.errorf(t.schemaPos, "read_files schema: %v", err)
		}
		for _, f := range schema.Fields {
			f.Nullable = true // a file's value may be missing
		}
		hint = nil
	}
	switch {
	case schema != nil:
	case hint != nil:
		schema, err = input.SourceSchema(ctx, hint, t.files[0], opts...)
	default:
		schema, err = input.MergeSchema(ctx, &actions.StructType{}, t.files, opts...)
	}
	if err != nil {
		return nil, x.errAt(t.pos, err)
	}
	files := t.files
	batches := func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range files {
			for rec, err := range input.ReadFile(ctx, f, schema, opts...) {
				if !yield(rec, err) || err != nil {
					return
				}
			}
		}
	}
	return &rowSource{schema: schema, batches: batches, names: t.qualifiers()}, nil
}

// openChanges reads table_changes: the change data feed, with the WHERE
// pushed into it.
func (x *run) openChanges(ctx context.Context, c *changesRef, where *Expr) (*rowSource, error) {
	st, _, err := x.store(ctx, c.table)
	if err != nil {
		return nil, err
	}
	var bounds cdf.Bounds
	if c.fromV != nil {
		to := int64(-1)
		if c.toV != nil {
			to = *c.toV
			if to < *c.fromV {
				return nil, x.errorf(c.toPos, "the end version %d is before the start %d", to, *c.fromV)
			}
		}
		bounds = cdf.Versions(*c.fromV, to)
	} else {
		start, err := deltalog.ParseTime(c.fromTS)
		if err != nil {
			return nil, x.errorf(c.fromPos, "'%s': %v", c.fromTS, err)
		}
		var end time.Time
		if c.toTS != "" {
			if end, err = deltalog.ParseTime(c.toTS); err != nil {
				return nil, x.errorf(c.toPos, "'%s': %v", c.toTS, err)
			}
		}
		bounds = cdf.Timestamps(start, end)
	}
	var opts []cdf.Option
	if where != nil {
		opts = append(opts, cdf.WithFilter(where.Expr))
	}
	feed, err := cdf.Open(ctx, st, "", bounds, opts...)
	if err != nil {
		pos := c.pos
		if where != nil && strings.Contains(err.Error(), "expr") {
			pos = where.Pos
		}
		return nil, x.errAt(pos, err)
	}
	schema, err := actions.FromArrowSchema(feed.Schema())
	if err != nil {
		return nil, x.errAt(c.pos, err)
	}
	return &rowSource{schema: schema, batches: feed.Records(ctx), filtered: true}, nil
}

// neededColumns are the source columns a query reads (nil: all).
func (q *query) neededColumns() []string {
	var out []string
	add := func(e *Expr) {
		if e != nil {
			for _, c := range expr.Columns(e.Expr) {
				out = append(out, strings.Split(c, ".")...)
			}
		}
	}
	for _, it := range q.items {
		if it.star {
			return nil
		}
		add(it.expr)
		add(it.arg)
	}
	add(q.where)
	for i := range q.groupBy {
		add(&q.groupBy[i])
	}
	for i := range q.orderBy {
		add(&q.orderBy[i].expr)
	}
	return out
}

// selectRows runs a SELECT statement.
func (x *run) selectRows(ctx context.Context, q *query) error {
	schema, rows, err := x.query(ctx, q, nil)
	if err != nil {
		return err
	}
	x.r.Schema, x.r.rows = schema, rows
	return nil
}

// output is one output column of a query.
type output struct {
	name string
	star bool // every source column
	e    expr.Expr
	pos  int
}

// query runs a query: its output columns and rows.
func (x *run) query(ctx context.Context, q *query, hint *actions.StructType) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	src, err := x.openSource(ctx, q.from, q.where, q.neededColumns(), hint)
	if err != nil {
		return nil, nil, err
	}
	var filter expr.Expr
	if q.where != nil && !src.filtered {
		unqualify(q.where.Expr, src.schema, src.names)
		if filter, err = expr.BindPredicate(q.where.Expr, src.schema); err != nil {
			return nil, nil, x.errAt(q.where.Pos, err)
		}
	}
	for _, it := range q.items {
		if it.expr != nil {
			unqualify(it.expr.Expr, src.schema, src.names)
		}
		if it.arg != nil {
			unqualify(it.arg.Expr, src.schema, src.names)
		}
	}
	for i := range q.groupBy {
		unqualify(q.groupBy[i].Expr, src.schema, src.names)
	}
	for i := range q.orderBy {
		unqualify(q.orderBy[i].expr.Expr, src.schema, src.names)
	}
	filtered := func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range src.batches {
			if err != nil {
				yield(nil, err)
				return
			}
			if filter == nil {
				if !yield(rec, nil) {
					return
				}
				continue
			}
			out, err := filterBatch(ctx, rec, filter)
			if err != nil {
				yield(nil, x.errAt(q.where.Pos, err))
				return
			}
			ok := yield(out, nil)
			out.Release()
			if !ok {
				return
			}
		}
	}
	grouped := len(q.groupBy) > 0 || slices.ContainsFunc(q.items, func(it selectItem) bool { return it.agg != "" })
	var schema *arrow.Schema
	var rows iter.Seq2[arrow.RecordBatch, error]
	if grouped {
		rec, err := x.aggregate(ctx, q, src.schema, filtered)
		if err != nil {
			return nil, nil, err
		}
		schema = rec.Schema()
		rows = one(rec)
		if len(q.orderBy) > 0 {
			if rows, err = x.sorted(ctx, q, schema, nil, nil, rows); err != nil {
				return nil, nil, err
			}
		}
	} else {
		outs, err := x.outputs(q, src.schema)
		if err != nil {
			return nil, nil, err
		}
		project := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) { return projectBatch(ctx, rec, outs) }
		if schema, err = x.outputSchema(outs, src.schema); err != nil {
			return nil, nil, err
		}
		rows = mapBatches(filtered, project)
		if len(q.orderBy) > 0 {
			if rows, err = x.sorted(ctx, q, schema, outs, src, filtered); err != nil {
				return nil, nil, err
			}
		}
	}
	if q.limit != nil {
		rows = limitRows(rows, *q.limit)
	}
	return schema, rows, nil
}

// outputs binds a query's items against the source.
func (x *run) outputs(q *query, schema *actions.StructType) ([]output, error) {
	var outs []output
	for _, it := range q.items {
		if it.star {
			outs = append(outs, output{star: true, pos: it.pos})
			continue
		}
		b, err := expr.Bind(it.expr.Expr, schema)
		if err != nil {
			return nil, x.errAt(it.expr.Pos, err)
		}
		outs = append(outs, output{name: itemName(it), e: b, pos: it.pos})
	}
	return outs, nil
}

// itemName is an output column's name: its alias, a column's own name,
// or the expression's text (Spark's names: count(1) for COUNT(*)).
func itemName(it selectItem) string {
	switch {
	case it.alias != "":
		return it.alias
	case it.agg == "COUNT" && it.arg == nil:
		return "count(1)"
	case it.agg != "":
		return strings.ToLower(it.agg) + "(" + it.arg.Expr.String() + ")"
	}
	if c, ok := it.expr.Expr.(*expr.Column); ok {
		return c.Path[len(c.Path)-1]
	}
	return it.text
}

// outputSchema is the Arrow schema of the projected rows: each column in
// the Arrow form of its Delta type.
func (x *run) outputSchema(outs []output, schema *actions.StructType) (*arrow.Schema, error) {
	var fields []arrow.Field
	for _, o := range outs {
		if o.star {
			as, err := actions.ToArrowSchema(schema, false, "")
			if err != nil {
				return nil, x.errAt(o.pos, err)
			}
			fields = append(fields, as.Fields()...)
			continue
		}
		t := o.e.Type()
		if t == nil {
			t = actions.TypeString // an untyped NULL
		}
		at, err := actions.ArrowType(t)
		if err != nil {
			return nil, x.errAt(o.pos, err)
		}
		fields = append(fields, arrow.Field{Name: o.name, Type: at, Nullable: true})
	}
	return arrow.NewSchema(fields, nil), nil
}

// projectBatch evaluates the outputs over a batch, each column brought to
// the Arrow form of its Delta type.
func projectBatch(ctx context.Context, rec arrow.RecordBatch, outs []output) (arrow.RecordBatch, error) {
	var cols []arrow.Array
	var fields []arrow.Field
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	add := func(name string, a arrow.Array) error {
		n, err := normalize(ctx, a)
		a.Release()
		if err != nil {
			return err
		}
		cols = append(cols, n)
		fields = append(fields, arrow.Field{Name: name, Type: n.DataType(), Nullable: true})
		return nil
	}
	for _, o := range outs {
		if o.star {
			for i, f := range rec.Schema().Fields() {
				c := rec.Column(i)
				c.Retain()
				if err := add(f.Name, c); err != nil {
					release()
					return nil, err
				}
			}
			continue
		}
		v, err := expr.EvalScalar(o.e, rec, memory.DefaultAllocator)
		if err != nil {
			release()
			return nil, err
		}
		if v.DataType().ID() == arrow.NULL {
			nulls := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.BinaryTypes.String, v.Len())
			v.Release()
			v = nulls
		}
		if err := add(o.name, v); err != nil {
			release()
			return nil, err
		}
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	release()
	return out, nil
}

// normalize brings an array to the Arrow form of its Delta type (plain
// strings rather than views, microsecond timestamps, ...).
func normalize(ctx context.Context, a arrow.Array) (arrow.Array, error) {
	dt, err := actions.FromArrowType(a.DataType())
	if err != nil {
		return nil, err
	}
	at, err := actions.ArrowType(dt)
	if err != nil {
		return nil, err
	}
	if arrow.TypeEqual(at, a.DataType()) {
		a.Retain()
		return a, nil
	}
	return arrowconv.Conform(ctx, memory.DefaultAllocator, a, at)
}

// filterBatch keeps the rows of rec for which pred is true.
func filterBatch(ctx context.Context, rec arrow.RecordBatch, pred expr.Expr) (arrow.RecordBatch, error) {
	mask, err := expr.EvalPredicate(pred, rec, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	return compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
}

// mapBatches applies fn to every batch.
func mapBatches(in iter.Seq2[arrow.RecordBatch, error], fn func(arrow.RecordBatch) (arrow.RecordBatch, error)) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range in {
			if err != nil {
				yield(nil, err)
				return
			}
			out, err := fn(rec)
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
}

// limitRows stops after n rows.
func limitRows(in iter.Seq2[arrow.RecordBatch, error], n int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		left := n
		if left == 0 {
			return
		}
		for rec, err := range in {
			if err != nil {
				yield(nil, err)
				return
			}
			if rec.NumRows() <= left {
				left -= rec.NumRows()
				if !yield(rec, nil) || left == 0 {
					return
				}
				continue
			}
			part := rec.NewSlice(0, left)
			yield(part, nil)
			part.Release()
			return
		}
	}
}

// one yields one batch (and releases it at the end).
func one(rec arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer rec.Release()
		yield(rec, nil)
	}
}

// aggregate runs a grouped query to its one batch of groups.
func (x *run) aggregate(ctx context.Context, q *query, schema *actions.StructType, rows iter.Seq2[arrow.RecordBatch, error]) (arrow.RecordBatch, error) {
	keys := make([]expr.Expr, len(q.groupBy))
	for i, g := range q.groupBy {
		b, err := expr.Bind(g.Expr, schema)
		if err != nil {
			return nil, x.errAt(g.Pos, err)
		}
		keys[i] = b
	}
	a := newAggregation(len(keys))
	type item struct {
		key int // index into keys, or -1
		agg *aggState
		arg expr.Expr
	}
	items := make([]item, len(q.items))
	for i, it := range q.items {
		switch {
		case it.star:
			return nil, x.errorf(it.pos, "SELECT * cannot be grouped: name the GROUP BY columns and aggregates")
		case it.agg != "":
			s := &aggState{fn: it.agg}
			if it.arg != nil {
				b, err := expr.Bind(it.arg.Expr, schema)
				if err != nil {
					return nil, x.errAt(it.arg.Pos, err)
				}
				items[i].arg = b
				s.argType = b.Type()
				if s.argType == nil {
					s.argType = actions.TypeString
				}
			}
			if _, err := s.resultType(); err != nil {
				return nil, x.errorf(it.pos, "%v", err)
			}
			s.grow(len(a.keyVals))
			a.aggs = append(a.aggs, s)
			items[i] = item{key: -1, agg: s, arg: items[i].arg}
		default:
			b, err := expr.Bind(it.expr.Expr, schema)
			if err != nil {
				return nil, x.errAt(it.expr.Pos, err)
			}
			k := slices.IndexFunc(keys, func(e expr.Expr) bool { return e.String() == b.String() })
			if k < 0 {
				return nil, x.errorf(it.pos, "%s is neither in GROUP BY nor in an aggregate", it.text)
			}
			items[i] = item{key: k}
		}
	}
	for rec, err := range rows {
		if err != nil {
			return nil, err
		}
		keyArrs := make([]arrow.Array, len(keys))
		release := func() {
			for _, k := range keyArrs {
				if k != nil {
					k.Release()
				}
			}
		}
		for i, k := range keys {
			v, err := expr.EvalScalar(k, rec, memory.DefaultAllocator)
			if err == nil {
				var n arrow.Array
				n, err = normalize(ctx, v)
				v.Release()
				v = n
			}
			if err != nil {
				release()
				return nil, x.errAt(q.groupBy[i].Pos, err)
			}
			keyArrs[i] = v
		}
		groups, err := a.groupsOf(ctx, keyArrs, int(rec.NumRows()))
		release()
		if err != nil {
			return nil, x.errAt(q.groupBy[0].Pos, err)
		}
		for i, it := range items {
			if it.agg == nil {
				continue
			}
			var arg arrow.Array
			if it.arg != nil {
				v, err := expr.EvalScalar(it.arg, rec, memory.DefaultAllocator)
				if err != nil {
					return nil, x.errAt(q.items[i].arg.Pos, err)
				}
				if arg, err = normalize(ctx, v); err != nil {
					v.Release()
					return nil, x.errAt(q.items[i].arg.Pos, err)
				}
				v.Release()
			}
			err := it.agg.add(arg, groups)
			if arg != nil {
				arg.Release()
			}
			if err != nil {
				return nil, x.errorf(q.items[i].pos, "%v", err)
			}
		}
	}
	// The groups, in order of first appearance.
	ngroups := len(a.keyVals)
	var cols []arrow.Array
	var fields []arrow.Field
	for i, it := range items {
		var t actions.DataType
		vals := make([]any, ngroups)
		if it.agg == nil {
			dt, err := actions.FromArrowType(a.keyTypes[it.key])
			if err != nil && a.keyTypes[it.key] == nil {
				dt, err = keys[it.key].Type(), nil
			}
			if err != nil {
				return nil, x.errAt(q.items[i].pos, err)
			}
			t = dt
			for g := range ngroups {
				vals[g] = a.keyVals[g][it.key]
			}
		} else {
			var err error
			if t, err = it.agg.resultType(); err != nil {
				return nil, x.errorf(q.items[i].pos, "%v", err)
			}
			for g := range ngroups {
				if vals[g], err = it.agg.value(g); err != nil {
					return nil, x.errorf(q.items[i].pos, "%v", err)
				}
			}
		}
		if t == nil {
			t = actions.TypeString
		}
		arr, err := build(t, vals)
		if err != nil {
			return nil, x.errorf(q.items[i].pos, "%v", err)
		}
		cols = append(cols, arr)
		fields = append(fields, arrow.Field{Name: itemName(q.items[i]), Type: arr.DataType(), Nullable: true})
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(ngroups))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// sorted sorts a query's rows by its ORDER BY (arrow-go's sort_indices,
// then take). A key is an output column (by name or alias), an
// expression over the output columns, or, for a query without GROUP BY,
// over the source's columns. rows are the source's rows, projected by
// outs (nil: rows are the output already). All rows are held in memory.
func (x *run) sorted(ctx context.Context, q *query, out *arrow.Schema, outs []output, src *rowSource, rows iter.Seq2[arrow.RecordBatch, error]) (iter.Seq2[arrow.RecordBatch, error], error) {
	outSchema, err := actions.FromArrowSchema(out)
	if err != nil {
		return nil, err
	}
	type key struct {
		e        expr.Expr
		onSource bool
	}
	keys := make([]key, len(q.orderBy))
	sortKeys := make([]compute.SortKey, len(q.orderBy))
	for i, k := range q.orderBy {
		sortKeys[i] = compute.SortKey{ColumnIndex: i, Order: compute.SortOrderAscending, NullPlacement: compute.SortNullsAtEnd}
		if k.desc {
			sortKeys[i].Order = compute.SortOrderDescending
		}
		if k.nullsFirst {
			sortKeys[i].NullPlacement = compute.SortNullsAtStart
		}
		if b, err := expr.Bind(k.expr.Expr, outSchema); err == nil {
			keys[i] = key{e: b}
			continue
		} else if src == nil {
			return nil, x.errAt(k.expr.Pos, err)
		}
		b, err := expr.Bind(k.expr.Expr, src.schema)
		if err != nil {
			return nil, x.errAt(k.expr.Pos, err)
		}
		keys[i] = key{e: b, onSource: true}
	}
	mem := memory.DefaultAllocator
	return func(yield func(arrow.RecordBatch, error) bool) {
		var batches []arrow.RecordBatch
		keyParts := make([][]arrow.Array, len(keys))
		var held []arrow.Array
		defer func() {
			for _, b := range batches {
				b.Release()
			}
			for _, kp := range keyParts {
				for _, a := range kp {
					a.Release()
				}
			}
			for _, a := range held {
				a.Release()
			}
		}()
		for rec, err := range rows {
			if err != nil {
				yield(nil, err)
				return
			}
			o := rec
			if outs != nil {
				if o, err = projectBatch(ctx, rec, outs); err != nil {
					yield(nil, err)
					return
				}
			} else {
				rec.Retain()
			}
			batches = append(batches, o)
			for i, k := range keys {
				base := o
				if k.onSource {
					base = rec
				}
				v, err := expr.EvalScalar(k.e, base, mem)
				if err == nil {
					var n arrow.Array
					n, err = normalize(ctx, v)
					v.Release()
					v = n
				}
				if err != nil {
					yield(nil, x.errAt(q.orderBy[i].expr.Pos, err))
					return
				}
				keyParts[i] = append(keyParts[i], v)
			}
		}
		if len(batches) == 0 {
			return
		}
		concat := func(parts []arrow.Array) (arrow.Array, error) {
			a, err := array.Concatenate(parts, mem)
			if err == nil {
				held = append(held, a)
			}
			return a, err
		}
		var cols []arrow.Array
		for c := range int(batches[0].NumCols()) {
			parts := make([]arrow.Array, len(batches))
			for i, b := range batches {
				parts[i] = b.Column(c)
			}
			a, err := concat(parts)
			if err != nil {
				yield(nil, err)
				return
			}
			cols = append(cols, a)
		}
		n := int64(0)
		for _, b := range batches {
			n += b.NumRows()
		}
		var kcols []arrow.Array
		var kfields []arrow.Field
		for i := range keys {
			a, err := concat(keyParts[i])
			if err != nil {
				yield(nil, err)
				return
			}
			kcols = append(kcols, a)
			kfields = append(kfields, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: a.DataType(), Nullable: true})
		}
		keyRec := array.NewRecordBatch(arrow.NewSchema(kfields, nil), kcols, n)
		defer keyRec.Release()
		idx, err := compute.SortIndicesRecordBatch(ctx, keyRec, sortKeys)
		if err != nil {
			yield(nil, x.errAt(q.orderBy[0].expr.Pos, fmt.Errorf("ORDER BY: %w", err)))
			return
		}
		defer idx.Release()
		all := array.NewRecordBatch(batches[0].Schema(), cols, n)
		defer all.Release()
		taken, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(all), compute.NewDatumWithoutOwning(idx))
		if err != nil {
			yield(nil, err)
			return
		}
		rec := taken.(*compute.RecordDatum).Value
		defer rec.Release()
		yield(rec, nil)
	}, nil
}
