package input

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// A node decodes values of one position of the table schema (a column, a
// struct field, an array element, a map key or value) into the Arrow
// builder of that position. Nodes are compiled once per file from the
// schema; the builders are reused batch after batch.
type node interface {
	// json decodes the JSON value at the scanner's cursor and appends it.
	json(s *scanner) error
	// text parses the text form of a value (a CSV cell, a JSON object key
	// of a map) and appends it.
	text(t string) error
	// null appends a null, or fails when the position is not nullable.
	null() error
}

// valueError is a value that does not fit its position; Path is the
// column path ("amount", "address.city", "tags.element", "m.key").
type valueError struct {
	Path string
	Msg  string
	Err  error // a sentinel such as ErrUnknownColumn, or nil
}

func (e *valueError) Error() string { return fmt.Sprintf("column %q: %s", e.Path, e.Msg) }

// pos is what every node knows about its position, and its builder.
type pos struct {
	path     string
	typ      actions.DataType
	nullable bool
	bld      array.Builder
}

// null appends a null, or fails when the position is not nullable: the
// null of every node.
func (p *pos) null() error {
	if !p.nullable {
		return p.nullErr()
	}
	p.bld.AppendNull()
	return nil
}

// nullJSON consumes the JSON null at the cursor and appends a null.
func (p *pos) nullJSON(s *scanner) error {
	if err := s.literal("null"); err != nil {
		return err
	}
	return p.null()
}

func (p *pos) fail(format string, a ...any) error {
	return &valueError{Path: p.path, Msg: fmt.Sprintf(format, a...)}
}

// notA is the error for a value that is not of the position's type.
func (p *pos) notA(shown string) error {
	return p.fail("%s is not %s", shown, withArticle(p.typ.String()))
}

func (p *pos) nullErr() error {
	return p.fail("null in a non-nullable column")
}

// wrongKind is the error for a JSON value of the wrong kind at the cursor.
func (p *pos) wrongKind(s *scanner) error {
	c := s.peek()
	shown := kind(c)
	start := s.i
	if err := s.skip(0); err != nil {
		return err // not JSON at all: that, not the value's type, is wrong
	}
	if c == '"' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9') {
		shown = showJSONString(s, start) // show scalars themselves
	}
	return p.notA(shown)
}

func withArticle(t string) string {
	switch t[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + t
	}
	return "a " + t
}

// showText renders a text value in a message: quoted, shortened.
func showText(t string) string {
	const max = 60
	if len(t) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		return strconv.Quote(t[:cut]) + "..."
	}
	return strconv.Quote(t)
}

// showJSONString renders the JSON scalar from start to the cursor as it
// was written, shortened.
func showJSONString(s *scanner, start int) string {
	raw := s.b[start:s.i]
	const max = 62
	if len(raw) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		if raw[0] == '"' {
			return string(raw[:cut]) + `..."`
		}
		return string(raw[:cut]) + "..."
	}
	return string(raw)
}

