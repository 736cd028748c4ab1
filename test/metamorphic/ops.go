package metamorphic

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// outcome is what the model predicts of an operation.
type outcome uint8

const (
	commits outcome = iota // it succeeds (committing a version, or none when it changes nothing)
	refused                // it fails and commits nothing
	either                 // the model does not decide; it checks "refused => nothing committed"
)

func (o outcome) String() string {
	return [...]string{"succeeds", "is refused", "succeeds or is refused"}[o]
}

// op is one operation of a run: what it is (desc, as SQL or as the Go
// call), how it runs on the table, and what the model predicts.
type op struct {
	desc string
	run  func(e *env) error
	// predict returns the state after the operation (from a clone of
	// cur) and the expected outcome, with why when it is a refusal.
	predict func(cur *state) (next *state, want outcome, why string)
	// after runs on the runner once the operation succeeded.
	after func(rn *runner)
	// exactChanges: the model knows the change feed rows of the commit.
	exactChanges bool
}

func (o *op) String() string { return o.desc }

// ---- writes

func (g *generator) appendOp(s *state) *op {
	rows := g.newRows(s, 1+g.r.IntN(6))
	cols := insertable(s)
	given, givenWhy := g.giveGenerated(s, rows, &cols)
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	if viaSQL {
		o.desc = fmt.Sprintf("INSERT INTO t (%s) SELECT ... [%d rows]", names(cols), len(rows))
	} else {
		o.desc = fmt.Sprintf("writer.Append(%s) [%d rows]", names(cols), len(rows))
	}
	o.desc += describeRows(s, rows)
	o.run = func(e *env) error {
		if viaSQL {
			src, err := e.stage(cols, rows)
			if err != nil {
				return err
			}
			if g.r.IntN(2) == 0 {
				return e.sql(fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", e.table(), src))
			}
			return e.sql(fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", e.table(), quotedNames(cols), quotedNames(cols), src))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := writer.Append(e.ctx, snap, e.batches(cols, rows), writer.WithAllocator(e.mem))
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		if givenWhy != "" {
			return next, refused, givenWhy
		}
		_ = given
		for _, rw := range rows {
			if name := next.checkRow(rw); name != "" {
				return next, refused, "CHECK constraint " + name
			}
		}
		for _, rw := range rows {
			c := rw.clone()
			next.rows = append(next.rows, c)
			next.touched[rw.key()] = true
			next.changes.inserts = append(next.changes.inserts, c)
		}
		next.op = "append"
		return next, commits, ""
	}
	return o
}

// giveGenerated sometimes makes a write give values for identity and
// generated columns: correct generated values (accepted), a BY DEFAULT
// identity's values (accepted), a value for an ALWAYS identity or a
// wrong generated value (refused, why says so).
func (g *generator) giveGenerated(s *state, rows []row, cols *[]*column) (given bool, why string) {
	for _, c := range s.cols {
		switch {
		case c.kind == identityCol && g.r.IntN(4) == 0:
			*cols = append(*cols, c)
			for i, rw := range rows {
				rw.vals[c.uid] = int64(-1_000_000 - g.nextKey*10 - int64(i))
				delete(rw.generated, c.uid)
			}
			if c.always {
				why = "a value for the GENERATED ALWAYS identity column " + c.name
			}
			given = true
		case c.kind == generatedCol && g.r.IntN(4) == 0:
			*cols = append(*cols, c)
			if g.r.IntN(3) == 0 && len(rows) > 0 {
				v, _ := rows[0].vals[c.uid].(int64)
				rows[0].vals[c.uid] = v + 1
				why = "a value for the generated column " + c.name + " that differs from its expression"
			}
			given = true
		}
	}
	return given, why
}

func (g *generator) overwriteOp(s *state) *op {
	rows := g.newRows(s, g.r.IntN(5))
	if len(rows) == 0 {
		rows = g.newRows(s, 1)
	}
	cols := insertable(s)
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	if viaSQL {
		o.desc = fmt.Sprintf("INSERT OVERWRITE TABLE t (%s) SELECT ... [%d rows]", names(cols), len(rows))
	} else {
		o.desc = fmt.Sprintf("writer.Overwrite(%s) [%d rows]", names(cols), len(rows))
	}
	o.desc += describeRows(s, rows)
	o.run = func(e *env) error {
		if viaSQL {
			src, err := e.stage(cols, rows)
			if err != nil {
				return err
			}
			return e.sql(fmt.Sprintf("INSERT OVERWRITE TABLE %s (%s) SELECT %s FROM %s", e.table(), quotedNames(cols), quotedNames(cols), src))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := writer.Overwrite(e.ctx, snap, e.batches(cols, rows), writer.WithAllocator(e.mem))
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		for _, rw := range rows {
			if name := next.checkRow(rw); name != "" {
				return next, refused, "CHECK constraint " + name
			}
		}
		next.changes.deletes = cur.rows
		next.rows = nil
		for _, rw := range rows {
			c := rw.clone()
			next.rows = append(next.rows, c)
			next.touched[rw.key()] = true
			next.changes.inserts = append(next.changes.inserts, c)
		}
		next.op = "overwrite"
		return next, commits, ""
	}
	return o
}

func (g *generator) replaceWhereOp(s *state) *op {
	r := g.r
	rows := g.newRows(s, 1+r.IntN(4))
	cols := insertable(s)
	var p pred
	var parts []*column
	for _, c := range s.cols {
		if s.isPart(c.uid) && c.kind == plainCol {
			parts = append(parts, c)
		}
	}
	if len(parts) > 0 && r.IntN(2) == 0 {
		c := parts[r.IntN(len(parts))]
		v := drawPartValue(r, c)
		if v == nil {
			p = &nullPred{col: c.name, field: -1}
		} else {
			p = &cmpPred{col: c.name, field: -1, typ: c.typ, op: "=", lit: v}
		}
		if r.IntN(6) > 0 { // else some rows do not match: refused
			for _, rw := range rows {
				rw.vals[c.uid] = v
				s.complete(rw)
			}
		}
	} else {
		// k >= a live key: the new rows' keys are all above it
		lit := g.nextKey
		if len(s.rows) > 0 {
			lit = s.rows[r.IntN(len(s.rows))].key()
		}
		op := ">="
		if r.IntN(6) == 0 {
			op = "<" // the new rows do not match: refused
		}
		p = &cmpPred{col: "k", field: -1, typ: actions.TypeLong, op: op, lit: lit}
	}
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	if viaSQL {
		o.desc = fmt.Sprintf("INSERT INTO t REPLACE WHERE %s BY NAME SELECT ... [%d rows]", p.sql(), len(rows))
	} else {
		o.desc = fmt.Sprintf("dml.ReplaceWhere(%s) [%d rows]", p.sql(), len(rows))
	}
	o.desc += describeRows(s, rows)
	o.run = func(e *env) error {
		if viaSQL {
			src, err := e.stage(cols, rows)
			if err != nil {
				return err
			}
			return e.sql(fmt.Sprintf("INSERT INTO %s REPLACE WHERE %s BY NAME SELECT * FROM %s", e.table(), p.sql(), src))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		pe, err := expr.Parse(p.sql())
		if err != nil {
			return err
		}
		res, err := dml.ReplaceWhere(e.ctx, snap, pe, e.batches(cols, rows), dml.WithWriterOptions(writer.WithAllocator(e.mem)))
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		if cur.feat.rowTrackSupported {
			// lakelog's replaceWhere does not materialize row IDs yet
			// (deltalog's feature table says so)
			return next, refused, "replaceWhere on a table with row tracking"
		}
		for _, rw := range rows {
			if p.eval(cur, rw) != triTrue {
				return next, refused, "a new row does not satisfy the replaceWhere predicate"
			}
			if name := next.checkRow(rw); name != "" {
				return next, refused, "CHECK constraint " + name
			}
		}
		next.rows = nil
		for _, rw := range cur.rows {
			if p.eval(cur, rw) == triTrue {
				next.changes.deletes = append(next.changes.deletes, rw)
			} else {
				next.rows = append(next.rows, rw.clone())
			}
		}
		for _, rw := range rows {
			c := rw.clone()
			next.rows = append(next.rows, c)
			next.touched[rw.key()] = true
			next.changes.inserts = append(next.changes.inserts, c)
		}
		// lakelog's replaceWhere writes no change data files: the feed
		// reads its removes and adds, so rows it copies out of a touched
		// file come out as a delete and an insert. Only the net change
		// is checked (the report lists it).
		next.changes = nil
		next.op = "replaceWhere"
		return next, commits, ""
	}
	return o
}

// ---- DML

func (g *generator) deleteOp(s *state) *op {
	p := g.pred(s, 0)
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	if viaSQL {
		o.desc = "DELETE FROM t WHERE " + p.sql()
	} else {
		o.desc = "dml.Delete(" + p.sql() + ")"
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("DELETE FROM %s WHERE %s", e.table(), p.sql()))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		pe, err := expr.Parse(p.sql())
		if err != nil {
			return err
		}
		res, err := dml.Delete(e.ctx, snap, pe)
		if err != nil {
			return err
		}
		return e.wait(res.CommitResult)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		next.rows = nil
		for _, rw := range cur.rows {
			if p.eval(cur, rw) == triTrue {
				next.changes.deletes = append(next.changes.deletes, rw)
			} else {
				next.rows = append(next.rows, rw.clone())
			}
		}
		next.op = "delete"
		return next, commits, ""
	}
	return o
}

// assignment is one SET of UPDATE or MERGE: column = a literal, or =
// another column (of the same type) of the row, or of MERGE's source.
type assignment struct {
	col     *column
	lit     any
	from    *column // nil for a literal
	fromSrc bool    // from names the source's column (MERGE)
}

func (a assignment) sql(tq, sq string) string {
	lhs := quoteCol(a.col.name)
	if tq != "" {
		lhs = tq + "." + lhs
	}
	switch {
	case a.from == nil:
		return lhs + " = " + sqlLiteral(a.col.typ, a.lit)
	case a.fromSrc:
		return lhs + " = " + sq + "." + quoteCol(a.from.name)
	case tq != "":
		return lhs + " = " + tq + "." + quoteCol(a.from.name)
	}
	return lhs + " = " + quoteCol(a.from.name)
}

// assignments draws 1-2 SETs over s's plain columns; src, when not nil,
// are the MERGE source's columns to copy from.
func (g *generator) assignments(s *state, src []*column) []assignment {
	cols := plainCols(s)
	if len(cols) == 0 {
		return nil
	}
	var out []assignment
	for _, i := range g.r.Perm(len(cols))[:min(len(cols), 1+g.r.IntN(2))] {
		c := cols[i]
		a := assignment{col: c}
		switch k := g.r.IntN(4); {
		case k == 0 && src != nil && slices.Contains(src, c):
			a.from, a.fromSrc = c, true
		case k == 1 && src == nil:
			for _, o := range s.cols {
				if o != c && o.kind != keyCol && o.typ.String() == c.typ.String() && o.kind != identityCol {
					a.from = o
				}
			}
			if a.from == nil {
				a.lit = g.value(s, c)
			}
		default:
			a.lit = g.value(s, c)
		}
		out = append(out, a)
	}
	return out
}

// applySets applies sets to a copy of target (source supplies MERGE's
// source values) and recomputes generated columns.
func applySets(s *state, target row, source *row, sets []assignment) row {
	out := target.clone()
	for _, a := range sets {
		switch {
		case a.from == nil:
			out.vals[a.col.uid] = a.lit
		case a.fromSrc:
			out.vals[a.col.uid] = source.vals[a.from.uid]
		default:
			out.vals[a.col.uid] = target.vals[a.from.uid]
		}
	}
	s.complete(out)
	return out
}

func (g *generator) updateOp(s *state) *op {
	p := g.pred(s, 0)
	sets := g.assignments(s, nil)
	var why string
	if g.r.IntN(12) == 0 {
		for _, c := range s.cols {
			if c.kind == identityCol && c.always {
				sets = append(sets, assignment{col: c, lit: int64(7)})
				why = "UPDATE of the GENERATED ALWAYS identity column " + c.name
			}
		}
	}
	if len(sets) == 0 {
		return nil
	}
	setSQL := make([]string, len(sets))
	for i, a := range sets {
		setSQL[i] = a.sql("", "")
	}
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	if viaSQL {
		o.desc = fmt.Sprintf("UPDATE t SET %s WHERE %s", strings.Join(setSQL, ", "), p.sql())
	} else {
		o.desc = fmt.Sprintf("dml.Update(%s; %s)", p.sql(), strings.Join(setSQL, ", "))
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("UPDATE %s SET %s WHERE %s", e.table(), strings.Join(setSQL, ", "), p.sql()))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		pe, err := expr.Parse(p.sql())
		if err != nil {
			return err
		}
		var as []*expr.Assignment
		for _, s := range setSQL {
			a, err := expr.ParseAssignment(s)
			if err != nil {
				return err
			}
			as = append(as, a)
		}
		res, err := dml.Update(e.ctx, snap, pe, as)
		if err != nil {
			return err
		}
		return e.wait(res.CommitResult)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		if why != "" {
			return next, refused, why
		}
		next.rows = nil
		for _, rw := range cur.rows {
			if p.eval(cur, rw) != triTrue {
				next.rows = append(next.rows, rw.clone())
				continue
			}
			nw := applySets(next, rw, nil, sets)
			if name := next.checkRow(nw); name != "" {
				return next, refused, "CHECK constraint " + name
			}
			next.rows = append(next.rows, nw)
			next.touched[rw.key()] = true
			next.changes.pre = append(next.changes.pre, rw)
			next.changes.post = append(next.changes.post, nw)
		}
		next.op = "update"
		return next, commits, ""
	}
	return o
}

// clause is one WHEN of a MERGE.
type clause struct {
	kind dml.ClauseKind
	cond pred
	// onSource: cond reads the source row (else the target row)
	onSource bool
	sets     []assignment
	all      bool // UPDATE SET * / INSERT *
	insert   []*column
}

func (c clause) sql() string {
	var b strings.Builder
	b.WriteString("WHEN ")
	switch c.kind {
	case dml.MatchedUpdate, dml.MatchedDelete:
		b.WriteString("MATCHED")
	case dml.NotMatchedInsert:
		b.WriteString("NOT MATCHED")
	default:
		b.WriteString("NOT MATCHED BY SOURCE")
	}
	if c.cond != nil {
		q := "t"
		if c.onSource {
			q = "s"
		}
		b.WriteString(" AND " + qualify(c.cond, q))
	}
	b.WriteString(" THEN ")
	switch c.kind {
	case dml.MatchedDelete, dml.NotMatchedBySourceDelete:
		b.WriteString("DELETE")
	case dml.NotMatchedInsert:
		if c.all {
			b.WriteString("INSERT *")
			break
		}
		var vals []string
		for _, col := range c.insert {
			vals = append(vals, "s."+quoteCol(col.name))
		}
		fmt.Fprintf(&b, "INSERT (%s) VALUES (%s)", quotedNames(c.insert), strings.Join(vals, ", "))
	default:
		if c.all {
			b.WriteString("UPDATE SET *")
			break
		}
		var sets []string
		for _, a := range c.sets {
			sets = append(sets, a.sql("t", "s"))
		}
		b.WriteString("UPDATE SET " + strings.Join(sets, ", "))
	}
	return b.String()
}

// qualify renders p with its columns qualified by q: the predicate types
// render columns through quoteCol, so the text is rewritten here.
func qualify(p pred, q string) string {
	switch p := p.(type) {
	case *cmpPred:
		c := *p
		return q + "." + c.sql()
	case *nullPred:
		return q + "." + p.sql()
	case *inPred:
		return q + "." + p.sql()
	case *logicPred:
		if p.op == "NOT" {
			return "NOT (" + qualify(p.a, q) + ")"
		}
		return "(" + qualify(p.a, q) + ") " + p.op + " (" + qualify(p.b, q) + ")"
	}
	return p.sql()
}

func (g *generator) mergeOp(s *state) *op {
	r := g.r
	// the source: some live keys (matched) and some new ones
	var srcRows []row
	for _, rw := range s.rows {
		if r.IntN(3) == 0 {
			srcRows = append(srcRows, g.rowWithKey(s, rw.key()))
		}
	}
	srcRows = append(srcRows, g.newRows(s, r.IntN(4))...)
	dup := false
	if len(srcRows) > 0 && r.IntN(15) == 0 {
		srcRows = append(srcRows, g.rowWithKey(s, srcRows[0].key()))
		dup = true
	}
	simple := true // no identity or generated columns: * clauses are Spark's plain ones
	for _, c := range s.cols {
		if c.kind == identityCol || c.kind == generatedCol {
			simple = false
		}
	}
	srcCols := insertable(s)
	if !simple || r.IntN(3) == 0 {
		// a narrower source: the key and some columns
		var keep []*column
		for _, c := range srcCols {
			if c.kind == keyCol || r.IntN(2) == 0 {
				keep = append(keep, c)
			}
		}
		srcCols = keep
		simple = false
	}
	var clauses []clause
	cond := func() (pred, bool) {
		switch r.IntN(4) {
		case 0, 1:
			return nil, false
		case 2:
			return g.predOn(s, srcCols), true
		}
		return g.pred(s, 1), false
	}
	for range r.IntN(3) {
		c := clause{kind: dml.MatchedUpdate}
		if r.IntN(3) == 0 {
			c.kind = dml.MatchedDelete
		}
		c.cond, c.onSource = cond()
		if c.kind == dml.MatchedUpdate {
			if simple && r.IntN(3) == 0 {
				c.all = true
			} else if c.sets = g.assignments(s, srcCols); len(c.sets) == 0 {
				continue
			}
		}
		clauses = append(clauses, c)
	}
	if r.IntN(4) > 0 {
		c := clause{kind: dml.NotMatchedInsert, insert: srcCols, all: simple && r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			c.cond, c.onSource = g.predOn(s, srcCols), true
		}
		clauses = append(clauses, c)
	}
	for range r.IntN(2) {
		c := clause{kind: dml.NotMatchedBySourceDelete}
		if r.IntN(2) == 0 {
			c.kind = dml.NotMatchedBySourceUpdate
			var sets []assignment
			for _, a := range g.assignments(s, nil) {
				if a.from == nil {
					sets = append(sets, a)
				}
			}
			if c.sets = sets; len(sets) == 0 {
				continue
			}
		}
		if r.IntN(3) > 0 {
			c.cond = g.pred(s, 1)
		}
		clauses = append(clauses, c)
	}
	if len(clauses) == 0 {
		return nil
	}
	if dup && !slices.ContainsFunc(s.rows, func(rw row) bool { return rw.key() == srcRows[0].key() }) {
		dup = false // two source rows of a new key are both inserted: keys stay unique only with a matched key
		srcRows = srcRows[:len(srcRows)-1]
	}
	if dup {
		// a target row matched twice is refused when a MATCHED clause
		// changes it: the first MATCHED clause updates unconditionally.
		sets := g.assignments(s, srcCols)
		if len(sets) == 0 {
			return nil
		}
		clauses = append([]clause{{kind: dml.MatchedUpdate, sets: sets}}, clauses...)
	}
	var texts []string
	for _, c := range clauses {
		texts = append(texts, c.sql())
	}
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	body := fmt.Sprintf("USING src s ON t.k = s.k %s", strings.Join(texts, " "))
	if viaSQL {
		o.desc = "MERGE INTO t " + body
	} else {
		o.desc = "dml.Merge(" + body + ")"
	}
	o.desc += fmt.Sprintf(" [source (%s): %d rows]", names(srcCols), len(srcRows)) + describeRows(s, srcRows)
	o.run = func(e *env) error {
		if viaSQL {
			src, err := e.stage(srcCols, srcRows)
			if err != nil {
				return err
			}
			return e.sql(fmt.Sprintf("MERGE INTO %s AS t USING %s AS s ON t.k = s.k %s", e.table(), src, strings.Join(texts, " ")))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		on, err := expr.Parse("t.k = s.k")
		if err != nil {
			return err
		}
		var dcs []dml.Clause
		for _, c := range clauses {
			dc, err := dmlClause(c)
			if err != nil {
				return err
			}
			dcs = append(dcs, dc)
		}
		res, err := dml.Merge(e.ctx, snap, e.batches(srcCols, srcRows), on, dcs, dml.WithAliases("t", "s"),
			dml.WithWriterOptions(writer.WithAllocator(e.mem)))
		if err != nil {
			return err
		}
		return e.wait(res.CommitResult)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		return predictMerge(cur, srcCols, srcRows, clauses)
	}
	return o
}

func dmlClause(c clause) (dml.Clause, error) {
	var cond expr.Expr
	if c.cond != nil {
		q := "t"
		if c.onSource {
			q = "s"
		}
		var err error
		if cond, err = expr.Parse(qualify(c.cond, q)); err != nil {
			return dml.Clause{}, err
		}
	}
	sets := func() ([]*expr.Assignment, error) {
		var out []*expr.Assignment
		for _, a := range c.sets {
			as, err := expr.ParseAssignment(a.sql("t", "s"))
			if err != nil {
				return nil, err
			}
			out = append(out, as)
		}
		return out, nil
	}
	switch c.kind {
	case dml.MatchedDelete:
		return dml.WhenMatchedDelete(cond), nil
	case dml.NotMatchedBySourceDelete:
		return dml.WhenNotMatchedBySourceDelete(cond), nil
	case dml.MatchedUpdate:
		if c.all {
			return dml.WhenMatchedUpdateAll(cond), nil
		}
		s, err := sets()
		return dml.WhenMatchedUpdate(cond, s...), err
	case dml.NotMatchedBySourceUpdate:
		s, err := sets()
		return dml.WhenNotMatchedBySourceUpdate(cond, s...), err
	}
	if c.all {
		return dml.WhenNotMatchedInsertAll(cond), nil
	}
	var vals []*expr.Assignment
	for _, col := range c.insert {
		a, err := expr.ParseAssignment(quoteCol(col.name) + " = s." + quoteCol(col.name))
		if err != nil {
			return dml.Clause{}, err
		}
		vals = append(vals, a)
	}
	return dml.WhenNotMatchedInsert(cond, vals...), nil
}

// predictMerge is MERGE in the model: SQL's semantics, first clause whose
// condition holds acts.
func predictMerge(cur *state, srcCols []*column, srcRows []row, clauses []clause) (*state, outcome, string) {
	next := cur.clone()
	bySrc := map[int64][]row{}
	for _, sr := range srcRows {
		bySrc[sr.key()] = append(bySrc[sr.key()], sr)
	}
	holds := func(c clause, target *row, source *row) bool {
		if c.cond == nil {
			return true
		}
		if c.onSource {
			return c.cond.eval(cur, *source) == triTrue
		}
		return c.cond.eval(cur, *target) == triTrue
	}
	hasMatched := false
	for _, c := range clauses {
		if c.kind == dml.MatchedUpdate || c.kind == dml.MatchedDelete {
			hasMatched = true
		}
	}
	matchedKeys := map[int64]bool{}
	next.rows = nil
	for _, tr := range cur.rows {
		srcs := bySrc[tr.key()]
		if len(srcs) > 0 {
			matchedKeys[tr.key()] = true
		}
		if len(srcs) > 1 && hasMatched && !onlyUnconditionalDelete(clauses) {
			return next, refused, "a target row matched by two source rows"
		}
		acted := false
		for _, c := range clauses {
			var src *row
			switch {
			case len(srcs) == 1 && (c.kind == dml.MatchedUpdate || c.kind == dml.MatchedDelete):
				src = &srcs[0]
			case len(srcs) == 0 && (c.kind == dml.NotMatchedBySourceUpdate || c.kind == dml.NotMatchedBySourceDelete):
			default:
				continue
			}
			if !holds(c, &tr, src) {
				continue
			}
			acted = true
			switch c.kind {
			case dml.MatchedDelete, dml.NotMatchedBySourceDelete:
				next.changes.deletes = append(next.changes.deletes, tr)
			default:
				sets := c.sets
				if c.all {
					for _, col := range srcCols {
						sets = append(sets, assignment{col: col, from: col, fromSrc: true})
					}
				}
				nw := applySets(next, tr, src, sets)
				if name := next.checkRow(nw); name != "" {
					return next, refused, "CHECK constraint " + name
				}
				next.rows = append(next.rows, nw)
				next.touched[tr.key()] = true
				next.changes.pre = append(next.changes.pre, tr)
				next.changes.post = append(next.changes.post, nw)
			}
			break
		}
		if !acted {
			next.rows = append(next.rows, tr.clone())
		}
	}
	for _, sr := range srcRows {
		if matchedKeys[sr.key()] {
			continue
		}
		for _, c := range clauses {
			if c.kind != dml.NotMatchedInsert || !holds(c, nil, &sr) {
				continue
			}
			nw := row{vals: map[int]any{}, generated: map[int]bool{}}
			for _, col := range next.cols {
				switch {
				case col.kind == identityCol:
					nw.vals[col.uid] = pendingIdentity{}
					nw.generated[col.uid] = true
				case slices.Contains(srcCols, col):
					nw.vals[col.uid] = sr.vals[col.uid]
				default:
					nw.vals[col.uid] = nil
				}
			}
			next.complete(nw)
			if name := next.checkRow(nw); name != "" {
				return next, refused, "CHECK constraint " + name
			}
			next.rows = append(next.rows, nw)
			next.touched[nw.key()] = true
			next.changes.inserts = append(next.changes.inserts, nw)
			break
		}
	}
	next.op = "merge"
	return next, commits, ""
}

// onlyUnconditionalDelete reports whether the MATCHED clauses are one
// unconditional DELETE: then Spark lets a target row match several
// source rows.
func onlyUnconditionalDelete(clauses []clause) bool {
	var matched []clause
	for _, c := range clauses {
		if c.kind == dml.MatchedUpdate || c.kind == dml.MatchedDelete {
			matched = append(matched, c)
		}
	}
	return len(matched) == 1 && matched[0].kind == dml.MatchedDelete && matched[0].cond == nil
}

// ---- maintenance

func (g *generator) optimizeOp(s *state) *op {
	var zcol *column
	if g.r.IntN(2) == 0 {
		var cands []*column
		for _, c := range s.cols {
			if isPrimitive(c.typ) && !s.isPart(c.uid) && c.kind != generatedCol {
				cands = append(cands, c)
			}
		}
		zcol = g.pick(cands)
	}
	viaSQL := g.viaSQL()
	o := &op{exactChanges: true}
	z := ""
	if zcol != nil {
		z = " ZORDER BY (" + quoteCol(zcol.name) + ")"
	}
	if viaSQL {
		o.desc = "OPTIMIZE t" + z
	} else {
		o.desc = "maintenance.Optimize" + z
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql("OPTIMIZE " + e.table() + z)
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		opts := []maintenance.OptimizeOption{maintenance.OptimizeWriterOptions(writer.WithAllocator(e.mem))}
		if zcol != nil {
			opts = append(opts, maintenance.ZOrderBy(zcol.name))
		}
		res, err := maintenance.Optimize(e.ctx, snap, opts...)
		if err != nil {
			return err
		}
		for _, c := range res.Commits {
			if err := e.wait(c); err != nil {
				return err
			}
		}
		return nil
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		next.op = "optimize"
		return next, commits, ""
	}
	return o
}

func (g *generator) restoreOp(s *state, history []*state) *op {
	var cands []int64
	for _, h := range history {
		if h != nil && !h.partial && h.version < s.version && h.version >= s.restorable {
			cands = append(cands, h.version)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	v := cands[g.r.IntN(len(cands))]
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("RESTORE TABLE t TO VERSION AS OF %d", v)
	} else {
		o.desc = fmt.Sprintf("maintenance.Restore(ToVersion(%d))", v)
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("RESTORE TABLE %s TO VERSION AS OF %d", e.table(), v))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := maintenance.Restore(e.ctx, snap, maintenance.ToVersion(v))
		if err != nil {
			return err
		}
		return e.wait(res.Commit)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		var target *state
		for _, h := range history {
			if h != nil && h.version == v {
				target = h
			}
		}
		next := target.clone()
		next.version = cur.version
		next.restorable = cur.restorable
		next.vacuumed, next.vacuumedAt = cur.vacuumed, cur.vacuumedAt
		next.changes = nil
		// the protocol never goes down: features the current table
		// supports stay supported
		next.feat.ntz = next.feat.ntz || cur.feat.ntz
		next.feat.rowTrackSupported = next.feat.rowTrackSupported || cur.feat.rowTrackSupported
		next.op = fmt.Sprintf("restore %d", v)
		next.restoredFrom = v
		want := commits
		if cur.vacuumed || target.feat.mapping != cur.feat.mapping {
			// files of v may be gone (*MissingFilesError); lakelog
			// refuses to change the column mapping mode back
			want = either
		}
		return next, want, ""
	}
	return o
}

func (g *generator) checkpointOp() *op {
	return &op{
		desc: "Snapshot.Checkpoint",
		run: func(e *env) error {
			snap, err := e.snap()
			if err != nil {
				return err
			}
			_, err = snap.Checkpoint(e.ctx, time.Now())
			return err
		},
		predict: func(cur *state) (*state, outcome, string) { return cur.clone(), commits, "" },
	}
}

// cleanupOp removes the log before the newest checkpoint, as a cleanup 31
// days from now does (every commit is then past the default retention).
func (g *generator) cleanupOp() *op {
	return &op{
		desc: "Snapshot.CleanupLog(now + 31 days)",
		run: func(e *env) error {
			snap, err := e.snap()
			if err != nil {
				return err
			}
			_, err = snap.CleanupLog(e.ctx, time.Now().Add(31*24*time.Hour))
			return err
		},
		predict: func(cur *state) (*state, outcome, string) { return cur.clone(), commits, "" },
		after:   func(rn *runner) { rn.logCleaned() },
	}
}

func (g *generator) vacuumOp() *op {
	viaSQL := g.viaSQL()
	o := &op{after: func(rn *runner) { rn.vacuumed() }}
	if viaSQL {
		o.desc = "VACUUM t RETAIN 0 HOURS"
	} else {
		o.desc = "maintenance.Vacuum(clock now + 8 days)"
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("SET spark.databricks.delta.retentionDurationCheck.enabled = false; VACUUM %s RETAIN 0 HOURS", e.table()))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		later := time.Now().Add(8 * 24 * time.Hour)
		res, err := maintenance.Vacuum(e.ctx, snap, maintenance.VacuumClock(func() time.Time { return later }))
		if err != nil {
			return err
		}
		if err := e.wait(res.StartCommit); err != nil {
			return err
		}
		return e.wait(res.EndCommit)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		next.op = "vacuum"
		return next, commits, ""
	}
	return o
}

// ---- schema changes

func (g *generator) schemaOp(s *state) *op {
	switch k := g.r.IntN(10); {
	case k < 3:
		return g.addColumnOp(s)
	case k < 6:
		return g.renameOp(s)
	case k < 8:
		return g.dropOp(s)
	default:
		return g.widenOp(s)
	}
}

func (g *generator) addColumnOp(s *state) *op {
	var name string
	var typ actions.DataType
	if len(g.graveyard) > 0 && g.r.IntN(3) > 0 {
		d := g.graveyard[g.r.IntN(len(g.graveyard))]
		name, typ = d.name, d.typ
		if g.r.IntN(4) == 0 {
			typ = dataTypes[g.r.IntN(len(dataTypes))].typ(g.r)
		}
	} else {
		d := dataTypes[g.r.IntN(len(dataTypes))]
		name, typ = g.newName(s, d.name), d.typ(g.r)
	}
	if s.feat.uniform && !uniformType(typ) {
		return nil
	}
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t ADD COLUMNS (%s %s)", quoteCol(name), ddlType(typ))
	} else {
		o.desc = fmt.Sprintf("schema.AddColumns(%s %s)", name, typ)
	}
	uid := g.newUID()
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s ADD COLUMNS (%s %s)", e.table(), quoteCol(name), ddlType(typ)))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := schema.AddColumns(e.ctx, snap, []schema.Column{{Path: quoteCol(name), Type: typ}})
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		if cur.col(name) != nil {
			return next, refused, "the column exists"
		}
		if hasNTZ(typ) && !cur.feat.ntz {
			return next, refused, "timestamp_ntz without the timestampNtz feature"
		}
		c := &column{uid: uid, name: name, typ: typ}
		c.phys = physName(cur.feat.mapping, c)
		next.cols = append(next.cols, c)
		next.op = "add column"
		return next, commits, ""
	}
	o.after = func(rn *runner) {
		for i, d := range g.graveyard {
			if d.name == name {
				g.graveyard = slices.Delete(g.graveyard, i, i+1)
				g.readded[name] = true
				break
			}
		}
	}
	return o
}

func hasNTZ(t actions.DataType) bool { return t == actions.TypeTimestampNTZ }

// alterable are the columns rename and drop may name: plain ones, and the
// identity and generated columns (their clauses are refused or allowed as
// the model says).
func alterable(s *state) []*column {
	var out []*column
	for _, c := range s.cols {
		if c.kind == plainCol {
			out = append(out, c)
		}
	}
	return out
}

func (g *generator) renameOp(s *state) *op {
	c := g.pick(alterable(s))
	if c == nil {
		return nil
	}
	to := g.newName(s, strings.Fields(c.name)[0])
	if g.r.IntN(3) == 0 {
		to = strings.ToUpper(c.name[:1]) + c.name[1:] + "_Renamed"
	}
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t RENAME COLUMN %s TO %s", quoteCol(c.name), quoteCol(to))
	} else {
		o.desc = fmt.Sprintf("schema.RenameColumn(%s -> %s)", c.name, to)
	}
	from := c.name
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", e.table(), quoteCol(from), quoteCol(to)))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := schema.RenameColumn(e.ctx, snap, quoteCol(from), to)
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		col := cur.col(from)
		switch {
		case cur.feat.mapping == "none":
			return next, refused, "rename without column mapping"
		case referenced(cur, col):
			return next, refused, "a CHECK constraint or generated column reads " + from
		case cur.col(to) != nil:
			return next, refused, "the new name exists"
		}
		for i, x := range next.cols {
			if x.uid == col.uid {
				n := *x
				n.name = to
				next.cols[i] = &n
			}
		}
		next.op = "rename"
		next.nonAdditive = true
		return next, commits, ""
	}
	o.after = func(rn *runner) { g.graveyard = append(g.graveyard, &column{name: from, typ: c.typ}) }
	return o
}

