package schema

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

// charVarcharConstraint is the name Spark keeps for its own CHAR/VARCHAR
// length checks.
const charVarcharConstraint = "__CHAR_VARCHAR_STRING_LENGTH_CHECK__"

// AddConstraint adds a CHECK constraint in one commit: Spark's ALTER
// TABLE ADD CONSTRAINT name CHECK (expression). The expression (in
// expr.Parse's syntax) must be a boolean over the table's columns; every
// existing row must make it TRUE (FALSE and NULL violate it, as in
// Spark): otherwise the error names the constraint, how many rows
// violate it and one of them, and nothing is committed. From then on
// every write (append, overwrite, replaceWhere, UPDATE, MERGE) checks
// each new row and fails with writer.ErrConstraintViolation. The
// constraint is stored as delta.constraints.<name in lower case> and
// adds the checkConstraints feature. The check reads the whole table, so
// a concurrent commit that adds rows aborts this one.
func AddConstraint(ctx context.Context, snap *deltalog.Snapshot, name, expression string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "ADD CONSTRAINT", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	switch {
	case strings.TrimSpace(name) == "":
		return nil, c.refuse("", "the constraint has no name")
	case strings.EqualFold(name, charVarcharConstraint):
		return nil, c.refuse(name, "the name is reserved by Spark for CHAR and VARCHAR length checks")
	}
	key := actions.ConstraintKey(name)
	if old, ok := c.md.Configuration[key]; ok {
		return nil, c.refuse(name, "a CHECK constraint %s already exists (%s); drop it first", strings.ToLower(name), old)
	}
	e, err := expr.Parse(expression)
	if err != nil {
		return nil, c.refuse(name, "%v", err)
	}
	bound, err := expr.BindPredicate(e, c.snap.Schema())
	if err != nil {
		return nil, c.refuse(name, "%v", err)
	}
	if t := bound.Type(); t != actions.TypeBoolean {
		return nil, c.refuse(name, "the expression %s is not a boolean", expression)
	}
	if err := c.checkRows(ctx, cfg, name, expression, bound); err != nil {
		return nil, err
	}
	c.md.Configuration[key] = expression
	c.params["name"] = name
	c.params["expr"] = expression
	return c.commit(ctx)
}

// checkRows fails when an existing row does not make the constraint
// TRUE, naming how many and one.
func (c *change) checkRows(ctx context.Context, cfg *config, name, text string, bound expr.Expr) error {
	c.tx.ReadWholeTable()
	if c.snap.NumFiles() == 0 {
		return nil
	}
	violates := expr.Or(expr.Not(bound), &expr.IsNull{X: bound})
	var paths [][]string
	var top []string
	expr.Walk(bound, func(n expr.Expr) bool {
		if col, ok := n.(*expr.Column); ok && !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, col.Path) }) {
			paths = append(paths, col.Path)
			if !slices.Contains(top, col.Path[0]) {
				top = append(top, col.Path[0])
			}
		}
		return true
	})
	sc, err := reader.NewScan(c.snap, reader.WithFilter(violates), reader.WithColumns(top...), reader.WithAllocator(cfg.mem))
	if err != nil {
		return fmt.Errorf("schema: %s %s: %w", c.op, name, err)
	}
	var n int64
	var example string
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return fmt.Errorf("schema: %s %s: check the existing rows: %w", c.op, name, err)
		}
		if n == 0 && rec.NumRows() > 0 {
			example = rowText(rec, paths)
		}
		n += rec.NumRows()
	}
	if n > 0 {
		return c.refuse(name, "%d existing rows violate the new CHECK constraint (%s), for one the row with %s", n, text, example)
	}
	return nil
}

// DropConstraint drops a CHECK constraint in one commit: Spark's ALTER
// TABLE DROP CONSTRAINT name (names compared ignoring case). A
// constraint the table does not have is refused, unless IfExists is
// given: then nothing is committed (nil result, nil error), since
// nothing changes.
func DropConstraint(ctx context.Context, snap *deltalog.Snapshot, name string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "DROP CONSTRAINT", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	key := actions.ConstraintKey(name)
	old, ok := c.md.Configuration[key]
	if !ok && !cfg.ifExists {
		names := slices.Sorted(maps.Keys(c.props.Constraints))
		have := "it has none"
		if len(names) > 0 {
			have = "it has " + strings.Join(names, ", ")
		}
		return nil, c.refuse(name, "the table has no CHECK constraint %s (%s)", strings.ToLower(name), have)
	}
	if !ok {
		return nil, nil
	}
	delete(c.md.Configuration, key)
	c.params["name"] = name
	c.params["expr"] = old
	c.params["existed"] = "true"
	return c.commit(ctx)
}
