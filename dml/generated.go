package dml

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// generatedValues completes values (the new value of each table column,
// nil keeping the row's) with the generated columns
// (delta.generationExpression) that the change must recompute, as
// Spark's UPDATE and MERGE do: a generated column not assigned whose
// expression reads an assigned column (every one, with always: an
// INSERT) gets the expression over the columns' new values. current(i)
// is the expression of column i's value when it is not assigned (the
// target row's column, or NULL for an insert); values are bound against
// bindIn.
func generatedValues(table *actions.StructType, values []expr.Expr, bindIn *actions.StructType, current func(i int) expr.Expr, always bool) error {
	for gi, g := range table.Fields {
		text, ok := g.Metadata[actions.MetaGenerationExpression].(string)
		if !ok || values[gi] != nil {
			continue
		}
		e, err := expr.Parse(text)
		if err != nil {
			return fmt.Errorf("generated column %s (%s): %w", g.Name, text, err)
		}
		reads := always
		rewritten, err := expr.RewriteColumns(e, func(c *expr.Column) (expr.Expr, error) {
			i := table.IndexFold(c.Path[0])
			if i < 0 {
				return nil, &expr.UnknownColumnError{Column: c.Name(), Known: table.Names()}
			}
			base := values[i]
			if base == nil {
				base = current(i)
			} else {
				reads = true
			}
			if len(c.Path) == 1 {
				return base, nil
			}
			return nil, fmt.Errorf("the expression reads the nested field %s, which lakelog does not recompute", strings.Join(c.Path, "."))
		})
		if err != nil {
			return fmt.Errorf("generated column %s (%s): %w", g.Name, text, err)
		}
		if !reads {
			continue
		}
		v, err := expr.BindAssignment(rewritten, bindIn, g.Type)
		if err != nil {
			return fmt.Errorf("generated column %s (%s): %w", g.Name, text, err)
		}
		values[gi] = v
	}
	return nil
}
