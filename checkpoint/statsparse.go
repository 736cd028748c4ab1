package checkpoint

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// This file reads add.stats JSON straight into typed values, one file at
// a time, without building the maps actions.ParseStats builds. It is
// exact or it declines: a document it cannot hold in the layout's typed
// columns exactly as actions.ParseStats and actions.ParseStatValue would
// read it (a key the layout lacks, a value of the wrong kind or that does
// not parse as its column's type, a duplicate key, escapes it does not
// decode itself, anything but one JSON object) is reported irregular, and
// the caller keeps that file's stats text as written.

// statCell is one parsed bound or null count.
type statCell struct {
	set  bool // the key was present (perhaps with JSON null)
	null bool
	i    int64 // integral types, dates, timestamps, null counts
	f    float64
	b    bool
	s    []byte // strings and binaries: a view of the input or of scratch
	d    decimal128.Num
}

// Cells of a column: min, max and null count, at col*3+cell.
const (
	cellMin = iota
	cellMax
	cellNulls
	cellsPerColumn
)

// statsRow is one file's stats as parsed against a layout.
type statsRow struct {
	numRecords int64
	hasNum     bool
	tight      bool
	hasTight   bool
	cells      []statCell
	touched    []int32 // cells set by this row, to reset
	scratch    []byte  // decoded strings with escapes
}

func newStatsRow(l *FileLayout) *statsRow {
	return &statsRow{cells: make([]statCell, len(l.Stats)*cellsPerColumn)}
}

func (r *statsRow) reset() {
	for _, c := range r.touched {
		r.cells[c] = statCell{}
	}
	r.touched = r.touched[:0]
	r.numRecords, r.hasNum, r.tight, r.hasTight = 0, false, false, false
	r.scratch = r.scratch[:0]
}

// statsParser parses one stats document.
type statsParser struct {
	layout *FileLayout
	in     []byte
	pos    int
	row    *statsRow
}

// parseStats parses js into row (reset first) and reports whether the
// document is regular.
func parseStats(l *FileLayout, js []byte, row *statsRow) bool {
	row.reset()
	p := statsParser{layout: l, in: js, row: row}
	if !p.top() {
		return false
	}
	p.ws()
	return p.pos == len(p.in)
}

func (p *statsParser) ws() {
	if p.pos < len(p.in) && p.in[p.pos] > ' ' {
		return // the common case: writers put no spaces in stats
	}
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *statsParser) peek() byte {
	p.ws()
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

func (p *statsParser) eat(c byte) bool {
	if p.peek() == c {
		p.pos++
		return true
	}
	return false
}

// object walks the members of an object, calling member with each key
// (positioned before the value). It reports false on a syntax error or
// when member does.
func (p *statsParser) object(member func(key []byte) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return false
		}
		if !member(key) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

// null consumes a JSON null if one is next.
func (p *statsParser) null() bool {
	if p.peek() == 'n' && len(p.in)-p.pos >= 4 && string(p.in[p.pos:p.pos+4]) == "null" {
		p.pos += 4
		return true
	}
	return false
}

func (p *statsParser) boolean() (v, ok bool) {
	switch {
	case p.peek() == 't' && len(p.in)-p.pos >= 4 && string(p.in[p.pos:p.pos+4]) == "true":
		p.pos += 4
		return true, true
	case p.peek() == 'f' && len(p.in)-p.pos >= 5 && string(p.in[p.pos:p.pos+5]) == "false":
		p.pos += 5
		return false, true
	}
	return false, false
}

// str reads a string. Strings without escapes, in valid UTF-8, are a view
// of the input; others are decoded as encoding/json decodes them, into
// the row's scratch space.
func (p *statsParser) str() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.pos + 1
	simple := true
	i := start
	for ; i < len(p.in); i++ {
		c := p.in[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			simple = false
			i++
			continue
		}
		if c < 0x20 {
			return nil, false // not JSON
		}
		if c >= 0x80 {
			simple = false
		}
	}
	if i >= len(p.in) {
		return nil, false
	}
	tok := p.in[start:i]
	p.pos = i + 1
	if simple || !hasEscape(tok) && utf8.Valid(tok) {
		return tok, true
	}
	var s string
	if err := json.Unmarshal(p.in[start-1:i+1], &s); err != nil {
		return nil, false
	}
	off := len(p.row.scratch)
	p.row.scratch = append(p.row.scratch, s...)
	return p.row.scratch[off:len(p.row.scratch):len(p.row.scratch)], true
}

