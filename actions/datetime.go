package actions

import (
	"fmt"
	"strconv"
	"time"
)

// Dates and timestamps are computed on the proleptic Gregorian calendar, as
// Spark 3 and later do, without going through a time zone database.

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
	// maxYear bounds the years accepted for dates and timestamps; every
	// timestamp in that range fits int64 microseconds.
	maxYear = 280_000
)

// daysFromCivil returns the days since 1970-01-01 of y-m-d.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// scanner reads a date-time text left to right.
type scanner struct {
	s string
	i int
}

func (sc *scanner) done() bool { return sc.i >= len(sc.s) }

func (sc *scanner) peek() byte {
	if sc.done() {
		return 0
	}
	return sc.s[sc.i]
}

// digits reads between min and max decimal digits.
func (sc *scanner) digits(min, max int) (int64, int, bool) {
	start := sc.i
	var v int64
	for sc.i < len(sc.s) && sc.i-start < max && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		v = v*10 + int64(sc.s[sc.i]-'0')
		sc.i++
	}
	n := sc.i - start
	return v, n, n >= min
}

func (sc *scanner) lit(c byte) bool {
	if sc.peek() == c && !sc.done() {
		sc.i++
		return true
	}
	return false
}

// scanDate reads [+-]YYYY-M-D (the year has 4 to 6 digits, month and day 1
// or 2) and returns the days since the epoch.
func (sc *scanner) scanDate() (int64, bool) {
	neg := false
	switch sc.peek() {
	case '+':
		sc.i++
	case '-':
		neg = true
		sc.i++
	}
	y, _, ok := sc.digits(4, 6)
	if !ok || !sc.lit('-') {
		return 0, false
	}
	m, _, ok := sc.digits(1, 2)
	if !ok || !sc.lit('-') {
		return 0, false
	}
	d, _, ok := sc.digits(1, 2)
	if !ok {
		return 0, false
	}
	if neg {
		y = -y
	}
	if y > maxYear || y < -maxYear || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// scanTime reads H:MM[:SS[.fraction]] and returns microseconds since
// midnight. Digits of the fraction past the sixth are dropped (rounding
// toward the earlier instant).
func (sc *scanner) scanTime() (int64, bool) {
	h, _, ok := sc.digits(1, 2)
	if !ok || !sc.lit(':') {
		return 0, false
	}
	mi, n, ok := sc.digits(2, 2)
	if !ok || n != 2 {
		return 0, false
	}
	var s, frac int64
	if sc.lit(':') {
		if s, _, ok = sc.digits(2, 2); !ok {
			return 0, false
		}
		if sc.lit('.') {
			var f int64
			var nd int
			f, nd, ok = sc.digits(1, 9)
			if !ok {
				return 0, false
			}
			for ; nd < 6; nd++ {
				f *= 10
			}
			for ; nd > 6; nd-- {
				f /= 10
			}
			frac = f
		}
	}
	if h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	return ((h*60+mi)*60+s)*microsPerSecond + frac, true
}

// scanZone reads Z, or an offset +HH, +HHMM or +HH:MM, and returns the
// offset in microseconds east of UTC.
func (sc *scanner) scanZone() (int64, bool) {
	if sc.lit('Z') || sc.lit('z') {
		return 0, true
	}
	sign := int64(1)
	switch {
	case sc.lit('+'):
	case sc.lit('-'):
		sign = -1
	default:
		return 0, false
	}
	h, _, ok := sc.digits(2, 2)
	if !ok {
		return 0, false
	}
	var m int64
	if sc.lit(':') {
		if m, _, ok = sc.digits(2, 2); !ok {
			return 0, false
		}
	} else if !sc.done() {
		if m, _, ok = sc.digits(2, 2); !ok {
			return 0, false
		}
	}
	if h > 18 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60) * microsPerSecond, true
}

// parseDateTime reads a date, an optional time after ' ' or 'T', and an
// optional zone. It returns the wall-clock microseconds since the epoch,
// the zone offset and whether a zone was given.
func parseDateTime(s string) (wall, offset int64, zoned, ok bool) {
	sc := &scanner{s: s}
	days, ok := sc.scanDate()
	if !ok {
		return 0, 0, false, false
	}
	wall = days * microsPerDay
	if sc.done() {
		return wall, 0, false, true
	}
	if !sc.lit(' ') && !sc.lit('T') {
		return 0, 0, false, false
	}
	tod, ok := sc.scanTime()
	if !ok {
		return 0, 0, false, false
	}
	wall += tod
	if sc.done() {
		return wall, 0, false, true
	}
	offset, ok = sc.scanZone()
	if !ok || !sc.done() {
		return 0, 0, false, false
	}
	return wall, offset, true, true
}

