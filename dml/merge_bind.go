package dml

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// This file binds a MERGE: ON and the clauses resolved against the joined
// schema {target, source}, the hash join keys found in ON.

// boundClause is a clause bound to the joined schema.
type boundClause struct {
	Clause
	cond   expr.Expr   // nil: always
	values []expr.Expr // per target column; nil keeps (update) or NULL (insert)
}

// mergeKey is one equality of ON: a top-level target column and a source
// expression.
type mergeKey struct {
	target  *actions.StructField
	tIndex  int // in the table's schema
	source  expr.Expr
	arrowDT arrow.DataType
}

// bind resolves ON and the clauses against {target, source}.
func (m *merge) bind(on expr.Expr, clauses []Clause) error {
	table := m.snap.Schema()
	m.joined = &actions.StructType{Fields: []*actions.StructField{
		{Name: m.tAlias, Type: table, Nullable: true},
		{Name: m.sAlias, Type: m.srcSchema, Nullable: true},
	}}
	on, err := m.qualify(on)
	if err != nil {
		return fmt.Errorf("ON: %w", err)
	}
	if _, err := expr.BindPredicate(on, m.joined); err != nil {
		return fmt.Errorf("ON: %w", err)
	}
	var rest []expr.Expr
	for _, c := range expr.Conjuncts(on) {
		if k, ok := m.joinKey(c); ok {
			m.keys = append(m.keys, k)
			continue
		}
		rest = append(rest, c)
	}
	if len(m.keys) == 0 {
		return fmt.Errorf("ON %s: needs an equality between a target column and a source expression (target.k = source.k)", on)
	}
	if len(rest) > 0 {
		if m.residual, err = expr.BindPredicate(expr.And(rest...), m.joined); err != nil {
			return fmt.Errorf("ON: %w", err)
		}
	}
	for i, c := range clauses {
		bc := &boundClause{Clause: c}
		if c.Condition != nil {
			cond, err := m.qualify(c.Condition)
			if err == nil {
				err = m.checkSides(c.Kind, cond)
			}
			if err == nil {
				bc.cond, err = expr.BindPredicate(cond, m.joined)
			}
			if err != nil {
				return fmt.Errorf("clause %d (%s) condition: %w", i+1, c.Kind, err)
			}
		}
		if err := m.bindValues(bc); err != nil {
			return fmt.Errorf("clause %d (%s): %w", i+1, c.Kind, err)
		}
		switch c.Kind {
		case MatchedUpdate, MatchedDelete:
			m.hasMatched = true
		case NotMatchedBySourceUpdate, NotMatchedBySourceDelete:
			m.hasNMBS = true
		case NotMatchedInsert:
		default:
			return fmt.Errorf("clause %d: unknown kind %d", i+1, c.Kind)
		}
		m.clauses = append(m.clauses, bc)
	}
	return nil
}

