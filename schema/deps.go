package schema

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// dependents names the CHECK constraints and generated columns whose
// expressions read the column at path, a column inside it or a struct
// around it: Spark refuses to rename, drop or retype such a column
// (checkDependentExpressions). An expression lakelog cannot parse counts
// when it mentions the column's name as a word.
func (c *change) dependents(path []string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.props.Constraints)) {
		text := c.props.Constraints[name]
		if reads(text, path) {
			out = append(out, fmt.Sprintf("CHECK constraint %s (%s)", name, text))
		}
	}
	for _, f := range c.schema.Fields {
		if text, ok := f.Metadata[actions.MetaGenerationExpression].(string); ok && reads(text, path) {
			out = append(out, fmt.Sprintf("generated column %s (%s)", quotePath([]string{f.Name}), text))
		}
	}
	return out
}

// reads reports whether the expression text reads the column at path.
func reads(text string, path []string) bool {
	e, err := expr.Parse(text)
	if err != nil {
		word := regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(path[0]) + `($|[^A-Za-z0-9_])`)
		return word.MatchString(text)
	}
	found := false
	expr.Walk(e, func(n expr.Expr) bool {
		if col, ok := n.(*expr.Column); ok && overlaps(col.Path, path) {
			found = true
		}
		return !found
	})
	return found
}

// refuseDependents refuses a change of the column at path that an
// expression reads.
func (c *change) refuseDependents(path []string, what string) error {
	deps := c.dependents(path)
	if len(deps) == 0 {
		return nil
	}
	return c.refuse(quotePath(path), "cannot %s a column that %s reads; drop or change %s first", what, strings.Join(deps, " and "), map[bool]string{true: "it", false: "them"}[len(deps) == 1])
}

// statsColumnsAfter rewrites delta.dataSkippingStatsColumns after a
// column at path is renamed to newName (newName "" : dropped), as Spark
// does (StatisticsCollection.renameDeltaStatsColumn, dropDeltaStatsColumns).
func (c *change) statsColumnsAfter(path []string, newName string) {
	if _, ok := c.md.Configuration[actions.PropDataSkippingStatsColumns]; !ok || c.props.DataSkippingStatsColumns == nil {
		return
	}
	var kept []string
	changed := false
	for _, p := range c.props.DataSkippingStatsColumns {
		if len(p) >= len(path) && overlaps(p, path) {
			changed = true
			if newName == "" {
				continue
			}
			p = append(append(append([]string{}, p[:len(path)-1]...), newName), p[len(path):]...)
		}
		kept = append(kept, quotePath(p))
	}
	if changed {
		c.md.Configuration[actions.PropDataSkippingStatsColumns] = strings.Join(kept, ",")
	}
}
