package expr

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// EvalRow evaluates e on one row. row returns the value of a column,
// named as Column.Name spells it ("a", "s.x"), as one of the Go types of
// actions/values.go (nil for NULL; int is taken as int64); ok=false is an
// error naming the column. The result is of the same Go types: a
// predicate gives true, false or nil (NULL, SQL's unknown).
//
// e may be bound or not. Bound, a column's value is converted to the
// column's type when it has another. Unbound, operands of different types
// are reconciled at run time as Bind would: '2026-01-01' meeting a date
// is a date, 3 meeting a long is a long.
//
// AND and OR skip their right side when the left decides the result, so
// p = 0 OR 10 / p > 1 does not divide by zero. Errors are arithmetic
// overflow, division by zero, values that do not convert, and missing
// columns; all start with "expr:".
func EvalRow(e Expr, row func(col string) (any, bool)) (any, error) {
	v, err := evalRow(e, row)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func evalRow(e Expr, row func(string) (any, bool)) (any, error) {
	switch n := e.(type) {
	case *Literal:
		return normalizeGoValue(n.Value), nil
	case *Column:
		v, ok := row(n.Name())
		if !ok {
			return nil, fmt.Errorf("expr: no value for column %s", n)
		}
		v = normalizeGoValue(v)
		if v == nil || n.DataType == nil || isNested(n.DataType) {
			return v, nil
		}
		vt, ok := typeOfValue(v)
		if !ok {
			return nil, fmt.Errorf("expr: column %s: unsupported value of Go type %T", n, v)
		}
		if sameType(vt, n.DataType) {
			return v, nil
		}
		if dv, ok := v.(actions.Decimal); ok && isDecimal(n.DataType) {
			return dv, nil
		}
		c, err := castValue(v, n.DataType)
		if err != nil {
			return nil, fmt.Errorf("expr: column %s: %w", n, err)
		}
		return c, nil
	case *Compare:
		l, err := evalRow(n.Left, row)
		if err != nil {
			return nil, err
		}
		r, err := evalRow(n.Right, row)
		if err != nil {
			return nil, err
		}
		if l == nil || r == nil {
			if n.Op == NullSafeEq {
				return l == nil && r == nil, nil
			}
			return nil, nil
		}
		c, err := compareDynamic(l, r)
		if err != nil {
			return nil, fmt.Errorf("expr: %s: %w", n, err)
		}
		return compareOpResult(n.Op, c), nil
	case *AndExpr:
		return evalJunction(n, n.Left, n.Right, false, row)
	case *OrExpr:
		return evalJunction(n, n.Left, n.Right, true, row)
	case *NotExpr:
		v, err := evalBool(n, n.X, row)
		if err != nil || v == nil {
			return nil, err
		}
		return !*v, nil
	case *In:
		x, err := evalRow(n.X, row)
		if err != nil {
			return nil, err
		}
		if x == nil {
			return nil, nil
		}
		sawNull := false
		for _, el := range n.List {
			v, err := evalRow(el, row)
			if err != nil {
				return nil, err
			}
			if v == nil {
				sawNull = true
				continue
			}
			c, err := compareDynamic(x, v)
			if err != nil {
				return nil, fmt.Errorf("expr: %s: %w", n, err)
			}
			if c == 0 {
				return !n.Not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return n.Not, nil
	case *IsNull:
		v, err := evalRow(n.X, row)
		if err != nil {
			return nil, err
		}
		return (v == nil) != n.Not, nil
	case *Like:
		v, err := evalRow(n.X, row)
		if err != nil || v == nil {
			return nil, err
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expr: %s: LIKE needs a string, not %T", n, v)
		}
		m, err := compileLike(n.Pattern, n.Escape)
		if err != nil {
			return nil, fmt.Errorf("expr: %w", err)
		}
		return m.match(s) != n.Not, nil
	case *Arith:
		l, err := evalRow(n.Left, row)
		if err != nil {
			return nil, err
		}
		r, err := evalRow(n.Right, row)
		if err != nil {
			return nil, err
		}
		if l == nil || r == nil {
			return nil, nil
		}
		if isIntervalArith(n) {
			v, err := intervalArith(n.Op, l, r, n.Left.Type(), n.Right.Type(), n.Type(), zoneLoc(n.zone))
			if err != nil {
				return nil, fmt.Errorf("expr: %s: %w", n, err)
			}
			return v, nil
		}
		v, err := arithDynamic(n.Op, l, r, n.Type())
		if err != nil {
			return nil, fmt.Errorf("expr: %s: %w", n, err)
		}
		return v, nil
	case *Neg:
		v, err := evalRow(n.X, row)
		if err != nil {
			return nil, err
		}
		if s, ok := v.(string); ok {
			num, err := parseNumberText(s)
			if err != nil {
				return nil, fmt.Errorf("expr: %s: %s is not a number", n, quoteString(s))
			}
			v = num.Value
		}
		out, err := negValue(v)
		if err != nil {
			return nil, fmt.Errorf("expr: %s: %w", n, err)
		}
		return out, nil
	case *Cast:
		v, err := evalRow(n.X, row)
		if err != nil {
			return nil, err
		}
		out, err := castTyped(v, n.X.Type(), n.To, zoneLoc(n.zone))
		if err != nil {
			if n.Try {
				return nil, nil
			}
			return nil, fmt.Errorf("expr: %s: %w", n, err)
		}
		return out, nil
	case *Call:
		return evalCallRow(n, row)
	case *Case:
		return evalCaseRow(n, row)
	case *Subscript:
		return evalSubscriptRow(n, row)
	case *FieldOf:
		return evalFieldRow(n, row)
	case nil:
		return nil, fmt.Errorf("expr: nil expression")
	}
	return nil, fmt.Errorf("expr: cannot evaluate %T", e)
}

// evalBool evaluates a boolean operand of parent: true, false or nil.
func evalBool(parent, x Expr, row func(string) (any, bool)) (*bool, error) {
	v, err := evalRow(x, row)
	if err != nil || v == nil {
		return nil, err
	}
	b, ok := v.(bool)
	if !ok {
		return nil, fmt.Errorf("expr: %s: %s is not boolean", parent, x)
	}
	return &b, nil
}

// evalJunction is AND (or=false) or OR (or=true) with SQL's three-valued
// logic; the right side is skipped when the left decides.
func evalJunction(parent, l, r Expr, or bool, row func(string) (any, bool)) (any, error) {
	lv, err := evalBool(parent, l, row)
	if err != nil {
		return nil, err
	}
	if lv != nil && *lv == or {
		return or, nil
	}
	rv, err := evalBool(parent, r, row)
	if err != nil {
		return nil, err
	}
	switch {
	case rv != nil && *rv == or:
		return or, nil
	case lv == nil || rv == nil:
		return nil, nil
	}
	return !or, nil
}

// coerceValues brings two non-nil values to one Go type, as Bind would
// bring their expressions to one type.
func coerceValues(a, b any) (any, any, error) {
	ta, ok1 := typeOfValue(a)
	tb, ok2 := typeOfValue(b)
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("cannot compare %T with %T", a, b)
	}
	if sameType(ta, tb) || isDecimal(ta) && isDecimal(tb) {
		return a, b, nil
	}
	if s, ok := b.(string); ok {
		y, x, err := coerceText(s, a, ta)
		return x, y, err
	}
	if s, ok := a.(string); ok {
		return coerceText(s, b, tb)
	}
	if v, ok := exactConvert(b, ta); ok {
		return a, v, nil
	}
	if v, ok := exactConvert(a, tb); ok {
		return v, b, nil
	}
	w, ok := widerType(ta, tb)
	if !ok {
		return nil, nil, fmt.Errorf("cannot compare %s with %s", ta, tb)
	}
	x, err := castValue(a, w)
	if err != nil {
		return nil, nil, err
	}
	y, err := castValue(b, w)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// coerceText reads text s as a value to meet v of type t, as Bind reads
// a string literal: a date meeting text with a time of day becomes a
// timestamp.
func coerceText(s string, v any, t actions.DataType) (any, any, error) {
	if t == actions.TypeDate {
		if d, err := actions.ParseDate(strings.TrimSpace(s)); err == nil {
			return d, v, nil
		}
		ts, err := parseTimestampText(s, false)
		if err != nil {
			return nil, nil, fmt.Errorf("%s is not a date", quoteString(s))
		}
		w, err := castValue(v, actions.TypeTimestamp)
		return actions.Timestamp(ts), w, err
	}
	x, err := castValue(s, t)
	return x, v, err
}

func compareDynamic(a, b any) (int, error) {
	x, y, err := coerceValues(a, b)
	if err != nil {
		return 0, err
	}
	return compareScalar(x, y)
}

// arithDynamic is a op b for non-nil values; rt is the bound result type,
// or nil to derive it from the values as Bind would.
func arithDynamic(op ArithOp, a, b any, rt actions.DataType) (any, error) {
	if rt != nil {
		return arithValue(op, a, b, rt)
	}
	for _, v := range []*any{&a, &b} {
		if s, ok := (*v).(string); ok {
			num, err := parseNumberText(s)
			if err != nil {
				return nil, fmt.Errorf("%s is not a number", quoteString(s))
			}
			*v = num.Value
		}
	}
	ta, ok1 := typeOfValue(a)
	tb, ok2 := typeOfValue(b)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("operator %s cannot combine %T and %T", op, a, b)
	}
	if !sameType(ta, tb) && !isDecimal(ta) && !isDecimal(tb) && isNumeric(ta) && isNumeric(tb) {
		w, _ := widerType(ta, tb)
		var err error
		if a, err = castValue(a, w); err != nil {
			return nil, err
		}
		if b, err = castValue(b, w); err != nil {
			return nil, err
		}
		ta, tb = w, w
	}
	if (isDecimal(ta) || isDecimal(tb)) && (isFloating(ta) || isFloating(tb)) {
		ta, tb = actions.TypeDouble, actions.TypeDouble
	}
	t, err := arithResultType(op, ta, tb)
	if err != nil {
		return nil, err
	}
	return arithValue(op, a, b, t)
}