func (g *generator) dropOp(s *state) *op {
	c := g.pick(alterable(s))
	if c == nil {
		return nil
	}
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t DROP COLUMN %s", quoteCol(c.name))
	} else {
		o.desc = fmt.Sprintf("schema.DropColumns(%s)", c.name)
	}
	name := c.name
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", e.table(), quoteCol(name)))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := schema.DropColumns(e.ctx, snap, []string{quoteCol(name)})
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		col := cur.col(name)
		switch {
		case cur.feat.mapping == "none":
			return next, refused, "drop without column mapping"
		case referenced(cur, col):
			return next, refused, "a CHECK constraint or generated column reads " + name
		case cur.isPart(col.uid):
			return next, refused, "drop of a partition column"
		}
		next.cols = slices.DeleteFunc(next.cols, func(x *column) bool { return x.uid == col.uid })
		for _, rw := range next.rows {
			delete(rw.vals, col.uid)
		}
		next.op = "drop"
		next.nonAdditive = true
		return next, commits, ""
	}
	o.after = func(rn *runner) { g.graveyard = append(g.graveyard, &column{name: name, typ: c.typ}) }
	return o
}

// widenings are the type changes ALTER COLUMN TYPE draws (type widening's
// integer and decimal precision widenings).
func widenTo(t actions.DataType) actions.DataType {
	switch t := t.(type) {
	case *actions.DecimalType:
		if t.Precision+2 <= 18 {
			return &actions.DecimalType{Precision: t.Precision + 2, Scale: t.Scale}
		}
		return nil
	}
	switch t {
	case actions.TypeShort:
		return actions.TypeInteger
	case actions.TypeInteger:
		return actions.TypeLong
	}
	return nil
}

