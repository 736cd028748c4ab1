package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Spark's ANSI interval types. They type expressions only (INTERVAL
// literals, timestamp differences): no table column holds one. A
// year-month interval's value is an actions.Interval with Months set; a
// day-time interval's one with Micros set (days included).

// intervalField is one field of an interval type, coarsest first.
type intervalField int

const (
	fieldYear intervalField = iota
	fieldMonth
	fieldDay
	fieldHour
	fieldMinute
	fieldSecond
)

var intervalFieldNames = [...]string{"year", "month", "day", "hour", "minute", "second"}

// intervalType is the type of intervals from field start to end:
// "interval day", "interval day to second", "interval year to month".
func intervalType(start, end intervalField) actions.PrimitiveType {
	if start == end {
		return actions.PrimitiveType("interval " + intervalFieldNames[start])
	}
	return actions.PrimitiveType("interval " + intervalFieldNames[start] + " to " + intervalFieldNames[end])
}

// intervalFields reads an interval type's fields; ok is false for other
// types.
func intervalFields(t actions.DataType) (start, end intervalField, ok bool) {
	p, isPrim := t.(actions.PrimitiveType)
	if !isPrim || !strings.HasPrefix(string(p), "interval ") {
		return 0, 0, false
	}
	a, b, to := strings.Cut(strings.TrimPrefix(string(p), "interval "), " to ")
	find := func(s string) (intervalField, bool) {
		for i, n := range intervalFieldNames {
			if n == s {
				return intervalField(i), true
			}
		}
		return 0, false
	}
	s, ok1 := find(a)
	e := s
	ok2 := true
	if to {
		e, ok2 = find(b)
	}
	return s, e, ok1 && ok2
}

func isInterval(t actions.DataType) bool { _, _, ok := intervalFields(t); return ok }

func isYearMonth(t actions.DataType) bool {
	s, _, ok := intervalFields(t)
	return ok && s <= fieldMonth
}

func isDayTime(t actions.DataType) bool {
	s, _, ok := intervalFields(t)
	return ok && s >= fieldDay
}

const (
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
)

// intervalUnit maps a unit word of a multi-unit interval literal to its
// field and its length in months or microseconds.
func intervalUnit(word string) (f intervalField, months int64, micros int64, ok bool) {
	w := strings.ToLower(word)
	w = strings.TrimSuffix(w, "s")
	switch w {
	case "year":
		return fieldYear, 12, 0, true
	case "month":
		return fieldMonth, 1, 0, true
	case "week":
		return fieldDay, 0, 7 * microsPerDay, true
	case "day":
		return fieldDay, 0, microsPerDay, true
	case "hour":
		return fieldHour, 0, microsPerHour, true
	case "minute":
		return fieldMinute, 0, microsPerMinute, true
	case "second":
		return fieldSecond, 0, microsPerSecond, true
	case "millisecond":
		return fieldSecond, 0, 1000, true
	case "microsecond":
		return fieldSecond, 0, 1, true
	}
	return 0, 0, 0, false
}

// intervalTerm is one "N unit" of a multi-unit interval literal.
type intervalTerm struct {
	num  string // the count as written, with its sign
	unit string
}

// multiUnitInterval builds the literal of INTERVAL n1 unit1 n2 unit2 ...:
// a year-month interval when every unit is years or months, a day-time
// interval when every unit is weeks to microseconds; mixing both is an
// error, as in Spark.
func multiUnitInterval(terms []intervalTerm) (*Literal, error) {
	var months, micros int64
	start, end := intervalField(-1), intervalField(-1)
	for _, t := range terms {
		f, m, us, ok := intervalUnit(t.unit)
		if !ok {
			return nil, fmt.Errorf("unknown interval unit %q (want YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND)", t.unit)
		}
		if start < 0 || f < start {
			start = f
		}
		if f > end {
			end = f
		}
		num := strings.TrimSpace(t.num)
		if strings.Contains(num, ".") {
			if us != microsPerSecond && us != 1000 {
				return nil, fmt.Errorf("interval %s %s: only seconds and milliseconds take a fraction", num, t.unit)
			}
			r, ok := parseRatText(num)
			if !ok {
				return nil, fmt.Errorf("interval count %q is not a number", num)
			}
			u, exact := ratToUnscaled(r, 6)
			if !u.IsInt64() || (!exact && us == microsPerSecond) {
				return nil, fmt.Errorf("interval %s %s: more than 6 fractional digits of a second", num, t.unit)
			}
			v := u.Int64()
			if us == 1000 {
				v /= 1000
			}
			var okAdd bool
			if micros, okAdd = addInt64(micros, v); !okAdd {
				return nil, fmt.Errorf("interval out of range")
			}
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("interval count %q is not a whole number", num)
		}
		var ok1, ok2 bool
		var a, b int64
		a, ok1 = mulInt64(n, m)
		b, ok2 = mulInt64(n, us)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("interval out of range")
		}
		if months, ok1 = addInt64(months, a); !ok1 {
			return nil, fmt.Errorf("interval out of range")
		}
		if micros, ok2 = addInt64(micros, b); !ok2 {
			return nil, fmt.Errorf("interval out of range")
		}
	}
	if start <= fieldMonth && end >= fieldDay {
		return nil, fmt.Errorf("an interval cannot mix years or months with days or smaller units: write two intervals and add them")
	}
	if start <= fieldMonth {
		if months > math.MaxInt32 || months < math.MinInt32 {
			return nil, fmt.Errorf("interval out of range")
		}
		return &Literal{Value: actions.Interval{Months: int32(months)}, DataType: intervalType(start, end)}, nil
	}
	return &Literal{Value: actions.Interval{Micros: micros}, DataType: intervalType(start, end)}, nil
}

