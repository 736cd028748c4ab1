package expr

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// Session time zone. Spark reads zone-less timestamp text, casts
// between timestamps, dates and strings, and computes hour(ts),
// date_format, to_timestamp and the like in the session's time zone
// (spark.sql.session.timeZone). An expression carries its zone in the
// nodes that use one; WithTimeZone sets it. Without it the zone is UTC.

// WithTimeZone returns a copy of e that computes in the time zone tz (an
// IANA name such as "America/Los_Angeles", "UTC", or an offset such as
// "+08:00" or "GMT+8"), as Spark does under spark.sql.session.timeZone:
// casts, zone-dependent functions, timestamp arithmetic with intervals of
// months, and TIMESTAMP literals written without an offset (read again in
// tz). Bind keeps the zone, and the casts and conversions it adds use it.
// An unknown zone is an error.
func WithTimeZone(e Expr, tz string) (Expr, error) {
	loc, err := LoadTimeZone(tz)
	if err != nil {
		return nil, err
	}
	name := loc.String()
	var rerr error
	var rw func(Expr) Expr
	rw = func(e Expr) Expr {
		if e == nil || rerr != nil {
			return e
		}
		switch n := e.(type) {
		case *Literal:
			if _, ok := n.Value.(string); ok {
				c := *n
				c.zone = name
				return &c
			}
			if n.text == "" {
				return n
			}
			micros, err := parseTimestampIn(n.text, loc)
			if err != nil {
				rerr = err
				return n
			}
			c := *n
			c.zone = name
			switch n.DataType {
			case actions.TypeTimestamp:
				c.Value = actions.Timestamp(micros)
			}
			return &c
		case *Call:
			c := *n
			c.zone = name
			c.Args = make([]Expr, len(n.Args))
			for i, a := range n.Args {
				c.Args[i] = rw(a)
			}
			return &c
		case *Cast:
			c := *n
			c.zone = name
			c.X = rw(n.X)
			return &c
		case *Arith:
			c := *n
			c.zone = name
			c.Left, c.Right = rw(n.Left), rw(n.Right)
			return &c
		}
		return rewriteChildren(e, rw)
	}
	out := rw(e)
	if rerr != nil {
		return nil, rerr
	}
	return out, nil
}

// rewriteChildren copies e with fn applied to each operand.
func rewriteChildren(e Expr, fn func(Expr) Expr) Expr {
	switch n := e.(type) {
	case *Compare:
		c := *n
		c.Left, c.Right = fn(n.Left), fn(n.Right)
		return &c
	case *AndExpr:
		return &AndExpr{Left: fn(n.Left), Right: fn(n.Right)}
	case *OrExpr:
		return &OrExpr{Left: fn(n.Left), Right: fn(n.Right)}
	case *NotExpr:
		return &NotExpr{X: fn(n.X)}
	case *In:
		c := *n
		c.X, c.List = fn(n.X), make([]Expr, len(n.List))
		for i, x := range n.List {
			c.List[i] = fn(x)
		}
		return &c
	case *IsNull:
		c := *n
		c.X = fn(n.X)
		return &c
	case *Like:
		c := *n
		c.X = fn(n.X)
		return &c
	case *Arith:
		c := *n
		c.Left, c.Right = fn(n.Left), fn(n.Right)
		return &c
	case *Neg:
		return &Neg{X: fn(n.X)}
	case *Cast:
		c := *n
		c.X = fn(n.X)
		return &c
	case *Call:
		c := *n
		c.Args = make([]Expr, len(n.Args))
		for i, a := range n.Args {
			c.Args[i] = fn(a)
		}
		return &c
	case *Case:
		c := *n
		c.Whens = make([]When, len(n.Whens))
		for i, w := range n.Whens {
			c.Whens[i] = When{Cond: fn(w.Cond), Then: fn(w.Then)}
		}
		if n.Else != nil {
			c.Else = fn(n.Else)
		}
		return &c
	case *Subscript:
		c := *n
		c.X, c.Index = fn(n.X), fn(n.Index)
		return &c
	case *FieldOf:
		c := *n
		c.X = fn(n.X)
		return &c
	}
	return e
}