func (g *generator) widenOp(s *state) *op {
	var cands []*column
	for _, c := range s.cols {
		if c.kind == plainCol && widenTo(c.typ) != nil {
			cands = append(cands, c)
		}
	}
	c := g.pick(cands)
	if c == nil {
		return nil
	}
	to := widenTo(c.typ)
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t ALTER COLUMN %s TYPE %s", quoteCol(c.name), ddlType(to))
	} else {
		o.desc = fmt.Sprintf("schema.ChangeColumnType(%s, %s)", c.name, to)
	}
	name := c.name
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", e.table(), quoteCol(name), ddlType(to)))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := schema.ChangeColumnType(e.ctx, snap, quoteCol(name), to)
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		col := cur.col(name)
		switch {
		case !cur.feat.widening:
			return next, refused, "type widening is not enabled"
		case referenced(cur, col):
			return next, refused, "a CHECK constraint or generated column reads " + name
		}
		for i, x := range next.cols {
			if x.uid == col.uid {
				n := *x
				n.typ = to
				next.cols[i] = &n
			}
		}
		next.op = "widen"
		want := commits
		if cur.feat.uniform {
			want = either
		}
		return next, want, ""
	}
	return o
}

// ---- features and properties

func (g *generator) setProps(props map[string]string, desc string, predict func(cur *state) (*state, outcome, string)) *op {
	viaSQL := g.viaSQL()
	var kvs []string
	for _, k := range sortedKeys(props) {
		kvs = append(kvs, sqlString(k)+" = "+sqlString(props[k]))
	}
	o := &op{predict: predict}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t SET TBLPROPERTIES (%s)", strings.Join(kvs, ", "))
	} else {
		o.desc = fmt.Sprintf("maintenance.SetProperties(%s)", strings.Join(kvs, ", "))
	}
	if desc != "" {
		o.desc += " -- " + desc
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES (%s)", e.table(), strings.Join(kvs, ", ")))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := maintenance.SetProperties(e.ctx, snap, props)
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	return o
}