// compile builds the node for a position of type t whose Arrow builder is b.
func compile(t actions.DataType, b array.Builder, path string, nullable bool) (node, error) {
	p := pos{path: path, typ: t, nullable: nullable, bld: b}
	switch t := t.(type) {
	case actions.PrimitiveType:
		switch t {
		case actions.TypeString:
			return &stringNode{pos: p, b: b.(*array.StringBuilder)}, nil
		case actions.TypeLong:
			return &intNode{pos: p, bits: 64, b64: b.(*array.Int64Builder)}, nil
		case actions.TypeInteger:
			return &intNode{pos: p, bits: 32, b32: b.(*array.Int32Builder)}, nil
		case actions.TypeShort:
			return &intNode{pos: p, bits: 16, b16: b.(*array.Int16Builder)}, nil
		case actions.TypeByte:
			return &intNode{pos: p, bits: 8, b8: b.(*array.Int8Builder)}, nil
		case actions.TypeFloat:
			return &floatNode{pos: p, bits: 32, b32: b.(*array.Float32Builder)}, nil
		case actions.TypeDouble:
			return &floatNode{pos: p, bits: 64, b64: b.(*array.Float64Builder)}, nil
		case actions.TypeBoolean:
			return &boolNode{pos: p, b: b.(*array.BooleanBuilder)}, nil
		case actions.TypeBinary:
			return &binaryNode{pos: p, b: b.(*array.BinaryBuilder)}, nil
		case actions.TypeDate:
			return &dateNode{pos: p, b: b.(*array.Date32Builder)}, nil
		case actions.TypeTimestamp, actions.TypeTimestampNTZ:
			return &timestampNode{pos: p, ntz: t == actions.TypeTimestampNTZ, b: b.(*array.TimestampBuilder)}, nil
		}
		return nil, fmt.Errorf("input: column %q: type %s cannot be read from JSON or CSV", path, t)
	case *actions.DecimalType:
		return &decimalNode{pos: p, dt: t, b: b.(*array.Decimal128Builder)}, nil
	case *actions.StructType:
		sb := b.(*array.StructBuilder)
		n := &structNode{pos: p, b: sb}
		if err := n.init(t, func(i int) array.Builder { return sb.FieldBuilder(i) }); err != nil {
			return nil, err
		}
		return n, nil
	case *actions.ArrayType:
		lb := b.(*array.ListBuilder)
		elem, err := compile(t.ElementType, lb.ValueBuilder(), path+".element", t.ContainsNull)
		if err != nil {
			return nil, err
		}
		return &listNode{pos: p, b: lb, elem: elem}, nil
	case *actions.MapType:
		mb := b.(*array.MapBuilder)
		key, err := compile(t.KeyType, mb.KeyBuilder(), path+".key", false)
		if err != nil {
			return nil, err
		}
		val, err := compile(t.ValueType, mb.ItemBuilder(), path+".value", t.ValueContainsNull)
		if err != nil {
			return nil, err
		}
		_, stringKeys := t.KeyType.(actions.PrimitiveType)
		return &mapNode{pos: p, b: mb, key: key, val: val, textKeys: stringKeys}, nil
	}
	return nil, fmt.Errorf("input: column %q: unknown type %T", path, t)
}

// jsonText parses a CSV cell holding a nested value as JSON.
func jsonText(n node, t string) error {
	var s scanner
	s.reset([]byte(t))
	if err := n.json(&s); err != nil {
		return err
	}
	return s.end()
}

// ---- strings and binaries ----

type stringNode struct {
	pos
	b *array.StringBuilder
}

func (n *stringNode) json(s *scanner) error {
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err != nil {
			return err
		}
		n.b.BinaryBuilder.Append(v)
		return nil
	case 'n':
		return n.nullJSON(s)
	}
	return n.wrongKind(s)
}

func (n *stringNode) text(t string) error {
	if !utf8.ValidString(t) {
		return n.fail("%s is not valid UTF-8", showText(t))
	}
	n.b.Append(t)
	return nil
}

type binaryNode struct {
	pos
	b   *array.BinaryBuilder
	buf []byte
}

func (n *binaryNode) json(s *scanner) error {
	if s.peek() == 'n' {
		return n.nullJSON(s)
	}
	if s.peek() != '"' {
		return n.wrongKind(s)
	}
	start := s.i
	v, err := s.str()
	if err != nil {
		return err
	}
	if err := n.decode(string(v)); err != nil {
		return n.fail("%s is not base64 (binary values are written in standard base64)", showJSONString(s, start))
	}
	return nil
}

func (n *binaryNode) text(t string) error {
	if err := n.decode(t); err != nil {
		return n.fail("%s is not base64 (binary values are written in standard base64)", showText(t))
	}
	return nil
}

func (n *binaryNode) decode(t string) error {
	enc := base64.StdEncoding
	if len(t)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	n.buf = n.buf[:0]
	out, err := enc.AppendDecode(n.buf, []byte(t))
	if err != nil {
		return err
	}
	n.buf = out
	n.b.Append(out)
	return nil
}

// ---- numbers ----

type intNode struct {
	pos
	bits int
	b64  *array.Int64Builder
	b32  *array.Int32Builder
	b16  *array.Int16Builder
	b8   *array.Int8Builder
}

