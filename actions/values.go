package actions

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Typed scalar values. Partition values, literals in predicates and stats
// bounds decode to these Go types, by Delta type:
//
//	boolean       bool
//	byte          int8
//	short         int16
//	integer       int32
//	long          int64
//	float         float32
//	double        float64
//	string        string
//	binary        []byte
//	date          Date
//	timestamp     Timestamp
//	timestamp_ntz TimestampNTZ
//	decimal(p,s)  Decimal
//
// and nil for null.

// Date is days since 1970-01-01.
type Date int32

// Timestamp is microseconds since 1970-01-01T00:00:00Z.
type Timestamp int64

// TimestampNTZ is microseconds since 1970-01-01T00:00:00 in no time zone.
type TimestampNTZ int64

// Decimal is Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// String returns the decimal in plain notation with exactly Scale
// fractional digits: "1.50", "-0.05", "12" (Scale 0). A nil Unscaled is
// zero.
func (d Decimal) String() string {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	digits := new(big.Int).Abs(u).String()
	neg := u.Sign() < 0
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case d.Scale <= 0:
		b.WriteString(digits)
		if u.Sign() != 0 {
			b.WriteString(strings.Repeat("0", -d.Scale))
		}
	case len(digits) <= d.Scale:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", d.Scale-len(digits)))
		b.WriteString(digits)
	default:
		b.WriteString(digits[:len(digits)-d.Scale])
		b.WriteByte('.')
		b.WriteString(digits[len(digits)-d.Scale:])
	}
	return b.String()
}

// Cmp compares the values of d and o, whatever their scales: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	a, b := d.unscaled(), o.unscaled()
	switch {
	case d.Scale < o.Scale:
		a = new(big.Int).Mul(a, pow10(o.Scale-d.Scale))
	case d.Scale > o.Scale:
		b = new(big.Int).Mul(b, pow10(d.Scale-o.Scale))
	}
	return a.Cmp(b)
}

// Rescale returns d with the given scale and the same value. It fails when
// that would drop non-zero digits.
func (d Decimal) Rescale(scale int) (Decimal, error) {
	u := d.unscaled()
	switch {
	case scale > d.Scale:
		if scale-d.Scale > maxScaleShift {
			return Decimal{}, fmt.Errorf("actions: decimal %s: scale %d is out of range", d, scale)
		}
		u = new(big.Int).Mul(u, pow10(scale-d.Scale))
	case scale < d.Scale:
		if d.Scale-scale > maxScaleShift {
			if u.Sign() == 0 {
				return Decimal{Unscaled: new(big.Int), Scale: scale}, nil
			}
			return Decimal{}, fmt.Errorf("actions: decimal %s has more than %d fractional digits", d, scale)
		}
		q, r := new(big.Int).QuoRem(u, pow10(d.Scale-scale), new(big.Int))
		if r.Sign() != 0 {
			return Decimal{}, fmt.Errorf("actions: decimal %s has more than %d fractional digits", d, scale)
		}
		u = q
	default:
		u = new(big.Int).Set(u)
	}
	return Decimal{Unscaled: u, Scale: scale}, nil
}

// Fits reports whether d, at its scale, has at most precision digits.
func (d Decimal) Fits(precision int) bool {
	u := d.unscaled()
	return u.Sign() == 0 || len(new(big.Int).Abs(u).String()) <= precision
}

func (d Decimal) unscaled() *big.Int {
	if d.Unscaled == nil {
		return new(big.Int)
	}
	return d.Unscaled
}