func (g *generator) featureOp(s *state) *op {
	k := g.r.IntN(7)
	if s.feat.mapping == "none" && g.r.IntN(2) == 0 {
		k = 3 // column mapping enabled on a table with data: its old columns keep their names as physical names
	}
	switch k {
	case 0:
		return g.setProps(map[string]string{"delta.enableDeletionVectors": "true"}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			if cur.feat.uniform {
				return next, refused, "deletion vectors on a UniForm (IcebergCompatV2) table"
			}
			next.feat.dv = true
			next.op = "enable DVs"
			return next, commits, ""
		})
	case 1:
		return g.setProps(map[string]string{"delta.enableChangeDataFeed": "true"}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			next.feat.cdf = true
			next.op = "enable CDF"
			return next, commits, ""
		})
	case 2:
		if s.feat.uniform {
			return nil // iceberg-go cannot read the materialized row ID columns (see uniformRowTracking)
		}
		return g.setProps(map[string]string{"delta.enableRowTracking": "true"}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			next.feat.rowTrack = true
			next.feat.rowTrackSupported = true
			next.op = "enable row tracking"
			return next, commits, ""
		})
	case 3:
		mode := "name"
		if g.r.IntN(4) == 0 {
			mode = "id"
		}
		return g.setProps(map[string]string{"delta.columnMapping.mode": mode}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			switch {
			case cur.feat.mapping == mode:
				return next, either, ""
			case mode == "id" || cur.feat.mapping == "id":
				return next, refused, fmt.Sprintf("column mapping mode %s to %s", cur.feat.mapping, mode)
			}
			next.feat.mapping = mode
			next.op = "enable column mapping"
			return next, commits, ""
		})
	case 4:
		return g.setProps(map[string]string{"delta.enableTypeWidening": "true"}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			next.feat.widening = true
			next.op = "enable type widening"
			return next, commits, ""
		})
	case 5:
		return g.setProps(map[string]string{"delta.checkpointPolicy": "v2"}, "", func(cur *state) (*state, outcome, string) {
			next := cur.clone()
			next.feat.v2cp = true
			next.op = "checkpoint policy v2"
			return next, commits, ""
		})
	}
	return g.setProps(map[string]string{"delta.feature.timestampNtz": "supported"}, "", func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		next.feat.ntz = true
		next.op = "timestampNtz supported"
		return next, commits, ""
	})
}

