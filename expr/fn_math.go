package expr

import (
	"fmt"
	"math"
	"math/big"
	mbits "math/bits"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Math functions. Doubles follow Java's Math: NaN for a domain error
// (sqrt(-1)), except that Spark's logarithms are NULL for arguments out
// of their domain (ln(0), log10(-1)). Integer results that overflow are
// errors (ANSI mode).

func init() {
	unary := func(name string, f func(float64) float64, names ...string) *function {
		return &function{names: append([]string{name}, names...), minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			eval: func(x *callCtx, a []any) (any, error) { return f(a[0].(float64)), nil }}
	}
	// logFn is NULL at or below its asymptote.
	logFn := func(name string, f func(float64) float64, lowest float64) *function {
		return &function{names: []string{name}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			eval: func(x *callCtx, a []any) (any, error) {
				v := a[0].(float64)
				if v <= lowest {
					return nil, nil
				}
				return f(v), nil
			}}
	}
	register(
		unary("sqrt", math.Sqrt), unary("cbrt", math.Cbrt), unary("exp", math.Exp), unary("expm1", math.Expm1),
		unary("sin", math.Sin), unary("cos", math.Cos), unary("tan", math.Tan),
		unary("asin", math.Asin), unary("acos", math.Acos), unary("atan", math.Atan),
		unary("sinh", math.Sinh), unary("cosh", math.Cosh), unary("tanh", math.Tanh),
		unary("asinh", math.Asinh), unary("acosh", math.Acosh), unary("atanh", math.Atanh),
		unary("cot", func(v float64) float64 { return 1 / math.Tan(v) }),
		unary("degrees", func(v float64) float64 { return v * (180 / math.Pi) }),
		unary("radians", func(v float64) float64 { return v / 180 * math.Pi }),
		unary("rint", math.RoundToEven),
		unary("signum", func(v float64) float64 {
			switch {
			case math.IsNaN(v):
				return v
			case v > 0:
				return 1
			case v < 0:
				return -1
			}
			return v
		}, "sign"),
		logFn("ln", math.Log, 0), logFn("log10", math.Log10, 0), logFn("log2", math.Log2, 0),
		logFn("log1p", math.Log1p, -1),
		&function{names: []string{"log"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			eval: func(x *callCtx, a []any) (any, error) {
				if len(a) == 1 {
					v := a[0].(float64)
					if v <= 0 {
						return nil, nil
					}
					return math.Log(v), nil
				}
				base, v := a[0].(float64), a[1].(float64)
				if base <= 0 || v <= 0 {
					return nil, nil
				}
				return math.Log(v) / math.Log(base), nil
			}},
		&function{names: []string{"pow", "power"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			eval: func(x *callCtx, a []any) (any, error) { return math.Pow(a[0].(float64), a[1].(float64)), nil }},
		&function{names: []string{"atan2"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			// Spark adds 0.0 to both: -0.0 is taken as 0.0.
			eval: func(x *callCtx, a []any) (any, error) { return math.Atan2(a[0].(float64)+0.0, a[1].(float64)+0.0), nil }},
		&function{names: []string{"hypot"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeDouble, kDouble),
			eval: func(x *callCtx, a []any) (any, error) { return math.Hypot(a[0].(float64), a[1].(float64)), nil }},
		&function{names: []string{"pi"}, minArgs: 0, maxArgs: 0, generated: true,
			bind: sig(actions.TypeDouble), eval: func(*callCtx, []any) (any, error) { return math.Pi, nil }},
		&function{names: []string{"e"}, minArgs: 0, maxArgs: 0, generated: true,
			bind: sig(actions.TypeDouble), eval: func(*callCtx, []any) (any, error) { return math.E, nil }},
		&function{names: []string{"abs"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sameNumeric, eval: func(x *callCtx, a []any) (any, error) { return absValue(a[0]) }},
		&function{names: []string{"negative"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sameNumeric, eval: func(x *callCtx, a []any) (any, error) { return negValue(a[0]) }},
		&function{names: []string{"positive"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sameNumeric, eval: func(x *callCtx, a []any) (any, error) { return a[0], nil }},
		&function{names: []string{"ceil", "ceiling"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: roundingType(true), eval: roundWith(big.ToPositiveInf)},
		&function{names: []string{"floor"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: roundingType(true), eval: roundWith(big.ToNegativeInf)},
		&function{names: []string{"round"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: roundingType(false), eval: roundWith(big.ToNearestAway)},
		&function{names: []string{"bround"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: roundingType(false), eval: roundWith(big.ToNearestEven)},
		&function{names: []string{"pmod"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: bindPmod, eval: func(x *callCtx, a []any) (any, error) {
				// Decimals are computed exactly and the result must fit
				// the call's type (pmod(-0.50, 2.5) is 2.00, more than
				// DECIMAL(2,2) holds: an overflow, as in Spark).
				rt := x.call.typ
				dt, isDec := rt.(*actions.DecimalType)
				if isDec {
					rt = &actions.DecimalType{Precision: actions.MaxDecimalPrecision, Scale: dt.Scale}
				}
				r, err := arithValue(Modulo, a[0], a[1], rt)
				if err != nil {
					return nil, err
				}
				if isNegative(r) {
					r2, err := arithValue(Plus, r, a[1], rt)
					if err != nil {
						return nil, err
					}
					if r, err = arithValue(Modulo, r2, a[1], rt); err != nil {
						return nil, err
					}
				}
				if isDec {
					return castValue(r, dt)
				}
				return r, nil
			}},
		&function{names: []string{"mod"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: commonNumeric, eval: func(x *callCtx, a []any) (any, error) {
				return arithValue(Modulo, a[0], a[1], x.call.typ)
			}},
		&function{names: []string{"div"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, _, err := commonNumeric(b, c)
				if err != nil {
					return nil, nil, err
				}
				if t := args[0].Type(); isFloating(t) {
					return nil, nil, typeErr(c, "DIV takes integers or decimals, not %s", t)
				}
				return args, actions.TypeLong, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				ra, _ := toRat(a[0])
				rb, _ := toRat(a[1])
				if rb.Sign() == 0 {
					return nil, errDivideByZero
				}
				q := new(big.Int).Quo(new(big.Int).Mul(ra.Num(), rb.Denom()), new(big.Int).Mul(ra.Denom(), rb.Num()))
				if !q.IsInt64() {
					return nil, fmt.Errorf("result out of range for bigint: %w", errOverflow)
				}
				return q.Int64(), nil
			}},
		&function{names: []string{"factorial"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeLong, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				n := a[0].(int32)
				if n < 0 || n > 20 {
					return nil, nil
				}
				r := int64(1)
				for i := int64(2); i <= int64(n); i++ {
					r *= i
				}
				return r, nil
			}},
		&function{names: []string{"shiftleft"}, minArgs: 2, maxArgs: 2, generated: true, bind: shiftType,
			eval: shift(func(v int64, n uint, w int) int64 { return v << n })},
		&function{names: []string{"shiftright"}, minArgs: 2, maxArgs: 2, generated: true, bind: shiftType,
			eval: shift(func(v int64, n uint, w int) int64 { return v >> n })},
		&function{names: []string{"shiftrightunsigned"}, minArgs: 2, maxArgs: 2, generated: true, bind: shiftType,
			eval: shift(func(v int64, n uint, w int) int64 {
				if w == 32 {
					return int64(int32(uint32(v) >> n))
				}
				return int64(uint64(v) >> n)
			})},
		&function{names: []string{"&"}, minArgs: 2, maxArgs: 2, generated: true, bind: commonIntegral,
			eval: bitwise(func(a, b int64) int64 { return a & b })},
		&function{names: []string{"|"}, minArgs: 2, maxArgs: 2, generated: true, bind: commonIntegral,
			eval: bitwise(func(a, b int64) int64 { return a | b })},
		&function{names: []string{"^"}, minArgs: 2, maxArgs: 2, generated: true, bind: commonIntegral,
			eval: bitwise(func(a, b int64) int64 { return a ^ b })},
		&function{names: []string{"~"}, minArgs: 1, maxArgs: 1, generated: true, bind: commonIntegral,
			eval: func(x *callCtx, a []any) (any, error) {
				v, _ := asInt64(a[0])
				return makeIntegral(^v, x.call.typ), nil
			}},
		&function{names: []string{"bit_count"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if c.Args[0].Type() == actions.TypeBoolean {
					return c.Args, actions.TypeInteger, nil
				}
				args, err := b.coerceArgs(c, kIntegral)
				return args, actions.TypeInteger, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if b, ok := a[0].(bool); ok {
					if b {
						return int32(1), nil
					}
					return int32(0), nil
				}
				v, _ := asInt64(a[0])
				return int32(mbits.OnesCount64(uint64(v))), nil
			}},
		&function{names: []string{"bin"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kLong),
			eval: func(x *callCtx, a []any) (any, error) { return strconv.FormatUint(uint64(a[0].(int64)), 2), nil }},
		&function{names: []string{"hex"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				t := c.Args[0].Type()
				if isIntegral(t) {
					args, err := b.coerceArgs(c, kLong)
					return args, actions.TypeString, err
				}
				args, err := b.coerceArgs(c, kStrOrBin)
				return args, actions.TypeString, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				switch v := a[0].(type) {
				case int64:
					return strings.ToUpper(strconv.FormatUint(uint64(v), 16)), nil
				case string:
					return strings.ToUpper(fmt.Sprintf("%x", v)), nil
				case []byte:
					return strings.ToUpper(fmt.Sprintf("%x", v)), nil
				}
				return nil, fmt.Errorf("hex of %T", a[0])
			}},
		&function{names: []string{"unhex"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeBinary, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				s := a[0].(string)
				if len(s)%2 == 1 {
					s = "0" + s
				}
				out := make([]byte, len(s)/2)
				for i := range out {
					v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
					if err != nil {
						return nil, nil
					}
					out[i] = byte(v)
				}
				return out, nil
			}},
		&function{names: []string{"conv"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: sig(actions.TypeString, kString, kInt, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				return convBase(a[0].(string), int(a[1].(int32)), int(a[2].(int32))), nil
			}},
		&function{names: []string{"rand", "random"}, minArgs: 0, maxArgs: 1, nondeterministic: true,
			bind: sig(actions.TypeDouble, kLong),
			eval: func(x *callCtx, a []any) (any, error) { return rand.Float64(), nil }},
		&function{names: []string{"randn"}, minArgs: 0, maxArgs: 1, nondeterministic: true,
			bind: sig(actions.TypeDouble, kLong),
			eval: func(x *callCtx, a []any) (any, error) { return rand.NormFloat64(), nil }},
	)
}

func sameNumeric(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kNumeric)
	if err != nil {
		return nil, nil, err
	}
	return args, args[0].Type(), nil
}

// bindPmod types pmod as Spark does: with a decimal (and no floating
// point) argument, the type of the remainder of the arguments as they
// are (pmod(-0.50, 2.5) is DECIMAL(2,2)); otherwise their common type.
func bindPmod(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kAny)
	if err != nil {
		return nil, nil, err
	}
	// A NULL takes the other argument's numeric type (pmod(NULL, 2.5)
	// is a DECIMAL(2,1), pmod(NULL, 3) an INT).
	if t := args[1].Type(); isNumeric(t) {
		args[0] = typedNull(args[0], t)
	}
	if t := args[0].Type(); isNumeric(t) {
		args[1] = typedNull(args[1], t)
	}
	if !isNumeric(args[0].Type()) || !isNumeric(args[1].Type()) {
		if args, err = b.coerceArgs(c, kNumeric); err != nil {
			return nil, nil, err
		}
	}
	t0, t1 := args[0].Type(), args[1].Type()
	if (isDecimal(t0) || isDecimal(t1)) && isNumeric(t0) && isNumeric(t1) && !isFloating(t0) && !isFloating(t1) {
		for i := range args {
			if args[i], err = integerAsDecimal(args[i]); err != nil {
				return nil, nil, typeErr(c, "%v", err)
			}
		}
		t, err := arithResultType(Modulo, args[0].Type(), args[1].Type())
		if err != nil {
			return nil, nil, typeErr(c, "%v", err)
		}
		return args, t, nil
	}
	return b.toCommonArith(&Call{Name: c.Name, Args: args}, args)
}

func commonNumeric(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kNumeric)
	if err != nil {
		return nil, nil, err
	}
	c2 := &Call{Name: c.Name, Args: args}
	return b.toCommonArith(c2, args)
}

// toCommonArith brings numeric arguments to the type Spark's arithmetic
// gives them: the wider type; decimals widen to hold both.
func (b *binder) toCommonArith(c *Call, args []Expr) ([]Expr, actions.DataType, error) {
	out, t, err := b.toCommon(c, args, 0)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		t = actions.TypeInteger
		for i := range out {
			out[i] = typedNull(out[i], t)
		}
	}
	return out, t, nil
}

func commonIntegral(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kIntegral)
	if err != nil {
		return nil, nil, err
	}
	return b.toCommon(c, args, 0)
}

func shiftType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kIntegral, kInt)
	if err != nil {
		return nil, nil, err
	}
	t := args[0].Type()
	if t != actions.TypeLong {
		if args[0], err = b.coerceArg(&Call{Name: c.Name, Args: args}, 0, kInt); err != nil {
			return nil, nil, err
		}
		t = actions.TypeInteger
	}
	return args, t, nil
}

func shift(f func(v int64, n uint, width int) int64) func(*callCtx, []any) (any, error) {
	return func(x *callCtx, a []any) (any, error) {
		v, _ := asInt64(a[0])
		n := int64(a[1].(int32))
		if x.call.typ == actions.TypeLong {
			return f(v, uint(n&63), 64), nil
		}
		return int32(f(int64(int32(v)), uint(n&31), 32)), nil
	}
}

func bitwise(f func(a, b int64) int64) func(*callCtx, []any) (any, error) {
	return func(x *callCtx, a []any) (any, error) {
		p, _ := asInt64(a[0])
		q, _ := asInt64(a[1])
		return makeIntegral(f(p, q), x.call.typ), nil
	}
}

func isNegative(v any) bool {
	switch x := v.(type) {
	case float32:
		return x < 0
	case float64:
		return x < 0
	case actions.Decimal:
		return x.Unscaled.Sign() < 0
	}
	i, _ := asInt64(v)
	return i < 0
}

func absValue(v any) (any, error) {
	if isNegative(v) {
		return negValue(v)
	}
	if f, ok := v.(float64); ok {
		return math.Abs(f), nil
	}
	if f, ok := v.(float32); ok {
		return float32(math.Abs(float64(f))), nil
	}
	return v, nil
}

// roundingType types ceil, floor, round and bround: with ceilFloor, a
// double or integer becomes a long and a decimal(p,s) with scale 0
// decimal(p-s+1, 0); round keeps the type, decimals with the scale
// asked for.
func roundingType(ceilFloor bool) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		args, err := b.coerceArgs(c, kNumeric, kInt)
		if err != nil {
			return nil, nil, err
		}
		scale := 0
		if len(args) == 2 {
			lit, ok := args[1].(*Literal)
			if !ok || lit.Value == nil {
				return nil, nil, typeErr(c, "the scale of %s must be a constant integer", c.Name)
			}
			scale = int(lit.Value.(int32))
		}
		t := args[0].Type()
		if ceilFloor && len(args) == 2 && isFloating(t) {
			// ceil and floor to a scale read a float as DECIMAL(14,7)
			// and a double as DECIMAL(30,15), as Spark does.
			to := &actions.DecimalType{Precision: 30, Scale: 15}
			if t == actions.TypeFloat {
				to = &actions.DecimalType{Precision: 14, Scale: 7}
			}
			args[0], t = &Cast{X: args[0], To: to}, to
		}
		if dt, ok := t.(*actions.DecimalType); ok {
			if ceilFloor && len(args) == 1 && dt.Scale == 0 {
				return args, dt, nil // ceil and floor keep an integral decimal's type, as Spark
			}
			intDigits := dt.Precision - dt.Scale + 1
			if scale < 0 {
				return args, &actions.DecimalType{Precision: min(max(intDigits, -scale+1), actions.MaxDecimalPrecision)}, nil
			}
			s := min(dt.Scale, scale)
			return args, &actions.DecimalType{Precision: min(intDigits+s, actions.MaxDecimalPrecision), Scale: s}, nil
		}
		if ceilFloor {
			if len(args) == 2 {
				return args, &actions.DecimalType{Precision: min(max(integralAsDecimal(t).Precision+1, -scale+1), actions.MaxDecimalPrecision)}, nil
			}
			return args, actions.TypeLong, nil
		}
		return args, t, nil
	}
}

// roundWith rounds a number to the scale of argument 2 (0 when absent)
// with mode, giving the call's type.
func roundWith(mode big.RoundingMode) func(*callCtx, []any) (any, error) {
	return func(x *callCtx, a []any) (any, error) {
		scale := 0
		if len(a) == 2 {
			scale = int(a[1].(int32))
		}
		rt := x.call.typ
		switch v := a[0].(type) {
		case float64, float32:
			f, _ := castToFloat(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				if rt == actions.TypeLong {
					return castFloatToLongSaturating(f), nil
				}
				return castValue(f, rt)
			}
			bitsize := 64
			if _, ok := v.(float32); ok {
				bitsize = 32
			}
			r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bitsize))
			q := roundRat(r, scale, mode)
			if rt == actions.TypeLong {
				fl, _ := q.Float64()
				if !q.IsInt() || !q.Num().IsInt64() {
					return castFloatToLongSaturating(fl), nil
				}
				return q.Num().Int64(), nil
			}
			if dt, ok := rt.(*actions.DecimalType); ok {
				return castToDecimal(q.FloatString(max(scale, 0)), dt)
			}
			fl, _ := q.Float64()
			if rt == actions.TypeFloat {
				return float32(fl), nil
			}
			return fl, nil
		}
		r, _ := toRat(a[0])
		q := roundRat(r, scale, mode)
		if dt, ok := rt.(*actions.DecimalType); ok {
			u, _ := ratToUnscaled(q, dt.Scale)
			if !fitsPrecision(u, dt.Precision) {
				return nil, fmt.Errorf("result does not fit %s: %w", dt, errOverflow)
			}
			return actions.Decimal{Unscaled: u, Scale: dt.Scale}, nil
		}
		if !q.IsInt() || !q.Num().IsInt64() {
			return nil, fmt.Errorf("result out of range for %s: %w", rt, errOverflow)
		}
		lo, hi := intRange(rt)
		i := q.Num().Int64()
		if i < lo || i > hi {
			return nil, fmt.Errorf("result out of range for %s: %w", rt, errOverflow)
		}
		return makeIntegral(i, rt), nil
	}
}

// roundRat rounds r to scale decimal places (negative: tens, hundreds).
func roundRat(r *big.Rat, scale int, mode big.RoundingMode) *big.Rat {
	var m *big.Rat
	if scale >= 0 {
		m = new(big.Rat).SetInt(pow10(scale))
	} else {
		m = new(big.Rat).SetFrac(big.NewInt(1), pow10(-scale))
	}
	v := new(big.Rat).Mul(r, m)
	q, rem := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
		cmp := twice.Cmp(v.Denom())
		up := false // away from zero
		switch mode {
		case big.ToPositiveInf:
			up = v.Sign() > 0
		case big.ToNegativeInf:
			up = v.Sign() < 0
		case big.ToNearestAway:
			up = cmp >= 0
		case big.ToNearestEven:
			up = cmp > 0 || cmp == 0 && q.Bit(0) == 1
		}
		if up {
			if v.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return new(big.Rat).Quo(new(big.Rat).SetInt(q), m)
}

// castFloatToLongSaturating is Scala's Double.toLong: NaN is 0, values
// beyond the range are the range's bounds.
func castFloatToLongSaturating(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= 9.223372036854775807e18:
		return math.MaxInt64
	case f <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(f)
}

// convBase converts a number in text from one base to another as
// Spark's conv (NumberConverter): digits are read as an unsigned 64-bit
// value until the first invalid one, a negative base asks for a signed
// result. Blank text is NULL; text with no valid digit at the start
// (conv('zz', 10, 2), conv('-', 16, 10)) is the value 0.
func convBase(s string, from, to int) any {
	if from < 2 || from > 36 || to < -36 || to > 36 || (to > -2 && to < 2) {
		return nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil // blank text is NULL; text with no valid digit is 0
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var v uint64
	overflow := false
	for _, r := range strings.ToLower(s) {
		d := -1
		switch {
		case r >= '0' && r <= '9':
			d = int(r - '0')
		case r >= 'a' && r <= 'z':
			d = int(r-'a') + 10
		}
		if d < 0 || d >= from {
			break
		}
		hi, lo := mbits.Mul64(v, uint64(from))
		sum, carry := mbits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			overflow = true
		}
		v = sum
	}
	if overflow {
		v = math.MaxUint64
	}
	if neg {
		if to < 0 {
			return "-" + strings.ToUpper(strconv.FormatUint(v, -to))
		}
		v = -v
	}
	if to < 0 {
		sv := int64(v)
		if sv < 0 {
			return "-" + strings.ToUpper(strconv.FormatUint(uint64(-sv), -to))
		}
		return strings.ToUpper(strconv.FormatUint(v, -to))
	}
	return strings.ToUpper(strconv.FormatUint(v, to))
}
