package expr

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// The parts of the grammar for functions and Spark's other expression
// forms:
//
//	primary  := ... | name([DISTINCT] expr, ...) | CASE [x] WHEN ... END
//	          | TRY_CAST(expr AS type) | INTERVAL ... | EXTRACT(f FROM x)
//	          | POSITION(a IN b) | SUBSTRING(s FROM p [FOR n])
//	          | TRIM([BOTH|LEADING|TRAILING] [c] FROM s)
//	          | CURRENT_DATE | CURRENT_TIMESTAMP
//	postfix  := primary ( [expr] | .name )*
//
// Strings follow Spark: 'single' or "double" quotes, a backslash escapes
// the next character (\n, \t, \r, \b, \0, \Z, \\, \', \", \uXXXX, octal
// \ddd; \% and \_ stay as written, for LIKE), a doubled quote is one
// quote, r'raw' strings keep backslashes, and adjacent strings are one:
// 'a' 'b' is 'ab'.

// parsePostfix reads a primary and then subscripts and field accesses.
func (p *parser) parsePostfix() (Expr, error) {
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("["):
			if err := p.next(); err != nil {
				return nil, err
			}
			i, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("]"); err != nil {
				return nil, err
			}
			x = &Subscript{X: x, Index: i}
		case p.isOp(".") && !isColumn(x):
			if err := p.next(); err != nil {
				return nil, err
			}
			t := p.tok
			if t.kind != tokIdent && t.kind != tokQuoted {
				return nil, p.errorf(t, "expected a field name but found %s", p.describe(t))
			}
			if err := p.next(); err != nil {
				return nil, err
			}
			x = &FieldOf{X: x, Name: t.text}
		default:
			return x, nil
		}
	}
}

func isColumn(e Expr) bool { _, ok := e.(*Column); return ok }

// peekOp reports whether the token after the current one is op.
func (p *parser) peekOp(op string) bool {
	save := *p
	defer func() { *p = save }()
	if err := p.next(); err != nil {
		return false
	}
	return p.isOp(op)
}

// parseSpecial reads the forms that start with a name but are not a
// column: calls and Spark's keyword forms. ok is false when t starts a
// column reference.
func (p *parser) parseSpecial(t token) (Expr, bool, error) {
	upper := strings.ToUpper(t.text)
	switch upper {
	case "CASE":
		e, err := p.parseCase()
		return e, true, err
	case "INTERVAL":
		if p.peekOp("(") || p.peekOp(")") || p.peekOp(",") || p.peekOp("=") {
			return nil, false, nil
		}
		e, err := p.parseInterval()
		return e, true, err
	case "CURRENT_DATE", "CURRENT_TIMESTAMP", "CURRENT_TIMEZONE":
		if !p.peekOp("(") {
			return &Call{Name: strings.ToLower(upper)}, true, p.next()
		}
	}
	if !p.peekOp("(") {
		return nil, false, nil
	}
	if err := p.next(); err != nil { // the name
		return nil, true, err
	}
	if err := p.enter(); err != nil {
		return nil, true, err
	}
	defer p.leave()
	if err := p.next(); err != nil { // (
		return nil, true, err
	}
	switch upper {
	case "TRY_CAST":
		x, err := p.parseExpr()
		if err != nil {
			return nil, true, err
		}
		if err := p.expectKeyword("AS"); err != nil {
			return nil, true, err
		}
		to, err := p.parseType()
		if err != nil {
			return nil, true, err
		}
		return &Cast{X: x, To: to, Try: true}, true, p.expectOp(")")
	case "EXTRACT":
		f := p.tok
		if f.kind != tokIdent {
			return nil, true, p.errorf(f, "expected a field (YEAR, MONTH, DAY, HOUR, ...) but found %s", p.describe(f))
		}
		if err := p.next(); err != nil {
			return nil, true, err
		}
		if err := p.expectKeyword("FROM"); err != nil {
			return nil, true, err
		}
		x, err := p.parseExpr()
		if err != nil {
			return nil, true, err
		}
		return &Call{Name: "date_part", Args: []Expr{&Literal{Value: strings.ToLower(f.text), DataType: actions.TypeString}, x}}, true, p.expectOp(")")
	case "POSITION":
		a, err := p.parseBitOr()
		if err != nil {
			return nil, true, err
		}
		if p.isKeyword("IN") {
			if err := p.next(); err != nil {
				return nil, true, err
			}
			b, err := p.parseExpr()
			if err != nil {
				return nil, true, err
			}
			return &Call{Name: "locate", Args: []Expr{a, b}}, true, p.expectOp(")")
		}
		args, err := p.restOfArgs(a)
		return &Call{Name: "position", Args: args}, true, err
	case "SUBSTRING", "SUBSTR":
		s, err := p.parseExpr()
		if err != nil {
			return nil, true, err
		}
		if p.isKeyword("FROM") {
			if err := p.next(); err != nil {
				return nil, true, err
			}
			pos, err := p.parseExpr()
			if err != nil {
				return nil, true, err
			}
			args := []Expr{s, pos}
			if p.isKeyword("FOR") {
				if err := p.next(); err != nil {
					return nil, true, err
				}
				n, err := p.parseExpr()
				if err != nil {
					return nil, true, err
				}
				args = append(args, n)
			}
			return &Call{Name: strings.ToLower(upper), Args: args}, true, p.expectOp(")")
		}
		args, err := p.restOfArgs(s)
		return &Call{Name: strings.ToLower(upper), Args: args}, true, err
	case "TRIM":
		return p.parseTrim()
	}
	name := strings.ToLower(t.text)
	if p.isOp(")") {
		return &Call{Name: name}, true, p.next()
	}
	if p.isKeyword("DISTINCT") {
		return nil, true, p.errorf(p.tok, "DISTINCT is for aggregate functions, and %s is not one", name)
	}
	first, err := p.parseExpr()
	if err != nil {
		return nil, true, err
	}
	args, err := p.restOfArgs(first)
	return &Call{Name: name, Args: args}, true, err
}

