package expr

import (
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Call is a call of one of Spark's built-in functions: upper(s),
// date_add(d, 1), coalesce(a, b, 0). Name is the function's name as
// written, lower-cased (an alias keeps its own name: ucase(s) prints as
// ucase(s)); Functions lists the names Parse and Bind know. A few forms
// of Spark's grammar become calls: EXTRACT(f FROM x) is
// date_part('f', x), POSITION(a IN b) is locate(a, b), SUBSTRING(s FROM
// p FOR n) is substring(s, p, n), TRIM(BOTH|LEADING|TRAILING c FROM s)
// is trim, ltrim or rtrim of s and c, and the bare keywords
// CURRENT_DATE and CURRENT_TIMESTAMP are current_date() and
// current_timestamp().
//
// Bind checks the arguments, converts them as Spark's implicit casts do
// and types the call; see Functions for the semantics of each.
type Call struct {
	Name string
	Args []Expr
	typ  actions.DataType // set by Bind
	zone string           // session time zone; "" is UTC
}

func (c *Call) String() string {
	var b strings.Builder
	switch c.Name {
	case "||", "|", "^", "&":
		if len(c.Args) == 2 {
			return "(" + operand(c.Args[0], precAdditive) + " " + c.Name + " " + operand(c.Args[1], precMultiplicative) + ")"
		}
	case "div":
		if len(c.Args) == 2 {
			return "(" + operand(c.Args[0], precMultiplicative) + " DIV " + operand(c.Args[1], precUnary) + ")"
		}
	case "~":
		if len(c.Args) == 1 {
			return "~" + operand(c.Args[0], precPrimary)
		}
	case "trim", "ltrim", "rtrim":
		if len(c.Args) == 2 {
			where := map[string]string{"trim": "BOTH", "ltrim": "LEADING", "rtrim": "TRAILING"}[c.Name]
			b.WriteString("trim(" + where + " " + operand(c.Args[1], precOr) + " FROM " + operand(c.Args[0], precOr) + ")")
			return b.String()
		}
	}
	b.WriteString(quoteFunctionName(c.Name))
	b.WriteByte('(')
	for i, a := range c.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(operand(a, precOr))
	}
	b.WriteByte(')')
	return b.String()
}

// Type is the call's type once bound, else nil.
func (c *Call) Type() actions.DataType { return c.typ }
func (c *Call) precedence() int        { return precPrimary }

// Fn is a call of the function name (see Functions) with args; Bind
// checks the name and the arguments.
func Fn(name string, args ...Expr) *Call {
	return &Call{Name: strings.ToLower(name), Args: append([]Expr(nil), args...)}
}

func quoteFunctionName(name string) string {
	if isPlainIdent(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// When is one WHEN Cond THEN Then branch of a Case.
type When struct {
	Cond, Then Expr
}

// Case is CASE WHEN c1 THEN v1 [WHEN ...] [ELSE e] END: the value of the
// first branch whose condition is TRUE, else Else (NULL when absent).
// Only the branches needed are evaluated, so a division by zero in a
// branch no row takes is no error. CASE x WHEN v THEN ... is read as
// CASE WHEN x = v THEN ...
type Case struct {
	Whens []When
	Else  Expr
	typ   actions.DataType
}

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		b.WriteString(" WHEN " + operand(w.Cond, precOr) + " THEN " + operand(w.Then, precOr))
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + operand(c.Else, precOr))
	}
	b.WriteString(" END")
	return b.String()
}

// Type is the common type of the branches once bound, else nil.
func (c *Case) Type() actions.DataType { return c.typ }
func (c *Case) precedence() int        { return precPrimary }

// Subscript is X[Index]: the element at 0-based Index of an array (an
// index outside the array is an error, as in Spark's ANSI mode), or the
// value of key Index in a map (NULL when the map has no such key).
type Subscript struct {
	X, Index Expr
	typ      actions.DataType
}

func (s *Subscript) String() string {
	return operand(s.X, precPrimary) + "[" + operand(s.Index, precOr) + "]"
}

// Type is the element or value type once bound, else nil.
func (s *Subscript) Type() actions.DataType { return s.typ }
func (s *Subscript) precedence() int        { return precPrimary }

// FieldOf is X.Name, a field of a struct-valued expression that is not a
// column path: named_struct('a', 1).a, arr[0].f. (A field of a struct
// column, s.f, is a Column with a two-element path.)
type FieldOf struct {
	X    Expr
	Name string
	typ  actions.DataType
}

func (f *FieldOf) String() string { return operand(f.X, precPrimary) + "." + quoteIdent(f.Name) }

// Type is the field's type once bound, else nil.
func (f *FieldOf) Type() actions.DataType { return f.typ }
func (f *FieldOf) precedence() int        { return precPrimary }
