package expr

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// UnknownColumnError is a Bind error: the expression names a column the
// schema does not have.
type UnknownColumnError struct {
	Column string   // the name as the expression spells it, "a" or "s.x"
	Known  []string // the names the schema offers at that level
}

func (e *UnknownColumnError) Error() string {
	msg := "expr: unknown column " + e.Column
	if len(e.Known) > 0 {
		msg += " (columns: " + strings.Join(e.Known, ", ") + ")"
	}
	return msg
}

// TypeError is a Bind error: an operator meets an operand of a type it
// cannot take, or a literal that does not convert to its column's type.
type TypeError struct {
	Expr string // the offending expression, as String prints it
	Msg  string
}

func (e *TypeError) Error() string { return "expr: " + e.Msg + " in " + e.Expr }

func typeErr(e Expr, format string, args ...any) error {
	return &TypeError{Expr: e.String(), Msg: fmt.Sprintf(format, args...)}
}

// Bind resolves e against a table schema and gives every node a type:
//
//   - Column names resolve as Spark resolves them: an exact match, else a
//     case-insensitive one; a.b is field b of struct column a. An unknown
//     name is an *UnknownColumnError.
//   - A string literal that meets a column of another type is read as a
//     value of that type: d >= '2026-03-01' compares dates, ts < '2026-03-01
//     12:00' timestamps (a zone-less timestamp is UTC), amount = '1.50' and
//     n > '3' numbers.
//   - A number literal that meets a column converts to the column's type
//     when it fits exactly (n > 3 on a long column compares longs); else
//     both sides widen to a common type (n > 3.5 on an int column compares
//     decimals), the column through a Cast node. Columns of different
//     numeric types widen likewise, dates widen to timestamps, and
//     timestamp_ntz meets timestamp as UTC.
//   - Arithmetic follows Spark: integers stay integers (the wider one),
//     / divides in double (or decimal), decimals get Spark's precision and
//     scale, and a date plus or minus an integer is a date.
//   - AND, OR and NOT take booleans; LIKE takes a string.
//
// Anything else that does not fit is a *TypeError naming the expression
// and the operand. Bind is idempotent: binding a bound expression against
// the same schema gives an equal one.
func Bind(e Expr, schema *actions.StructType) (Expr, error) {
	if e == nil {
		return nil, fmt.Errorf("expr: bind: nil expression")
	}
	b := &binder{schema: schema, zone: zoneOf(e)}
	return b.bind(e)
}

// BindPredicate is Bind for a predicate: it also checks that e is boolean.
func BindPredicate(e Expr, schema *actions.StructType) (Expr, error) {
	b, err := Bind(e, schema)
	if err != nil {
		return nil, err
	}
	if err := checkPredicate(b); err != nil {
		return nil, err
	}
	return b, nil
}

func checkPredicate(e Expr) error {
	t := e.Type()
	if t != nil && t != actions.TypeBoolean {
		return typeErr(e, "a predicate must be boolean, not %s", t)
	}
	return nil
}

// BindAssignment binds e as the new value of a column of type target (an
// UPDATE's SET): it binds e against schema and converts the result to
// target. Numbers convert to any numeric type (a value that does not fit
// is an error at evaluation), dates and timestamps to each other, a
// string literal is read as a value of target, and NULL takes target's
// type; anything else is a *TypeError.
func BindAssignment(e Expr, schema *actions.StructType, target actions.DataType) (Expr, error) {
	b, err := Bind(e, schema)
	if err != nil {
		return nil, err
	}
	t := b.Type()
	if lit, ok := b.(*Literal); ok {
		fromText := t == actions.TypeString && canCast(actions.TypeString, target)
		if t != nil && !sameType(t, target) && !storeAssignable(t, target) && !fromText {
			return nil, typeErr(b, "cannot assign a value of type %s to a column of type %s", t, target)
		}
		c, err := castValue(lit.Value, target)
		if err != nil {
			return nil, typeErr(b, "%v", err)
		}
		return &Literal{Value: c, DataType: target}, nil
	}
	if t == nil || sameType(t, target) {
		return b, nil
	}
	if !storeAssignable(t, target) {
		return nil, typeErr(b, "cannot assign a value of type %s to a column of type %s", t, target)
	}
	return &Cast{X: b, To: target}, nil
}