func (g *generator) propertyOp(s *state) *op {
	props := map[string]string{}
	switch g.r.IntN(4) {
	case 0:
		props["delta.checkpointInterval"] = fmt.Sprint(2 + g.r.IntN(8))
	case 1:
		props["delta.dataSkippingNumIndexedCols"] = fmt.Sprint(g.r.IntN(4))
	case 2:
		props["delta.logRetentionDuration"] = "interval 30 days"
	default:
		props["owner"] = []string{"team-a", "ünïcode owner", "x'y"}[g.r.IntN(3)]
	}
	return g.setProps(props, "", func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		next.op = "properties"
		return next, commits, ""
	})
}

func (g *generator) constraintOp(s *state) *op {
	if len(s.constraints) > 0 && g.r.IntN(3) == 0 {
		c := s.constraints[g.r.IntN(len(s.constraints))]
		return g.dropConstraintOp(c.name, false)
	}
	if g.r.IntN(8) == 0 {
		return g.dropConstraintOp("no_such_constraint", g.r.IntN(2) == 0)
	}
	// c <> an edge value of a plain primitive column (random rows rarely
	// hold it), or k >= 0
	var cands []*column
	for _, c := range s.cols {
		if c.kind == plainCol && isPrimitive(c.typ) && !s.isPart(c.uid) {
			cands = append(cands, c)
		}
	}
	g.constraintN++
	name := fmt.Sprintf("chk_%d", g.constraintN)
	var p pred = &cmpPred{col: "k", field: -1, typ: actions.TypeLong, op: ">=", lit: int64(0)}
	if c := g.pick(cands); c != nil && g.r.IntN(4) > 0 {
		var lit any
		for range 8 {
			if lit = drawValue(g.r, c.typ, false); true {
				if g.r.IntN(2) == 0 {
					break
				}
			}
		}
		p = &logicPred{op: "OR", a: &nullPred{col: c.name, field: -1}, b: &cmpPred{col: c.name, field: -1, typ: c.typ, op: "<>", lit: lit}}
	}
	viaSQL := g.viaSQL()
	o := &op{}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t ADD CONSTRAINT %s CHECK (%s)", name, p.sql())
	} else {
		o.desc = fmt.Sprintf("schema.AddConstraint(%s, %s)", name, p.sql())
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s)", e.table(), name, p.sql()))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		res, err := schema.AddConstraint(e.ctx, snap, name, p.sql())
		if err != nil {
			return err
		}
		return e.wait(res)
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		for _, rw := range cur.rows {
			if p.eval(cur, rw) != triTrue {
				return next, refused, "a row violates the new constraint"
			}
		}
		next.constraints = append(next.constraints, constraint{name: name, pred: p})
		next.op = "add constraint"
		return next, commits, ""
	}
	return o
}

