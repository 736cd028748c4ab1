package expr

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// Date and time functions. Timestamps are instants; the fields of one
// (hour(ts), date_format, the date a timestamp falls on) are read in the
// session time zone, as Spark reads them. Dates are days in the
// proleptic Gregorian calendar.

func init() {
	dateField := func(name string, f func(y, m, d int64, days int64) int32, names ...string) *function {
		return &function{names: append([]string{name}, names...), minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kDate),
			eval: func(x *callCtx, a []any) (any, error) {
				days := int64(a[0].(actions.Date))
				y, m, d := civilFromDays(days)
				return f(y, m, d, days), nil
			}}
	}
	timeField := func(name string, f func(wall int64) int32) *function {
		return &function{names: []string{name}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kTimestamp),
			eval: func(x *callCtx, a []any) (any, error) { return f(wallOf(a[0], x.loc)), nil }}
	}
	dateType := actions.TypeDate
	register(
		&function{names: []string{"current_date", "curdate"}, minArgs: 0, maxArgs: 0, session: true,
			bind: sig(dateType),
			eval: func(x *callCtx, a []any) (any, error) {
				return actions.Date(floorDiv(toWall(time.Now().UnixMicro(), x.loc), microsPerDay)), nil
			}},
		&function{names: []string{"current_timestamp", "now", "localtimestamp"}, minArgs: 0, maxArgs: 0, session: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if c.Name == "localtimestamp" {
					return nil, actions.TypeTimestampNTZ, nil
				}
				return nil, actions.TypeTimestamp, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				now := time.Now().UnixMicro()
				if x.call.typ == actions.TypeTimestampNTZ {
					return actions.TimestampNTZ(toWall(now, x.loc)), nil
				}
				return actions.Timestamp(now), nil
			}},
		&function{names: []string{"current_timezone"}, minArgs: 0, maxArgs: 0, session: true,
			bind: sig(actions.TypeString),
			eval: func(x *callCtx, a []any) (any, error) { return x.loc.String(), nil }},
		dateField("year", func(y, m, d, _ int64) int32 { return int32(y) }),
		dateField("month", func(y, m, d, _ int64) int32 { return int32(m) }),
		dateField("day", func(y, m, d, _ int64) int32 { return int32(d) }, "dayofmonth"),
		dateField("quarter", func(y, m, d, _ int64) int32 { return int32((m-1)/3 + 1) }),
		dateField("dayofyear", func(y, m, d, days int64) int32 { return int32(days - daysFromCivil(y, 1, 1) + 1) }),
		dateField("dayofweek", func(y, m, d, days int64) int32 { return int32(floorMod(days+4, 7) + 1) }),
		dateField("weekday", func(y, m, d, days int64) int32 { return int32(floorMod(days+3, 7)) }),
		dateField("weekofyear", func(y, m, d, days int64) int32 { _, w := isoWeek(days); return int32(w) }),
		timeField("hour", func(w int64) int32 { return int32(floorMod(w, microsPerDay) / microsPerHour) }),
		timeField("minute", func(w int64) int32 { return int32(floorMod(w, microsPerHour) / microsPerMinute) }),
		timeField("second", func(w int64) int32 { return int32(floorMod(w, microsPerMinute) / microsPerSecond) }),
		&function{names: []string{"date_add", "dateadd"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: dateAddType,
			eval: func(x *callCtx, a []any) (any, error) {
				// Spark's int arithmetic: wraps around, no overflow error.
				n, _ := asInt64(a[1])
				return actions.Date(int32(int64(a[0].(actions.Date)) + n)), nil
			}},
		&function{names: []string{"date_sub"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: dateAddType,
			eval: func(x *callCtx, a []any) (any, error) {
				n, _ := asInt64(a[1])
				return actions.Date(int32(int64(a[0].(actions.Date)) - n)), nil
			}},
		&function{names: []string{"datediff"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeInteger, kDate),
			eval: func(x *callCtx, a []any) (any, error) {
				return int32(int64(a[0].(actions.Date)) - int64(a[1].(actions.Date))), nil
			}},
		&function{names: []string{"add_months"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(dateType, kDate, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				return addMonthsDate(a[0].(actions.Date), int64(a[1].(int32)))
			}},
		&function{names: []string{"months_between"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeDouble, kTimestamp, kTimestamp, kBool),
			eval: func(x *callCtx, a []any) (any, error) {
				round := true
				if len(a) == 3 {
					round = a[2].(bool)
				}
				return monthsBetween(timestampMicros(a[0]), timestampMicros(a[1]), round, x.loc)
			}},
		&function{names: []string{"last_day"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(dateType, kDate),
			eval: func(x *callCtx, a []any) (any, error) {
				y, m, _ := civilFromDays(int64(a[0].(actions.Date)))
				return actions.Date(daysFromCivil(y, m, daysInMonth(y, m))), nil
			}},
		&function{names: []string{"next_day"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(dateType, kDate, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				dow, ok := dayOfWeekName(a[1].(string))
				if !ok {
					return nil, fmt.Errorf("%s is not a day of the week (want MO, TUE, WEDNESDAY...)", quoteString(a[1].(string)))
				}
				days := int64(a[0].(actions.Date))
				cur := floorMod(days+3, 7) // 0 = Monday
				delta := floorMod(int64(dow)-cur-1, 7) + 1
				return actions.Date(int32(days + delta)), nil // wraps as Spark's int arithmetic
			}},
		&function{names: []string{"trunc"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(dateType, kDate, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				return truncDate(a[0].(actions.Date), a[1].(string)), nil
			}},
		&function{names: []string{"date_trunc"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeTimestamp, kString, kTimestamp),
			eval: func(x *callCtx, a []any) (any, error) {
				return truncTimestamp(a[0].(string), timestampMicros(a[1]), x.loc)
			}},
		&function{names: []string{"make_date"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: sig(dateType, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				y, m, d := int64(a[0].(int32)), int64(a[1].(int32)), int64(a[2].(int32))
				if y < -999_999_999 || y > 999_999_999 { // Java's LocalDate range, as Spark checks it
					return nil, fmt.Errorf("year %d is out of range (-999999999 to 999999999)", y)
				}
				if m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
					return nil, fmt.Errorf("%d-%d-%d is not a valid date", y, m, d)
				}
				return actions.Date(daysFromCivil(y, m, d)), nil
			}},
		&function{names: []string{"make_timestamp"}, minArgs: 6, maxArgs: 7, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				kinds := []argKind{kInt, kInt, kInt, kInt, kInt, kAny, kString}
				args, err := b.coerceArgs(c, kinds...)
				if err != nil {
					return nil, nil, err
				}
				c2 := &Call{Name: c.Name, Args: args}
				sec, err := b.convertCommon(c2, args[5], &actions.DecimalType{Precision: 16, Scale: 6})
				if err != nil {
					return nil, nil, err
				}
				args[5] = sec
				return args, actions.TypeTimestamp, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return makeTimestamp(a, x.loc) }},
		&function{names: []string{"date_part", "datepart"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: datePartType,
			eval: func(x *callCtx, a []any) (any, error) { return datePart(a[0].(string), a[1], x.argType(1), x.loc) }},
		&function{names: []string{"unix_timestamp", "to_unix_timestamp"}, minArgs: 0, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if len(c.Args) == 0 {
					return nil, actions.TypeLong, nil
				}
				if t := c.Args[0].Type(); t == actions.TypeString {
					args, err := b.coerceArgs(c, kString)
					return args, actions.TypeLong, err
				}
				args, err := b.coerceArgs(c, kTimestamp, kString)
				return args, actions.TypeLong, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if len(a) == 0 {
					return floorDiv(time.Now().UnixMicro(), microsPerSecond), nil
				}
				if s, ok := a[0].(string); ok {
					f := "yyyy-MM-dd HH:mm:ss"
					if len(a) == 2 {
						f = a[1].(string)
					}
					us, err := parseWithPattern(s, f, x.loc)
					if err != nil {
						return nil, err
					}
					return us / microsPerSecond, nil // Spark's division: toward zero
				}
				return timestampMicros(a[0]) / microsPerSecond, nil
			}},
		&function{names: []string{"from_unixtime"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kLong, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				f := "yyyy-MM-dd HH:mm:ss"
				if len(a) == 2 {
					f = a[1].(string)
				}
				us, ok := mulInt64(a[0].(int64), microsPerSecond)
				if !ok {
					return nil, fmt.Errorf("%d seconds is out of range: %w", a[0], errOverflow)
				}
				return formatWithPattern(us, f, x.loc)
			}},
		&function{names: []string{"date_format"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kTimestamp, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				return formatWithPattern(timestampMicros(a[0]), a[1].(string), x.loc)
			}},
		&function{names: []string{"to_date"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if len(c.Args) == 1 {
					args, err := b.coerceArgs(c, kDate)
					return args, dateType, err
				}
				args, err := b.coerceArgs(c, kString)
				return args, dateType, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if len(a) == 1 {
					return a[0], nil
				}
				us, err := parseWithPattern(a[0].(string), a[1].(string), x.loc)
				if err != nil {
					return nil, err
				}
				return actions.Date(floorDiv(toWall(us, x.loc), microsPerDay)), nil
			}},
		&function{names: []string{"to_timestamp"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if len(c.Args) == 1 {
					args, err := b.coerceArgs(c, kTimestamp)
					return args, actions.TypeTimestamp, err
				}
				args, err := b.coerceArgs(c, kString)
				return args, actions.TypeTimestamp, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if len(a) == 1 {
					return a[0], nil
				}
				us, err := parseWithPattern(a[0].(string), a[1].(string), x.loc)
				if err != nil {
					return nil, err
				}
				return actions.Timestamp(us), nil
			}},
		&function{names: []string{"from_utc_timestamp"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeTimestamp, kTimestamp, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				loc, err := LoadTimeZone(a[1].(string))
				if err != nil {
					return nil, err
				}
				// Spark's fromUTCTime: the wall clock in the zone, read
				// as UTC (the session zone plays no part).
				us, ok := toWallChecked(timestampMicros(a[0]), loc)
				if !ok {
					return nil, errTimestampRange()
				}
				return actions.Timestamp(us), nil
			}},
		&function{names: []string{"to_utc_timestamp"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeTimestamp, kTimestamp, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				loc, err := LoadTimeZone(a[1].(string))
				if err != nil {
					return nil, err
				}
				// Spark's toUTCTime: the UTC wall clock read in the zone.
				us, ok := fromLocalChecked(timestampMicros(a[0]), loc)
				if !ok {
					return nil, errTimestampRange()
				}
				return actions.Timestamp(us), nil
			}},
		&function{names: []string{"unix_seconds"}, minArgs: 1, maxArgs: 1,
			bind: sig(actions.TypeLong, kTimestamp),
			eval: func(x *callCtx, a []any) (any, error) { return floorDiv(timestampMicros(a[0]), microsPerSecond), nil }},
		&function{names: []string{"unix_millis"}, minArgs: 1, maxArgs: 1,
			bind: sig(actions.TypeLong, kTimestamp),
			eval: func(x *callCtx, a []any) (any, error) { return floorDiv(timestampMicros(a[0]), 1000), nil }},
		&function{names: []string{"unix_micros"}, minArgs: 1, maxArgs: 1,
			bind: sig(actions.TypeLong, kTimestamp),
			eval: func(x *callCtx, a []any) (any, error) { return timestampMicros(a[0]), nil }},
		&function{names: []string{"unix_date"}, minArgs: 1, maxArgs: 1,
			bind: sig(actions.TypeInteger, kDate),
			eval: func(x *callCtx, a []any) (any, error) { return int32(a[0].(actions.Date)), nil }},
		&function{names: []string{"date_from_unix_date"}, minArgs: 1, maxArgs: 1,
			bind: sig(dateType, kInt),
			eval: func(x *callCtx, a []any) (any, error) { return actions.Date(a[0].(int32)), nil }},
		&function{names: []string{"timestamp_seconds"}, minArgs: 1, maxArgs: 1,
			bind: sig(actions.TypeTimestamp, kNumeric),
			eval: func(x *callCtx, a []any) (any, error) {
				return castTyped(a[0], nil, actions.TypeTimestamp, x.loc)
			}},
		&function{names: []string{"timestamp_millis"}, minArgs: 1, maxArgs: 1,
			bind: integralToLong(actions.TypeTimestamp),
			eval: func(x *callCtx, a []any) (any, error) {
				us, ok := mulInt64(a[0].(int64), 1000)
				if !ok {
					return nil, errOverflow
				}
				return actions.Timestamp(us), nil
			}},
		&function{names: []string{"timestamp_micros"}, minArgs: 1, maxArgs: 1,
			bind: integralToLong(actions.TypeTimestamp),
			eval: func(x *callCtx, a []any) (any, error) { return actions.Timestamp(a[0].(int64)), nil }},
	)
}

func dateAddType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kDate, kAny)
	if err != nil {
		return nil, nil, err
	}
	t := args[1].Type()
	switch {
	case t == nil:
		args[1] = typedNull(args[1], actions.TypeInteger)
	case isIntegral(t) && t != actions.TypeLong:
	case t == actions.TypeString:
		if args[1], err = b.coerceArg(&Call{Name: c.Name, Args: args}, 1, kInt); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, typeErr(c, "the number of days of %s must be an int, smallint or tinyint, not %s", c.Name, t)
	}
	return args, actions.TypeDate, nil
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// wallOf is a timestamp's wall clock in loc (a timestamp_ntz's own).
func wallOf(v any, loc *time.Location) int64 {
	switch x := v.(type) {
	case actions.Timestamp:
		return toWall(int64(x), loc)
	case actions.TimestampNTZ:
		return int64(x)
	}
	return 0
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// isoWeek is the ISO-8601 week-based year and week of a day.
func isoWeek(days int64) (year, week int64) {
	dow := floorMod(days+3, 7) // 0 = Monday
	thursday := days - dow + 3
	y, _, _ := civilFromDays(thursday)
	return y, (thursday-daysFromCivil(y, 1, 1))/7 + 1
}

// addMonthsDate is add_months: the same day n months later, or the
// month's last day when it has fewer days.
func addMonthsDate(d actions.Date, n int64) (any, error) {
	y, m, day := civilFromDays(int64(d))
	total := y*12 + (m - 1) + n
	ny, nm := floorDiv(total, 12), floorMod(total, 12)+1
	day = min(day, daysInMonth(ny, nm))
	r := daysFromCivil(ny, nm, day)
	if r < math.MinInt32 || r > math.MaxInt32 {
		return nil, fmt.Errorf("date out of range: %w", errOverflow)
	}
	return actions.Date(r), nil
}

// monthsBetween is Spark's: the days in the session zone, the time of
// day the time since the day's first instant (whose timestamp may be
// out of range, an overflow as in Spark).
func monthsBetween(t1, t2 int64, roundOff bool, loc *time.Location) (any, error) {
	d1, _ := wallDay(t1, loc)
	d2, _ := wallDay(t2, loc)
	y1, m1, dd1 := civilFromDays(d1)
	y2, m2, dd2 := civilFromDays(d2)
	monthDiff := (y1-y2)*12 + m1 - m2
	last1 := dd1 == daysInMonth(y1, m1)
	last2 := dd2 == daysInMonth(y2, m2)
	if dd1 == dd2 || last1 && last2 {
		return float64(monthDiff), nil
	}
	start1, ok1 := dayStart(d1, loc)
	start2, ok2 := dayStart(d2, loc)
	if !ok1 || !ok2 {
		return nil, errTimestampRange()
	}
	s1 := (t1 - start1) / microsPerSecond
	s2 := (t2 - start2) / microsPerSecond
	secondsDiff := (dd1-dd2)*86400 + s1 - s2
	diff := float64(monthDiff) + float64(secondsDiff)/(31*86400)
	if roundOff {
		r, _ := new(big.Float).SetFloat64(diff).Float64()
		return math.Round(r*1e8) / 1e8, nil
	}
	return diff, nil
}

// dayStart is the first instant of a day in loc, false when it is out
// of range.
func dayStart(day int64, loc *time.Location) (int64, bool) {
	return fromLocalSeconds(day*86400, loc)
}

func dayOfWeekName(s string) (int, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "MO", "MON", "MONDAY":
		return 0, true
	case "TU", "TUE", "TUESDAY":
		return 1, true
	case "WE", "WED", "WEDNESDAY":
		return 2, true
	case "TH", "THU", "THURSDAY":
		return 3, true
	case "FR", "FRI", "FRIDAY":
		return 4, true
	case "SA", "SAT", "SATURDAY":
		return 5, true
	case "SU", "SUN", "SUNDAY":
		return 6, true
	}
	return 0, false
}

// truncLevel reads trunc's and date_trunc's unit; ok is false for an
// unknown one (the result is then NULL, as in Spark).
func truncLevel(s string) (string, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "YEAR", "YYYY", "YY":
		return "year", true
	case "QUARTER":
		return "quarter", true
	case "MONTH", "MM", "MON":
		return "month", true
	case "WEEK":
		return "week", true
	case "DAY", "DD":
		return "day", true
	case "HOUR":
		return "hour", true
	case "MINUTE":
		return "minute", true
	case "SECOND":
		return "second", true
	case "MILLISECOND":
		return "millisecond", true
	case "MICROSECOND":
		return "microsecond", true
	}
	return "", false
}

func truncDays(days int64, level string) int64 {
	y, m, _ := civilFromDays(days)
	switch level {
	case "year":
		return daysFromCivil(y, 1, 1)
	case "quarter":
		return daysFromCivil(y, (m-1)/3*3+1, 1)
	case "month":
		return daysFromCivil(y, m, 1)
	case "week":
		return days - floorMod(days+3, 7)
	}
	return days
}

func truncDate(d actions.Date, unit string) any {
	level, ok := truncLevel(unit)
	if !ok || level != "year" && level != "quarter" && level != "month" && level != "week" {
		return nil
	}
	return actions.Date(truncDays(int64(d), level))
}

func truncTimestamp(unit string, us int64, loc *time.Location) (any, error) {
	level, ok := truncLevel(unit)
	if !ok {
		return nil, nil
	}
	switch level {
	case "microsecond":
		return actions.Timestamp(us), nil
	case "millisecond", "second":
		// Zone-free (offsets are whole seconds).
		step := int64(1000)
		if level == "second" {
			step = microsPerSecond
		}
		r, ok := addInt64(us, -floorMod(us, step))
		if !ok {
			return nil, errTimestampRange()
		}
		return actions.Timestamp(r), nil
	}
	day, tod := wallDay(us, loc)
	var r int64
	switch level {
	case "minute", "hour":
		step := int64(microsPerMinute)
		if level == "hour" {
			step = microsPerHour
		}
		r, ok = fromLocalSeconds(day*86400+(tod-floorMod(tod, step))/microsPerSecond, loc)
	default:
		r, ok = dayStart(truncDays(day, level), loc)
	}
	if !ok {
		return nil, errTimestampRange()
	}
	return actions.Timestamp(r), nil
}

func makeTimestamp(a []any, loc *time.Location) (any, error) {
	for _, v := range a {
		if v == nil {
			return nil, nil
		}
	}
	y, mo, d := int64(a[0].(int32)), int64(a[1].(int32)), int64(a[2].(int32))
	h, mi := int64(a[3].(int32)), int64(a[4].(int32))
	sec := a[5].(actions.Decimal)
	u, _ := ratToUnscaled(new(big.Rat).SetFrac(sec.Unscaled, pow10(sec.Scale)), 6)
	micros := u.Int64()
	if len(a) == 7 {
		l, err := LoadTimeZone(a[6].(string))
		if err != nil {
			return nil, err
		}
		loc = l
	}
	extraMinute := int64(0)
	if micros == 60*microsPerSecond {
		micros, extraMinute = 0, 1
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || micros < 0 || micros >= 60*microsPerSecond {
		return nil, fmt.Errorf("%d-%d-%d %d:%d:%s is not a valid timestamp", y, mo, d, h, mi, sec)
	}
	us, ok := fromLocalSeconds(daysFromCivil(y, mo, d)*86400+h*3600+mi*60, loc)
	if ok {
		us, ok = addInt64(us, micros+extraMinute*microsPerMinute)
	}
	if !ok {
		return nil, errTimestampRange()
	}
	return actions.Timestamp(us), nil
}

// datePartField names a field of date_part and EXTRACT.
func datePartField(s string) (string, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "YEAR", "Y", "YEARS", "YR", "YRS":
		return "year", true
	case "YEAROFWEEK":
		return "yearofweek", true
	case "QUARTER", "QTR":
		return "quarter", true
	case "MONTH", "MON", "MONS", "MONTHS":
		return "month", true
	case "WEEK", "W", "WEEKS":
		return "week", true
	case "DAY", "D", "DAYS":
		return "day", true
	case "DAYOFWEEK", "DOW":
		return "dow", true
	case "DAYOFWEEK_ISO", "DOW_ISO":
		return "dow_iso", true
	case "DOY":
		return "doy", true
	case "HOUR", "H", "HOURS", "HR", "HRS":
		return "hour", true
	case "MINUTE", "M", "MIN", "MINS", "MINUTES":
		return "minute", true
	case "SECOND", "S", "SEC", "SECONDS", "SECS":
		return "second", true
	}
	return "", false
}

func datePartType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	lit, ok := c.Args[0].(*Literal)
	s, isStr := "", false
	if ok {
		s, isStr = lit.Value.(string)
	}
	if !isStr {
		return nil, nil, typeErr(c, "the field of %s must be a constant string such as 'YEAR'", c.Name)
	}
	f, ok := datePartField(s)
	if !ok {
		return nil, nil, typeErr(c, "%s is not a field of a date or timestamp (want YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DOY, HOUR, MINUTE or SECOND)", quoteString(s))
	}
	args := []Expr{lit, c.Args[1]}
	var err error
	t := c.Args[1].Type()
	switch {
	case isInterval(t):
		if f == "second" {
			return args, &actions.DecimalType{Precision: 8, Scale: 6}, nil
		}
		if f == "year" || f == "month" {
			return args, actions.TypeInteger, nil
		}
		if f == "day" {
			return args, actions.TypeInteger, nil
		}
		return args, actions.TypeByte, nil
	case f == "hour" || f == "minute" || f == "second":
		if args[1], err = b.coerceArg(&Call{Name: c.Name, Args: args}, 1, kTimestamp); err != nil {
			return nil, nil, err
		}
	default:
		if args[1], err = b.coerceArg(&Call{Name: c.Name, Args: args}, 1, kDate); err != nil {
			return nil, nil, err
		}
	}
	if f == "second" {
		return args, &actions.DecimalType{Precision: 8, Scale: 6}, nil
	}
	return args, actions.TypeInteger, nil
}