// maxScaleShift bounds rescaling, so that a hostile exponent cannot ask
// for a power of ten with a billion digits.
const maxScaleShift = 1000

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// ParseDecimal parses s as a value of decimal(precision, scale): an
// optional sign, digits with an optional point, and an optional exponent
// ("1.5", "-.25", "1E-7", "12.30e2"), as Java's BigDecimal prints them. The
// result has the given scale. It fails when s has non-zero digits past the
// scale or more than precision digits in all.
func ParseDecimal(s string, precision, scale int) (Decimal, error) {
	dt := &DecimalType{Precision: precision, Scale: scale}
	if err := dt.validate(); err != nil {
		return Decimal{}, fmt.Errorf("actions: %w", err)
	}
	d, ok := parseDecimalText(s)
	if !ok {
		return Decimal{}, fmt.Errorf("actions: bad decimal %q", s)
	}
	if d.Unscaled.Sign() == 0 {
		return Decimal{Unscaled: d.Unscaled, Scale: scale}, nil
	}
	// A value with k digits before its scale has at least k+1 digits at
	// a larger scale; refuse it before computing a huge power of ten.
	if scale-d.Scale > precision {
		return Decimal{}, fmt.Errorf("actions: decimal %q does not fit %s: too many digits", s, dt)
	}
	r, err := d.Rescale(scale)
	if err != nil {
		return Decimal{}, fmt.Errorf("actions: decimal %q does not fit %s: too many fractional digits", s, dt)
	}
	if !r.Fits(precision) {
		return Decimal{}, fmt.Errorf("actions: decimal %q does not fit %s: too many digits", s, dt)
	}
	return r, nil
}

// parseDecimalText parses a decimal literal at its natural scale.
func parseDecimalText(s string) (Decimal, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	frac := 0
	seenPoint, seenDigit := false, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
			if len(digits) > 0 || c != '0' {
				digits = append(digits, c)
			}
			if seenPoint {
				frac++
			}
		case c == '.' && !seenPoint:
			seenPoint = true
		default:
			goto exponent
		}
	}
exponent:
	if !seenDigit {
		return Decimal{}, false
	}
	exp := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Decimal{}, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return Decimal{}, false
		}
		for ; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return Decimal{}, false
			}
			if exp < 1_000_000 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	u := new(big.Int)
	if len(digits) > 0 {
		if len(digits) > 10_000 {
			return Decimal{}, false
		}
		u.SetString(string(digits), 10)
	}
	if neg {
		u.Neg(u)
	}
	return Decimal{Unscaled: u, Scale: frac - exp}, true
}

// CompareValues compares two non-null values of the same Delta type, as
// the Go types above hold them: -1 if a < b, 0 if equal, +1 if a > b.
// Strings and binaries compare by bytes (Spark's order), false < true,
// decimals by value whatever their scales. Floats follow Spark: NaN equals
// NaN and is greater than every other value, and -0 equals 0. Values of
// different Go types, or nil, are an error.
func CompareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, nil
			case !x:
				return -1, nil
			}
			return 1, nil
		}
	case int8:
		if y, ok := b.(int8); ok {
			return cmp.Compare(x, y), nil
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmp.Compare(x, y), nil
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, y), nil
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), nil
		}
	case float32:
		if y, ok := b.(float32); ok {
			return CompareFloat(float64(x), float64(y)), nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return CompareFloat(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case Date:
		if y, ok := b.(Date); ok {
			return cmp.Compare(x, y), nil
		}
	case Timestamp:
		if y, ok := b.(Timestamp); ok {
			return cmp.Compare(x, y), nil
		}
	case TimestampNTZ:
		if y, ok := b.(TimestampNTZ); ok {
			return cmp.Compare(x, y), nil
		}
	case Decimal:
		if y, ok := b.(Decimal); ok {
			return x.Cmp(y), nil
		}
	case nil:
		return 0, errors.New("actions: compare: null value")
	default:
		return 0, fmt.Errorf("actions: compare: unsupported value type %T", a)
	}
	if b == nil {
		return 0, errors.New("actions: compare: null value")
	}
	return 0, fmt.Errorf("actions: compare: %T with %T", a, b)
}

// CompareFloat orders floats as Spark does: NaN last and equal to itself,
// -0 equal to 0. Stats, pruning and sorting order floats by it.
func CompareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// ParseStatValue converts a min or max value of decoded add.stats (see
// Stats) to the Go value of type t. Numbers may be json.Number or
// float64; dates are "YYYY-MM-DD"; timestamps are ISO-8601 strings with a
// zone or offset ("2021-10-01T08:09:20.000Z", "...000-07:00"), read as
// UTC when they have none; timestamp_ntz strings have no zone; float NaN
// and infinities may be the strings "NaN", "Infinity", "-Infinity";
// decimals may be numbers or strings. nil gives nil.
//
// Stats are not exact for every type: Spark truncates strings to a prefix
// and timestamps to milliseconds, so a max is not always an upper bound
// of the column's values. The caller that prunes must allow for that.
func ParseStatValue(t DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	out, err := parseStatValue(t, v)
	if err != nil {
		return nil, fmt.Errorf("actions: stats value %v for type %s: %w", v, typeName(t), err)
	}
	return out, nil
}

