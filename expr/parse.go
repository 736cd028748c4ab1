package expr

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// SyntaxError is a Parse error: the text is not an expression. Pos is the
// 0-based byte offset of the offending token in the input and Column its
// 1-based position in characters.
type SyntaxError struct {
	Pos    int
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	col := e.Column
	if col == 0 {
		col = e.Pos + 1
	}
	return fmt.Sprintf("expr: at column %d: %s", col, e.Msg)
}

// maxDepth bounds the nesting of parentheses and prefix operators, so
// that no input can exhaust the stack.
const maxDepth = 256

// Parse reads an expression in the SQL-like text form:
//
//	a = 'x' AND (n > 3 OR d >= '2026-03-01') AND s IN ('a','b') AND x IS NOT NULL
//
// The grammar, loosest-binding first:
//
//	expr      := expr OR expr | expr AND expr | NOT expr | predicate
//	predicate := sum [ (= | <> | != | < | <= | > | >= | <=>) sum
//	                 | [NOT] IN (expr, ...) | [NOT] BETWEEN sum AND sum
//	                 | [NOT] LIKE 'pattern' [ESCAPE 'c'] | IS [NOT] NULL ]
//	sum       := sum (+ | -) product | product
//	product   := product (* | / | %) unary | unary
//	unary     := - unary | + unary | primary
//	primary   := number | 'string' | X'hex' | TRUE | FALSE | NULL
//	           | DATE 'yyyy-mm-dd' | TIMESTAMP '...' | TIMESTAMP_NTZ '...'
//	           | CAST(expr AS type) | (expr) | name(.name)*
//
// Keywords are case-insensitive. Names are letters, digits and _, not
// starting with a digit, or anything in backquotes (`odd name`, with a
// backquote doubled); a.b is field b of struct column a. Strings are in
// single quotes, with a quote doubled. Numbers follow Spark: 12 is an
// integer (a long or decimal when it does not fit), 1.50 a decimal(3,2),
// 1e3 a double; the suffixes L, S, Y, F, D and BD make a long, short,
// byte, float, double or decimal. BETWEEN is read as two comparisons.
//
// The result is unbound: columns have no types and string literals are
// still strings; see Bind. An error is a *SyntaxError pointing at the
// offending token. Parse never panics.
func Parse(text string) (Expr, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf(p.tok, "unexpected %s after the end of the expression", p.describe(p.tok))
	}
	return e, nil
}

// ParsePrefix reads the expression that starts at byte start of text and
// returns it with the byte offset where it ends: the first token that
// cannot continue it (a keyword such as WHERE or THEN, a comma, a closing
// parenthesis the expression did not open, a character expressions do
// not use) or the end of text. Statement parsers (package deltasql) use
// it for the expressions inside a statement. Error positions count from
// the start of text.
func ParsePrefix(text string, start int) (Expr, int, error) {
	p := &parser{src: text, off: min(max(start, 0), len(text)), prefix: true}
	if err := p.next(); err != nil {
		return nil, 0, err
	}
	e, err := p.parseExpr()
	if err != nil {
		return nil, 0, err
	}
	return e, p.tok.pos, nil
}

// Assignment is one SET clause of an UPDATE: Column = Value.
type Assignment struct {
	Column *Column
	Value  Expr
}

func (a *Assignment) String() string { return a.Column.String() + " = " + a.Value.String() }

// ParseAssignment reads "column = expression", the form of UPDATE's
// --set flag.
func ParseAssignment(text string) (*Assignment, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	start := p.tok
	target, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	col, ok := target.(*Column)
	if !ok {
		return nil, p.errorf(start, "expected a column name but found %s", p.describe(start))
	}
	if p.tok.kind != tokOp || p.tok.text != "=" {
		return nil, p.errorf(p.tok, "expected '=' but found %s", p.describe(p.tok))
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	v, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf(p.tok, "unexpected %s after the end of the expression", p.describe(p.tok))
	}
	return &Assignment{Column: col, Value: v}, nil
}

type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // bare name or keyword
	tokQuoted         // `backquoted name`
	tokString         // 'string'
	tokNumber         // 12, 1.5, 1e3, 10L
	tokHex            // X'0A0B'
	tokOp             // operators and punctuation
)

type token struct {
	kind tokKind
	pos  int
	text string // source text, except: unquoted value for strings and quoted names
}

