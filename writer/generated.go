package writer

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowconv"
)

// generatedColumn is a generated column (delta.generationExpression)
// with its expression bound to the table's logical schema.
type generatedColumn struct {
	index int // the column's position in the schema
	name  string
	text  string
	value expr.Expr // the expression, converted to the column's type
	check expr.Expr // column <=> expression
}

// bindGenerated binds the generation expressions of the schema's
// top-level columns. An expression lakelog cannot evaluate is an error
// naming the column (deltalog's feature record refuses such tables
// before any write).
func bindGenerated(schema *actions.StructType) ([]*generatedColumn, error) {
	var out []*generatedColumn
	for i, f := range schema.Fields {
		text, ok := f.Metadata[actions.MetaGenerationExpression].(string)
		if !ok {
			continue
		}
		e, err := expr.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("writer: generated column %q (%s): %w", f.Name, text, err)
		}
		v, err := expr.BindAssignment(e, schema, f.Type)
		if err != nil {
			return nil, fmt.Errorf("writer: generated column %q (%s): %w", f.Name, text, err)
		}
		check, err := expr.BindPredicate(&expr.Compare{Op: expr.NullSafeEq, Left: expr.Col(f.Name), Right: e}, schema)
		if err != nil {
			return nil, fmt.Errorf("writer: generated column %q (%s): %w", f.Name, text, err)
		}
		out = append(out, &generatedColumn{index: i, name: f.Name, text: text, value: v, check: check})
	}
	return out, nil
}

// fillGenerated gives rec (a conformed batch) its generated columns'
// values where the input did not supply them (given[i] false). Supplied
// values must equal the expression's (NULL equal to NULL, as Spark's
// check): otherwise the error is a *ConstraintError naming the column.
// Operations that change rows (dml's UPDATE and MERGE) compute the
// generated values of the rows they change themselves.
func fillGenerated(ctx context.Context, gens []*generatedColumn, rec arrow.RecordBatch, given []bool, rowBase int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	out := rec
	out.Retain()
	for _, g := range gens {
		if given[g.index] {
			if err := checkGenerated(g, out, rowBase, mem); err != nil {
				out.Release()
				return nil, err
			}
			continue
		}
		v, err := expr.EvalScalar(g.value, out, mem)
		if err != nil {
			out.Release()
			return nil, fmt.Errorf("writer: generated column %q (%s): %w", g.name, g.text, err)
		}
		target := out.Schema().Field(g.index).Type
		col, err := arrowconv.Conform(ctx, mem, v, target)
		v.Release()
		if err != nil {
			out.Release()
			return nil, fmt.Errorf("writer: generated column %q (%s): %w", g.name, g.text, err)
		}
		cols := make([]arrow.Array, out.NumCols())
		copy(cols, out.Columns())
		cols[g.index] = col
		next := array.NewRecordBatch(out.Schema(), cols, out.NumRows())
		col.Release()
		out.Release()
		out = next
		if err := checkNullsOf(out, g.index, rowBase); err != nil {
			out.Release()
			return nil, err
		}
	}
	return out, nil
}

// checkNullsOf refuses a null computed into a non-nullable generated
// column.
func checkNullsOf(rec arrow.RecordBatch, i int, rowBase int64) error {
	f := rec.Schema().Field(i)
	if f.Nullable || rec.Column(i).NullN() == 0 {
		return nil
	}
	for r := 0; r < rec.Column(i).Len(); r++ {
		if rec.Column(i).IsNull(r) {
			return &SchemaError{Column: f.Name, Row: rowBase + int64(r) + 1, Reason: "the generated column's expression is null, and the column is not nullable"}
		}
	}
	return nil
}

// checkGenerated fails at the first row whose supplied value of g differs
// from its expression's.
func checkGenerated(g *generatedColumn, rec arrow.RecordBatch, rowBase int64, mem memory.Allocator) error {
	mask, err := expr.EvalPredicate(g.check, rec, mem)
	if err != nil {
		return fmt.Errorf("writer: generated column %q (%s): %w", g.name, g.text, err)
	}
	defer mask.Release()
	for i := 0; i < mask.Len(); i++ {
		if mask.IsNull(i) || !mask.Value(i) {
			var cols [][]string
			cols = append(cols, []string{g.name})
			expr.Walk(g.value, func(n expr.Expr) bool {
				if c, ok := n.(*expr.Column); ok && len(c.Path) > 0 {
					cols = append(cols, c.Path)
				}
				return true
			})
			return &ConstraintError{Kind: "generated column", Name: g.name, Expr: g.name + " <=> " + g.text, Row: rowBase + int64(i) + 1, Values: rowValues(rec, dedupPaths(cols), i)}
		}
	}
	return nil
}

func dedupPaths(ps [][]string) [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, p := range ps {
		k := fmt.Sprint(p)
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}