// bindValues binds a clause's assignments, one per target column.
func (m *merge) bindValues(bc *boundClause) error {
	if bc.Kind == MatchedDelete || bc.Kind == NotMatchedBySourceDelete {
		if len(bc.Set) > 0 || bc.All {
			return fmt.Errorf("a DELETE clause takes no assignments")
		}
		return nil
	}
	table := m.table
	bc.values = make([]expr.Expr, len(table.Fields))
	if bc.All {
		if bc.Kind == NotMatchedBySourceUpdate {
			return fmt.Errorf("UPDATE SET * needs a source row; NOT MATCHED BY SOURCE has none")
		}
		for i, f := range table.Fields {
			si := m.srcSchema.IndexFold(f.Name)
			if _, gen := f.Metadata[actions.MetaGenerationExpression]; si < 0 && gen {
				continue // computed below
			}
			if id, ok, _ := actions.IdentityOf(f); ok {
				switch {
				case bc.Kind != NotMatchedInsert || si < 0:
					continue // UPDATE SET * keeps the row's value; INSERT * without one generates it
				case !id.AllowExplicitInsert:
					return fmt.Errorf("column %s is GENERATED ALWAYS AS IDENTITY and INSERT * would supply its values from the source's column %s: list the columns to insert without it", f.Name, m.srcSchema.Fields[si].Name)
				}
			}
			if si < 0 && m.cfg.evolve {
				continue // kept (UPDATE) or NULL (INSERT), as Spark's schema evolution
			}
			if si < 0 {
				return fmt.Errorf("the source has no column %q for %s * (source columns: %s)", f.Name, map[bool]string{true: "INSERT", false: "UPDATE SET"}[bc.Kind == NotMatchedInsert], strings.Join(m.srcSchema.Names(), ", "))
			}
			v, err := expr.BindAssignment(expr.Col(m.sAlias, m.srcSchema.Fields[si].Name), m.joined, f.Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
			bc.values[i] = v
		}
		return m.generatedValues(bc)
	}
	if len(bc.Set) == 0 {
		return fmt.Errorf("no assignments")
	}
	for _, a := range bc.Set {
		p := a.Column.Path
		if len(p) == 2 && strings.EqualFold(p[0], m.tAlias) {
			p = p[1:]
		}
		if len(p) != 1 {
			return fmt.Errorf("SET %s: only top-level target columns can be assigned", a.Column)
		}
		i := table.IndexFold(p[0])
		if i < 0 {
			return fmt.Errorf("SET %s: %w", a.Column, &expr.UnknownColumnError{Column: p[0], Known: table.Names()})
		}
		if bc.values[i] != nil {
			return fmt.Errorf("column %s is assigned twice", table.Fields[i].Name)
		}
		if id, ok, _ := actions.IdentityOf(table.Fields[i]); ok {
			switch {
			case bc.Kind != NotMatchedInsert:
				return fmt.Errorf("SET %s: %s is an identity column, whose values cannot be updated", a.Column, table.Fields[i].Name)
			case !id.AllowExplicitInsert:
				return fmt.Errorf("INSERT %s: %s is GENERATED ALWAYS AS IDENTITY, whose values cannot be supplied", a.Column, table.Fields[i].Name)
			}
		}
		val, err := m.qualify(a.Value)
		if err == nil {
			err = m.checkSides(bc.Kind, val)
		}
		if err != nil {
			return fmt.Errorf("SET %s: %w", table.Fields[i].Name, err)
		}
		v, err := expr.BindAssignment(val, m.joined, table.Fields[i].Type)
		if err != nil {
			return fmt.Errorf("SET %s: %w", table.Fields[i].Name, err)
		}
		bc.values[i] = v
	}
	return m.generatedValues(bc)
}

// generatedValues completes a clause's values with the generated columns
// it must recompute (every one for an INSERT, whose other unassigned
// columns are null; for an UPDATE those reading an assigned column).
func (m *merge) generatedValues(bc *boundClause) error {
	table := m.table
	insert := bc.Kind == NotMatchedInsert
	current := func(i int) expr.Expr {
		if insert {
			return &expr.Literal{}
		}
		return expr.Col(m.tAlias, table.Fields[i].Name)
	}
	return generatedValues(table, bc.values, m.joined, current, insert)
}

// checkSides refuses references to the side a clause kind has no row of.
func (m *merge) checkSides(kind ClauseKind, e expr.Expr) error {
	var bad string
	expr.Walk(e, func(n expr.Expr) bool {
		c, ok := n.(*expr.Column)
		if !ok {
			return true
		}
		switch {
		case kind == NotMatchedInsert && strings.EqualFold(c.Path[0], m.tAlias):
			bad = fmt.Sprintf("%s refers to the target, which has no row for a source row that matched none", c)
		case (kind == NotMatchedBySourceUpdate || kind == NotMatchedBySourceDelete) && strings.EqualFold(c.Path[0], m.sAlias):
			bad = fmt.Sprintf("%s refers to the source, which has no row for a target row that matched none", c)
		}
		return bad == ""
	})
	if bad != "" {
		return fmt.Errorf("%s", bad)
	}
	return nil
}

// qualify returns a copy of e whose column references all start with the
// target's or the source's alias; e is left as it is.
func (m *merge) qualify(e expr.Expr) (expr.Expr, error) {
	table := m.snap.Schema()
	return expr.RewriteColumns(e, func(col *expr.Column) (expr.Expr, error) {
		head := col.Path[0]
		if len(col.Path) > 1 && (strings.EqualFold(head, m.tAlias) || strings.EqualFold(head, m.sAlias)) {
			return col, nil
		}
		inT := table.IndexFold(head) >= 0
		inS := m.srcSchema.IndexFold(head) >= 0
		switch {
		case inT && inS:
			return nil, fmt.Errorf("column %s is ambiguous: both the target and the source have it; write %s.%s or %s.%s", col, m.tAlias, head, m.sAlias, head)
		case inT:
			return &expr.Column{Path: append([]string{m.tAlias}, col.Path...)}, nil
		case inS:
			return &expr.Column{Path: append([]string{m.sAlias}, col.Path...)}, nil
		}
		return nil, &expr.UnknownColumnError{Column: col.Name(), Known: append(prefixed(m.tAlias, table.Names()), prefixed(m.sAlias, m.srcSchema.Names())...)}
	})
}

func prefixed(alias string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = alias + "." + n
	}
	return out
}

// joinKey recognizes target.col = <source expression> (either way round).
func (m *merge) joinKey(c expr.Expr) (mergeKey, bool) {
	cmp, ok := c.(*expr.Compare)
	if !ok || cmp.Op != expr.Eq {
		return mergeKey{}, false
	}
	for _, pair := range [][2]expr.Expr{{cmp.Left, cmp.Right}, {cmp.Right, cmp.Left}} {
		col, ok := pair[0].(*expr.Column)
		if !ok || len(col.Path) != 2 || !strings.EqualFold(col.Path[0], m.tAlias) || !m.onlySide(pair[1], m.sAlias) {
			continue
		}
		table := m.snap.Schema()
		i := table.IndexFold(col.Path[1])
		if i < 0 {
			continue
		}
		f := table.Fields[i]
		if !keyType(f.Type) {
			continue
		}
		src, err := expr.BindAssignment(pair[1], m.joined, f.Type)
		if err != nil {
			continue
		}
		dt, err := actions.ArrowType(f.Type)
		if err != nil {
			continue
		}
		return mergeKey{target: f, tIndex: i, source: src, arrowDT: dt}, true
	}
	return mergeKey{}, false
}

// keyType reports whether a column of type t can be a hash join key.
func keyType(t actions.DataType) bool {
	switch t.(type) {
	case *actions.StructType, *actions.ArrayType, *actions.MapType:
		return false
	}
	return t != actions.TypeFloat && t != actions.TypeDouble
}

// onlySide reports whether every column e references is on side alias.
func (m *merge) onlySide(e expr.Expr, alias string) bool {
	ok, any := true, false
	expr.Walk(e, func(n expr.Expr) bool {
		if c, isCol := n.(*expr.Column); isCol {
			any = true
			if !strings.EqualFold(c.Path[0], alias) {
				ok = false
			}
		}
		return ok
	})
	return ok && any
}