// reserved are the keywords that cannot be bare column names.
var reserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true,
	"TRUE": true, "FALSE": true, "BETWEEN": true, "LIKE": true, "CAST": true,
	"CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true,
}

func isReserved(name string) bool { return reserved[strings.ToUpper(name)] }

type parser struct {
	src    string
	off    int // lexer position
	tok    token
	prev   tokKind
	depth  int
	prefix bool // ParsePrefix: a character expressions do not use ends the input
}

func newParser(text string) (*parser, error) {
	p := &parser{src: text}
	if err := p.next(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *parser) errAt(pos int, format string, args ...any) *SyntaxError {
	pos = min(max(pos, 0), len(p.src))
	prefix := p.src[:pos]
	col := utf8.RuneCountInString(prefix[strings.LastIndexByte(prefix, '\n')+1:]) + 1
	return &SyntaxError{Pos: pos, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) errorf(t token, format string, args ...any) *SyntaxError {
	return p.errAt(t.pos, format, args...)
}

// describe names a token for an error message.
func (p *parser) describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "string " + quoteString(t.text)
	case tokQuoted:
		return "`" + t.text + "`"
	}
	return "'" + t.text + "'"
}

// next reads the next token into p.tok.
func (p *parser) next() error {
	p.prev = p.tok.kind
	s := p.src
	for p.off < len(s) {
		r, size := utf8.DecodeRuneInString(s[p.off:])
		if !unicode.IsSpace(r) {
			break
		}
		p.off += size
	}
	start := p.off
	if start >= len(s) {
		p.tok = token{kind: tokEOF, pos: len(s)}
		return nil
	}
	c := s[start]
	switch {
	case c == '\'' || c == '"' || (c == 'r' || c == 'R') && start+1 < len(s) && (s[start+1] == '\'' || s[start+1] == '"'):
		str, end, err := p.stringLiterals(start)
		if err != nil {
			return err
		}
		p.tok, p.off = token{kind: tokString, pos: start, text: str}, end
		return nil
	case c == '`':
		name, end, err := p.quoted(start, '`')
		if err != nil {
			return err
		}
		if name == "" {
			return p.errAt(start, "empty name in backquotes")
		}
		p.tok, p.off = token{kind: tokQuoted, pos: start, text: name}, end
		return nil
	case (c == 'X' || c == 'x') && start+1 < len(s) && s[start+1] == '\'':
		str, end, err := p.quoted(start+1, '\'')
		if err != nil {
			return err
		}
		if _, err := hex.DecodeString(str); err != nil {
			return p.errAt(start, "malformed binary literal X'%s': want an even number of hex digits", str)
		}
		p.tok, p.off = token{kind: tokHex, pos: start, text: str}, end
		return nil
	case c >= '0' && c <= '9' || c == '.' && start+1 < len(s) && s[start+1] >= '0' && s[start+1] <= '9' && p.prev != tokIdent && p.prev != tokQuoted:
		end := start
		for end < len(s) && (isIdentByte(s[end]) || s[end] == '.' ||
			(s[end] == '+' || s[end] == '-') && end > start && (s[end-1] == 'e' || s[end-1] == 'E')) {
			end++
		}
		p.tok, p.off = token{kind: tokNumber, pos: start, text: s[start:end]}, end
		return nil
	case isIdentStart(s[start:]):
		end := start
		for end < len(s) {
			r, size := utf8.DecodeRuneInString(s[end:])
			if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				break
			}
			end += size
		}
		p.tok, p.off = token{kind: tokIdent, pos: start, text: s[start:end]}, end
		return nil
	}
	for _, op := range []string{"<=>", "<>", "!=", "<=", ">=", "==", "||", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".", "[", "]", "&", "|", "^", "~", "!", ":"} {
		if strings.HasPrefix(s[start:], op) {
			if op == "==" {
				op = "="
				p.off++
			}
			p.tok, p.off = token{kind: tokOp, pos: start, text: op}, p.off+len(op)
			return nil
		}
	}
	if p.prefix {
		p.tok = token{kind: tokEOF, pos: start}
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	return p.errAt(start, "unexpected character %q", r)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || unicode.IsLetter(r)
}

