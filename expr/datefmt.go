package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Spark's datetime patterns (date_format, to_timestamp, unix_timestamp,
// from_unixtime): y year, M/L month (MMM Jan, MMMM January), d day, D
// day of year, H/k/K/h hour, m minute, s second, S fraction, a AM/PM, E
// day of week, Q/q quarter, G era, z zone name, VV zone id, X/x/Z/O
// offsets, 'text' literal text ('' is a quote). Parsing is case-
// insensitive and must consume the whole text; fields it does not find
// default to 1970-01-01 00:00:00 in the session time zone.

type patToken struct {
	letter rune // 0 for literal text
	count  int
	text   string
}

var patternCache = map[string][]patToken{}

func compilePattern(p string) ([]patToken, error) {
	var out []patToken
	r := []rune(p)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(r) {
					return nil, fmt.Errorf("the pattern %s has an unterminated quote", quoteString(p))
				}
				if r[j] == '\'' {
					if j+1 < len(r) && r[j+1] == '\'' {
						b.WriteRune('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteRune(r[j])
				j++
			}
			if j == i+1 {
				out = append(out, patToken{text: "'"})
			} else {
				out = append(out, patToken{text: b.String()})
			}
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(r) && r[j] == c {
				j++
			}
			n := j - i
			if !strings.ContainsRune("GyMLdDHhkKmsSaEQqzVXxZO", c) {
				return nil, fmt.Errorf("the pattern letter %q of %s is not supported", c, quoteString(p))
			}
			if c == 'V' && n != 2 {
				return nil, fmt.Errorf("the pattern %s: V must be VV", quoteString(p))
			}
			out = append(out, patToken{letter: c, count: n})
			i = j
		default:
			out = append(out, patToken{text: string(c)})
			i++
		}
	}
	return out, nil
}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func padInt(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	for len(s) < width {
		s = "0" + s
	}
	if neg {
		return "-" + s
	}
	return s
}