func (n *intNode) json(s *scanner) error { return numberOrString(&n.pos, s, n.parse) }

func (n *intNode) text(t string) error { return n.parse(strings.TrimSpace(t), showText(t)) }

// parse appends the integer t. An exact integral value written with a
// fraction or an exponent ("3.0", "1e3") is accepted, as JSON writers that
// only have doubles produce them; "3.5" is not.
func (n *intNode) parse(t string, shown string) error {
	v, err := strconv.ParseInt(t, 10, n.bits)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return n.fail("%s is out of range for %s", shown, n.typ)
		}
		d, derr := actions.ParseDecimal(t, 38, 0)
		if derr != nil || !d.Unscaled.IsInt64() {
			if derr == nil {
				return n.fail("%s is out of range for %s", shown, n.typ)
			}
			return n.notA(shown)
		}
		v = d.Unscaled.Int64()
		if n.bits < 64 && (v < -1<<(n.bits-1) || v >= 1<<(n.bits-1)) {
			return n.fail("%s is out of range for %s", shown, n.typ)
		}
	}
	switch n.bits {
	case 64:
		n.b64.Append(v)
	case 32:
		n.b32.Append(int32(v))
	case 16:
		n.b16.Append(int16(v))
	default:
		n.b8.Append(int8(v))
	}
	return nil
}

type floatNode struct {
	pos
	bits int
	b64  *array.Float64Builder
	b32  *array.Float32Builder
}

func (n *floatNode) json(s *scanner) error { return numberOrString(&n.pos, s, n.parse) }

func (n *floatNode) text(t string) error { return n.parse(strings.TrimSpace(t), showText(t)) }

// parse appends the number t: decimal or exponent notation, or NaN,
// Infinity, -Infinity (also INF, +Infinity, any case), as Spark accepts
// them. A finite value beyond the type's range is an error, not infinity.
func (n *floatNode) parse(t string, shown string) error {
	v, ok := specialFloat(t)
	if !ok {
		if !isDecimalFloat(t) {
			return n.notA(shown)
		}
		var err error
		v, err = strconv.ParseFloat(t, n.bits)
		if err != nil {
			return n.fail("%s is out of range for %s", shown, n.typ)
		}
	}
	if n.bits == 64 {
		n.b64.Append(v)
	} else {
		n.b32.Append(float32(v))
	}
	return nil
}

