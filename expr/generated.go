package expr

import (
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// generatedPartitionFilters derives predicates on generated partition
// columns from a bound predicate's conjuncts, as Spark's
// OptimizablePartitionExpression does: for a partition column generated
// as CAST(c AS DATE), a conjunct c < v or c <= v implies part <= CAST(v
// AS DATE), c > v or c >= v implies part >= CAST(v AS DATE), and c = v
// implies part = CAST(v AS DATE). The derived predicates only prune
// files: every row the predicate selects satisfies them, since writers
// compute the generated column from c. Expressions of other forms derive
// nothing.
func generatedPartitionFilters(b Expr, schema *actions.StructType, partitionColumns []string) []Expr {
	type gen struct {
		part string
		base string
		to   actions.DataType
	}
	var gens []gen
	for _, name := range partitionColumns {
		f := schema.FieldFold(name)
		if f == nil {
			continue
		}
		text, ok := f.Metadata[actions.MetaGenerationExpression].(string)
		if !ok {
			continue
		}
		e, err := Parse(text)
		if err != nil {
			continue
		}
		cast, ok := e.(*Cast)
		if !ok || cast.To != actions.TypeDate {
			continue
		}
		col, ok := cast.X.(*Column)
		if !ok || len(col.Path) != 1 {
			continue
		}
		gens = append(gens, gen{part: f.Name, base: col.Path[0], to: f.Type})
	}
	if len(gens) == 0 {
		return nil
	}
	var out []Expr
	for _, c := range Conjuncts(b) {
		cmp, ok := c.(*Compare)
		if !ok {
			continue
		}
		col, lcol := cmp.Left.(*Column)
		lit, llit := cmp.Right.(*Literal)
		op := cmp.Op
		if !lcol || !llit {
			col, lcol = cmp.Right.(*Column)
			lit, llit = cmp.Left.(*Literal)
			op = op.Flip()
		}
		if !lcol || !llit || len(col.Path) != 1 || lit.Value == nil {
			continue
		}
		for _, g := range gens {
			if !strings.EqualFold(col.Path[0], g.base) {
				continue
			}
			bound, err := Bind(&Cast{X: lit, To: actions.TypeDate}, schema)
			if err != nil {
				continue
			}
			v, err := EvalRow(bound, func(string) (any, bool) { return nil, false })
			if err != nil || v == nil {
				continue
			}
			var dop CompareOp
			switch op {
			case Lt, Le:
				dop = Le
			case Gt, Ge:
				dop = Ge
			case Eq:
				dop = Eq
			default:
				continue
			}
			out = append(out, &Compare{Op: dop, Left: Col(g.part), Right: Lit(v)})
		}
	}
	return out
}