func formatOffset(off int, colon, zForZero bool, withMinutes int) string {
	if off == 0 && zForZero {
		return "Z"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	h, m := off/3600, off%3600/60
	switch {
	case withMinutes == 0 && m == 0:
		return sign + padInt(int64(h), 2)
	case colon:
		return sign + padInt(int64(h), 2) + ":" + padInt(int64(m), 2)
	}
	return sign + padInt(int64(h), 2) + padInt(int64(m), 2)
}

// formatWithPattern prints timestamp us in loc with a Spark pattern.
func formatWithPattern(us int64, pattern string, loc *time.Location) (any, error) {
	toks, err := compilePattern(pattern)
	if err != nil {
		return nil, err
	}
	t := time.UnixMicro(us).In(loc)
	w := toWall(us, loc)
	days := floorDiv(w, microsPerDay)
	y, m, d := civilFromDays(days)
	inDay := w - days*microsPerDay
	hour := inDay / microsPerHour
	minute := inDay % microsPerHour / microsPerMinute
	sec := inDay % microsPerMinute / microsPerSecond
	frac := inDay % microsPerSecond
	dow := floorMod(days+3, 7)
	name, off := t.Zone()
	var b strings.Builder
	for _, tk := range toks {
		if tk.letter == 0 {
			b.WriteString(tk.text)
			continue
		}
		n := tk.count
		switch tk.letter {
		case 'G':
			if y > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y':
			ye := y
			if ye <= 0 {
				ye = 1 - ye
			}
			switch {
			case n == 2:
				b.WriteString(padInt(ye%100, 2))
			default:
				b.WriteString(padInt(ye, n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(monthNames[m-1])
			case n == 3:
				b.WriteString(monthNames[m-1][:3])
			default:
				b.WriteString(padInt(m, n))
			}
		case 'd':
			b.WriteString(padInt(d, n))
		case 'D':
			b.WriteString(padInt(days-daysFromCivil(y, 1, 1)+1, n))
		case 'H':
			b.WriteString(padInt(hour, n))
		case 'k':
			h := hour
			if h == 0 {
				h = 24
			}
			b.WriteString(padInt(h, n))
		case 'K':
			b.WriteString(padInt(hour%12, n))
		case 'h':
			h := hour % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(padInt(h, n))
		case 'm':
			b.WriteString(padInt(minute, n))
		case 's':
			b.WriteString(padInt(sec, n))
		case 'S':
			digits := padInt(frac*1000, 9)
			if n <= 9 {
				b.WriteString(digits[:n])
			} else {
				b.WriteString(digits + strings.Repeat("0", n-9))
			}
		case 'a':
			if hour < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'E':
			if n >= 4 {
				b.WriteString(dayNames[dow])
			} else {
				b.WriteString(dayNames[dow][:3])
			}
		case 'Q', 'q':
			q := (m-1)/3 + 1
			switch {
			case n >= 4:
				b.WriteString([]string{"1st", "2nd", "3rd", "4th"}[q-1] + " quarter")
			case n == 3:
				b.WriteString("Q" + strconv.FormatInt(q, 10))
			default:
				b.WriteString(padInt(q, n))
			}
		case 'z':
			if n >= 4 {
				b.WriteString(loc.String())
			} else {
				b.WriteString(name)
			}
		case 'V':
			b.WriteString(loc.String())
		case 'X':
			b.WriteString(formatOffset(off, n >= 3, true, n-1))
		case 'x':
			b.WriteString(formatOffset(off, n >= 3, false, n-1))
		case 'Z':
			switch {
			case n <= 3:
				b.WriteString(formatOffset(off, false, false, 1))
			case n == 4:
				if off == 0 {
					b.WriteString("GMT")
				} else {
					b.WriteString("GMT" + formatOffset(off, true, false, 1))
				}
			default:
				b.WriteString(formatOffset(off, true, true, 1))
			}
		case 'O':
			if off == 0 {
				b.WriteString("GMT")
			} else if n == 1 {
				sign := "+"
				o := off
				if o < 0 {
					sign, o = "-", -o
				}
				s := "GMT" + sign + strconv.Itoa(o/3600)
				if o%3600 != 0 {
					s += ":" + padInt(int64(o%3600/60), 2)
				}
				b.WriteString(s)
			} else {
				b.WriteString("GMT" + formatOffset(off, true, false, 1))
			}
		}
	}
	return b.String(), nil
}

// parseWithPattern reads a timestamp from s with a Spark pattern.
func parseWithPattern(s, pattern string, loc *time.Location) (int64, error) {
	toks, err := compilePattern(pattern)
	if err != nil {
		return 0, err
	}
	fail := func() (int64, error) {
		return 0, fmt.Errorf("%s does not match the pattern %s (use try_to_timestamp to get NULL instead)", quoteString(s), quoteString(pattern))
	}
	year, month, day := int64(1970), int64(1), int64(1)
	doy := int64(-1)
	var hour, minute, sec, frac int64
	pm, has12 := false, false
	var zone *time.Location
	pos := 0
	readDigits := func(minN, maxN int) (int64, bool) {
		j := pos
		for j < len(s) && j-pos < maxN && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-pos < minN {
			return 0, false
		}
		v, err := strconv.ParseInt(s[pos:j], 10, 64)
		if err != nil {
			return 0, false
		}
		pos = j
		return v, true
	}
	matchWord := func(words []string, prefixLen int) (int, bool) {
		for i, w := range words {
			if prefixLen > 0 {
				w = w[:prefixLen]
			}
			if len(s)-pos >= len(w) && strings.EqualFold(s[pos:pos+len(w)], w) {
				pos += len(w)
				return i, true
			}
		}
		return 0, false
	}
	for ti, tk := range toks {
		if tk.letter == 0 {
			if !strings.HasPrefix(strings.ToLower(s[pos:]), strings.ToLower(tk.text)) {
				return fail()
			}
			pos += len(tk.text)
			continue
		}
		n := tk.count
		// A numeric field of one letter followed by another numeric
		// field takes fixed width only when it is last or followed by
		// text; otherwise as many digits as there are.
		maxN := 19
		nextNumeric := ti+1 < len(toks) && toks[ti+1].letter != 0 && strings.ContainsRune("yMLdDHhkKmsS", toks[ti+1].letter)
		if n >= 2 || nextNumeric {
			maxN = max(n, 2)
		}
		var ok bool
		switch tk.letter {
		case 'y':
			if n == 2 {
				var v int64
				if v, ok = readDigits(2, 2); ok {
					year = 2000 + v
				}
			} else {
				year, ok = readDigits(max(n, 1), max(n, 9))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				var i int
				if i, ok = matchWord(monthNames, 0); ok {
					month = int64(i + 1)
				}
			case n == 3:
				var i int
				if i, ok = matchWord(monthNames, 3); ok {
					month = int64(i + 1)
				}
			default:
				month, ok = readDigits(n, maxN)
			}
		case 'd':
			day, ok = readDigits(n, maxN)
		case 'D':
			doy, ok = readDigits(n, max(n, 3))
		case 'H', 'k':
			hour, ok = readDigits(n, maxN)
			if tk.letter == 'k' && hour == 24 {
				hour = 0
			}
		case 'h', 'K':
			hour, ok = readDigits(n, maxN)
			has12 = true
			if tk.letter == 'h' && hour == 12 {
				hour = 0
			}
		case 'm':
			minute, ok = readDigits(n, maxN)
		case 's':
			sec, ok = readDigits(n, maxN)
		case 'S':
			start := pos
			_, ok = readDigits(1, n)
			if ok {
				digits := s[start:pos] + strings.Repeat("0", 6)
				frac, _ = strconv.ParseInt(digits[:6], 10, 64)
			}
		case 'a':
			var i int
			if i, ok = matchWord([]string{"AM", "PM"}, 0); ok {
				pm = i == 1
			}
		case 'E':
			if n >= 4 {
				_, ok = matchWord(dayNames, 0)
			} else {
				_, ok = matchWord(dayNames, 3)
			}
		case 'G':
			_, ok = matchWord([]string{"AD", "BC"}, 0)
		case 'Q', 'q':
			_, ok = readDigits(n, max(n, 1))
		case 'z', 'V':
			j := pos
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || s[j] == '/' || s[j] == '_' || s[j] == '+' || s[j] == '-' || s[j] >= '0' && s[j] <= '9' || s[j] == ':') {
				j++
			}
			if l, err := LoadTimeZone(s[pos:j]); err == nil {
				zone, pos, ok = l, j, true
			}
		case 'X', 'x', 'Z', 'O':
			rest := s[pos:]
			if strings.HasPrefix(strings.ToUpper(rest), "GMT") {
				pos += 3
				rest = s[pos:]
			}
			if strings.HasPrefix(rest, "Z") {
				zone, pos, ok = time.UTC, pos+1, true
				break
			}
			j := 0
			for j < len(rest) && (j == 0 && (rest[j] == '+' || rest[j] == '-') || j > 0 && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == ':')) {
				j++
			}
			if secs, good := parseZoneOffset(rest[:j]); good {
				zone, pos, ok = time.FixedZone(rest[:j], secs), pos+j, true
			}
		}
		if !ok {
			return fail()
		}
	}
	if pos != len(s) {
		return fail()
	}
	if has12 && pm {
		hour += 12
	}
	if month < 1 || month > 12 || hour > 23 || minute > 59 || sec > 59 {
		return fail()
	}
	var days int64
	if doy >= 0 {
		if doy < 1 || doy > 365+int64(b2int(isLeap(year))) {
			return fail()
		}
		days = daysFromCivil(year, 1, 1) + doy - 1
	} else {
		if day < 1 || day > daysInMonth(year, month) {
			return fail()
		}
		days = daysFromCivil(year, month, day)
	}
	wall := days*microsPerDay + hour*microsPerHour + minute*microsPerMinute + sec*microsPerSecond + frac
	if zone == nil {
		zone = loc
	}
	return fromLocal(wall, zone), nil
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}
