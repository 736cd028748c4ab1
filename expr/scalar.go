package expr

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Scalar semantics: the operations of the language on single Go values of
// actions/values.go (nil is NULL). EvalRow uses them directly; the Arrow
// evaluator uses them for constants, and its vectorised kernels compute
// the same results.

// errOverflow and errDivideByZero are the arithmetic errors of Spark's
// ANSI mode.
var (
	errOverflow     = errors.New("arithmetic overflow")
	errDivideByZero = errors.New("division by zero")
)

// compareScalar compares two non-nil values of the same Go type, in
// Spark's order (see actions.CompareValues: NaN is the greatest float and
// equals itself).
func compareScalar(a, b any) (int, error) { return actions.CompareValues(a, b) }

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// compareOpResult applies a comparison operator to a three-way result.
func compareOpResult(op CompareOp, c int) bool {
	switch op {
	case Eq, NullSafeEq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	}
	return false
}

// normalizeGoValue maps convenience Go types onto those of
// actions/values.go: int to int64.
func normalizeGoValue(v any) any {
	if i, ok := v.(int); ok {
		return int64(i)
	}
	return v
}

// castValue converts v to type to, with Spark's ANSI cast semantics: a
// value that does not fit, or text that does not parse, is an error.
func castValue(v any, to actions.DataType) (any, error) {
	v = normalizeGoValue(v)
	if v == nil {
		return nil, nil
	}
	from, ok := typeOfValue(v)
	if !ok {
		return nil, fmt.Errorf("unsupported value of Go type %T", v)
	}
	if sameType(from, to) {
		return v, nil
	}
	switch to := to.(type) {
	case *actions.DecimalType:
		return castToDecimal(v, to)
	case actions.PrimitiveType:
		switch to {
		case actions.TypeString:
			return castToString(v), nil
		case actions.TypeBoolean:
			return castToBool(v)
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
			return castToIntegral(v, to)
		case actions.TypeFloat, actions.TypeDouble:
			f, err := castToFloat(v)
			if err != nil {
				return nil, err
			}
			if to == actions.TypeFloat {
				if !math.IsInf(f, 0) && !math.IsNaN(f) && math.IsInf(float64(float32(f)), 0) {
					return nil, fmt.Errorf("%v out of range for float: %w", f, errOverflow)
				}
				return float32(f), nil
			}
			return f, nil
		case actions.TypeDate:
			switch x := v.(type) {
			case actions.Timestamp:
				return actions.Date(floorDiv(int64(x), microsPerDay)), nil
			case actions.TimestampNTZ:
				return actions.Date(floorDiv(int64(x), microsPerDay)), nil
			case string:
				if d, err := actions.ParseDate(strings.TrimSpace(x)); err == nil {
					return d, nil
				}
				ts, err := actions.ParseTimestamp(strings.TrimSpace(x))
				if err != nil {
					return nil, fmt.Errorf("%s is not a date", quoteString(x))
				}
				return actions.Date(floorDiv(int64(ts), microsPerDay)), nil
			}
		case actions.TypeTimestamp, actions.TypeTimestampNTZ:
			var micros int64
			switch x := v.(type) {
			case actions.Date:
				micros = int64(x) * microsPerDay
			case actions.Timestamp:
				micros = int64(x)
			case actions.TimestampNTZ:
				micros = int64(x)
			case string:
				var err error
				if micros, err = parseTimestampText(x, to == actions.TypeTimestampNTZ); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("cannot cast %s to %s", from, to)
			}
			if to == actions.TypeTimestampNTZ {
				return actions.TimestampNTZ(micros), nil
			}
			return actions.Timestamp(micros), nil
		case actions.TypeBinary:
			if s, ok := v.(string); ok {
				return []byte(s), nil
			}
		}
	}
	return nil, fmt.Errorf("cannot cast %s to %s", from, to)
}