// quoted reads a literal that starts with q at start and ends at the next
// lone q; a doubled q stands for one.
func (p *parser) quoted(start int, q byte) (string, int, error) {
	s := p.src
	var b strings.Builder
	i := start + 1
	for {
		j := strings.IndexByte(s[i:], q)
		if j < 0 {
			what := "string"
			if q == '`' {
				what = "name"
			}
			return "", 0, p.errAt(start, "unterminated %s: missing closing %c", what, q)
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i, nil
	}
}

// isKeyword reports whether the current token is the keyword kw.
func (p *parser) isKeyword(kw string) bool {
	return p.tok.kind == tokIdent && strings.EqualFold(p.tok.text, kw)
}

func (p *parser) isOp(op string) bool { return p.tok.kind == tokOp && p.tok.text == op }

// expectOp consumes op or fails with "expected 'op' but found ...".
func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errorf(p.tok, "expected '%s' but found %s", op, p.describe(p.tok))
	}
	return p.next()
}

func (p *parser) expectKeyword(kw string) error {
	if !p.isKeyword(kw) {
		return p.errorf(p.tok, "expected %s but found %s", kw, p.describe(p.tok))
	}
	return p.next()
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf(p.tok, "expression nested too deeply (more than %d levels)", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) parseExpr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.parseOr()
}

