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
			n, err := strconv.ParseInt(view(t), 10, 64)
			if err != nil {
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
			n, err := strconv.ParseInt(view(t), 10, 64)
			c.i = n
			return err == nil
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
