package deltasql

import (
	"fmt"

	"github.com/lakelog/lakelog/expr"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a statement that cannot run: a syntax error, a table or column
// that does not exist, or an operation's own error. Pos is the byte
// offset in the statement text of the token it is about (Line and Column
// count from 1); Err is the underlying error, if any.
type Error struct {
	Text   string // the whole text the statement came from
	Pos    int
	Line   int
	Column int
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Context is the line of the statement the error is on, and a caret
// under its column, for a person reading it:
//
//	DELETE FROM delta.`/t` WHERE nosuch = 1
//	                             ^
func (e *Error) Context() string {
	start := strings.LastIndexByte(e.Text[:min(e.Pos, len(e.Text))], '\n') + 1
	end := strings.IndexByte(e.Text[start:], '\n')
	if end < 0 {
		end = len(e.Text)
	} else {
		end += start
	}
	line := strings.ReplaceAll(e.Text[start:end], "\t", " ")
	return line + "\n" + strings.Repeat(" ", max(0, e.Column-1)) + "^"
}

// errAt is an Error at byte pos of text.
func errAt(text string, pos int, err error, format string, a ...any) *Error {
	pos = min(max(pos, 0), len(text))
	prefix := text[:pos]
	line := strings.Count(prefix, "\n") + 1
	col := utf8.RuneCountInString(prefix[strings.LastIndexByte(prefix, '\n')+1:]) + 1
	return &Error{Text: text, Pos: pos, Line: line, Column: col, Msg: fmt.Sprintf(format, a...), Err: err}
}

type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // a name or keyword
	tokQuoted         // `a backquoted name`
	tokString         // 'text' or "text"
	tokNumber         // 12, 1.5
	tokPunct          // ( ) , ; . * = and other operators
)

type token struct {
	kind tokKind
	pos  int
	end  int
	text string // a string's or quoted name's value; else the source text
}

// lexer reads the tokens of a statement on demand, so that the parser can
// hand a stretch of text to the expression parser and resume after it.
type lexer struct {
	src string
	off int
}

// next reads the token at l.off.
func (l *lexer) next() (token, error) {
	s := l.src
	for l.off < len(s) {
		r, size := utf8.DecodeRuneInString(s[l.off:])
		if !unicode.IsSpace(r) {
			break
		}
		l.off += size
	}
	start := l.off
	if start >= len(s) {
		return token{kind: tokEOF, pos: len(s), end: len(s)}, nil
	}
	c := s[start]
	switch {
	case c == '\'' || c == '"' || (c == 'r' || c == 'R') && start+1 < len(s) && (s[start+1] == '\'' || s[start+1] == '"'):
		v, end, err := expr.ScanString(s, start)
		if err != nil {
			return token{}, errAt(s, start, nil, "unterminated string: missing closing %c", s[start+b2i(c == 'r' || c == 'R')])
		}
		l.off = end
		return token{kind: tokString, pos: start, end: end, text: v}, nil
	case c == '`':
		v, end, err := quoted(s, start, '`')
		if err != nil {
			return token{}, err
		}
		if v == "" {
			return token{}, errAt(s, start, nil, "empty name in backquotes")
		}
		l.off = end
		return token{kind: tokQuoted, pos: start, end: end, text: v}, nil
	case c >= '0' && c <= '9':
		end := start
		for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
			end++
		}
		l.off = end
		return token{kind: tokNumber, pos: start, end: end, text: s[start:end]}, nil
	case c == '_' || unicode.IsLetter(rune(c)) || c >= utf8.RuneSelf:
		end := start
		for end < len(s) {
			r, size := utf8.DecodeRuneInString(s[end:])
			if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				break
			}
			end += size
		}
		if end == start {
			r, _ := utf8.DecodeRuneInString(s[start:])
			return token{}, errAt(s, start, nil, "unexpected character %q", r)
		}
		l.off = end
		return token{kind: tokIdent, pos: start, end: end, text: s[start:end]}, nil
	}
	for _, op := range []string{"<=>", "<>", "!=", "<=", ">=", "=>", "==", "||", "(", ")", ",", ";", ".", "*", "=", "<", ">", "+", "-", "/", "%", "@", "[", "]", "&", "|", "^", "~", "!", ":"} {
		if strings.HasPrefix(s[start:], op) {
			l.off = start + len(op)
			return token{kind: tokPunct, pos: start, end: l.off, text: op}, nil
		}
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	return token{}, errAt(s, start, nil, "unexpected character %q", r)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// quoted reads a quoted string or name starting at start: a doubled quote
// stands for one; in strings a backslash escapes the next character, as
// in Spark SQL (expr.ScanString reads strings' values).
func quoted(s string, start int, q byte) (string, int, error) {
	if q != '`' {
		v, end, err := expr.ScanString(s, start)
		if err != nil {
			return "", 0, errAt(s, start, nil, "unterminated string: missing closing %c", q)
		}
		return v, end, nil
	}
	var b strings.Builder
	for i := start + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && q != '`' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
		case c == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case c == q:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(c)
		}
	}
	what := "string"
	if q == '`' {
		what = "name"
	}
	return "", 0, errAt(s, start, nil, "unterminated %s: missing closing %c", what, q)
}

// Split cuts text into its statements at semicolons outside strings,
// quoted names and comments. Comments (-- to the end of the line, /* ...
// */) are blanked out with spaces, so that positions stay those of text.
// Each statement comes with its start offset; empty ones are dropped.
func Split(text string) (clean string, starts, ends []int, err error) {
	b := []byte(text)
	start := 0
	flush := func(end int) {
		if strings.TrimSpace(string(b[start:end])) != "" {
			starts, ends = append(starts, start), append(ends, end)
		}
		start = end + 1
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\'' || c == '"' || c == '`':
			_, end, err := quoted(text, i, c)
			if err != nil {
				return "", nil, nil, err
			}
			i = end - 1
		case c == '-' && i+1 < len(b) && b[i+1] == '-':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return "", nil, nil, errAt(text, i, nil, "unterminated comment: missing */")
			}
			for k := i; k < i+2+j+2; k++ {
				if b[k] != '\n' {
					b[k] = ' '
				}
			}
			i += 2 + j + 1
		case c == ';':
			flush(i)
		}
	}
	flush(len(b))
	return string(b), starts, ends, nil
}