// restOfArgs reads ", expr" ... ")" after a first argument.
func (p *parser) restOfArgs(first Expr) ([]Expr, error) {
	args := []Expr{first}
	for p.isOp(",") {
		if err := p.next(); err != nil {
			return nil, err
		}
		a, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	return args, p.expectOp(")")
}

// parseTrim reads TRIM(s), TRIM(c FROM s), TRIM(BOTH|LEADING|TRAILING
// [c] FROM s) after its parenthesis.
func (p *parser) parseTrim() (Expr, bool, error) {
	name := "trim"
	explicit := false
	switch {
	case p.isKeyword("BOTH"):
		explicit = true
	case p.isKeyword("LEADING"):
		name, explicit = "ltrim", true
	case p.isKeyword("TRAILING"):
		name, explicit = "rtrim", true
	}
	if explicit {
		if err := p.next(); err != nil {
			return nil, true, err
		}
		if p.isKeyword("FROM") {
			if err := p.next(); err != nil {
				return nil, true, err
			}
			s, err := p.parseExpr()
			if err != nil {
				return nil, true, err
			}
			return &Call{Name: name, Args: []Expr{s}}, true, p.expectOp(")")
		}
	}
	first, err := p.parseExpr()
	if err != nil {
		return nil, true, err
	}
	if p.isKeyword("FROM") {
		if err := p.next(); err != nil {
			return nil, true, err
		}
		s, err := p.parseExpr()
		if err != nil {
			return nil, true, err
		}
		return &Call{Name: name, Args: []Expr{s, first}}, true, p.expectOp(")")
	}
	if explicit {
		return nil, true, p.errorf(p.tok, "expected FROM but found %s", p.describe(p.tok))
	}
	args, err := p.restOfArgs(first)
	if len(args) == 2 {
		// Spark's deprecated trim(trimStr, str) order.
		args[0], args[1] = args[1], args[0]
	}
	return &Call{Name: name, Args: args}, true, err
}

// parseCase reads CASE [operand] WHEN ... THEN ... [ELSE ...] END.
func (p *parser) parseCase() (Expr, error) {
	start := p.tok
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.next(); err != nil {
		return nil, err
	}
	var operandExpr Expr
	if !p.isKeyword("WHEN") {
		x, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		operandExpr = x
	}
	c := &Case{}
	for p.isKeyword("WHEN") {
		if err := p.next(); err != nil {
			return nil, err
		}
		cond, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("THEN"); err != nil {
			return nil, err
		}
		then, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if operandExpr != nil {
			cond = &Compare{Op: Eq, Left: operandExpr, Right: cond}
		}
		c.Whens = append(c.Whens, When{Cond: cond, Then: then})
	}
	if len(c.Whens) == 0 {
		return nil, p.errorf(p.tok, "expected WHEN after CASE but found %s", p.describe(p.tok))
	}
	if p.isKeyword("ELSE") {
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	if !p.isKeyword("END") {
		return nil, p.errorf(p.tok, "expected END to close the CASE at column %d but found %s", p.errorf(start, "").Column, p.describe(p.tok))
	}
	return c, p.next()
}

// parseInterval reads INTERVAL 'text' [unit [TO unit]], INTERVAL n unit
// [n unit ...] and INTERVAL 'n unit ...'.
func (p *parser) parseInterval() (Expr, error) {
	start := p.tok
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokString {
		text := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		if f, ok := p.intervalFieldKeyword(); ok {
			if err := p.next(); err != nil {
				return nil, err
			}
			end := f
			if p.isKeyword("TO") {
				if err := p.next(); err != nil {
					return nil, err
				}
				e, ok := p.intervalFieldKeyword()
				if !ok {
					return nil, p.errorf(p.tok, "expected an interval unit after TO but found %s", p.describe(p.tok))
				}
				end = e
				if err := p.next(); err != nil {
					return nil, err
				}
			}
			lit, err := qualifiedInterval(text.text, f, end)
			if err != nil {
				return nil, p.errorf(text, "%v", err)
			}
			return lit, nil
		}
		fields := strings.Fields(text.text)
		if len(fields) > 0 && strings.EqualFold(fields[0], "interval") {
			fields = fields[1:]
		}
		if len(fields) == 0 || len(fields)%2 != 0 {
			return nil, p.errorf(text, "interval %s: want counts and units, as in '1 day 2 hours'", quoteString(text.text))
		}
		var terms []intervalTerm
		for i := 0; i < len(fields); i += 2 {
			terms = append(terms, intervalTerm{num: fields[i], unit: fields[i+1]})
		}
		lit, err := multiUnitInterval(terms)
		if err != nil {
			return nil, p.errorf(text, "%v", err)
		}
		return lit, nil
	}
	var terms []intervalTerm
	for p.tok.kind == tokNumber || (p.isOp("-") || p.isOp("+")) && len(terms) == 0 || (p.isOp("-") || p.isOp("+")) && p.signedTermFollows() {
		sign := ""
		if p.isOp("-") || p.isOp("+") {
			sign = p.tok.text
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.tok.kind != tokNumber {
				return nil, p.errorf(p.tok, "expected a number but found %s", p.describe(p.tok))
			}
		}
		num := sign + p.tok.text
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tokIdent {
			return nil, p.errorf(p.tok, "expected an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND...) but found %s", p.describe(p.tok))
		}
		terms = append(terms, intervalTerm{num: num, unit: p.tok.text})
		if err := p.next(); err != nil {
			return nil, err
		}
	}
	if len(terms) == 0 {
		return nil, p.errorf(start, "expected a count and a unit after INTERVAL, as in INTERVAL 1 DAY")
	}
	lit, err := multiUnitInterval(terms)
	if err != nil {
		return nil, p.errorf(start, "%v", err)
	}
	return lit, nil
}

// signedTermFollows reports whether a sign starts another "n unit" term
// of an interval (and not a subtraction after it).
func (p *parser) signedTermFollows() bool {
	save := *p
	defer func() { *p = save }()
	if p.next() != nil || p.tok.kind != tokNumber || p.next() != nil || p.tok.kind != tokIdent {
		return false
	}
	_, _, _, ok := intervalUnit(p.tok.text)
	return ok
}

func (p *parser) intervalFieldKeyword() (intervalField, bool) {
	if p.tok.kind != tokIdent {
		return 0, false
	}
	switch strings.ToUpper(p.tok.text) {
	case "YEAR", "YEARS":
		return fieldYear, true
	case "MONTH", "MONTHS":
		return fieldMonth, true
	case "DAY", "DAYS":
		return fieldDay, true
	case "HOUR", "HOURS":
		return fieldHour, true
	case "MINUTE", "MINUTES":
		return fieldMinute, true
	case "SECOND", "SECONDS":
		return fieldSecond, true
	}
	return 0, false
}

// parseComplexType reads ARRAY<t>, MAP<k, v>, STRUCT<name: t, ...>,
// CHAR(n), VARCHAR(n) and INTERVAL types, at the type's name.
func (p *parser) parseComplexType(name string) (actions.DataType, error) {
	if err := p.next(); err != nil {
		return nil, err
	}
	switch name {
	case "CHAR", "VARCHAR":
		if p.isOp("(") {
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.tok.kind != tokNumber {
				return nil, p.errorf(p.tok, "expected a length but found %s", p.describe(p.tok))
			}
			if err := p.next(); err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
		}
		return actions.TypeString, nil
	case "INTERVAL":
		f, ok := p.intervalFieldKeyword()
		if !ok {
			return nil, p.errorf(p.tok, "expected an interval unit but found %s", p.describe(p.tok))
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		end := f
		if p.isKeyword("TO") {
			if err := p.next(); err != nil {
				return nil, err
			}
			if end, ok = p.intervalFieldKeyword(); !ok {
				return nil, p.errorf(p.tok, "expected an interval unit but found %s", p.describe(p.tok))
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		return intervalType(f, end), nil
	}
	if err := p.expectOp("<"); err != nil {
		return nil, err
	}
	var out actions.DataType
	switch name {
	case "ARRAY":
		et, err := p.parseType()
		if err != nil {
			return nil, err
		}
		out = &actions.ArrayType{ElementType: et, ContainsNull: true}
	case "MAP":
		kt, err := p.parseType()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		vt, err := p.parseType()
		if err != nil {
			return nil, err
		}
		out = &actions.MapType{KeyType: kt, ValueType: vt, ValueContainsNull: true}
	case "STRUCT":
		st := &actions.StructType{}
		for !p.isOp(">") {
			if len(st.Fields) > 0 {
				if err := p.expectOp(","); err != nil {
					return nil, err
				}
			}
			f := p.tok
			if f.kind != tokIdent && f.kind != tokQuoted {
				return nil, p.errorf(f, "expected a field name but found %s", p.describe(f))
			}
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.isOp(":") {
				if err := p.next(); err != nil {
					return nil, err
				}
			}
			ft, err := p.parseType()
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, &actions.StructField{Name: f.text, Type: ft, Nullable: true})
		}
		out = st
	}
	return out, p.expectOp(">")
}

// stringLiterals reads one or more adjacent string literals starting at
// start and returns their concatenated value and the end offset.
func (p *parser) stringLiterals(start int) (string, int, error) {
	var b strings.Builder
	i := start
	for {
		v, end, err := p.stringLiteral(i)
		if err != nil {
			return "", 0, err
		}
		b.WriteString(v)
		j := end
		for j < len(p.src) && (p.src[j] == ' ' || p.src[j] == '\t' || p.src[j] == '\n' || p.src[j] == '\r') {
			j++
		}
		if j < len(p.src) && (p.src[j] == '\'' || p.src[j] == '"' ||
			(p.src[j] == 'r' || p.src[j] == 'R') && j+1 < len(p.src) && (p.src[j+1] == '\'' || p.src[j+1] == '"')) {
			i = j
			continue
		}
		return b.String(), end, nil
	}
}

// stringLiteral reads one string literal at start: 'x', "x", r'x'.
func (p *parser) stringLiteral(start int) (string, int, error) {
	s := p.src
	raw := s[start] == 'r' || s[start] == 'R'
	q := start
	if raw {
		q++
	}
	quote := s[q]
	var b strings.Builder
	for i := q + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote && i+1 < len(s) && s[i+1] == quote:
			b.WriteByte(quote)
			i++
		case c == quote:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			if raw {
				// A raw string keeps the backslash; it still escapes a
				// quote from ending the string.
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
				continue
			}
			n := unescape(&b, s, i)
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, p.errAt(start, "unterminated string: missing closing %c", quote)
}

// unescape writes the escape sequence at s[i] (a backslash) to b as
// Spark's unescapeSQLString does and returns its length.
func unescape(b *strings.Builder, s string, i int) int {
	c := s[i+1]
	if c == 'u' && i+6 <= len(s) {
		if v, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
			b.WriteRune(rune(v))
			return 6
		}
	}
	if c >= '0' && c <= '3' && i+4 <= len(s) && s[i+2] >= '0' && s[i+2] <= '7' && s[i+3] >= '0' && s[i+3] <= '7' {
		v := (c-'0')*64 + (s[i+2]-'0')*8 + (s[i+3] - '0')
		b.WriteByte(v)
		return 4
	}
	switch c {
	case '0':
		b.WriteByte(0)
	case 'b':
		b.WriteByte('\b')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'Z':
		b.WriteByte(0x1A)
	case '%', '_':
		b.WriteByte('\\')
		b.WriteByte(c)
	default:
		r, size := utf8.DecodeRuneInString(s[i+1:])
		b.WriteRune(r)
		return 1 + size
	}
	return 2
}

// ScanString reads the string literal that starts at byte start of text
// ('x', "x" or r'x', with Spark's escapes; see Parse) and returns its
// value and the offset just after it. Statement parsers use it so that
// their strings read as expressions' do.
func ScanString(text string, start int) (string, int, error) {
	p := &parser{src: text}
	return p.stringLiteral(start)
}
