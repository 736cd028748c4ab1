package expr

// Predicates built in Go, without SQL text: expr.Col("k").Eq(5),
// expr.Col("name").In("a", "b'c"), expr.And(...). Values are literals
// (Lit) unless they are already expressions, so a string is a value and
// never SQL: quoting cannot go wrong. The predicates print as SQL that
// Parse reads back to the same predicate.

// operandOf is v as an expression: v itself when it is one, else Lit(v).
func operandOf(v any) Expr {
	if e, ok := v.(Expr); ok {
		return e
	}
	return Lit(v)
}

func (c *Column) compare(op CompareOp, v any) Expr {
	return &Compare{Op: op, Left: c, Right: operandOf(v)}
}

// Eq is c = v.
func (c *Column) Eq(v any) Expr { return c.compare(Eq, v) }

// Ne is c <> v.
func (c *Column) Ne(v any) Expr { return c.compare(Ne, v) }

// Lt is c < v.
func (c *Column) Lt(v any) Expr { return c.compare(Lt, v) }

// Le is c <= v.
func (c *Column) Le(v any) Expr { return c.compare(Le, v) }

// Gt is c > v.
func (c *Column) Gt(v any) Expr { return c.compare(Gt, v) }

// Ge is c >= v.
func (c *Column) Ge(v any) Expr { return c.compare(Ge, v) }

// EqNullSafe is c <=> v: true when both are NULL, never NULL itself.
func (c *Column) EqNullSafe(v any) Expr { return c.compare(NullSafeEq, v) }

// In is c IN (vs...).
func (c *Column) In(vs ...any) Expr {
	in := &In{X: c}
	for _, v := range vs {
		in.List = append(in.List, operandOf(v))
	}
	return in
}

// NotIn is c NOT IN (vs...).
func (c *Column) NotIn(vs ...any) Expr {
	in := c.In(vs...).(*In)
	in.Not = true
	return in
}

// IsNull is c IS NULL.
func (c *Column) IsNull() Expr { return &IsNull{X: c} }

// IsNotNull is c IS NOT NULL.
func (c *Column) IsNotNull() Expr { return &IsNull{X: c, Not: true} }