// storeAssignable reports whether a value of type from may be stored in
// a column of type to with a Cast, under Spark's ANSI store assignment:
// numbers into numbers (a value that does not fit is an error), dates
// and timestamps into each other, atomic values into strings.
func storeAssignable(from, to actions.DataType) bool {
	switch {
	case isNumeric(from) && isNumeric(to):
		return true
	case (from == actions.TypeDate || isTimestamp(from)) && (to == actions.TypeDate || isTimestamp(to)):
		return true
	case to == actions.TypeString && from != actions.TypeBinary && isAtomic(from):
		// Spark's ANSI store assignment writes numbers, booleans,
		// dates and timestamps to a string column as their text.
		return true
	}
	return false
}

type binder struct {
	schema *actions.StructType
	zone   string // the session time zone the expression carries
}

func (b *binder) bind(e Expr) (Expr, error) {
	switch n := e.(type) {
	case *Column:
		return b.column(n)
	case *Literal:
		v := normalizeGoValue(n.Value)
		if _, ok := v.(actions.Interval); ok && isInterval(n.DataType) {
			return n, nil
		}
		vt, ok := typeOfValue(v)
		if !ok {
			return nil, typeErr(n, "unsupported literal value of Go type %T", n.Value)
		}
		switch {
		case v == nil || sameType(vt, n.DataType):
			return n, nil
		case n.DataType == nil:
			return &Literal{Value: v, DataType: vt}, nil
		}
		// A value built in code with a type it does not have: convert it,
		// so that evaluation sees the Go type of DataType.
		if d, ok := n.DataType.(*actions.DecimalType); ok && isDecimal(vt) && vt.(*actions.DecimalType).Scale == d.Scale {
			return n, nil
		}
		c, err := castValue(v, n.DataType)
		if err != nil {
			return nil, typeErr(n, "literal of type %s: %v", n.DataType, err)
		}
		return &Literal{Value: c, DataType: n.DataType}, nil
	case *Compare:
		l, r, err := b.bind2(n.Left, n.Right)
		if err != nil {
			return nil, err
		}
		out := &Compare{Op: n.Op, Left: l, Right: r}
		if out.Left, out.Right, err = coerceComparison(out, l, r); err != nil {
			return nil, err
		}
		if t := out.Left.Type(); t != nil && !isOrdered(t) {
			return nil, typeErr(out, "values of type %s cannot be compared", t)
		}
		return out, nil
	case *AndExpr:
		l, r, err := b.bind2(n.Left, n.Right)
		if err != nil {
			return nil, err
		}
		out := &AndExpr{Left: l, Right: r}
		if out.Left, err = booleanOperand(out, "AND", l); err != nil {
			return nil, err
		}
		if out.Right, err = booleanOperand(out, "AND", r); err != nil {
			return nil, err
		}
		return out, nil
	case *OrExpr:
		l, r, err := b.bind2(n.Left, n.Right)
		if err != nil {
			return nil, err
		}
		out := &OrExpr{Left: l, Right: r}
		if out.Left, err = booleanOperand(out, "OR", l); err != nil {
			return nil, err
		}
		if out.Right, err = booleanOperand(out, "OR", r); err != nil {
			return nil, err
		}
		return out, nil
	case *NotExpr:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		out := &NotExpr{X: x}
		if out.X, err = booleanOperand(out, "NOT", x); err != nil {
			return nil, err
		}
		return out, nil
	case *In:
		return b.in(n)
	case *IsNull:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		return &IsNull{X: x, Not: n.Not}, nil
	case *Like:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		out := &Like{X: x, Pattern: n.Pattern, Escape: n.Escape, Not: n.Not}
		if _, err := compileLike(n.Pattern, n.Escape); err != nil {
			return nil, typeErr(out, "%v", err)
		}
		switch t := x.Type(); {
		case t == nil:
			out.X = typedNull(x, actions.TypeString)
		case t != actions.TypeString:
			return nil, typeErr(out, "LIKE needs a string, but %s is %s", x, t)
		}
		return out, nil
	case *Arith:
		return b.arith(n)
	case *Neg:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		out := &Neg{X: x}
		if lit, ok := x.(*Literal); ok {
			if s, ok := lit.Value.(string); ok {
				num, err := parseNumberText(s)
				if err != nil {
					return nil, typeErr(out, "%s is not a number", lit)
				}
				x = num
			}
		}
		out.X = x
		if t := x.Type(); t != nil && !isNumeric(t) {
			return nil, typeErr(out, "unary - needs a number, but %s is %s", x, t)
		}
		return foldConstant(out)
	case *Cast:
		return b.cast(n)
	case *Call:
		return b.call(n)
	case *Case:
		return b.caseWhen(n)
	case *Subscript:
		return b.subscript(n)
	case *FieldOf:
		return b.fieldOf(n)
	case nil:
		return nil, fmt.Errorf("expr: bind: nil operand")
	}
	return nil, fmt.Errorf("expr: bind: unsupported node %T", e)
}

