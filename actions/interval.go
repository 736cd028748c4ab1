package actions

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Interval is a calendar interval as Spark holds one (CalendarInterval):
// months, days and microseconds, kept apart because a month and a day
// have no fixed length.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// ParseInterval parses s as Delta parses the interval table properties
// (DeltaConfigs.parseCalendarInterval, then Spark's stringToInterval):
// trimmed and case-insensitive, "interval" optional; then one or more
// "[+|-]N unit" terms, units year, month, week, day, hour, minute, second,
// millisecond and microsecond, singular or plural; only seconds take a
// fraction (up to nine digits). "interval 1 day 12 hours", "2 weeks",
// "1.5 seconds" and "1 day -1 hour" are intervals. Counts overflowing
// Spark's fields (months and days are 32-bit, microseconds 64-bit) are an
// error.
func ParseInterval(s string) (Interval, error) {
	// Delta trims (Java's trim) and prefixes "interval "; Spark's parser
	// then trims again, control characters too (DEL).
	t := asciiLower(strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }))
	if t == "" {
		return Interval{}, fmt.Errorf("actions: an interval cannot be empty")
	}
	if !strings.HasPrefix(t, "interval ") {
		t = "interval " + t
	}
	t = strings.TrimRightFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f })
	iv, err := sparkStringToInterval(t)
	if err != nil {
		return Interval{}, fmt.Errorf("actions: bad interval %q: %s", s, err)
	}
	return iv, nil
}

// Duration is the interval's length when it has no months: days of 24
// hours plus the microseconds. ok is false when it has months (or years),
// which have no fixed length. A length beyond time.Duration's range
// (about 292 years) is capped at its bound.
func (iv Interval) Duration() (d time.Duration, ok bool) {
	if iv.Months != 0 {
		return 0, false
	}
	const microsPerDay = int64(24 * time.Hour / time.Microsecond)
	days := int64(iv.Days)
	// Saturating arithmetic in microseconds, then in nanoseconds.
	total, ok := addExact(mulSat(days, microsPerDay), iv.Micros)
	if !ok {
		if days > 0 {
			total = math.MaxInt64
		} else {
			total = math.MinInt64
		}
	}
	return time.Duration(mulSat(total, int64(time.Microsecond))), true
}

// ParseDuration parses s as an interval (ParseInterval) of fixed length
// (no months or years), as the retention table properties take one.
func ParseDuration(s string) (time.Duration, error) {
	iv, err := ParseInterval(s)
	if err != nil {
		return 0, err
	}
	d, ok := iv.Duration()
	if !ok {
		return 0, fmt.Errorf("actions: interval %q has months or years, which have no fixed length (use days: 365 days for a year)", s)
	}
	return d, nil
}

func mulSat(a, b int64) int64 {
	if c, ok := mulExact(a, b); ok {
		return c
	}
	if (a < 0) != (b < 0) {
		return math.MinInt64
	}
	return math.MaxInt64
}

func addExact(a, b int64) (int64, bool) {
	c := a + b
	if (c > a) != (b > 0) {
		return c, false
	}
	return c, true
}

func mulExact(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// asciiLower lower-cases the ASCII letters of s. For the words Delta's
// properties take (units, modes) it matches Java's toLowerCase: no other
// character lower-cases to an ASCII letter they contain.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// sparkSpace is Java's Character.isWhitespace over one byte, as Spark's
// interval parser applies it.
func sparkSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r') || (b >= 0x1c && b <= 0x1f)
}