// zoneOf is the time zone the nodes of e carry ("" for UTC).
func zoneOf(e Expr) string {
	zone := ""
	Walk(e, func(n Expr) bool {
		switch x := n.(type) {
		case *Call:
			zone = x.zone
		case *Cast:
			zone = x.zone
		case *Arith:
			zone = x.zone
		case *Literal:
			zone = x.zone
		}
		return zone == ""
	})
	return zone
}

var zoneCache sync.Map // string -> *time.Location

// LoadTimeZone reads a time zone as Spark's spark.sql.session.timeZone
// takes one: an IANA region ("Europe/Paris"), "UTC", "Z", or an offset
// ("+08:00", "-5", "GMT+8", "UTC-03:30").
func LoadTimeZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "UTC" {
		return time.UTC, nil
	}
	if l, ok := zoneCache.Load(tz); ok {
		return l.(*time.Location), nil
	}
	loc, err := loadTimeZone(tz)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(tz, loc)
	return loc, nil
}

func loadTimeZone(tz string) (*time.Location, error) {
	s := strings.TrimSpace(tz)
	upper := strings.ToUpper(s)
	switch upper {
	case "Z", "UTC", "GMT", "UT":
		return time.UTC, nil
	}
	offset := ""
	for _, p := range []string{"UTC", "GMT", "UT", ""} {
		if strings.HasPrefix(upper, p) && len(upper) > len(p) && (upper[len(p)] == '+' || upper[len(p)] == '-') {
			offset = s[len(p):]
			break
		}
	}
	if offset != "" {
		secs, ok := parseZoneOffset(offset)
		if !ok {
			return nil, fmt.Errorf("expr: unknown time zone %q", tz)
		}
		return time.FixedZone(s, secs), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil || strings.EqualFold(s, "Local") {
		return nil, fmt.Errorf("expr: unknown time zone %q (want a region such as America/Los_Angeles or an offset such as +08:00)", tz)
	}
	return loc, nil
}

// parseZoneOffset reads +H, +HH, +HH:MM, +HHMM, +HH:MM:SS.
func parseZoneOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	body := s[1:]
	var h, m, sec int
	var err error
	switch {
	case strings.Contains(body, ":"):
		parts := strings.Split(body, ":")
		if len(parts) > 3 {
			return 0, false
		}
		vals := make([]int, 3)
		for i, p := range parts {
			if len(p) == 0 || len(p) > 2 {
				return 0, false
			}
			if vals[i], err = strconv.Atoi(p); err != nil {
				return 0, false
			}
		}
		h, m, sec = vals[0], vals[1], vals[2]
	case len(body) <= 2:
		if h, err = strconv.Atoi(body); err != nil {
			return 0, false
		}
	case len(body) == 4:
		if h, err = strconv.Atoi(body[:2]); err != nil {
			return 0, false
		}
		if m, err = strconv.Atoi(body[2:]); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 18 || m > 59 || sec > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}

// zoneLoc is the location of a node's zone name ("" is UTC).
func zoneLoc(zone string) *time.Location {
	if zone == "" {
		return time.UTC
	}
	loc, err := LoadTimeZone(zone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// localTime is a timestamp's wall clock in loc.
func localTime(micros int64, loc *time.Location) time.Time {
	return time.UnixMicro(micros).In(loc)
}

// fromLocal is the timestamp of a wall clock in loc, as Java's
// LocalDateTime.atZone resolves one: a time in a gap (clocks moved
// forward) moves forward by the gap's length, a time in an overlap
// (clocks moved back) takes the earlier offset.
func fromLocal(wallMicros int64, loc *time.Location) int64 {
	us, _ := fromLocalChecked(wallMicros, loc)
	return us
}

// fromLocalChecked is fromLocal, false when the timestamp is past the
// range of int64 microseconds (where Java's arithmetic overflows).
func fromLocalChecked(wallMicros int64, loc *time.Location) (int64, bool) {
	if loc == time.UTC {
		return wallMicros, true
	}
	off := wallOffset(floorDiv(wallMicros, microsPerSecond), loc)
	return addInt64(wallMicros, -off*microsPerSecond)
}

// fromLocalSeconds is the timestamp of a wall clock in whole seconds
// (any wall clock a timestamp can have, also one past int64
// microseconds), false when the timestamp is out of range.
func fromLocalSeconds(wallSecs int64, loc *time.Location) (int64, bool) {
	return mulInt64(wallSecs-wallOffset(wallSecs, loc), microsPerSecond)
}

// wallOffset is the zone offset in seconds of a wall clock in loc, as
// Java's LocalDateTime.atZone resolves one: a time in a gap (clocks
// moved forward) moves forward by the gap's length, a time in an
// overlap (clocks moved back) takes the earlier offset.
func wallOffset(secs int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return 0
	}
	offsetAt := func(unix int64) int64 {
		_, off := time.Unix(unix, 0).In(loc).Zone()
		return int64(off)
	}
	cands := []int64{offsetAt(secs - 86400), offsetAt(secs), offsetAt(secs + 86400)}
	var valid []int64
	for _, c := range cands {
		if offsetAt(secs-c) == c && !containsInt64(valid, c) {
			valid = append(valid, c)
		}
	}
	switch len(valid) {
	case 1:
		return valid[0]
	case 0:
		// A gap: the offset before the transition, the smaller one.
		return min(cands[0], cands[2])
	default:
		// An overlap: the earlier offset, the larger one.
		return max(valid[0], valid[1])
	}
}

func containsInt64(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// wallMicros is a wall clock (as if in UTC) in microseconds.
func wallMicros(t time.Time) int64 {
	y, mo, d := t.Date()
	days := daysFromCivil(int64(y), int64(mo), int64(d))
	return days*microsPerDay + int64(t.Hour())*microsPerHour + int64(t.Minute())*microsPerMinute +
		int64(t.Second())*microsPerSecond + int64(t.Nanosecond()/1000)
}

// toWall is a timestamp's wall clock in loc, in microseconds as if UTC.
func toWall(micros int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return micros
	}
	_, off := time.UnixMicro(micros).In(loc).Zone()
	return micros + int64(off)*microsPerSecond
}

// toWallChecked is toWall, false when the wall clock is past the range
// of int64 microseconds (where Java's arithmetic overflows).
func toWallChecked(micros int64, loc *time.Location) (int64, bool) {
	if loc == time.UTC {
		return micros, true
	}
	_, off := time.UnixMicro(micros).In(loc).Zone()
	return addInt64(micros, int64(off)*microsPerSecond)
}

// wallDay is the day and time of day of a timestamp's wall clock in
// loc, for every timestamp (a wall clock past int64 microseconds still
// has a day).
func wallDay(micros int64, loc *time.Location) (day, tod int64) {
	_, off := time.UnixMicro(micros).In(loc).Zone()
	day = floorDiv(micros, microsPerDay)
	rest := micros - day*microsPerDay + int64(off)*microsPerSecond
	return day + floorDiv(rest, microsPerDay), floorMod(rest, microsPerDay)
}

// errTimestampRange is the error where Spark's timestamp arithmetic
// overflows ("long overflow").
func errTimestampRange() error {
	return fmt.Errorf("timestamp out of range: %w", errOverflow)
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar.
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

// civilFromDays is daysFromCivil's inverse.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// parseTimestampIn reads timestamp text in loc when it has no offset of
// its own.
func parseTimestampIn(s string, loc *time.Location) (int64, error) {
	if loc == time.UTC || hasZoneSuffix(s) {
		return parseTimestampText(s, false)
	}
	ntz, err := parseTimestampText(s, true)
	if err != nil {
		return parseTimestampText(s, false)
	}
	return fromLocal(ntz, loc), nil
}

// hasZoneSuffix reports whether timestamp text ends with a zone: Z, an
// offset, or a region name after the time.
func hasZoneSuffix(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return true
	}
	// An offset after the time: the last + or - after position 10 (the
	// date's own dashes come first).
	if i := strings.LastIndexAny(s, "+-"); i > 10 {
		return true
	}
	if i := strings.LastIndexByte(s, ' '); i > 10 {
		tail := s[i+1:]
		return tail != "" && (tail[0] < '0' || tail[0] > '9')
	}
	return false
}