func (b *binder) bind2(l, r Expr) (Expr, Expr, error) {
	bl, err := b.bind(l)
	if err != nil {
		return nil, nil, err
	}
	br, err := b.bind(r)
	if err != nil {
		return nil, nil, err
	}
	return bl, br, nil
}

// column resolves a column reference against the schema.
func (b *binder) column(c *Column) (Expr, error) {
	if len(c.Path) == 0 {
		return nil, fmt.Errorf("expr: bind: column with an empty name")
	}
	if b.schema == nil {
		return nil, &UnknownColumnError{Column: c.Name()}
	}
	fields := b.schema.Fields
	path := make([]string, len(c.Path))
	var t actions.DataType
	for i, name := range c.Path {
		names := make([]string, len(fields))
		for j, f := range fields {
			names[j] = f.Name
		}
		k := indexFold(names, name)
		if k < 0 {
			return nil, &UnknownColumnError{Column: strings.Join(c.Path[:i+1], "."), Known: names}
		}
		path[i] = fields[k].Name
		t = fields[k].Type
		if i < len(c.Path)-1 {
			st, ok := t.(*actions.StructType)
			if !ok {
				return nil, typeErr(c, "%s is %s, not a struct", strings.Join(path[:i+1], "."), t)
			}
			fields = st.Fields
		}
	}
	return &Column{Path: path, DataType: t}, nil
}

// typedNull gives an untyped NULL literal the type t; other expressions
// are returned as they are.
func typedNull(e Expr, t actions.DataType) Expr {
	if lit, ok := e.(*Literal); ok && lit.Value == nil && lit.DataType == nil {
		return &Literal{DataType: t}
	}
	return e
}

func booleanOperand(parent Expr, op string, x Expr) (Expr, error) {
	switch t := x.Type(); t {
	case nil:
		return typedNull(x, actions.TypeBoolean), nil
	case actions.TypeBoolean:
		return x, nil
	default:
		return nil, typeErr(parent, "%s needs booleans, but %s is %s", op, x, t)
	}
}

// stringLiteral returns the text of a string literal.
func stringLiteral(e Expr) (string, bool) {
	lit, ok := e.(*Literal)
	if !ok {
		return "", false
	}
	s, ok := lit.Value.(string)
	return s, ok
}

