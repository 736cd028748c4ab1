package expr

import (
	"fmt"

	"github.com/lakelog/lakelog/actions"
)

// sameType reports whether a and b are the same Delta type.
func sameType(a, b actions.DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case actions.PrimitiveType:
		y, ok := b.(actions.PrimitiveType)
		return ok && x == y
	case *actions.DecimalType:
		y, ok := b.(*actions.DecimalType)
		return ok && x.Precision == y.Precision && x.Scale == y.Scale
	}
	return a.String() == b.String()
}

// intRank orders the integral types by width; 0 for other types.
func intRank(t actions.DataType) int {
	switch t {
	case actions.TypeByte:
		return 1
	case actions.TypeShort:
		return 2
	case actions.TypeInteger:
		return 3
	case actions.TypeLong:
		return 4
	}
	return 0
}

func isIntegral(t actions.DataType) bool { return intRank(t) > 0 }

func isFloating(t actions.DataType) bool {
	return t == actions.TypeFloat || t == actions.TypeDouble
}

func isDecimal(t actions.DataType) bool {
	_, ok := t.(*actions.DecimalType)
	return ok
}

func isNumeric(t actions.DataType) bool { return isIntegral(t) || isFloating(t) || isDecimal(t) }

func isTimestamp(t actions.DataType) bool {
	return t == actions.TypeTimestamp || t == actions.TypeTimestampNTZ
}

// isOrdered reports whether values of t can be compared with < and >.
func isOrdered(t actions.DataType) bool {
	switch t {
	case actions.TypeString, actions.TypeBinary, actions.TypeBoolean, actions.TypeDate,
		actions.TypeTimestamp, actions.TypeTimestampNTZ:
		return true
	}
	return isNumeric(t)
}

// integralAsDecimal is the decimal type that holds every value of an
// integral type, as Spark widens integers meeting decimals.
func integralAsDecimal(t actions.DataType) *actions.DecimalType {
	switch t {
	case actions.TypeByte:
		return &actions.DecimalType{Precision: 3}
	case actions.TypeShort:
		return &actions.DecimalType{Precision: 5}
	case actions.TypeInteger:
		return &actions.DecimalType{Precision: 10}
	}
	return &actions.DecimalType{Precision: 20}
}

// widerDecimal is the smallest decimal type that holds both a and b,
// or false when that needs more than 38 digits.
func widerDecimal(a, b *actions.DecimalType) (*actions.DecimalType, bool) {
	s := max(a.Scale, b.Scale)
	p := max(a.Precision-a.Scale, b.Precision-b.Scale) + s
	if p > actions.MaxDecimalPrecision {
		return nil, false
	}
	return &actions.DecimalType{Precision: p, Scale: s}, true
}

// widerType is the type both a and b convert to without loss when they
// meet in a comparison, IN or arithmetic: the wider integer; a decimal
// that holds both; double when a float or double meets a decimal or a
// long (Spark picks float for float and long, which loses digits);
// timestamp for date and timestamp, and for timestamp and
// timestamp_ntz (zone-less values taken as UTC).
func widerType(a, b actions.DataType) (actions.DataType, bool) {
	if sameType(a, b) {
		return a, true
	}
	switch {
	case isIntegral(a) && isIntegral(b):
		if intRank(a) > intRank(b) {
			return a, true
		}
		return b, true
	case isFloating(a) || isFloating(b):
		if !isNumeric(a) || !isNumeric(b) {
			return nil, false
		}
		// A float meets only a float as a float: with any integer or
		// decimal it widens to a double, as Spark's ANSI coercion does
		// (a float does not hold every int).
		if a == actions.TypeFloat && b == actions.TypeFloat {
			return actions.TypeFloat, true
		}
		return actions.TypeDouble, true
	case isDecimal(a) || isDecimal(b):
		if !isNumeric(a) || !isNumeric(b) {
			return nil, false
		}
		da, ok := a.(*actions.DecimalType)
		if !ok {
			da = integralAsDecimal(a)
		}
		db, ok := b.(*actions.DecimalType)
		if !ok {
			db = integralAsDecimal(b)
		}
		w, ok := widerDecimal(da, db)
		if !ok {
			return actions.TypeDouble, true
		}
		return w, true
	case a == actions.TypeDate && isTimestamp(b):
		return b, true
	case b == actions.TypeDate && isTimestamp(a):
		return a, true
	case isTimestamp(a) && isTimestamp(b):
		return actions.TypeTimestamp, true
	}
	return nil, false
}

// adjustDecimal caps a decimal result type at 38 digits the way Spark
// does (spark.sql.decimalOperations.allowPrecisionLoss): integer digits
// are kept and the scale shrinks, but not below 6.
func adjustDecimal(p, s int) *actions.DecimalType {
	if p <= actions.MaxDecimalPrecision {
		return &actions.DecimalType{Precision: p, Scale: s}
	}
	intDigits := p - s
	minScale := min(s, 6)
	return &actions.DecimalType{Precision: actions.MaxDecimalPrecision, Scale: max(actions.MaxDecimalPrecision-intDigits, minScale)}
}

// arithResultType is the type of l op r for operands of types lt and rt
// as Bind leaves them: equal types, or two decimals, or a date and an
// integer for + and -.
func arithResultType(op ArithOp, lt, rt actions.DataType) (actions.DataType, error) {
	if lt == nil || rt == nil {
		return nil, fmt.Errorf("operand type unknown")
	}
	if t, ok := intervalResultType(op, lt, rt); ok {
		return t, nil
	}
	if (op == Plus || op == Minus) && lt == actions.TypeDate && isIntegral(rt) {
		return actions.TypeDate, nil
	}
	if op == Plus && isIntegral(lt) && rt == actions.TypeDate {
		return actions.TypeDate, nil
	}
	if !isNumeric(lt) || !isNumeric(rt) {
		return nil, fmt.Errorf("operator %s needs numbers, not %s and %s", op, lt, rt)
	}
	if isDecimal(lt) || isDecimal(rt) {
		if isFloating(lt) || isFloating(rt) {
			return actions.TypeDouble, nil
		}
		a, ok := lt.(*actions.DecimalType)
		if !ok {
			a = integralAsDecimal(lt)
		}
		b, ok := rt.(*actions.DecimalType)
		if !ok {
			b = integralAsDecimal(rt)
		}
		p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
		switch op {
		case Plus, Minus:
			s := max(s1, s2)
			return adjustDecimal(max(p1-s1, p2-s2)+s+1, s), nil
		case Times:
			return adjustDecimal(p1+p2+1, s1+s2), nil
		case Divide:
			s := max(6, s1+p2+1)
			return adjustDecimal(p1-s1+s2+s, s), nil
		default: // Modulo
			s := max(s1, s2)
			return &actions.DecimalType{Precision: min(min(p1-s1, p2-s2)+s, actions.MaxDecimalPrecision), Scale: s}, nil
		}
	}
	if op == Divide {
		return actions.TypeDouble, nil
	}
	w, ok := widerType(lt, rt)
	if !ok {
		return nil, fmt.Errorf("operator %s needs numbers, not %s and %s", op, lt, rt)
	}
	return w, nil
}
