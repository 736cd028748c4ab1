package expr

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Expr is a node of an expression tree. Trees are immutable values: Bind
// and the other functions of this package return new trees and never
// modify their input, so one tree may be shared between goroutines.
//
// The concrete node types are *Column, *Literal, *Compare, *AndExpr,
// *OrExpr, *NotExpr, *In, *IsNull, *Like, *Arith, *Neg, *Cast, *Call,
// *Case, *Subscript and *FieldOf.
type Expr interface {
	// String is the expression in the text form Parse reads, with the
	// fewest parentheses that keep its shape. Parse(e.String()) gives an
	// expression with the same String.
	String() string
	// Type is the Delta type of the expression's value, or nil when it is
	// not known yet: a column that Bind has not resolved, an expression
	// over one, or an untyped NULL.
	Type() actions.DataType
	// precedence is the binding strength of the node's outermost operator
	// (precOr ... precPrimary), used to print parentheses.
	precedence() int
}

// Operator precedence, loosest first, as in Spark SQL.
const (
	precOr = iota + 1
	precAnd
	precNot
	precPredicate // comparisons, IN, IS NULL, LIKE
	precAdditive  // + -
	precMultiplicative
	precUnary
	precPrimary
)

// Column is a reference to a column. Path has one element per level of
// nesting: a.b is Path{"a", "b"}. After Bind, Path holds the schema's own
// spelling of the names and DataType the column's type.
type Column struct {
	Path     []string
	DataType actions.DataType
}

// Name is the column's path joined with dots, without quoting: "a.b".
// Columns, EvalRow and error messages name columns this way.
func (c *Column) Name() string { return strings.Join(c.Path, ".") }

func (c *Column) String() string {
	var b strings.Builder
	for i, p := range c.Path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteIdent(p))
	}
	return b.String()
}

// Type is the column's type once bound, else nil.
func (c *Column) Type() actions.DataType { return c.DataType }
func (c *Column) precedence() int        { return precPrimary }

// Literal is a constant. Value is nil (NULL) or the Go type that
// actions/values.go gives DataType: bool, int8, int16, int32, int64,
// float32, float64, string, []byte, actions.Date, actions.Timestamp,
// actions.TimestampNTZ or actions.Decimal. DataType is nil only for an
// untyped NULL.
type Literal struct {
	Value    any
	DataType actions.DataType
	// text is the zone-less text of a TIMESTAMP literal, read again in
	// the session time zone by WithTimeZone; zone is that zone.
	text string
	zone string
}

func (l *Literal) String() string         { return formatLiteral(l.Value) }
func (l *Literal) Type() actions.DataType { return l.DataType }
func (l *Literal) precedence() int        { return precPrimary }

// CompareOp is a comparison operator.
type CompareOp uint8

// The comparison operators. Ne is spelled <> or !=; NullSafeEq (<=>) is
// true when both sides are NULL and false when only one is, never NULL.
const (
	Eq CompareOp = iota + 1
	Ne
	Lt
	Le
	Gt
	Ge
	NullSafeEq
)

var compareOpText = [...]string{Eq: "=", Ne: "<>", Lt: "<", Le: "<=", Gt: ">", Ge: ">=", NullSafeEq: "<=>"}

func (op CompareOp) String() string {
	if int(op) < len(compareOpText) && compareOpText[op] != "" {
		return compareOpText[op]
	}
	return "?"
}