func (p *parser) parseOr() (Expr, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("OR") {
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = &OrExpr{Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) parseAnd() (Expr, error) {
	left, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("AND") {
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		left = &AndExpr{Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) parseNot() (Expr, error) {
	if !p.isKeyword("NOT") && !p.isOp("!") {
		return p.parsePredicate()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.next(); err != nil {
		return nil, err
	}
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	return &NotExpr{X: x}, nil
}

var compareOps = map[string]CompareOp{
	"=": Eq, "<>": Ne, "!=": Ne, "<": Lt, "<=": Le, ">": Gt, ">=": Ge, "<=>": NullSafeEq,
}

func (p *parser) parsePredicate() (Expr, error) {
	left, err := p.parseBitOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tokOp {
		op, ok := compareOps[p.tok.text]
		if !ok {
			return left, nil
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseBitOr()
		if err != nil {
			return nil, err
		}
		return &Compare{Op: op, Left: left, Right: right}, nil
	}
	if p.isKeyword("IS") {
		if err := p.next(); err != nil {
			return nil, err
		}
		not := p.isKeyword("NOT")
		if not {
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		if err := p.expectKeyword("NULL"); err != nil {
			return nil, err
		}
		return &IsNull{X: left, Not: not}, nil
	}
	not := false
	if p.isKeyword("NOT") {
		not = true
		if err := p.next(); err != nil {
			return nil, err
		}
		if !p.isKeyword("IN") && !p.isKeyword("BETWEEN") && !p.isKeyword("LIKE") && !p.isKeyword("RLIKE") && !p.isKeyword("REGEXP") {
			return nil, p.errorf(p.tok, "expected IN, BETWEEN, LIKE or RLIKE after NOT but found %s", p.describe(p.tok))
		}
	}
	switch {
	case p.isKeyword("RLIKE") || p.isKeyword("REGEXP"):
		if err := p.next(); err != nil {
			return nil, err
		}
		pat, err := p.parseBitOr()
		if err != nil {
			return nil, err
		}
		var e Expr = &Call{Name: "rlike", Args: []Expr{left, pat}}
		if not {
			e = &NotExpr{X: e}
		}
		return e, nil
	case p.isKeyword("IN"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		var list []Expr
		for {
			e, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			list = append(list, e)
			if !p.isOp(",") {
				break
			}
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return &In{X: left, List: list, Not: not}, nil
	case p.isKeyword("BETWEEN"):
		if err := p.next(); err != nil {
			return nil, err
		}
		lo, err := p.parseBitOr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("AND"); err != nil {
			return nil, err
		}
		hi, err := p.parseBitOr()
		if err != nil {
			return nil, err
		}
		var e Expr = &AndExpr{Left: &Compare{Op: Ge, Left: left, Right: lo}, Right: &Compare{Op: Le, Left: left, Right: hi}}
		if not {
			e = &NotExpr{X: e}
		}
		return e, nil
	case p.isKeyword("LIKE"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tokString {
			return nil, p.errorf(p.tok, "expected a 'pattern' string after LIKE but found %s", p.describe(p.tok))
		}
		like := &Like{X: left, Pattern: p.tok.text, Escape: '\\', Not: not}
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.isKeyword("ESCAPE") {
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.tok.kind != tokString || utf8.RuneCountInString(p.tok.text) != 1 {
				return nil, p.errorf(p.tok, "expected a one-character string after ESCAPE but found %s", p.describe(p.tok))
			}
			like.Escape, _ = utf8.DecodeRuneInString(p.tok.text)
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		if _, err := compileLike(like.Pattern, like.Escape); err != nil {
			return nil, p.errAt(p.tok.pos, "%v", err)
		}
		return like, nil
	}
	return left, nil
}

func (p *parser) parseSum() (Expr, error) {
	left, err := p.parseProduct()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") || p.isOp("||") {
		opText := p.tok.text
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseProduct()
		if err != nil {
			return nil, err
		}
		switch opText {
		case "||":
			left = &Call{Name: "||", Args: []Expr{left, right}}
		case "-":
			left = &Arith{Op: Minus, Left: left, Right: right}
		default:
			left = &Arith{Op: Plus, Left: left, Right: right}
		}
	}
	return left, nil
}

// parseBitOr reads | over ^ over & over sums, Spark's order.
func (p *parser) parseBitOr() (Expr, error) { return p.parseBitLevel(0) }

var bitOps = []string{"|", "^", "&"}

func (p *parser) parseBitLevel(level int) (Expr, error) {
	if level == len(bitOps) {
		return p.parseSum()
	}
	left, err := p.parseBitLevel(level + 1)
	if err != nil {
		return nil, err
	}
	for p.isOp(bitOps[level]) {
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseBitLevel(level + 1)
		if err != nil {
			return nil, err
		}
		left = &Call{Name: bitOps[level], Args: []Expr{left, right}}
	}
	return left, nil
}

func (p *parser) parseProduct() (Expr, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") || p.isKeyword("DIV") {
		if p.isKeyword("DIV") {
			if err := p.next(); err != nil {
				return nil, err
			}
			right, err := p.parseUnary()
			if err != nil {
				return nil, err
			}
			left = &Call{Name: "div", Args: []Expr{left, right}}
			continue
		}
		op := map[string]ArithOp{"*": Times, "/": Divide, "%": Modulo}[p.tok.text]
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		left = &Arith{Op: op, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) parseUnary() (Expr, error) {
	if p.isOp("~") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		if err := p.next(); err != nil {
			return nil, err
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &Call{Name: "~", Args: []Expr{x}}, nil
	}
	if !p.isOp("-") && !p.isOp("+") {
		return p.parsePostfix()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	minus := p.tok.text == "-"
	if err := p.next(); err != nil {
		return nil, err
	}
	if minus && p.tok.kind == tokNumber {
		// A minus sign on a number is part of the literal, so that
		// -2147483648 is an integer and -5 prints back as -5.
		t := p.tok
		lit, err := p.number(t, true)
		if err != nil {
			return nil, err
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		return lit, nil
	}
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	if !minus {
		return x, nil
	}
	return &Neg{X: x}, nil
}

func (p *parser) parsePrimary() (Expr, error) {
	t := p.tok
	switch t.kind {
	case tokEOF:
		return nil, p.errorf(t, "expected an expression but found end of input")
	case tokNumber:
		lit, err := p.number(t, false)
		if err != nil {
			return nil, err
		}
		return lit, p.next()
	case tokString:
		return &Literal{Value: t.text, DataType: actions.TypeString}, p.next()
	case tokHex:
		b, _ := hex.DecodeString(t.text)
		if b == nil {
			b = []byte{}
		}
		return &Literal{Value: b, DataType: actions.TypeBinary}, p.next()
	case tokOp:
		if t.text != "(" {
			return nil, p.errorf(t, "expected an expression but found %s", p.describe(t))
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		return e, p.expectOp(")")
	case tokQuoted:
		return p.parseColumn()
	}
	// An identifier: a keyword, a typed literal, CAST, or a column.
	switch strings.ToUpper(t.text) {
	case "NULL":
		return &Literal{}, p.next()
	case "TRUE", "FALSE":
		return &Literal{Value: strings.EqualFold(t.text, "TRUE"), DataType: actions.TypeBoolean}, p.next()
	case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ":
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tokString {
			// Not a typed literal: a column of that name.
			p.tok, p.off = t, t.pos+len(t.text)
			return p.parseColumn()
		}
		lit, err := typedLiteral(strings.ToUpper(t.text), p.tok.text)
		if err != nil {
			return nil, p.errorf(p.tok, "%v", err)
		}
		if lit.DataType == actions.TypeTimestamp && !hasZoneSuffix(p.tok.text) {
			lit.text = p.tok.text
		}
		return lit, p.next()
	case "CAST":
		if err := p.next(); err != nil {
			return nil, err
		}
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		x, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("AS"); err != nil {
			return nil, err
		}
		to, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return &Cast{X: x, To: to}, p.expectOp(")")
	}
	if e, ok, err := p.parseSpecial(t); ok || err != nil {
		return e, err
	}
	if reserved[strings.ToUpper(t.text)] {
		return nil, p.errorf(t, "expected an expression but found %s", p.describe(t))
	}
	return p.parseColumn()
}

// parseColumn reads name(.name)*.
func (p *parser) parseColumn() (Expr, error) {
	var path []string
	for {
		t := p.tok
		switch {
		case t.kind == tokQuoted:
		case t.kind == tokIdent && !reserved[strings.ToUpper(t.text)]:
		default:
			return nil, p.errorf(t, "expected a column name but found %s", p.describe(t))
		}
		path = append(path, t.text)
		if err := p.next(); err != nil {
			return nil, err
		}
		if !p.isOp(".") {
			return &Column{Path: path}, nil
		}
		if err := p.next(); err != nil {
			return nil, err
		}
	}
}

// typeNames maps the type names CAST accepts (Delta's and Spark's
// aliases) to Delta types.
var typeNames = map[string]actions.PrimitiveType{
	"STRING": actions.TypeString,
	"LONG":   actions.TypeLong, "BIGINT": actions.TypeLong,
	"INTEGER": actions.TypeInteger, "INT": actions.TypeInteger,
	"SHORT": actions.TypeShort, "SMALLINT": actions.TypeShort,
	"BYTE": actions.TypeByte, "TINYINT": actions.TypeByte,
	"FLOAT": actions.TypeFloat, "REAL": actions.TypeFloat,
	"DOUBLE":  actions.TypeDouble,
	"BOOLEAN": actions.TypeBoolean, "BOOL": actions.TypeBoolean,
	"BINARY": actions.TypeBinary, "DATE": actions.TypeDate,
	"TIMESTAMP": actions.TypeTimestamp, "TIMESTAMP_LTZ": actions.TypeTimestamp,
	"TIMESTAMP_NTZ": actions.TypeTimestampNTZ,
}

// parseType reads a primitive type name or decimal[(p[,s])].
func (p *parser) parseType() (actions.DataType, error) {
	t := p.tok
	if t.kind != tokIdent {
		return nil, p.errorf(t, "expected a type name but found %s", p.describe(t))
	}
	name := strings.ToUpper(t.text)
	if pt, ok := typeNames[name]; ok {
		return pt, p.next()
	}
	switch name {
	case "ARRAY", "MAP", "STRUCT", "INTERVAL", "CHAR", "VARCHAR":
		return p.parseComplexType(name)
	}
	if name != "DECIMAL" && name != "DEC" && name != "NUMERIC" {
		return nil, p.errorf(t, "unknown type %s", p.describe(t))
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	dt := &actions.DecimalType{Precision: 10}
	if !p.isOp("(") {
		return dt, nil
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	readInt := func() (int, error) {
		n, err := strconv.Atoi(p.tok.text)
		if p.tok.kind != tokNumber || err != nil || n > actions.MaxDecimalPrecision {
			return 0, p.errorf(p.tok, "expected a decimal precision or scale (0 to 38) but found %s", p.describe(p.tok))
		}
		return n, p.next()
	}
	var err error
	if dt.Precision, err = readInt(); err != nil {
		return nil, err
	}
	if p.isOp(",") {
		if err := p.next(); err != nil {
			return nil, err
		}
		scaleTok := p.tok
		if dt.Scale, err = readInt(); err != nil {
			return nil, err
		}
		if dt.Scale > dt.Precision {
			return nil, p.errorf(scaleTok, "decimal scale %d exceeds precision %d", dt.Scale, dt.Precision)
		}
	}
	if dt.Precision == 0 {
		return nil, p.errorf(t, "decimal precision must be at least 1")
	}
	return dt, p.expectOp(")")
}

// typedLiteral builds DATE '...', TIMESTAMP '...' or TIMESTAMP_NTZ '...'.
func typedLiteral(kind, text string) (*Literal, error) {
	switch kind {
	case "DATE":
		d, err := actions.ParseDate(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%s is not a date (want YYYY-MM-DD)", quoteString(text))
		}
		return &Literal{Value: d, DataType: actions.TypeDate}, nil
	case "TIMESTAMP_NTZ":
		ts, err := parseTimestampText(text, true)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: actions.TimestampNTZ(ts), DataType: actions.TypeTimestampNTZ}, nil
	default:
		ts, err := parseTimestampText(text, false)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: actions.Timestamp(ts), DataType: actions.TypeTimestamp}, nil
	}
}

// number turns a number token (negated when neg) into a literal.
func (p *parser) number(t token, neg bool) (*Literal, error) {
	lit, err := parseNumber(t.text, neg)
	if err != nil {
		return nil, p.errorf(t, "%v", err)
	}
	return lit, nil
}

// parseNumber reads a SQL number literal: digits with an optional
// fraction, exponent and type suffix.
func parseNumber(text string, neg bool) (*Literal, error) {
	upper := strings.ToUpper(text)
	body, suffix := upper, ""
	for _, s := range []string{"BD", "L", "S", "Y", "D", "F"} {
		if strings.HasSuffix(upper, s) {
			body, suffix = upper[:len(upper)-len(s)], s
			break
		}
	}
	bad := func() (*Literal, error) { return nil, fmt.Errorf("malformed number %q", text) }
	mant, exp, hasExp := strings.Cut(body, "E")
	if mant == "" || mant == "." || strings.Count(mant, ".") > 1 || strings.ContainsAny(mant, "+-") {
		return bad()
	}
	for _, c := range mant {
		if c != '.' && (c < '0' || c > '9') {
			return bad()
		}
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if e == "" || len(exp)-len(e) > 1 || strings.Trim(e, "0123456789") != "" {
			return bad()
		}
	}
	sign := ""
	if neg {
		sign = "-"
	}
	outOfRange := func(typ string) (*Literal, error) {
		return nil, fmt.Errorf("number %s%s out of range for %s", sign, text, typ)
	}
	isFloat := hasExp || suffix == "D" || suffix == "F"
	if isFloat {
		bits := 64
		if suffix == "F" {
			bits = 32
		}
		f, err := strconv.ParseFloat(sign+body, bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return outOfRange(map[int]string{32: "float", 64: "double"}[bits])
			}
			return bad()
		}
		if bits == 32 {
			return &Literal{Value: float32(f), DataType: actions.TypeFloat}, nil
		}
		return &Literal{Value: f, DataType: actions.TypeDouble}, nil
	}
	d, err := parseDecimalText(mant)
	if err != nil {
		return bad()
	}
	if neg {
		d.Unscaled.Neg(d.Unscaled)
	}
	integral := d.Scale == 0
	switch suffix {
	case "L", "S", "Y":
		if !integral {
			return bad()
		}
		lim := map[string]struct {
			lo, hi int64
			name   string
		}{"L": {math.MinInt64, math.MaxInt64, "long"}, "S": {math.MinInt16, math.MaxInt16, "short"}, "Y": {math.MinInt8, math.MaxInt8, "byte"}}[suffix]
		if !d.Unscaled.IsInt64() || d.Unscaled.Int64() < lim.lo || d.Unscaled.Int64() > lim.hi {
			return outOfRange(lim.name)
		}
		v := d.Unscaled.Int64()
		switch suffix {
		case "S":
			return &Literal{Value: int16(v), DataType: actions.TypeShort}, nil
		case "Y":
			return &Literal{Value: int8(v), DataType: actions.TypeByte}, nil
		}
		return &Literal{Value: v, DataType: actions.TypeLong}, nil
	case "":
		if integral && d.Unscaled.IsInt64() {
			v := d.Unscaled.Int64()
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return &Literal{Value: int32(v), DataType: actions.TypeInteger}, nil
			}
			return &Literal{Value: v, DataType: actions.TypeLong}, nil
		}
	}
	t, ok := typeOfValue(d)
	if !ok {
		return outOfRange("decimal(38)")
	}
	return &Literal{Value: d, DataType: t}, nil
}

// bigTen is 10, for decimal scaling.
var bigTen = big.NewInt(10)