func specialFloat(t string) (float64, bool) {
	if len(t) == 0 || (t[0] != 'n' && t[0] != 'N' && t[0] != 'i' && t[0] != 'I' && t[0] != '+' && t[0] != '-') {
		return 0, false
	}
	switch strings.ToLower(t) {
	case "nan":
		return math.NaN(), true
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// isDecimalFloat accepts [+-]digits[.digits][e[+-]digits], refusing what
// strconv also takes (hexadecimal, underscores, "inf" spelled otherwise).
func isDecimalFloat(t string) bool {
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		digits++
	}
	if i < len(t) && t[i] == '.' {
		i++
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(t)
}

type decimalNode struct {
	pos
	dt *actions.DecimalType
	b  *array.Decimal128Builder
}

func (n *decimalNode) json(s *scanner) error { return numberOrString(&n.pos, s, n.parse) }

func (n *decimalNode) text(t string) error { return n.parse(strings.TrimSpace(t), showText(t)) }

// parse appends t exactly: a value with more fractional digits than the
// scale (other than trailing zeros) or more digits than the precision is
// an error, never rounded.
func (n *decimalNode) parse(t string, shown string) error {
	if v, ok := fastDecimal(t, n.dt.Precision, n.dt.Scale); ok {
		n.b.Append(decimal128.FromI64(v))
		return nil
	}
	d, err := actions.ParseDecimal(t, n.dt.Precision, n.dt.Scale)
	if err != nil {
		if !isDecimalFloat(t) {
			return n.notA(shown)
		}
		if fractionDigits(t) > n.dt.Scale {
			return n.fail("%s has more than %d digits after the point, which %s cannot hold", shown, n.dt.Scale, n.dt)
		}
		return n.fail("%s has too many digits for %s", shown, n.dt)
	}
	n.b.Append(decimal128.FromBigInt(d.Unscaled))
	return nil
}

// fastDecimal parses the common case without big integers: plain text
// ([+-]digits[.digits]) that fits decimal(precision, scale) with
// precision at most 18. ok is false for anything else, which the general
// path then accepts or explains.
func fastDecimal(t string, precision, scale int) (v int64, ok bool) {
	if precision > 18 {
		return 0, false
	}
	i, neg := 0, false
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	digits, frac := 0, 0
	seenDigit, seenPoint := false, false
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
			if seenPoint {
				frac++
			}
			if v == 0 && c == '0' {
				continue // leading zero
			}
			if digits == 18 {
				return 0, false
			}
			v = v*10 + int64(c-'0')
			digits++
		case c == '.' && !seenPoint:
			seenPoint = true
		default:
			return 0, false
		}
	}
	if !seenDigit {
		return 0, false
	}
	for ; frac > scale; frac-- {
		if v%10 != 0 {
			return 0, false
		}
		v /= 10
	}
	for ; frac < scale; frac++ {
		if v > math.MaxInt64/10 {
			return 0, false
		}
		v *= 10
	}
	limit := int64(1)
	for range precision {
		limit *= 10
	}
	if v >= limit {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// fractionDigits is the number of digits after the point that the
// decimal number t (as isDecimalFloat accepts it) needs: "1.50" 1,
// "1.5e-3" 4, "15e2" 0.
func fractionDigits(t string) int {
	mant, exp, _ := strings.Cut(strings.ToLower(t), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(strings.TrimLeft(intPart, "+-")+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	if trimmed == "" {
		return 0 // zero
	}
	e := 0
	if exp != "" {
		v, err := strconv.Atoi(exp)
		if err != nil { // beyond int: a huge exponent
			if strings.HasPrefix(exp, "-") {
				return math.MaxInt32
			}
			return 0
		}
		e = max(min(v, math.MaxInt32), -math.MaxInt32)
	}
	return max(0, len(frac)-(len(digits)-len(trimmed))-e)
}

// ---- booleans, dates, timestamps ----

type boolNode struct {
	pos
	b *array.BooleanBuilder
}

func (n *boolNode) json(s *scanner) error {
	switch s.peek() {
	case 't':
		if err := s.literal("true"); err != nil {
			return err
		}
		n.b.Append(true)
		return nil
	case 'f':
		if err := s.literal("false"); err != nil {
			return err
		}
		n.b.Append(false)
		return nil
	case 'n':
		return n.nullJSON(s)
	}
	return n.wrongKind(s)
}

// text accepts true and false in any case, as Spark's CSV reader does.
func (n *boolNode) text(t string) error {
	v := strings.TrimSpace(t)
	switch {
	case strings.EqualFold(v, "true"):
		n.b.Append(true)
	case strings.EqualFold(v, "false"):
		n.b.Append(false)
	default:
		return n.notA(showText(t))
	}
	return nil
}

// numberOrString decodes a JSON number by its own text (so that no binary
// floating point rounds it), a string holding one (integers too large for
// JSON doubles, NaN and the infinities), or null; other kinds are type
// errors.
func numberOrString(p *pos, s *scanner, parse func(t string, shown string) error) error {
	if c := s.peek(); c == '-' || (c >= '0' && c <= '9') {
		t, _, err := s.number()
		if err != nil {
			return err
		}
		return parse(string(t), string(t))
	}
	return stringOnly(p, s, func(t, shown string) error { return parse(strings.TrimSpace(t), shown) })
}

// stringOnly decodes JSON strings (or null) with parse; other kinds are
// type errors.
func stringOnly(p *pos, s *scanner, parse func(t string, shown string) error) error {
	switch s.peek() {
	case '"':
		start := s.i
		t, err := s.str()
		if err != nil {
			return err
		}
		return parse(string(t), showJSONString(s, start))
	case 'n':
		return p.nullJSON(s)
	}
	return p.wrongKind(s)
}

type dateNode struct {
	pos
	b *array.Date32Builder
}

func (n *dateNode) json(s *scanner) error { return stringOnly(&n.pos, s, n.parse) }

func (n *dateNode) text(t string) error { return n.parse(t, showText(t)) }

func (n *dateNode) parse(t string, shown string) error {
	d, err := actions.ParseDate(strings.TrimSpace(t))
	if err != nil {
		return n.fail("%s is not a date (want YYYY-MM-DD)", shown)
	}
	n.b.Append(arrow.Date32(d))
	return nil
}

type timestampNode struct {
	pos
	ntz bool
	b   *array.TimestampBuilder
}

func (n *timestampNode) json(s *scanner) error { return stringOnly(&n.pos, s, n.parse) }

func (n *timestampNode) text(t string) error { return n.parse(t, showText(t)) }

// parse reads an RFC 3339 timestamp ('T' or a space between date and
// time). For a timestamp column a zone-less value is read as UTC; for a
// timestamp_ntz column a zone is an error. Digits past microseconds are
// dropped.
func (n *timestampNode) parse(t string, shown string) error {
	v := strings.TrimSpace(t)
	if n.ntz {
		ts, err := actions.ParseTimestampNTZ(v)
		if err != nil {
			return n.fail("%s is not a timestamp_ntz (want YYYY-MM-DDTHH:MM:SS[.ffffff], no time zone)", shown)
		}
		n.b.Append(arrow.Timestamp(ts))
		return nil
	}
	ts, err := actions.ParseTimestamp(v)
	if err != nil {
		return n.fail("%s is not a timestamp (want RFC 3339, YYYY-MM-DDTHH:MM:SS[.ffffff]Z or with an offset)", shown)
	}
	n.b.Append(arrow.Timestamp(ts))
	return nil
}

// ---- nested types ----

// structNode decodes a JSON object into a struct, or, as the root of a
// JSONL file, into a row (b is nil then).
type structNode struct {
	pos
	b      *array.StructBuilder
	st     *actions.StructType
	fields []*actions.StructField
	nodes  []node
	exact  map[string]int
	seen   []bool
}

func (n *structNode) init(t *actions.StructType, builder func(i int) array.Builder) error {
	n.st, n.fields = t, t.Fields
	n.nodes = make([]node, len(t.Fields))
	n.exact = make(map[string]int, len(t.Fields))
	n.seen = make([]bool, len(t.Fields))
	for i, f := range t.Fields {
		path := f.Name
		if n.path != "" {
			path = n.path + "." + f.Name
		}
		c, err := compile(f.Type, builder(i), path, f.Nullable)
		if err != nil {
			return err
		}
		n.nodes[i] = c
		n.exact[f.Name] = i
	}
	return nil
}

// field finds the field named key: exactly (by a map, the common case),
// else ignoring case.
func (n *structNode) field(key []byte) int {
	if i, ok := n.exact[string(key)]; ok {
		return i
	}
	return n.st.IndexFold(string(key))
}

func (n *structNode) json(s *scanner) error {
	switch s.peek() {
	case '{':
	case 'n':
		return n.nullJSON(s)
	default:
		return n.wrongKind(s)
	}
	if n.b != nil {
		n.b.Append(true)
	}
	return n.members(s)
}

// members decodes the object at the cursor ('{') into the fields, with
// absent fields null.
func (n *structNode) members(s *scanner) error {
	s.i++ // '{'
	clear(n.seen)
	if s.peek() == '}' {
		s.i++
	} else {
		for {
			if s.peek() != '"' {
				return s.unexpected("where an object key should be")
			}
			key, err := s.str()
			if err != nil {
				return err
			}
			i := n.field(key)
			if i < 0 {
				return n.unknown(key)
			}
			if n.seen[i] {
				return &valueError{Path: n.childPath(i), Msg: "appears twice in the object"}
			}
			n.seen[i] = true
			if err := s.expect(':', "after an object key"); err != nil {
				return err
			}
			if err := n.nodes[i].json(s); err != nil {
				return err
			}
			more, err := s.next('}', "object")
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	for i, ok := range n.seen {
		if ok {
			continue
		}
		if err := n.nodes[i].null(); err != nil {
			return &valueError{Path: n.childPath(i), Msg: "is missing, and the column is not nullable"}
		}
	}
	return nil
}

func (n *structNode) childPath(i int) string {
	if n.path == "" {
		return n.fields[i].Name
	}
	return n.path + "." + n.fields[i].Name
}

func (n *structNode) unknown(key []byte) error {
	names := make([]string, len(n.fields))
	for i, f := range n.fields {
		names[i] = f.Name
	}
	if n.path == "" {
		return &valueError{Path: string(key), Msg: "is not in the table schema (columns: " + strings.Join(names, ", ") + ")", Err: ErrUnknownColumn}
	}
	return &valueError{Path: n.path + "." + string(key), Msg: fmt.Sprintf("is not a field of struct %q (fields: %s)", n.path, strings.Join(names, ", ")), Err: ErrUnknownColumn}
}

// text reads a CSV cell holding the struct as a JSON object.
func (n *structNode) text(t string) error { return jsonText(n, t) }

// inCell gives a malformed-JSON error the column of the CSV cell that
// holds it.
func inCell(err error, path string) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return &valueError{Path: path, Msg: se.of("the cell")}
	}
	return err
}

type listNode struct {
	pos
	b    *array.ListBuilder
	elem node
}

func (n *listNode) json(s *scanner) error {
	switch s.peek() {
	case '[':
	case 'n':
		return n.nullJSON(s)
	default:
		return n.wrongKind(s)
	}
	s.i++
	n.b.Append(true)
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := n.elem.json(s); err != nil {
			return err
		}
		more, err := s.next(']', "array")
		if err != nil || !more {
			return err
		}
	}
}

func (n *listNode) text(t string) error { return jsonText(n, t) }

// mapNode decodes a JSON object (keys are the keys' text) or an array of
// [key, value] pairs, the form `scan --format jsonl` prints.
type mapNode struct {
	pos
	b        *array.MapBuilder
	key, val node
	textKeys bool // the key type has a text form (primitive)
	seen     map[string]struct{}
}

func (n *mapNode) json(s *scanner) error {
	switch s.peek() {
	case '{':
		if !n.textKeys {
			return n.fail("an object is not %s: its keys are not text; write the map as an array of [key, value] pairs", withArticle(n.typ.String()))
		}
		return n.object(s)
	case '[':
		return n.pairs(s)
	case 'n':
		return n.nullJSON(s)
	}
	return n.wrongKind(s)
}

func (n *mapNode) dup(key string) error {
	if n.seen == nil {
		n.seen = map[string]struct{}{}
	}
	if _, ok := n.seen[key]; ok {
		return n.fail("duplicate map key %s", showText(key))
	}
	n.seen[key] = struct{}{}
	return nil
}

func (n *mapNode) object(s *scanner) error {
	s.i++
	n.b.Append(true)
	clear(n.seen)
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.unexpected("where an object key should be")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := n.dup(string(key)); err != nil {
			return err
		}
		if err := n.key.text(string(key)); err != nil {
			return err
		}
		if err := s.expect(':', "after an object key"); err != nil {
			return err
		}
		if err := n.val.json(s); err != nil {
			return err
		}
		more, err := s.next('}', "object")
		if err != nil || !more {
			return err
		}
	}
}

func (n *mapNode) pairs(s *scanner) error {
	s.i++
	n.b.Append(true)
	clear(n.seen)
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '[' {
			return n.fail("%s is not a [key, value] pair", kind(s.peek()))
		}
		s.i++
		if s.peek() == 'n' {
			return n.fail("null map key")
		}
		start := s.i
		if err := n.key.json(s); err != nil {
			return err
		}
		if err := n.dup(string(s.b[start:s.i])); err != nil {
			return err
		}
		if err := s.expect(',', "after a map key (want [key, value])"); err != nil {
			return err
		}
		if err := n.val.json(s); err != nil {
			return err
		}
		if err := s.expect(']', "after a map value (want [key, value])"); err != nil {
			return err
		}
		more, err := s.next(']', "array")
		if err != nil || !more {
			return err
		}
	}
}

func (n *mapNode) text(t string) error { return jsonText(n, t) }