// parseTimestampText reads a timestamp or timestamp_ntz (ntz) from text:
// YYYY-MM-DD, optionally followed by a time and, for timestamp, a zone
// (a timestamp without one is UTC).
func parseTimestampText(s string, ntz bool) (int64, error) {
	s = strings.TrimSpace(s)
	if ntz {
		ts, err := actions.ParseTimestampNTZ(s)
		if err != nil {
			return 0, fmt.Errorf("%s is not a timestamp_ntz (want YYYY-MM-DD[ HH:MM[:SS[.ffffff]]])", quoteString(s))
		}
		return int64(ts), nil
	}
	ts, err := actions.ParseTimestamp(s)
	if err != nil {
		return 0, fmt.Errorf("%s is not a timestamp (want YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][Z|+HH:MM])", quoteString(s))
	}
	return int64(ts), nil
}

// canCast reports whether CAST(x AS to) is allowed for x of type from.
func canCast(from, to actions.DataType) bool {
	if from == nil || sameType(from, to) {
		return true
	}
	if isNumeric(to) {
		return isNumeric(from) || from == actions.TypeString || from == actions.TypeBoolean
	}
	switch to {
	case actions.TypeString:
		return isOrdered(from)
	case actions.TypeBoolean:
		return isNumeric(from) || from == actions.TypeString
	case actions.TypeDate, actions.TypeTimestamp, actions.TypeTimestampNTZ:
		return from == actions.TypeString || from == actions.TypeDate || isTimestamp(from)
	case actions.TypeBinary:
		return from == actions.TypeString
	}
	return false
}

func castToString(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int8, int16, int32, int64:
		return fmt.Sprint(x)
	case float32:
		return javaFloatString(float64(x), 32)
	case float64:
		return javaFloatString(x, 64)
	case string:
		return x
	case []byte:
		return string(x)
	case actions.Decimal:
		return x.String()
	case actions.Date:
		return x.String()
	case actions.Timestamp:
		return sqlTimestamp(x.String())
	case actions.TimestampNTZ:
		return sqlTimestamp(x.String())
	}
	return fmt.Sprint(v)
}

// javaFloatString prints a float as Spark does (Java's Double.toString):
// 1.0, 0.001, 1.0E7, NaN, Infinity.
func javaFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, bits)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		sign := ""
		if e, neg := strings.CutPrefix(exp, "-"); neg {
			sign, exp = "-", e
		}
		return mant + "E" + sign + strings.TrimLeft(strings.TrimPrefix(exp, "+"), "0")
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func castToBool(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "t", "yes", "y", "1":
			return true, nil
		case "false", "f", "no", "n", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%s is not a boolean", quoteString(x))
	case float32:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case actions.Decimal:
		return x.Unscaled.Sign() != 0, nil
	}
	if i, ok := asInt64(v); ok {
		return i != 0, nil
	}
	return nil, fmt.Errorf("cannot cast %T to boolean", v)
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

func intRange(t actions.DataType) (int64, int64) {
	switch t {
	case actions.TypeByte:
		return math.MinInt8, math.MaxInt8
	case actions.TypeShort:
		return math.MinInt16, math.MaxInt16
	case actions.TypeInteger:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// makeIntegral wraps an in-range int64 as the Go type of t.
func makeIntegral(i int64, t actions.DataType) any {
	switch t {
	case actions.TypeByte:
		return int8(i)
	case actions.TypeShort:
		return int16(i)
	case actions.TypeInteger:
		return int32(i)
	}
	return i
}

func castToIntegral(v any, to actions.DataType) (any, error) {
	lo, hi := intRange(to)
	outOfRange := func() (any, error) {
		return nil, fmt.Errorf("%s out of range for %s: %w", castToString(v), to, errOverflow)
	}
	var i int64
	switch x := v.(type) {
	case bool:
		if x {
			i = 1
		}
	case float32, float64:
		f, _ := castToFloat(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return outOfRange()
		}
		f = math.Trunc(f)
		// float64(MaxInt64) rounds up to 2^63, which does not fit.
		if f < float64(lo) || f >= -float64(lo) || f > float64(hi) {
			return outOfRange()
		}
		i = int64(f)
	case actions.Decimal:
		q := new(big.Int).Quo(x.Unscaled, pow10(x.Scale))
		if !q.IsInt64() {
			return outOfRange()
		}
		i = q.Int64()
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return outOfRange()
			}
			return nil, fmt.Errorf("%s is not an integer", quoteString(x))
		}
		i = n
	default:
		n, ok := asInt64(v)
		if !ok {
			return nil, fmt.Errorf("cannot cast %T to %s", v, to)
		}
		i = n
	}
	if i < lo || i > hi {
		return outOfRange()
	}
	return makeIntegral(i, to), nil
}

func castToFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case actions.Decimal:
		f, _ := new(big.Rat).SetFrac(x.Unscaled, pow10(x.Scale)).Float64()
		return f, nil
	case string:
		s := strings.TrimSpace(x)
		switch strings.ToLower(s) {
		case "nan":
			return math.NaN(), nil
		case "infinity", "inf", "+infinity", "+inf":
			return math.Inf(1), nil
		case "-infinity", "-inf":
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || strings.ContainsAny(s, "xXpP_") {
			return 0, fmt.Errorf("%s is not a number", quoteString(x))
		}
		return f, nil
	}
	if i, ok := asInt64(v); ok {
		return float64(i), nil
	}
	return 0, fmt.Errorf("cannot cast %T to double", v)
}

// roundHalfUp divides u by 10^shift, rounding halves away from zero, as
// Spark's decimal rescaling does.
func roundHalfUp(u *big.Int, shift int) *big.Int {
	if shift <= 0 {
		return new(big.Int).Mul(u, pow10(-shift))
	}
	d := pow10(shift)
	q, r := new(big.Int).QuoRem(u, d, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(d) >= 0 {
		if u.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// fitsPrecision reports whether u has at most p digits.
func fitsPrecision(u *big.Int, p int) bool {
	return new(big.Int).Abs(u).Cmp(pow10(p)) < 0
}

func castToDecimal(v any, to *actions.DecimalType) (any, error) {
	var r *big.Rat
	switch x := v.(type) {
	case actions.Decimal:
		u := roundHalfUp(x.Unscaled, x.Scale-to.Scale)
		if !fitsPrecision(u, to.Precision) {
			return nil, fmt.Errorf("%s out of range for %s: %w", x.String(), to, errOverflow)
		}
		return actions.Decimal{Unscaled: u, Scale: to.Scale}, nil
	case float32, float64:
		f, _ := castToFloat(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// Spark's cast gives NULL (a decimal has no NaN), in ANSI
			// mode too.
			return nil, nil
		}
		// The shortest decimal text of the float, as Spark converts
		// doubles to decimals through their string form.
		bits := 64
		if _, ok := x.(float32); ok {
			bits = 32
		}
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
	case string:
		var ok bool
		r, ok = new(big.Rat).SetString(strings.TrimSpace(x))
		if !ok || strings.ContainsAny(x, "/xXpP_") {
			return nil, fmt.Errorf("%s is not a number", quoteString(x))
		}
	case bool:
		r = new(big.Rat)
		if x {
			r.SetInt64(1)
		}
	default:
		i, ok := asInt64(v)
		if !ok {
			return nil, fmt.Errorf("cannot cast %T to %s", v, to)
		}
		r = new(big.Rat).SetInt64(i)
	}
	u, _ := ratToUnscaled(r, to.Scale)
	if !fitsPrecision(u, to.Precision) {
		return nil, fmt.Errorf("%s out of range for %s: %w", castToString(v), to, errOverflow)
	}
	return actions.Decimal{Unscaled: u, Scale: to.Scale}, nil
}

// ratToUnscaled is r × 10^scale rounded half away from zero, and whether
// that was exact.
func ratToUnscaled(r *big.Rat, scale int) (*big.Int, bool) {
	n := new(big.Int).Mul(r.Num(), pow10(scale))
	d := r.Denom()
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	if rem.Sign() == 0 {
		return q, true
	}
	rem.Abs(rem).Lsh(rem, 1)
	if rem.Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q, false
}

// exactConvert converts a literal value to type to when that loses
// nothing, reporting false otherwise. A number meeting a float or double
// converts to the nearest float of that type: users comparing a float
// column with 1.1 mean the float 1.1 (Spark would widen both sides to
// double, where float 1.1 is not 1.1).
func exactConvert(v any, to actions.DataType) (any, bool) {
	v = normalizeGoValue(v)
	if v == nil {
		return nil, true
	}
	from, ok := typeOfValue(v)
	if !ok {
		return nil, false
	}
	if sameType(from, to) {
		return v, true
	}
	switch {
	case isNumeric(from) && isFloating(to):
		if isFloating(from) && to == actions.TypeDouble && from == actions.TypeFloat {
			return float64(v.(float32)), true
		}
		f, err := castToFloat(v)
		if err != nil {
			return nil, false
		}
		if to == actions.TypeFloat {
			if !math.IsInf(f, 0) && !math.IsNaN(f) && math.IsInf(float64(float32(f)), 0) {
				return nil, false
			}
			return float32(f), true
		}
		return f, true
	case isNumeric(from) && (isIntegral(to) || isDecimal(to)):
		r, ok := toRat(v)
		if !ok {
			return nil, false
		}
		if isIntegral(to) {
			if !r.IsInt() || !r.Num().IsInt64() {
				return nil, false
			}
			lo, hi := intRange(to)
			i := r.Num().Int64()
			if i < lo || i > hi {
				return nil, false
			}
			return makeIntegral(i, to), true
		}
		dt := to.(*actions.DecimalType)
		u, exact := ratToUnscaled(r, dt.Scale)
		// The precision of the column does not bound a literal it is
		// compared with; 38 digits do.
		if !exact || !fitsPrecision(u, actions.MaxDecimalPrecision) {
			return nil, false
		}
		return actions.Decimal{Unscaled: u, Scale: dt.Scale}, true
	case from == actions.TypeDate && isTimestamp(to):
		c, err := castValue(v, to)
		return c, err == nil
	case isTimestamp(from) && isTimestamp(to):
		c, err := castValue(v, to)
		return c, err == nil
	}
	return nil, false
}

// toRat is the exact value of a finite number.
func toRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case actions.Decimal:
		return new(big.Rat).SetFrac(x.Unscaled, pow10(x.Scale)), true
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(float64(x)), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	}
	if i, ok := asInt64(v); ok {
		return new(big.Rat).SetInt64(i), true
	}
	return nil, false
}

// arithValue computes a op b for non-nil a and b of the types Bind gives
// (equal types, two decimals, or a date and an integer), with the result
// type rt.
func arithValue(op ArithOp, a, b any, rt actions.DataType) (any, error) {
	if d, ok := a.(actions.Date); ok {
		n, _ := asInt64(b)
		if op == Minus {
			n = -n
		}
		return addDays(d, n)
	}
	if d, ok := b.(actions.Date); ok {
		n, _ := asInt64(a)
		return addDays(d, n)
	}
	if dt, ok := rt.(*actions.DecimalType); ok {
		x, err := castValue(a, decimalOperandType(a))
		if err != nil {
			return nil, err
		}
		y, err := castValue(b, decimalOperandType(b))
		if err != nil {
			return nil, err
		}
		return decimalArith(op, x.(actions.Decimal), y.(actions.Decimal), dt)
	}
	if isFloating(rt) {
		x, err := castToFloat(a)
		if err != nil {
			return nil, err
		}
		y, err := castToFloat(b)
		if err != nil {
			return nil, err
		}
		f, err := floatArith(op, x, y)
		if err != nil {
			return nil, err
		}
		if rt == actions.TypeFloat {
			return float32(f), nil
		}
		return f, nil
	}
	x, ok1 := asInt64(a)
	y, ok2 := asInt64(b)
	if !ok1 || !ok2 || !isIntegral(rt) {
		return nil, fmt.Errorf("operator %s cannot combine %T and %T", op, a, b)
	}
	r, err := intArith(op, x, y)
	if errors.Is(err, errOverflow) {
		return nil, fmt.Errorf("%d %s %d overflows %s: %w", x, op, y, rt, errOverflow)
	}
	if err != nil {
		return nil, err
	}
	lo, hi := intRange(rt)
	if r < lo || r > hi {
		return nil, fmt.Errorf("%d %s %d overflows %s: %w", x, op, y, rt, errOverflow)
	}
	return makeIntegral(r, rt), nil
}

// decimalOperandType is the decimal type an operand takes in decimal
// arithmetic: its own, or the one that holds its integral type.
func decimalOperandType(v any) actions.DataType {
	t, _ := typeOfValue(v)
	if isIntegral(t) {
		return integralAsDecimal(t)
	}
	return t
}

func addDays(d actions.Date, n int64) (any, error) {
	r := int64(d) + n
	if r < math.MinInt32 || r > math.MaxInt32 {
		return nil, fmt.Errorf("date out of range: %w", errOverflow)
	}
	return actions.Date(r), nil
}

func floatArith(op ArithOp, x, y float64) (float64, error) {
	switch op {
	case Plus:
		return x + y, nil
	case Minus:
		return x - y, nil
	case Times:
		return x * y, nil
	case Divide:
		if y == 0 {
			return 0, errDivideByZero
		}
		return x / y, nil
	default:
		if y == 0 {
			return 0, errDivideByZero
		}
		return math.Mod(x, y), nil
	}
}

// intArith is x op y on int64 with overflow detection; Divide is not an
// integer operation (Bind makes it a double one).
func intArith(op ArithOp, x, y int64) (int64, error) {
	switch op {
	case Plus:
		r := x + y
		if (r > x) != (y > 0) {
			return 0, errOverflow
		}
		return r, nil
	case Minus:
		r := x - y
		if (r < x) != (y > 0) {
			return 0, errOverflow
		}
		return r, nil
	case Times:
		if x == 0 || y == 0 {
			return 0, nil
		}
		r := x * y
		if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, errOverflow
		}
		return r, nil
	case Modulo:
		if y == 0 {
			return 0, errDivideByZero
		}
		if y == -1 {
			return 0, nil
		}
		return x % y, nil
	}
	return 0, fmt.Errorf("operator %s is not an integer operation", op)
}