// Flip is the operator with its operands swapped: a < b is b > a.
func (op CompareOp) Flip() CompareOp {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

// Compare is Left Op Right. Its value is boolean, NULL when either side is
// NULL (except for NullSafeEq).
type Compare struct {
	Op          CompareOp
	Left, Right Expr
}

func (c *Compare) String() string {
	return operand(c.Left, precAdditive) + " " + c.Op.String() + " " + operand(c.Right, precAdditive)
}
func (c *Compare) Type() actions.DataType { return actions.TypeBoolean }
func (c *Compare) precedence() int        { return precPredicate }

// AndExpr is Left AND Right, with SQL's three-valued logic: FALSE if either
// side is FALSE, else NULL if either is NULL, else TRUE. Build chains with
// And.
type AndExpr struct{ Left, Right Expr }

func (a *AndExpr) String() string {
	return operand(a.Left, precAnd) + " AND " + operand(a.Right, precAnd+1)
}
func (a *AndExpr) Type() actions.DataType { return actions.TypeBoolean }
func (a *AndExpr) precedence() int        { return precAnd }

// OrExpr is Left OR Right: TRUE if either side is TRUE, else NULL if either
// is NULL, else FALSE. Build chains with Or.
type OrExpr struct{ Left, Right Expr }

func (o *OrExpr) String() string {
	return operand(o.Left, precOr) + " OR " + operand(o.Right, precOr+1)
}
func (o *OrExpr) Type() actions.DataType { return actions.TypeBoolean }
func (o *OrExpr) precedence() int        { return precOr }

// NotExpr is NOT X; NOT NULL is NULL.
type NotExpr struct{ X Expr }

func (n *NotExpr) String() string         { return "NOT " + operand(n.X, precNot) }
func (n *NotExpr) Type() actions.DataType { return actions.TypeBoolean }
func (n *NotExpr) precedence() int        { return precNot }

// In is X IN (List...) or, with Not, X NOT IN (List...). It is TRUE when X
// equals an element, else NULL when X or an element is NULL, else FALSE;
// NOT IN is the negation of that.
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

func (in *In) String() string {
	var b strings.Builder
	b.WriteString(operand(in.X, precAdditive))
	if in.Not {
		b.WriteString(" NOT IN (")
	} else {
		b.WriteString(" IN (")
	}
	for i, e := range in.List {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(operand(e, precOr))
	}
	b.WriteByte(')')
	return b.String()
}
func (in *In) Type() actions.DataType { return actions.TypeBoolean }
func (in *In) precedence() int        { return precPredicate }

// IsNull is X IS NULL or, with Not, X IS NOT NULL. It is never NULL.
type IsNull struct {
	X   Expr
	Not bool
}

func (n *IsNull) String() string {
	if n.Not {
		return operand(n.X, precAdditive) + " IS NOT NULL"
	}
	return operand(n.X, precAdditive) + " IS NULL"
}
func (n *IsNull) Type() actions.DataType { return actions.TypeBoolean }
func (n *IsNull) precedence() int        { return precPredicate }

// Like is X LIKE 'Pattern' (or NOT LIKE, with Not). In the pattern, %
// matches any run of characters, _ any one character, and Escape (a
// backslash unless an ESCAPE clause names another; zero means a
// backslash) makes the character after it literal. X must be a string.
type Like struct {
	X       Expr
	Pattern string
	Escape  rune
	Not     bool
}

func (l *Like) String() string {
	s := operand(l.X, precAdditive)
	if l.Not {
		s += " NOT LIKE "
	} else {
		s += " LIKE "
	}
	s += quoteString(l.Pattern)
	if l.Escape != '\\' && l.Escape != 0 {
		s += " ESCAPE " + quoteString(string(l.Escape))
	}
	return s
}
func (l *Like) Type() actions.DataType { return actions.TypeBoolean }
func (l *Like) precedence() int        { return precPredicate }

// ArithOp is an arithmetic operator.
type ArithOp uint8

// The arithmetic operators.
const (
	Plus ArithOp = iota + 1
	Minus
	Times
	Divide
	Modulo
)

var arithOpText = [...]string{Plus: "+", Minus: "-", Times: "*", Divide: "/", Modulo: "%"}

func (op ArithOp) String() string {
	if int(op) < len(arithOpText) && arithOpText[op] != "" {
		return arithOpText[op]
	}
	return "?"
}

// Arith is Left Op Right over numbers (and date + or - a whole number of
// days). Following Spark: / always divides exactly (double, or decimal
// for decimals), % takes the sign of the dividend, and decimal results get
// Spark's precision and scale. Overflow and division by zero are errors,
// as in Spark's ANSI mode, never a wrapped or NULL value.
type Arith struct {
	Op          ArithOp
	Left, Right Expr
	zone        string // session time zone, for intervals of months
}

func (a *Arith) String() string {
	p := precAdditive
	if a.Op == Times || a.Op == Divide || a.Op == Modulo {
		p = precMultiplicative
	}
	return operand(a.Left, p) + " " + a.Op.String() + " " + operand(a.Right, p+1)
}

// Type is the result type: see Arith.
func (a *Arith) Type() actions.DataType {
	t, err := arithResultType(a.Op, a.Left.Type(), a.Right.Type())
	if err != nil {
		return nil
	}
	return t
}

func (a *Arith) precedence() int {
	if a.Op == Times || a.Op == Divide || a.Op == Modulo {
		return precMultiplicative
	}
	return precAdditive
}

// Neg is -X.
type Neg struct{ X Expr }

func (n *Neg) String() string {
	s := operand(n.X, precUnary)
	// -5 would read back as the literal -5, and --x as two signs: keep
	// the node's shape with parentheses.
	if s != "" && (s[0] == '-' || s[0] == '.' || s[0] >= '0' && s[0] <= '9') {
		return "-(" + s + ")"
	}
	return "-" + s
}
func (n *Neg) Type() actions.DataType { return n.X.Type() }
func (n *Neg) precedence() int        { return precUnary }

// Cast is CAST(X AS To). Bind inserts casts where operands of different
// types meet; a value that does not fit the target type is an error at
// evaluation, as in Spark's ANSI mode. With Try (TRY_CAST) such a value
// is NULL instead.
type Cast struct {
	X    Expr
	To   actions.DataType
	Try  bool
	zone string // session time zone; "" is UTC
}

func (c *Cast) String() string {
	kw := "CAST("
	if c.Try {
		kw = "TRY_CAST("
	}
	return kw + operand(c.X, precOr) + " AS " + sqlTypeName(c.To) + ")"
}
func (c *Cast) Type() actions.DataType { return c.To }
func (c *Cast) precedence() int        { return precPrimary }

// operand prints e for a position that needs at least precedence min,
// parenthesised when its own operator binds more loosely.
func operand(e Expr, min int) string {
	if e == nil {
		return "<nil>"
	}
	if e.precedence() < min {
		return "(" + e.String() + ")"
	}
	return e.String()
}

// Col is a column reference; pass one name per level of nesting.
func Col(path ...string) *Column { return &Column{Path: append([]string(nil), path...)} }

// Lit is a literal of v, which is nil or one of the Go types of
// actions/values.go; int is taken as int64. A value of any other Go type
// gives a literal without a type, which Bind rejects.
func Lit(v any) *Literal {
	v = normalizeGoValue(v)
	t, _ := typeOfValue(v)
	return &Literal{Value: v, DataType: t}
}

// And joins es with AND, left to right, skipping nil entries. With no
// entries it is the literal TRUE, with one it is that entry.
func And(es ...Expr) Expr { return junction(es, true) }

// Or joins es with OR, skipping nil entries. With no entries it is the
// literal FALSE, with one it is that entry.
func Or(es ...Expr) Expr { return junction(es, false) }

func junction(es []Expr, and bool) Expr {
	var out Expr
	for _, e := range es {
		switch {
		case e == nil:
		case out == nil:
			out = e
		case and:
			out = &AndExpr{Left: out, Right: e}
		default:
			out = &OrExpr{Left: out, Right: e}
		}
	}
	if out == nil {
		return &Literal{Value: and, DataType: actions.TypeBoolean}
	}
	return out
}

// Not is NOT e.
func Not(e Expr) Expr { return &NotExpr{X: e} }

// Conjuncts splits e at its top-level ANDs, left to right: a AND (b AND c)
// gives [a b c]. A nil e gives nil; anything else at least [e].
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	var out []Expr
	var walk func(Expr)
	walk = func(e Expr) {
		if a, ok := e.(*AndExpr); ok {
			walk(a.Left)
			walk(a.Right)
			return
		}
		out = append(out, e)
	}
	walk(e)
	return out
}