// literalAs reads the text of a string literal as a value for an operand
// of type t. The result may be of another type than t: a number keeps its
// own type (3.5 meeting an int column stays a decimal, for widening), and
// a date meeting text with a time becomes a timestamp.
func literalAs(parent Expr, lit *Literal, s string, t actions.DataType) (Expr, error) {
	switch {
	case isFloating(t):
		f, err := castToFloat(s)
		if err != nil {
			return nil, typeErr(parent, "%s is not %s", lit, aType(t))
		}
		if t == actions.TypeFloat {
			return &Literal{Value: float32(f), DataType: t}, nil
		}
		return &Literal{Value: f, DataType: t}, nil
	case isNumeric(t):
		num, err := parseNumberText(s)
		if err != nil {
			return nil, typeErr(parent, "%s is not %s", lit, aType(t))
		}
		return num, nil
	case t == actions.TypeDate:
		if d, err := actions.ParseDate(strings.TrimSpace(s)); err == nil {
			return &Literal{Value: d, DataType: t}, nil
		}
		ts, err := parseTimestampIn(s, zoneLoc(lit.zone))
		if err != nil {
			return nil, typeErr(parent, "%s is not a date (want YYYY-MM-DD)", lit)
		}
		return &Literal{Value: actions.Timestamp(ts), DataType: actions.TypeTimestamp}, nil
	case t == actions.TypeString:
		return lit, nil
	}
	if !canCast(actions.TypeString, t) {
		return nil, typeErr(parent, "%s cannot be compared with a value of type %s", lit, t)
	}
	v, err := castValueIn(s, t, zoneLoc(lit.zone))
	if err != nil {
		return nil, typeErr(parent, "%v", err)
	}
	return &Literal{Value: v, DataType: t}, nil
}

// parseNumberText reads a number literal from a string ("3", "-1.5",
// "1e3"), trimmed of spaces.
func parseNumberText(s string) (*Literal, error) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[len(s)-1] < '0' || s[len(s)-1] > '9' && s[len(s)-1] != '.' {
		// No type suffixes inside strings.
		return nil, fmt.Errorf("not a number")
	}
	return parseNumber(s, neg)
}

// coerceComparison makes the operands of a comparison (or of one IN
// element) the same type; see Bind.
func coerceComparison(parent, l, r Expr) (Expr, Expr, error) {
	lt, rt := l.Type(), r.Type()
	switch {
	case lt == nil && rt == nil:
		return l, r, nil
	case lt == nil:
		return typedNull(l, rt), r, nil
	case rt == nil:
		return l, typedNull(r, lt), nil
	}
	// String literals meeting other types are read as values of them.
	if s, ok := stringLiteral(l); ok && rt != actions.TypeString {
		nl, err := literalAs(parent, l.(*Literal), s, rt)
		if err != nil {
			return nil, nil, err
		}
		l, lt = nl, nl.Type()
	} else if s, ok := stringLiteral(r); ok && lt != actions.TypeString {
		nr, err := literalAs(parent, r.(*Literal), s, lt)
		if err != nil {
			return nil, nil, err
		}
		r, rt = nr, nr.Type()
	}
	if sameType(lt, rt) {
		return l, r, nil
	}
	// Decimals of one scale compare as they are.
	if dl, ok := lt.(*actions.DecimalType); ok {
		if dr, ok := rt.(*actions.DecimalType); ok && dl.Scale == dr.Scale {
			return l, r, nil
		}
	}
	// A literal that fits the other side's type exactly converts to it.
	if lit, ok := r.(*Literal); ok {
		if v, ok := exactConvert(lit.Value, lt); ok {
			return l, &Literal{Value: v, DataType: lt}, nil
		}
	}
	if lit, ok := l.(*Literal); ok {
		if v, ok := exactConvert(lit.Value, rt); ok {
			return &Literal{Value: v, DataType: rt}, r, nil
		}
	}
	w, ok := widerType(lt, rt)
	if !ok {
		return nil, nil, typeErr(parent, "cannot compare %s (%s) with %s (%s)", l, lt, r, rt)
	}
	nl, err := convertTo(parent, l, w)
	if err != nil {
		return nil, nil, err
	}
	nr, err := convertTo(parent, r, w)
	if err != nil {
		return nil, nil, err
	}
	return nl, nr, nil
}

// convertTo gives e the type t: a literal is converted now, anything else
// is wrapped in a Cast.
func convertTo(parent, e Expr, t actions.DataType) (Expr, error) {
	et := e.Type()
	if et == nil {
		return typedNull(e, t), nil
	}
	if sameType(et, t) {
		return e, nil
	}
	if lit, ok := e.(*Literal); ok {
		v, err := castValue(lit.Value, t)
		if err != nil {
			return nil, typeErr(parent, "%v", err)
		}
		return &Literal{Value: v, DataType: t}, nil
	}
	return &Cast{X: e, To: t}, nil
}