func typeName(t DataType) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}

func parseStatValue(t DataType, v any) (any, error) {
	text, isText := v.(string)
	var num string
	switch x := v.(type) {
	case json.Number:
		num = string(x)
	case float64:
		num = strconv.FormatFloat(x, 'g', -1, 64)
	}
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case TypeString:
			if isText {
				return text, nil
			}
		case TypeBinary:
			if isText {
				return []byte(text), nil
			}
		case TypeBoolean:
			if b, ok := v.(bool); ok {
				return b, nil
			}
		case TypeByte, TypeShort, TypeInteger, TypeLong:
			if num != "" {
				return parseIntegral(t, num)
			}
		case TypeFloat, TypeDouble:
			if num != "" || isText {
				if num == "" {
					num = text
				}
				return parseFloating(t, num)
			}
		case TypeDate:
			if isText {
				return ParseDate(text)
			}
		case TypeTimestamp:
			if isText {
				return ParseTimestamp(text)
			}
		case TypeTimestampNTZ:
			if isText {
				return ParseTimestampNTZ(text)
			}
		default:
			return nil, errors.New("no typed stats for this type")
		}
	case *DecimalType:
		if isText {
			num = text
		}
		if num != "" {
			return ParseDecimal(num, t.Precision, t.Scale)
		}
	default:
		return nil, errors.New("no typed stats for this type")
	}
	return nil, fmt.Errorf("unexpected JSON %s", jsonKind(v))
}

// parseIntegral parses a whole number of an integral type, boxed as the
// type's Go value.
func parseIntegral(t PrimitiveType, s string) (any, error) {
	n, err := ParseStatInt(t, s)
	if err != nil {
		return nil, err
	}
	switch t {
	case TypeByte:
		return int8(n), nil
	case TypeShort:
		return int16(n), nil
	case TypeInteger:
		return int32(n), nil
	}
	return n, nil
}

// ParseStatInt parses a stats bound of an integral type t (byte, short,
// integer or long) given as JSON number text, as ParseStatValue does
// without boxing it: a float's spelling of a whole number ("1e3", "5.0")
// is accepted; a value outside t's range is an error.
func ParseStatInt(t PrimitiveType, s string) (int64, error) {
	bits := intBits(t)
	if bits == 0 {
		return 0, fmt.Errorf("%s is not an integral type", t)
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		d, ok := parseDecimalText(s)
		if !ok {
			return 0, fmt.Errorf("bad %s %q", t, s)
		}
		r, rerr := d.Rescale(0)
		if rerr != nil || !r.Unscaled.IsInt64() {
			return 0, fmt.Errorf("bad %s %q", t, s)
		}
		n = r.Unscaled.Int64()
		if n != int64(int64(n)<<(64-bits)>>(64-bits)) {
			return 0, fmt.Errorf("%s %q is out of range", t, s)
		}
	}
	return n, nil
}

func intBits(t PrimitiveType) int {
	switch t {
	case TypeByte:
		return 8
	case TypeShort:
		return 16
	case TypeInteger:
		return 32
	case TypeLong:
		return 64
	}
	return 0
}

// parseFloating parses a float or double, boxed as the type's Go value.
func parseFloating(t PrimitiveType, s string) (any, error) {
	f, err := ParseStatFloat(t, s)
	if err != nil {
		return nil, err
	}
	if t == TypeFloat {
		return float32(f), nil
	}
	return f, nil
}

// ParseStatFloat parses a stats bound of type float or double given as
// JSON number text or as one of Java's spellings of the special values
// ("NaN", "Infinity", "-Infinity"), as ParseStatValue does without boxing
// it. A float is rounded to float32 (and returned widened).
func ParseStatFloat(t PrimitiveType, s string) (float64, error) {
	bits := 64
	if t == TypeFloat {
		bits = 32
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return 0, fmt.Errorf("bad %s %q", t, s)
		}
		// Out of range: ParseFloat gives ±Inf, as Java does.
	}
	return f, nil
}