func datePart(field string, v any, t actions.DataType, loc *time.Location) (any, error) {
	f, _ := datePartField(field)
	if iv, ok := v.(actions.Interval); ok {
		switch f {
		case "year":
			return int32(iv.Months / 12), nil
		case "month":
			if isYearMonth(t) {
				return int8(iv.Months % 12), nil
			}
		case "day":
			return int32(iv.Micros / microsPerDay), nil
		case "hour":
			return int8(iv.Micros % microsPerDay / microsPerHour), nil
		case "minute":
			return int8(iv.Micros % microsPerHour / microsPerMinute), nil
		case "second":
			return actions.Decimal{Unscaled: big.NewInt(iv.Micros % microsPerMinute), Scale: 6}, nil
		}
		return nil, fmt.Errorf("%s is not a field of %s", field, t)
	}
	switch x := v.(type) {
	case actions.Date:
		days := int64(x)
		y, m, d := civilFromDays(days)
		switch f {
		case "year":
			return int32(y), nil
		case "yearofweek":
			wy, _ := isoWeek(days)
			return int32(wy), nil
		case "quarter":
			return int32((m-1)/3 + 1), nil
		case "month":
			return int32(m), nil
		case "week":
			_, w := isoWeek(days)
			return int32(w), nil
		case "day":
			return int32(d), nil
		case "dow":
			return int32(floorMod(days+4, 7) + 1), nil
		case "dow_iso":
			return int32(floorMod(days+3, 7) + 1), nil
		case "doy":
			return int32(days - daysFromCivil(y, 1, 1) + 1), nil
		}
	default:
		w := wallOf(v, loc)
		switch f {
		case "hour":
			return int32(floorMod(w, microsPerDay) / microsPerHour), nil
		case "minute":
			return int32(floorMod(w, microsPerHour) / microsPerMinute), nil
		case "second":
			return actions.Decimal{Unscaled: big.NewInt(floorMod(w, microsPerMinute)), Scale: 6}, nil
		}
	}
	return nil, fmt.Errorf("cannot extract %s", field)
}

// integralToLong binds a function of one integral argument (Spark
// refuses decimals and doubles there), computed as a long.
func integralToLong(ret actions.DataType) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		if t := c.Args[0].Type(); t != nil && !isIntegral(t) {
			return nil, nil, typeErr(c, "argument 1 of %s must be an integer, not %s", c.Name, t)
		}
		args, err := b.coerceArgs(c, kLong)
		return args, ret, err
	}
}