func (g *generator) dropConstraintOp(name string, ifExists bool) *op {
	viaSQL := g.viaSQL()
	o := &op{}
	ie := ""
	if ifExists {
		ie = "IF EXISTS "
	}
	if viaSQL {
		o.desc = fmt.Sprintf("ALTER TABLE t DROP CONSTRAINT %s%s", ie, name)
	} else {
		o.desc = fmt.Sprintf("schema.DropConstraint(%s%s)", ie, name)
	}
	o.run = func(e *env) error {
		if viaSQL {
			return e.sql(fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s%s", e.table(), ie, name))
		}
		snap, err := e.snap()
		if err != nil {
			return err
		}
		var opts []schema.Option
		if ifExists {
			opts = append(opts, schema.IfExists())
		}
		res, err := schema.DropConstraint(e.ctx, snap, name, opts...)
		if err != nil {
			return err
		}
		if res != nil {
			return e.wait(res)
		}
		return nil
	}
	o.predict = func(cur *state) (*state, outcome, string) {
		next := cur.clone()
		i := slices.IndexFunc(cur.constraints, func(c constraint) bool { return c.name == name })
		if i < 0 {
			if ifExists {
				next.op = "noop"
				return next, commits, "" // and nothing committed: the runner checks no version came
			}
			return next, refused, "no such constraint"
		}
		next.constraints = slices.Delete(next.constraints, i, i+1)
		next.op = "drop constraint"
		return next, commits, ""
	}
	return o
}

// ---- small helpers

func names(cols []*column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return strings.Join(out, ", ")
}

func quotedNames(cols []*column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quoteCol(c.name)
	}
	return strings.Join(out, ", ")
}

// describeRows is the rows, for the printed sequence.
func describeRows(s *state, rows []row) string {
	var b strings.Builder
	for _, rw := range rows {
		b.WriteString("\n\t\t" + renderRow(s.cols, rw))
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
