package input

import (
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Spark's CSV schema inference (CSVInferSchema with inferSchema=true and
// its defaults: nullValue "", preferDate true with the strict yyyy-MM-dd
// date format, timestamps as the session's TIMESTAMP_LTZ, prefersDecimal
// false). A column's type is folded over its values in file order: each
// value is tried from the type so far onwards along
//
//	integer -> long -> decimal(p,0) -> double -> date -> timestamp -> boolean -> string
//
// and the result merged with the type so far (csvCompatible); an empty
// field (null) leaves the type as it is, and a column of nulls only is a
// string. The order matters as it does in Spark: "2024" after dates makes
// a timestamp column, before them an integer and then a string one.
//
// Where lakelog is narrower than Spark, the value stays a string: a year
// or a year and month alone ("2024-01") and a time of day alone, which
// Spark reads as timestamps; Java's float suffixes ("1.5d") and
// hexadecimal floats, which Spark reads as doubles.

// inferCSVField is Spark's inferField: the type of a column whose values
// so far have type so (nil: none yet) after the value f.
func inferCSVField(so actions.DataType, f string) actions.DataType {
	if f == "" {
		return so
	}
	var t actions.DataType
	switch x := so.(type) {
	case nil:
		t = csvTryInteger(f)
	case *actions.DecimalType:
		t = csvTryDecimal(f)
	case actions.PrimitiveType:
		switch x {
		case actions.TypeInteger:
			t = csvTryInteger(f)
		case actions.TypeLong:
			t = csvTryLong(f)
		case actions.TypeDouble:
			t = csvTryDouble(f)
		case actions.TypeDate:
			t = csvTryDate(f)
		case actions.TypeTimestamp:
			t = csvTryTimestamp(f)
		case actions.TypeBoolean:
			t = csvTryBoolean(f)
		default:
			return actions.TypeString
		}
	default:
		return actions.TypeString
	}
	if u, ok := csvCompatible(so, t); ok {
		return u
	}
	return actions.TypeString
}

func csvTryInteger(f string) actions.DataType {
	if isJavaInt(f, 32) {
		return actions.TypeInteger
	}
	return csvTryLong(f)
}

func csvTryLong(f string) actions.DataType {
	if isJavaInt(f, 64) {
		return actions.TypeLong
	}
	return csvTryDecimal(f)
}

// csvTryDecimal: Spark takes a decimal only for a value without a
// fractional part (scale 0) of at most 38 digits; one with a negative
// scale (1e3) is refused by DecimalType and tried as a double.
func csvTryDecimal(f string) actions.DataType {
	if p, s, ok := javaBigDecimal(f); ok && s == 0 && p <= 38 {
		return &actions.DecimalType{Precision: p, Scale: 0}
	}
	return csvTryDouble(f)
}

func csvTryDouble(f string) actions.DataType {
	if isJavaDouble(f) || f == "NaN" || f == "Inf" || f == "-Inf" {
		return actions.TypeDouble
	}
	return csvTryDate(f)
}

// csvTryDate: the strict yyyy-MM-dd (two-digit month and day), else a
// timestamp.
func csvTryDate(f string) actions.DataType {
	if len(f) == 10 && f[4] == '-' && f[7] == '-' && allDigits(f[:4]) && allDigits(f[5:7]) && allDigits(f[8:]) {
		if _, err := actions.ParseDate(f); err == nil {
			return actions.TypeDate
		}
	}
	return csvTryTimestamp(f)
}

func csvTryTimestamp(f string) actions.DataType {
	if _, err := actions.ParseTimestamp(strings.TrimSpace(f)); err == nil {
		return actions.TypeTimestamp
	}
	return csvTryBoolean(f)
}

func csvTryBoolean(f string) actions.DataType {
	if strings.EqualFold(f, "true") || strings.EqualFold(f, "false") {
		return actions.TypeBoolean
	}
	return actions.TypeString
}

// csvCompatible is Spark's CSVInferSchema.compatibleType: the tightest
// common type (numbers widen, a date and a timestamp make a timestamp),
// else the CSV rules: string absorbs anything, integers and decimals make
// a decimal wide enough for both (a double past 38 digits), a double and
// a decimal a double. ok is false where Spark has no common type (a
// boolean and a number); the column is then a string.
func csvCompatible(a, b actions.DataType) (actions.DataType, bool) {
	switch {
	case a == nil:
		return b, true
	case b == nil:
		return a, true
	case a.String() == b.String():
		return a, true
	case a == actions.TypeString || b == actions.TypeString:
		return actions.TypeString, true
	}
	_, aDec := a.(*actions.DecimalType)
	_, bDec := b.(*actions.DecimalType)
	if aDec || bDec {
		da, aok := asDecimal(a)
		db, bok := asDecimal(b)
		switch {
		case aok && bok:
			scale := max(da.Scale, db.Scale)
			rng := max(da.Precision-da.Scale, db.Precision-db.Scale)
			if rng+scale > 38 {
				return actions.TypeDouble, true
			}
			return &actions.DecimalType{Precision: rng + scale, Scale: scale}, true
		case a == actions.TypeDouble || b == actions.TypeDouble:
			return actions.TypeDouble, true
		}
		return nil, false
	}
	rank := map[actions.DataType]int{actions.TypeByte: 1, actions.TypeShort: 2, actions.TypeInteger: 3, actions.TypeLong: 4, actions.TypeFloat: 5, actions.TypeDouble: 6}
	if ra, rb := rank[a], rank[b]; ra > 0 && rb > 0 {
		if ra > 4 || rb > 4 {
			return actions.TypeDouble, true
		}
		if ra > rb {
			return a, true
		}
		return b, true
	}
	if (a == actions.TypeDate && b == actions.TypeTimestamp) || (a == actions.TypeTimestamp && b == actions.TypeDate) {
		return actions.TypeTimestamp, true
	}
	return nil, false
}

// asDecimal is t as a decimal: a decimal itself, or an integer type as
// the decimal that holds it (Spark's DecimalType.forType).
func asDecimal(t actions.DataType) (*actions.DecimalType, bool) {
	if d, ok := t.(*actions.DecimalType); ok {
		return d, true
	}
	digits, ok := map[actions.DataType]int{actions.TypeByte: 3, actions.TypeShort: 5, actions.TypeInteger: 10, actions.TypeLong: 20}[t]
	return &actions.DecimalType{Precision: digits}, ok
}

// isJavaInt reports whether Java's Integer.parseInt (bits 32) or
// Long.parseLong (64) accepts f: an optional sign and ASCII digits, in
// range; no spaces.
func isJavaInt(f string, bits int) bool {
	digits := strings.TrimLeft(f, "+-")
	if len(f)-len(digits) > 1 || !allDigits(digits) || digits == "" {
		return false
	}
	_, err := strconv.ParseInt(f, 10, bits)
	return err == nil
}

// javaBigDecimal is the precision and scale of new java.math.BigDecimal(f)
// ([+-]digits[.digits][e[+-]digits], no spaces); ok is false when it
// would throw.
func javaBigDecimal(f string) (precision, scale int, ok bool) {
	s := f
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	e := 0
	if hasExp {
		n, err := strconv.Atoi(exp) // a sign, digits
		if err != nil || strings.HasPrefix(exp, "+-") {
			return 0, 0, false
		}
		e = n
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if (intPart == "" && frac == "") || !allDigits(intPart) || !allDigits(frac) {
		return 0, 0, false
	}
	unscaled := strings.TrimLeft(intPart+frac, "0")
	precision = max(len(unscaled), 1)
	return precision, len(frac) - e, true
}

// isJavaDouble reports whether Java's Double.parseDouble accepts f in its
// decimal forms: surrounding spaces and control characters, a sign,
// digits with an optional point and exponent, NaN, Infinity.
func isJavaDouble(f string) bool {
	s := strings.TrimFunc(f, func(r rune) bool { return r <= ' ' })
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "NaN" || s == "Infinity" {
		return true
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if exp == "" || !allDigits(exp) {
			return false
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	return (intPart != "" || frac != "") && allDigits(intPart) && allDigits(frac)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