func (b *binder) in(n *In) (Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	out := &In{X: x, List: make([]Expr, len(n.List)), Not: n.Not}
	for i, e := range n.List {
		if out.List[i], err = b.bind(e); err != nil {
			return nil, err
		}
	}
	// Read string literals as values of X's type, then find the type all
	// operands meet at: X's own if every element converts to it exactly.
	xt := x.Type()
	target := xt
	for i, e := range out.List {
		if s, ok := stringLiteral(e); ok && xt != nil && xt != actions.TypeString {
			if out.List[i], err = literalAs(out, e.(*Literal), s, xt); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range out.List {
		et := e.Type()
		switch {
		case et == nil:
			continue
		case target == nil:
			target = et
			continue
		}
		if lit, ok := e.(*Literal); ok {
			if _, ok := exactConvert(lit.Value, target); ok {
				continue
			}
		}
		if dl, ok := target.(*actions.DecimalType); ok {
			if dr, ok := et.(*actions.DecimalType); ok && dl.Scale == dr.Scale {
				continue
			}
		}
		w, ok := widerType(target, et)
		if !ok {
			return nil, typeErr(out, "cannot compare %s (%s) with %s (%s)", x, xt, e, et)
		}
		target = w
	}
	if target == nil {
		return out, nil
	}
	if !isOrdered(target) {
		return nil, typeErr(out, "values of type %s cannot be compared", target)
	}
	convert := func(e Expr) (Expr, error) {
		if lit, ok := e.(*Literal); ok {
			if v, ok := exactConvert(lit.Value, target); ok {
				return &Literal{Value: v, DataType: target}, nil
			}
		}
		if et := e.Type(); et != nil && !sameType(et, target) {
			if dl, ok := target.(*actions.DecimalType); ok {
				if dr, ok := et.(*actions.DecimalType); ok && dl.Scale == dr.Scale {
					return e, nil
				}
			}
		}
		return convertTo(out, e, target)
	}
	if out.X, err = convert(x); err != nil {
		return nil, err
	}
	for i, e := range out.List {
		if out.List[i], err = convert(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *binder) arith(n *Arith) (Expr, error) {
	l, r, err := b.bind2(n.Left, n.Right)
	if err != nil {
		return nil, err
	}
	out := &Arith{Op: n.Op, Left: l, Right: r, zone: b.zone}
	// Text meeting arithmetic is read as a number.
	for _, side := range []*Expr{&out.Left, &out.Right} {
		if s, ok := stringLiteral(*side); ok {
			num, err := parseNumberText(s)
			if err != nil {
				return nil, typeErr(out, "%s is not a number", *side)
			}
			*side = num
		}
	}
	l, r = out.Left, out.Right
	lt, rt := l.Type(), r.Type()
	switch {
	case lt == nil && rt == nil:
		return out, nil
	case lt == nil:
		out.Left, lt = typedNull(l, rt), rt
	case rt == nil:
		out.Right, rt = typedNull(r, lt), lt
	}
	l, r = out.Left, out.Right
	if isInterval(lt) || isInterval(rt) || (n.Op == Minus && isDateTime(lt) && isDateTime(rt)) {
		return b.intervalArith(out)
	}
	// date ± integer.
	if (n.Op == Plus || n.Op == Minus) && lt == actions.TypeDate && isIntegral(rt) ||
		n.Op == Plus && isIntegral(lt) && rt == actions.TypeDate {
		return foldConstant(out)
	}
	if !isNumeric(lt) || !isNumeric(rt) {
		bad := l
		if isNumeric(lt) {
			bad = r
		}
		return nil, typeErr(out, "operator %s needs numbers, but %s is %s", n.Op, bad, bad.Type())
	}
	switch {
	case isDecimal(lt) || isDecimal(rt):
		if isFloating(lt) || isFloating(rt) {
			if out.Left, err = convertTo(out, l, actions.TypeDouble); err != nil {
				return nil, err
			}
			if out.Right, err = convertTo(out, r, actions.TypeDouble); err != nil {
				return nil, err
			}
			break
		}
		for _, side := range []*Expr{&out.Left, &out.Right} {
			if *side, err = integerAsDecimal(*side); err != nil {
				return nil, typeErr(out, "%v", err)
			}
		}
	case n.Op == Divide:
		if out.Left, err = convertTo(out, l, actions.TypeDouble); err != nil {
			return nil, err
		}
		if out.Right, err = convertTo(out, r, actions.TypeDouble); err != nil {
			return nil, err
		}
	case !sameType(lt, rt) && isIntegral(lt) && isIntegral(rt):
		// Integers widen as Spark's do: a literal keeps its own type, so
		// 7L + an int column is a long and sh + 1 an int.
		w, _ := widerType(lt, rt)
		if out.Left, err = convertTo(out, l, w); err != nil {
			return nil, err
		}
		if out.Right, err = convertTo(out, r, w); err != nil {
			return nil, err
		}
	case !sameType(lt, rt):
		// A literal takes the other side's type when that loses nothing,
		// but a double never narrows to float: float * 2.5D is a double,
		// as in Spark.
		if lit, ok := r.(*Literal); ok {
			if v, ok := exactConvert(lit.Value, lt); ok && (isFloating(lt) || !isFloating(rt)) && !(lt == actions.TypeFloat && rt == actions.TypeDouble) {
				out.Right = &Literal{Value: v, DataType: lt}
				break
			}
		}
		if lit, ok := l.(*Literal); ok {
			if v, ok := exactConvert(lit.Value, rt); ok && (isFloating(rt) || !isFloating(lt)) && !(rt == actions.TypeFloat && lt == actions.TypeDouble) {
				out.Left = &Literal{Value: v, DataType: rt}
				break
			}
		}
		w, ok := widerType(lt, rt)
		if !ok {
			return nil, typeErr(out, "operator %s cannot combine %s and %s", n.Op, lt, rt)
		}
		if out.Left, err = convertTo(out, l, w); err != nil {
			return nil, err
		}
		if out.Right, err = convertTo(out, r, w); err != nil {
			return nil, err
		}
	}
	if _, err := arithResultType(n.Op, out.Left.Type(), out.Right.Type()); err != nil {
		return nil, typeErr(out, "%v", err)
	}
	return foldConstant(out)
}

// foldConstant replaces an operator whose operands are all literals by
// its value, so that CAST('NaN' AS double) or -5 is a literal that
// pruning can use. An error (1/0) is left for evaluation to report.
func foldConstant(e Expr) (Expr, error) {
	for _, c := range children(e) {
		if _, ok := c.(*Literal); !ok {
			return e, nil
		}
	}
	if c, ok := e.(*Cast); ok {
		v, err := castValue(c.X.(*Literal).Value, c.To)
		if err != nil {
			return nil, typeErr(c, "%v", err)
		}
		return &Literal{Value: v, DataType: c.To}, nil
	}
	v, err := EvalRow(e, func(string) (any, bool) { return nil, false })
	if err != nil {
		return e, nil
	}
	t := e.Type()
	if v == nil {
		return &Literal{DataType: t}, nil
	}
	if t == nil {
		t, _ = typeOfValue(v)
	}
	return &Literal{Value: v, DataType: t}, nil
}

// aType is a type's name with its article: "an integer", "a long".
func aType(t actions.DataType) string {
	name := t.String()
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// integerAsDecimal is an integer operand meeting a decimal, as a
// decimal as Spark makes it: a literal with just its digits, a column
// with every digit of its type. Other operands are kept.
func integerAsDecimal(e Expr) (Expr, error) {
	t := e.Type()
	if !isIntegral(t) {
		return e, nil
	}
	if lit, ok := e.(*Literal); ok {
		d, err := castValue(lit.Value, &actions.DecimalType{Precision: actions.MaxDecimalPrecision})
		if err != nil {
			return nil, err
		}
		dt, _ := typeOfValue(d)
		return &Literal{Value: d, DataType: dt}, nil
	}
	return &Cast{X: e, To: integralAsDecimal(t)}, nil
}