// ParseDate parses "YYYY-MM-DD" (a year beyond 9999 has a sign and more
// digits: "+10000-01-01"; month and day may have one digit).
func ParseDate(s string) (Date, error) {
	sc := &scanner{s: s}
	days, ok := sc.scanDate()
	if !ok || !sc.done() {
		return 0, fmt.Errorf("actions: bad date %q, want YYYY-MM-DD", s)
	}
	return Date(days), nil
}

// ParseTimestamp parses a timestamp: "YYYY-MM-DD HH:MM:SS[.ffffff]" or
// the same with 'T' between date and time, optionally followed by 'Z' or
// an offset ("+07:00", "-0800"), as Delta writers put them in partition
// values and stats. A time without a zone is read as UTC; a date alone is
// midnight UTC. Seconds may be left out; digits of the fraction past
// microseconds are dropped.
//
// Zone-less partition values are ambiguous: PROTOCOL.md says to read them
// in the writer's time zone, which the log does not record. lakelog, like
// delta-kernel-rs, reads them as UTC. A table written by Spark in another
// zone then reads shifted (see the caveat of the golden case
// data-reader-partition-values).
func ParseTimestamp(s string) (Timestamp, error) {
	wall, off, _, ok := parseDateTime(s)
	if !ok {
		return 0, fmt.Errorf("actions: bad timestamp %q, want YYYY-MM-DD HH:MM:SS[.ffffff][Z|+HH:MM]", s)
	}
	return Timestamp(wall - off), nil
}

// ParseTimestampNTZ parses a timestamp without time zone:
// "YYYY-MM-DD HH:MM:SS[.ffffff]" or the same with 'T'. A zone or offset
// is an error.
func ParseTimestampNTZ(s string) (TimestampNTZ, error) {
	wall, _, zoned, ok := parseDateTime(s)
	if !ok {
		return 0, fmt.Errorf("actions: bad timestamp_ntz %q, want YYYY-MM-DD HH:MM:SS[.ffffff]", s)
	}
	if zoned {
		return 0, fmt.Errorf("actions: timestamp_ntz %q has a time zone", s)
	}
	return TimestampNTZ(wall), nil
}

// appendDate writes YYYY-MM-DD (with a sign for years outside 0..9999).
func appendDate(b []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	switch {
	case y < 0:
		b = append(b, '-')
		y = -y
	case y > 9999:
		b = append(b, '+')
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	return appendPadded(b, d, 2)
}

// appendDateTime writes YYYY-MM-DD<sep>HH:MM:SS.ffffff.
func appendDateTime(b []byte, micros int64, sep byte) []byte {
	days := floorDiv(micros, microsPerDay)
	tod := micros - days*microsPerDay
	b = appendDate(b, days)
	b = append(b, sep)
	secs := tod / microsPerSecond
	b = appendPadded(b, secs/3600, 2)
	b = append(b, ':')
	b = appendPadded(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendPadded(b, secs%60, 2)
	b = append(b, '.')
	return appendPadded(b, tod%microsPerSecond, 6)
}

func appendPadded(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// String returns the date as YYYY-MM-DD.
func (d Date) String() string { return string(appendDate(nil, int64(d))) }

// Time returns midnight UTC of the date.
func (d Date) Time() time.Time { return time.UnixMicro(int64(d) * microsPerDay).UTC() }

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date(daysFromCivil(int64(y), int64(m), int64(d)))
}

// String returns the timestamp in UTC as YYYY-MM-DDTHH:MM:SS.ffffffZ.
func (t Timestamp) String() string { return string(append(appendDateTime(nil, int64(t), 'T'), 'Z')) }

// Time returns the instant as a time.Time in UTC.
func (t Timestamp) Time() time.Time { return time.UnixMicro(int64(t)).UTC() }

// TimestampOf returns the instant t, truncated to microseconds.
func TimestampOf(t time.Time) Timestamp { return Timestamp(t.UnixMicro()) }

// String returns the timestamp as YYYY-MM-DDTHH:MM:SS.ffffff (no zone).
func (t TimestampNTZ) String() string { return string(appendDateTime(nil, int64(t), 'T')) }

// Time returns the wall-clock time as a time.Time in UTC.
func (t TimestampNTZ) Time() time.Time { return time.UnixMicro(int64(t)).UTC() }

// TimestampNTZOf returns the wall-clock reading of t in t's location,
// truncated to microseconds.
func TimestampNTZOf(t time.Time) TimestampNTZ {
	_, off := t.Zone()
	return TimestampNTZ(t.UnixMicro() + int64(off)*microsPerSecond)
}