func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// number reads a JSON number's text, with JSON's grammar exactly.
func (p *statsParser) number() ([]byte, bool) {
	p.ws()
	in, i := p.in, p.pos
	start := i
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && in[i] >= '1' && in[i] <= '9':
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(in) && in[i] == '.' {
		i++
		d := i
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		d := i
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	p.pos = i
	return in[start:i], true
}

// view is b as a string without copying, for parsers that keep nothing.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// top reads the document: one object of the keys Delta writers use, in
// the exact spelling (encoding/json would also match other cases of the
// struct's field names: those documents are left irregular).
func (p *statsParser) top() bool {
	var seen [5]bool
	return p.object(func(key []byte) bool {
		switch view(key) {
		case "numRecords":
			if seen[0] {
				return false
			}
			seen[0] = true
			if p.null() {
				return true
			}
			t, ok := p.number()
			if !ok {
				return false
			}
			n, ok := parseInt64(t)
			if !ok {
				return false
			}
			p.row.numRecords, p.row.hasNum = n, true
			return true
		case "tightBounds":
			if seen[1] {
				return false
			}
			seen[1] = true
			if p.null() {
				return true
			}
			b, ok := p.boolean()
			p.row.tight, p.row.hasTight = b, ok
			return ok
		case "minValues":
			return p.section(&seen[2], cellMin)
		case "maxValues":
			return p.section(&seen[3], cellMax)
		case "nullCount":
			return p.section(&seen[4], cellNulls)
		}
		return false
	})
}

func (p *statsParser) section(seen *bool, cell int) bool {
	if *seen {
		return false
	}
	*seen = true
	if p.null() {
		return true
	}
	return p.walk(p.layout.root, cell)
}

// walk reads one object of a section under node.
func (p *statsParser) walk(node *statsNode, cell int) bool {
	next := 0 // keys usually come in schema order: try the next one first
	return p.object(func(key []byte) bool {
		child, at := node.child(key, next)
		if child == nil {
			return false
		}
		next = at + 1
		if child.col < 0 {
			if p.null() {
				return true // as a missing struct: nothing below it
			}
			return p.walk(child, cell)
		}
		idx := child.col*cellsPerColumn + cell
		c := &p.row.cells[idx]
		if c.set {
			return false
		}
		c.set = true
		p.row.touched = append(p.row.touched, int32(idx))
		if p.null() {
			c.null = true
			return true
		}
		if cell == cellNulls {
			t, ok := p.number()
			if !ok {
				return false
			}
			c.i, ok = parseInt64(t)
			return ok
		}
		return p.bound(p.layout.Stats[child.col], c)
	})
}

// bound reads a min or max of column col into c, as ParseStatValue
// would read it.
func (p *statsParser) bound(col *StatsColumn, c *statCell) bool {
	if col.Arrow == nil {
		return false
	}
	switch t := col.Type.(type) {
	case *actions.DecimalType:
		var text []byte
		var ok bool
		if p.peek() == '"' {
			text, ok = p.str()
		} else {
			text, ok = p.number()
		}
		if !ok {
			return false
		}
		d, err := actions.ParseDecimal(view(text), t.Precision, t.Scale)
		if err != nil || !d.Unscaled.IsInt64() && d.Unscaled.BitLen() > 126 {
			return false
		}
		c.d = decimal128.FromBigInt(d.Unscaled)
		return true
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
			text, ok := p.number()
			if !ok {
				return false
			}
			if n, ok := parseInt64(text); ok && t == actions.TypeLong {
				c.i = n
				return true
			}
			n, err := actions.ParseStatInt(t, view(text))
			c.i = n
			return err == nil
		case actions.TypeFloat, actions.TypeDouble:
			var text []byte
			var ok bool
			if p.peek() == '"' {
				text, ok = p.str()
			} else {
				text, ok = p.number()
			}
			if !ok {
				return false
			}
			if t == actions.TypeDouble {
				if f, ok := fastFloat64(text); ok {
					c.f = f
					return true
				}
			}
			f, err := actions.ParseStatFloat(t, view(text))
			c.f = f
			return err == nil
		case actions.TypeString, actions.TypeBinary:
			s, ok := p.str()
			c.s = s
			return ok
		case actions.TypeBoolean:
			b, ok := p.boolean()
			c.b = b
			return ok
		case actions.TypeDate:
			s, ok := p.str()
			if !ok {
				return false
			}
			d, err := actions.ParseDate(view(s))
			c.i = int64(d)
			return err == nil
		case actions.TypeTimestamp:
			s, ok := p.str()
			if !ok {
				return false
			}
			ts, err := actions.ParseTimestamp(view(s))
			c.i = int64(ts)
			return err == nil
		case actions.TypeTimestampNTZ:
			s, ok := p.str()
			if !ok {
				return false
			}
			ts, err := actions.ParseTimestampNTZ(view(s))
			c.i = int64(ts)
			return err == nil
		}
	}
	return false
}

// parseInt64 parses JSON integer text as strconv.ParseInt(s, 10, 64)
// does, for the common case of at most 18 digits; ok is false otherwise
// (the caller then asks strconv, or declines).
func parseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		n, err := strconv.ParseInt(view(b), 10, 64)
		if neg {
			n, err = strconv.ParseInt("-"+string(b), 10, 64)
		}
		return n, err == nil
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// pow10s are the powers of ten a float64 holds exactly.
var pow10s = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat64 parses JSON number text to the float64 strconv.ParseFloat
// gives, when the number has at most 15 significant digits and an
// exponent within 22 (then mantissa and power of ten are exact and one
// multiplication or division rounds correctly: Clinger's fast path);
// ok is false otherwise.
func fastFloat64(b []byte) (float64, bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	digits, exp := 0, 0
	seenPoint := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if mant == 0 && c == '0' {
				if seenPoint {
					exp--
				}
				continue
			}
			if digits == 15 {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			digits++
			if seenPoint {
				exp--
			}
		case c == '.' && !seenPoint:
			seenPoint = true
		case c == 'e' || c == 'E':
			e, ok := parseInt64(b[i+1:])
			if !ok && len(b) > i+1 && b[i+1] == '+' {
				e, ok = parseInt64(b[i+2:])
			}
			if !ok || e > 400 || e < -400 {
				return 0, false
			}
			exp += int(e)
			i = len(b)
		default:
			return 0, false
		}
	}
	f := float64(mant)
	switch {
	case mant == 0:
		f = 0
	case exp == 0:
	case exp > 0 && exp <= 22:
		f *= pow10s[exp]
	case exp < 0 && exp >= -22:
		f /= pow10s[-exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}