// decimalArith is x op y rounded half up to the scale of rt; a result
// with more digits than rt's precision is an overflow.
func decimalArith(op ArithOp, x, y actions.Decimal, rt *actions.DecimalType) (any, error) {
	var num *big.Int
	var scale int
	switch op {
	case Plus, Minus:
		scale = max(x.Scale, y.Scale)
		a := new(big.Int).Mul(x.Unscaled, pow10(scale-x.Scale))
		b := new(big.Int).Mul(y.Unscaled, pow10(scale-y.Scale))
		if op == Plus {
			num = a.Add(a, b)
		} else {
			num = a.Sub(a, b)
		}
	case Times:
		num, scale = new(big.Int).Mul(x.Unscaled, y.Unscaled), x.Scale+y.Scale
	case Divide, Modulo:
		if y.Unscaled.Sign() == 0 {
			return nil, errDivideByZero
		}
		if op == Modulo {
			scale = max(x.Scale, y.Scale)
			a := new(big.Int).Mul(x.Unscaled, pow10(scale-x.Scale))
			b := new(big.Int).Mul(y.Unscaled, pow10(scale-y.Scale))
			num = a.Rem(a, b)
			break
		}
		// x/y at rt's scale: (xu / 10^xs) / (yu / 10^ys) × 10^s.
		r := new(big.Rat).SetFrac(
			new(big.Int).Mul(x.Unscaled, pow10(y.Scale)),
			new(big.Int).Mul(y.Unscaled, pow10(x.Scale)))
		u, _ := ratToUnscaled(r, rt.Scale)
		num, scale = u, rt.Scale
	}
	u := roundHalfUp(num, scale-rt.Scale)
	if !fitsPrecision(u, rt.Precision) {
		return nil, fmt.Errorf("result does not fit %s: %w", rt, errOverflow)
	}
	return actions.Decimal{Unscaled: u, Scale: rt.Scale}, nil
}

// negValue is -v.
func negValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case float32:
		return -x, nil
	case float64:
		return -x, nil
	case actions.Decimal:
		return actions.Decimal{Unscaled: new(big.Int).Neg(x.Unscaled), Scale: x.Scale}, nil
	}
	i, ok := asInt64(v)
	if !ok {
		return nil, fmt.Errorf("cannot negate %T", v)
	}
	t, _ := typeOfValue(v)
	lo, _ := intRange(t)
	if i == lo {
		return nil, fmt.Errorf("-(%d) overflows %s: %w", i, t, errOverflow)
	}
	return makeIntegral(-i, t), nil
}