// sparkStringToInterval follows Spark's stringToInterval state machine
// (SparkIntervalUtils) on a trimmed, lower-cased string: an optional
// "interval" prefix, then sign, value (with a fraction for seconds) and
// unit terms separated by whitespace.
func sparkStringToInterval(s string) (Interval, error) {
	const (
		prefix = iota
		trimBeforeSign
		sign
		trimBeforeValue
		value
		valueFraction
		trimBeforeUnit
		unitBegin
		unitSuffix
		unitEnd
	)
	const initialFractionScale = 100_000_000 // nanoseconds of the first fraction digit
	var (
		state         = prefix
		i             int
		current       int64
		negative      bool
		months, days  int64
		micros        int64
		fractionScale int
		fraction      int64
		pointPrefixed bool
		ok            = true
	)
	word := func() string { // the word at i, for messages
		j := i
		for j > 0 && !sparkSpace(s[j-1]) {
			j--
		}
		k := i
		for k < len(s) && !sparkSpace(s[k]) {
			k++
		}
		return s[j:k]
	}
	overflow := func() (Interval, error) { return Interval{}, fmt.Errorf("%q overflows", word()) }
	for i < len(s) {
		b := s[i]
		switch state {
		case prefix:
			if strings.HasPrefix(s, "interval") {
				switch {
				case len(s) == len("interval"):
					return Interval{}, fmt.Errorf("the interval is empty")
				case !sparkSpace(s[len("interval")]):
					return Interval{}, fmt.Errorf("invalid prefix %q", word())
				}
				i += len("interval") + 1
			}
			state = trimBeforeSign
		case trimBeforeSign, trimBeforeValue, trimBeforeUnit:
			if sparkSpace(b) {
				i++
				continue
			}
			state++
		case sign:
			current, fraction, fractionScale, pointPrefixed = 0, 0, -1, false
			state = trimBeforeValue
			switch {
			case b == '-':
				negative = true
				i++
			case b == '+':
				negative = false
				i++
			case b >= '0' && b <= '9':
				negative = false
			case b == '.':
				negative = false
				fractionScale, pointPrefixed = initialFractionScale, true
				i++
				state = valueFraction
			default:
				return Interval{}, fmt.Errorf("%q is not a number", word())
			}
		case value:
			switch {
			case b >= '0' && b <= '9':
				if current, ok = mulExact(current, 10); ok {
					current, ok = addExact(current, int64(b-'0'))
				}
				if !ok {
					return overflow()
				}
			case sparkSpace(b):
				state = trimBeforeUnit
			case b == '.':
				fractionScale = initialFractionScale
				state = valueFraction
			default:
				return Interval{}, fmt.Errorf("%q is not a number", word())
			}
			i++
		case valueFraction:
			switch {
			case b >= '0' && b <= '9' && fractionScale > 0:
				fraction += int64(b-'0') * int64(fractionScale)
				fractionScale /= 10
			case sparkSpace(b) && (!pointPrefixed || fractionScale < initialFractionScale):
				fraction /= int64(time.Microsecond)
				state = trimBeforeUnit
			case b >= '0' && b <= '9':
				return Interval{}, fmt.Errorf("%q has more than nanosecond precision", word())
			default:
				return Interval{}, fmt.Errorf("%q is not a number", word())
			}
			i++
		case unitBegin:
			if b != 's' && fractionScale >= 0 {
				return Interval{}, fmt.Errorf("%q cannot have a fraction (only seconds can)", word())
			}
			if negative {
				current, fraction = -current, -fraction
			}
			unit, n, per, field := "", int64(0), int64(1), &micros
			rest := s[i:]
			switch {
			case strings.HasPrefix(rest, "year"):
				unit, per, field = "year", 12, &months
			case strings.HasPrefix(rest, "week"):
				unit, per, field = "week", 7, &days
			case strings.HasPrefix(rest, "day"):
				unit, field = "day", &days
			case strings.HasPrefix(rest, "hour"):
				unit, per = "hour", int64(time.Hour/time.Microsecond)
			case strings.HasPrefix(rest, "second"):
				unit, per = "second", int64(time.Second/time.Microsecond)
			case strings.HasPrefix(rest, "month"):
				unit, field = "month", &months
			case strings.HasPrefix(rest, "minute"):
				unit, per = "minute", int64(time.Minute/time.Microsecond)
			case strings.HasPrefix(rest, "millisecond"):
				unit, per = "millisecond", int64(time.Millisecond/time.Microsecond)
			case strings.HasPrefix(rest, "microsecond"):
				unit = "microsecond"
			default:
				return Interval{}, fmt.Errorf("%q is not a unit (year, month, week, day, hour, minute, second, millisecond, microsecond)", word())
			}
			if (unit == "day" || unit == "month") && current != int64(int32(current)) {
				return overflow() // Spark takes a day or month count as an int
			}
			if n, ok = mulExact(current, per); ok {
				*field, ok = addExact(*field, n)
			}
			if ok && unit == "second" {
				micros, ok = addExact(micros, fraction)
			}
			// Months and days are Java ints in Spark.
			if !ok || months != int64(int32(months)) || days != int64(int32(days)) {
				return overflow()
			}
			i += len(unit)
			state = unitSuffix
		case unitSuffix:
			switch {
			case b == 's':
				state = unitEnd
			case sparkSpace(b):
				state = trimBeforeSign
			default:
				return Interval{}, fmt.Errorf("%q is not a unit", word())
			}
			i++
		case unitEnd:
			if !sparkSpace(b) {
				return Interval{}, fmt.Errorf("%q is not a unit", word())
			}
			i++
			state = trimBeforeSign
		}
	}
	switch state {
	case unitSuffix, unitEnd, trimBeforeSign:
		return Interval{Months: int32(months), Days: int32(days), Micros: micros}, nil
	case trimBeforeValue:
		return Interval{}, fmt.Errorf("a number is missing at the end")
	case value, valueFraction:
		return Interval{}, fmt.Errorf("a unit is missing after %q", word())
	}
	return Interval{}, fmt.Errorf("the interval is incomplete")
}