// qualifiedInterval reads INTERVAL 'text' START [TO END], Spark's ANSI
// form: '1-2' YEAR TO MONTH, '3' DAY, '1 02:03:04.5' DAY TO SECOND,
// '10:30' HOUR TO MINUTE...
func qualifiedInterval(text string, start, end intervalField) (*Literal, error) {
	s := strings.TrimSpace(text)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = strings.TrimSpace(s[1:])
	}
	bad := func() (*Literal, error) {
		return nil, fmt.Errorf("interval '%s' does not match %s", text, strings.ToUpper(string(intervalType(start, end))))
	}
	if start <= fieldMonth {
		if end > fieldMonth {
			return bad()
		}
		var months int64
		if start == end {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return bad()
			}
			months = n
			if start == fieldYear {
				months *= 12
			}
		} else {
			y, m, ok := strings.Cut(s, "-")
			yn, err1 := strconv.ParseInt(y, 10, 32)
			mn, err2 := strconv.ParseInt(m, 10, 32)
			if !ok || err1 != nil || err2 != nil || mn > 11 || mn < 0 {
				return bad()
			}
			months = yn*12 + mn
		}
		if neg {
			months = -months
		}
		if months > math.MaxInt32 || months < math.MinInt32 {
			return bad()
		}
		return &Literal{Value: actions.Interval{Months: int32(months)}, DataType: intervalType(start, end)}, nil
	}
	if end < start {
		return bad()
	}
	// Split into the fields start..end: day is separated by a space, the
	// others by colons; seconds may have a fraction.
	var parts []string
	rest := s
	if start == fieldDay && end > fieldDay {
		d, r, ok := strings.Cut(rest, " ")
		if !ok {
			return bad()
		}
		parts = append(parts, d)
		rest = strings.TrimSpace(r)
		parts = append(parts, strings.Split(rest, ":")...)
	} else {
		parts = strings.Split(rest, ":")
	}
	if len(parts) != int(end-start)+1 {
		return bad()
	}
	unit := [...]int64{fieldDay: microsPerDay, fieldHour: microsPerHour, fieldMinute: microsPerMinute, fieldSecond: microsPerSecond}
	var micros int64
	for i, p := range parts {
		f := start + intervalField(i)
		if f == fieldSecond && strings.Contains(p, ".") {
			r, ok := parseRatText(p)
			if !ok {
				return bad()
			}
			u, exact := ratToUnscaled(r, 6)
			if !exact || !u.IsInt64() {
				return bad()
			}
			micros += u.Int64()
			continue
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		if i > 0 && ((f == fieldHour && n > 23) || (f >= fieldMinute && n > 59)) {
			return bad()
		}
		v, ok := mulInt64(n, unit[f])
		if !ok {
			return bad()
		}
		if micros, ok = addInt64(micros, v); !ok {
			return bad()
		}
	}
	if neg {
		micros = -micros
	}
	return &Literal{Value: actions.Interval{Micros: micros}, DataType: intervalType(start, end)}, nil
}

func parseRatText(s string) (r *big.Rat, ok bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	d, err := parseDecimalText(s)
	if err != nil {
		return nil, false
	}
	if neg {
		d.Unscaled.Neg(d.Unscaled)
	}
	return new(big.Rat).SetFrac(d.Unscaled, pow10(d.Scale)), true
}

// formatInterval prints an interval value as Spark casts one to string:
// INTERVAL '1-2' YEAR TO MONTH, INTERVAL '3' DAY, INTERVAL '0 01:30:00'
// DAY TO SECOND.
func formatInterval(iv actions.Interval, t actions.DataType) string {
	start, end, ok := intervalFields(t)
	if !ok {
		start, end = fieldDay, fieldSecond
		if iv.Months != 0 {
			start, end = fieldYear, fieldMonth
		}
	}
	qual := strings.ToUpper(intervalFieldNames[start])
	if end != start {
		qual += " TO " + strings.ToUpper(intervalFieldNames[end])
	}
	if start <= fieldMonth {
		m := int64(iv.Months)
		sign := ""
		if m < 0 {
			sign, m = "-", -m
		}
		var body string
		switch {
		case start == fieldYear && end == fieldMonth:
			body = fmt.Sprintf("%s%d-%d", sign, m/12, m%12)
		case start == fieldYear:
			body = fmt.Sprintf("%s%d", sign, m/12)
		default:
			body = fmt.Sprintf("%s%d", sign, m)
		}
		return "INTERVAL '" + body + "' " + qual
	}
	us := iv.Micros
	sign := ""
	var u uint64
	if us < 0 {
		sign = "-"
		u = uint64(-(us + 1)) + 1
	} else {
		u = uint64(us)
	}
	unit := [...]uint64{fieldDay: microsPerDay, fieldHour: microsPerHour, fieldMinute: microsPerMinute, fieldSecond: microsPerSecond}
	var b strings.Builder
	b.WriteString(sign)
	for f := start; f <= end; f++ {
		var v uint64
		if f == start {
			v = u / unit[f]
		} else {
			v = u / unit[f]
		}
		u -= v * unit[f]
		switch {
		case f == start:
			b.WriteString(strconv.FormatUint(v, 10))
		case f == fieldHour && start == fieldDay:
			fmt.Fprintf(&b, " %02d", v)
		default:
			fmt.Fprintf(&b, ":%02d", v)
		}
		if f == fieldSecond && end == fieldSecond && u > 0 {
			frac := strings.TrimRight(fmt.Sprintf("%06d", u), "0")
			b.WriteString("." + frac)
		}
	}
	return "INTERVAL '" + b.String() + "' " + qual
}

func addInt64(a, b int64) (int64, bool) {
	r := a + b
	if (r > a) != (b > 0) {
		return 0, false
	}
	return r, true
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return r, true
}