// Columns lists the columns e references, as Column.Name spells them
// ("a", "s.x"), each once, in order of first appearance.
func Columns(e Expr) []string {
	var out []string
	seen := map[string]bool{}
	Walk(e, func(n Expr) bool {
		if c, ok := n.(*Column); ok {
			name := c.Name()
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
		return true
	})
	return out
}

// IsPartitionOnly reports whether every column e references is one of
// partitionColumns (matched case-insensitively, as Spark resolves names),
// so that e can be decided from a file's partition values alone. An
// expression without columns is partition-only.
func IsPartitionOnly(e Expr, partitionColumns []string) bool {
	only := true
	Walk(e, func(n Expr) bool {
		c, ok := n.(*Column)
		if !ok {
			return only
		}
		if len(c.Path) != 1 || indexFold(partitionColumns, c.Path[0]) < 0 {
			only = false
		}
		return only
	})
	return only
}

// Walk calls fn for e and then, while fn returns true for a node, for the
// node's operands, depth first, left to right.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range children(e) {
		Walk(c, fn)
	}
}

// RewriteColumns returns a copy of e in which every column reference c is
// replaced by fn(c); e is not modified. fn may return c itself or a new
// node; its first error stops the rewrite and is returned.
func RewriteColumns(e Expr, fn func(*Column) (Expr, error)) (Expr, error) {
	var err error
	var rw func(Expr) Expr
	rw = func(e Expr) Expr {
		if err != nil || e == nil {
			return e
		}
		switch n := e.(type) {
		case *Column:
			var out Expr
			out, err = fn(n)
			return out
		case *Literal:
			return n
		case *Compare:
			c := *n
			c.Left, c.Right = rw(n.Left), rw(n.Right)
			return &c
		case *AndExpr:
			return &AndExpr{Left: rw(n.Left), Right: rw(n.Right)}
		case *OrExpr:
			return &OrExpr{Left: rw(n.Left), Right: rw(n.Right)}
		case *NotExpr:
			return &NotExpr{X: rw(n.X)}
		case *In:
			c := *n
			c.X, c.List = rw(n.X), make([]Expr, len(n.List))
			for i, x := range n.List {
				c.List[i] = rw(x)
			}
			return &c
		case *IsNull:
			c := *n
			c.X = rw(n.X)
			return &c
		case *Like:
			c := *n
			c.X = rw(n.X)
			return &c
		case *Arith:
			c := *n
			c.Left, c.Right = rw(n.Left), rw(n.Right)
			return &c
		case *Neg:
			return &Neg{X: rw(n.X)}
		case *Cast:
			c := *n
			c.X = rw(n.X)
			return &c
		case *Call:
			c := *n
			c.Args = make([]Expr, len(n.Args))
			for i, a := range n.Args {
				c.Args[i] = rw(a)
			}
			return &c
		case *Case:
			c := *n
			c.Whens = make([]When, len(n.Whens))
			for i, w := range n.Whens {
				c.Whens[i] = When{Cond: rw(w.Cond), Then: rw(w.Then)}
			}
			if n.Else != nil {
				c.Else = rw(n.Else)
			}
			return &c
		case *Subscript:
			c := *n
			c.X, c.Index = rw(n.X), rw(n.Index)
			return &c
		case *FieldOf:
			c := *n
			c.X = rw(n.X)
			return &c
		}
		err = fmt.Errorf("expr: cannot rewrite a %T", e)
		return e
	}
	out := rw(e)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func children(e Expr) []Expr {
	switch n := e.(type) {
	case *Compare:
		return []Expr{n.Left, n.Right}
	case *AndExpr:
		return []Expr{n.Left, n.Right}
	case *OrExpr:
		return []Expr{n.Left, n.Right}
	case *NotExpr:
		return []Expr{n.X}
	case *In:
		return append([]Expr{n.X}, n.List...)
	case *IsNull:
		return []Expr{n.X}
	case *Like:
		return []Expr{n.X}
	case *Arith:
		return []Expr{n.Left, n.Right}
	case *Neg:
		return []Expr{n.X}
	case *Cast:
		return []Expr{n.X}
	case *Call:
		return n.Args
	case *Case:
		out := make([]Expr, 0, 2*len(n.Whens)+1)
		for _, w := range n.Whens {
			out = append(out, w.Cond, w.Then)
		}
		if n.Else != nil {
			out = append(out, n.Else)
		}
		return out
	case *Subscript:
		return []Expr{n.X, n.Index}
	case *FieldOf:
		return []Expr{n.X}
	}
	return nil
}

// indexFold is the index of the name in names equal to name, exactly if
// one is, else ignoring case; -1 if none is.
func indexFold(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}
