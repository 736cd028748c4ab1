package writer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// ErrConstraintViolation is wrapped by every *ConstraintError: a row
// written to the table violates one of its CHECK constraints. Nothing
// was committed.
var ErrConstraintViolation = errors.New("a row violates a CHECK constraint")

// ConstraintError reports a row that violates a CHECK constraint
// (delta.constraints.NAME): its expression is FALSE or NULL for the row,
// which Delta refuses as Spark does; or a row that gives a generated
// column a value other than its expression's.
type ConstraintError struct {
	// Kind is "CHECK constraint", or "generated column" for a value
	// given for a generated column that differs from its expression's.
	Kind string
	Name string // the constraint's (or generated column's) name
	Expr string // its expression, as the table stores it
	// Row is the 1-based number of the row among the rows the operation
	// wrote (for an append, the input row).
	Row int64
	// Values are the row's values of the columns the expression reads,
	// "col = value", in the order the expression names them.
	Values []string
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("writer: %s %s (%s) violated by row %d with values: %s", e.Kind, e.Name, e.Expr, e.Row, strings.Join(e.Values, ", "))
}

// Unwrap makes errors.Is(err, ErrConstraintViolation) hold.
func (e *ConstraintError) Unwrap() error { return ErrConstraintViolation }

// constraint is a CHECK constraint bound to the table's logical schema.
type constraint struct {
	name, text string
	bound      expr.Expr
	cols       [][]string // the columns it reads, in the schema's spelling
}

// BindConstraints parses and binds the table's CHECK constraints
// (props.Constraints) against its logical schema, sorted by name. An
// expression that does not parse or bind is an error naming the
// constraint.
func bindConstraints(props *actions.TableProperties, schema *actions.StructType) ([]*constraint, error) {
	var out []*constraint
	for _, name := range slices.Sorted(maps.Keys(props.Constraints)) {
		text := props.Constraints[name]
		e, err := expr.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("writer: CHECK constraint %s (%s): %w", name, text, err)
		}
		b, err := expr.BindPredicate(e, schema)
		if err != nil {
			return nil, fmt.Errorf("writer: CHECK constraint %s (%s): %w", name, text, err)
		}
		c := &constraint{name: name, text: text, bound: b}
		expr.Walk(b, func(n expr.Expr) bool {
			if col, ok := n.(*expr.Column); ok && !slices.ContainsFunc(c.cols, func(p []string) bool { return slices.Equal(p, col.Path) }) {
				c.cols = append(c.cols, col.Path)
			}
			return true
		})
		out = append(out, c)
	}
	return out, nil
}

// check fails with a *ConstraintError at the first row of rec (a batch
// of the table's logical schema) for which a constraint is not TRUE.
func checkConstraints(cs []*constraint, rec arrow.RecordBatch, rowBase int64, mem memory.Allocator) error {
	for _, c := range cs {
		mask, err := expr.EvalPredicate(c.bound, rec, mem)
		if err != nil {
			return fmt.Errorf("writer: CHECK constraint %s (%s): %w", c.name, c.text, err)
		}
		bad := -1
		if mask.NullN() > 0 || mask.Len() > 0 {
			for i := 0; i < mask.Len(); i++ {
				if mask.IsNull(i) || !mask.Value(i) {
					bad = i
					break
				}
			}
		}
		mask.Release()
		if bad >= 0 {
			return &ConstraintError{Kind: "CHECK constraint", Name: c.name, Expr: c.text, Row: rowBase + int64(bad) + 1, Values: rowValues(rec, c.cols, bad)}
		}
	}
	return nil
}

// rowValues renders row i's values of the columns at paths, "a.b = 3"
// (NULL where the value or a struct around it is null).
func rowValues(rec arrow.RecordBatch, paths [][]string, i int) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		v := "?"
		if x, ok := valueAt(rec, p, i); ok {
			v = expr.Lit(x).String()
		}
		out = append(out, strings.Join(p, ".")+" = "+v)
	}
	return out
}

// valueAt is row i's value of a (nested) column of rec: nil when it or
// a struct around it is null; ok is false when the column is not found.
func valueAt(rec arrow.RecordBatch, path []string, i int) (any, bool) {
	idx := rec.Schema().FieldIndices(path[0])
	if len(idx) == 0 {
		return nil, false
	}
	a := rec.Column(idx[0])
	for _, name := range path[1:] {
		st, ok := a.(*array.Struct)
		if !ok {
			return nil, false
		}
		if st.IsNull(i) {
			return nil, true
		}
		k, ok := st.DataType().(*arrow.StructType).FieldIdx(name)
		if !ok {
			return nil, false
		}
		a = st.Field(k)
	}
	return actions.ArrowValue(a, i)
}
