package actions

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseColumnList parses a comma-separated list of column paths as Spark
// parses delta.dataSkippingStatsColumns (DeltaSqlParserUtils: the SQL
// grammar's multipartIdentifierList). A path is names joined by dots; a
// name is a word of letters, digits and underscores that is not a number
// (12, 12L, 1e5), or anything between backticks (a backtick doubled
// inside). Whitespace and SQL comments may surround every token. A blank
// list is empty. As in Spark, the list ends at the first token after a
// path that is not a comma, and a path at a dot not followed by a name:
// "a b" and "a." are the list [a]. A list that does not start with a
// name, a comma not followed by a path, and "a-b" (a name, a minus and a
// name) are errors. Each path comes back as its names, unquoted.
func ParseColumnList(s string) ([][]string, error) {
	if strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }) == "" {
		return [][]string{}, nil
	}
	l := &columnLexer{s: s}
	var out [][]string
	for {
		path, err := l.path()
		if err != nil {
			return nil, err
		}
		out = append(out, path)
		if t := l.peek(0); t.kind != colComma {
			return out, nil // Spark stops at anything else and ignores the rest
		}
		l.next()
	}
}

type colTokenKind int

const (
	colEOF colTokenKind = iota
	colName
	colDot
	colComma
	colMinus
	colOther
)

type colToken struct {
	kind colTokenKind
	text string // the name, unquoted
	bad  bool   // a name Spark lexes but refuses unquoted (letters beyond ASCII)
	at   int
}

type columnLexer struct {
	s      string
	i      int
	queued []colToken
}

// path reads names joined by dots.
func (l *columnLexer) path() ([]string, error) {
	name, err := l.name()
	if err != nil {
		return nil, err
	}
	path := []string{name}
	for l.peek(0).kind == colDot && l.peek(1).kind == colName {
		l.next()
		if name, err = l.name(); err != nil {
			return nil, err
		}
		path = append(path, name)
	}
	return path, nil
}

// name reads one name; a name followed by a minus and a name is Spark's
// "invalid identifier" (a-b needs backticks).
func (l *columnLexer) name() (string, error) {
	t := l.next()
	switch {
	case t.kind == colName && t.bad:
		return "", fmt.Errorf("offset %d: %q is not a column name unquoted (quote it in backticks)", t.at, t.text)
	case t.kind == colName:
	case t.kind == colEOF:
		return "", fmt.Errorf("a column name is missing at the end")
	default:
		return "", fmt.Errorf("offset %d: want a column name, found %q", t.at, l.around(t.at))
	}
	if l.peek(0).kind == colMinus && l.peek(1).kind == colName {
		return "", fmt.Errorf("offset %d: %q is not a column name (quote a name with a minus in backticks)", t.at, l.around(t.at))
	}
	return t.text, nil
}

func (l *columnLexer) around(at int) string {
	r := l.s[at:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (l *columnLexer) next() colToken {
	t := l.peek(0)
	l.queued = l.queued[1:]
	return t
}

func (l *columnLexer) peek(n int) colToken {
	for len(l.queued) <= n {
		l.queued = append(l.queued, l.lex())
	}
	return l.queued[n]
}

// lex reads the next token, skipping whitespace and comments (-- to the
// end of the line, /* */ nested).
// lex reads the next token, skipping whitespace and comments (-- to the
// end of the line, /* */ nested, an unclosed one to the end) as Spark's
// lexer does.
func (l *columnLexer) lex() colToken {
	for l.i < len(l.s) {
		r, n := utf8.DecodeRuneInString(l.s[l.i:])
		switch {
		case isSQLSpace(r):
			l.i += n
		case strings.HasPrefix(l.s[l.i:], "--"):
			l.i += 2
			for l.i < len(l.s) && l.s[l.i] != '\n' && l.s[l.i] != '\r' {
				if strings.HasPrefix(l.s[l.i:], "\\\n") {
					l.i++ // an escaped newline continues the comment
				}
				l.i++
			}
		case strings.HasPrefix(l.s[l.i:], "/*") && !strings.HasPrefix(l.s[l.i:], "/*+"):
			l.skipComment()
		default:
			return l.token()
		}
	}
	return colToken{kind: colEOF, at: l.i}
}

// skipComment skips a bracketed comment, nested ones inside.
func (l *columnLexer) skipComment() {
	depth := 0
	for l.i < len(l.s) {
		switch {
		case strings.HasPrefix(l.s[l.i:], "/*"):
			depth, l.i = depth+1, l.i+2
		case strings.HasPrefix(l.s[l.i:], "*/"):
			depth, l.i = depth-1, l.i+2
			if depth == 0 {
				return
			}
		default:
			l.i++
		}
	}
}

// isSQLSpace is Spark's lexer's whitespace.
func isSQLSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\f', '\r', '\v', 0xa0, 0x1680, 0x2028, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func (l *columnLexer) token() colToken {
	at := l.i
	switch l.s[l.i] {
	case '.':
		l.i++
		return colToken{kind: colDot, at: at}
	case ',':
		l.i++
		return colToken{kind: colComma, at: at}
	case '-':
		l.i++
		return colToken{kind: colMinus, at: at}
	case '`':
		return l.backquoted()
	}
	j := l.i
	for j < len(l.s) {
		r, n := utf8.DecodeRuneInString(l.s[j:])
		if !isWordRune(r) {
			break
		}
		j += n
	}
	if j == l.i {
		_, n := utf8.DecodeRuneInString(l.s[l.i:])
		l.i += n
		return colToken{kind: colOther, at: at}
	}
	word := l.s[l.i:j]
	l.i = j
	switch {
	case isNumberWord(word) || isExponentStart(word, l.s[j:]):
		return colToken{kind: colOther, at: at}
	case strings.HasPrefix(l.s[j:], "://") && isLetters(word):
		// Spark lexes scheme://path as one identifier, which it then
		// refuses as a column name.
		l.i = j + 3
		for l.i < len(l.s) {
			r, n := utf8.DecodeRuneInString(l.s[l.i:])
			if !isWordRune(r) && !strings.ContainsRune("/-.?=&#%", r) {
				break
			}
			l.i += n
		}
		return colToken{kind: colName, text: l.s[at:l.i], bad: true, at: at}
	}
	for k := 0; k < len(word); k++ {
		if word[k] >= utf8.RuneSelf {
			// Spark lexes letters of any script, then refuses them
			// unquoted.
			return colToken{kind: colName, text: word, bad: true, at: at}
		}
	}
	return colToken{kind: colName, text: word, at: at}
}

// backquoted reads `name`, a backtick doubled inside. Like Spark's lexer
// (the longest match), an unclosed quote falls back to the last backtick
// that could have closed it; with none, the backtick is a stray token.
func (l *columnLexer) backquoted() colToken {
	at := l.i
	var b strings.Builder
	lastClose, lastName := -1, ""
	for j := at + 1; j < len(l.s); j++ {
		if l.s[j] != '`' {
			b.WriteByte(l.s[j])
			continue
		}
		lastClose, lastName = j, b.String()
		if j+1 < len(l.s) && l.s[j+1] == '`' {
			b.WriteByte('`')
			j++
			continue
		}
		break
	}
	if lastClose < 0 {
		l.i++
		return colToken{kind: colOther, at: at}
	}
	l.i = lastClose + 1
	return colToken{kind: colName, text: lastName, at: at}
}

func isWordRune(r rune) bool {
	return r == '_' || (r >= '0' && r <= '9') || unicode.IsLetter(r)
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// isNumberWord reports whether Spark's lexer reads word as a numeric
// literal rather than an identifier: digits, optionally with an exponent
// (1e5) and a type suffix (L, S, Y, D, F, BD).
func isNumberWord(word string) bool {
	w := asciiLower(word)
	d := digits(w)
	if d == 0 {
		return false
	}
	rest := w[d:]
	if len(rest) > 1 && rest[0] == 'e' {
		if e := digits(rest[1:]); e > 0 {
			rest = rest[1+e:]
			return rest == "" || rest == "d" || rest == "f" || rest == "bd"
		}
	}
	switch rest {
	case "", "l", "s", "y", "d", "f", "bd":
		return true
	}
	return false
}

// isExponentStart reports whether word ("1e") and what follows it ("-5")
// begin a number with a signed exponent, which Spark's lexer reads as one
// token.
func isExponentStart(word, after string) bool {
	w := asciiLower(word)
	d := digits(w)
	return d > 0 && w[d:] == "e" && len(after) > 1 && (after[0] == '-' || after[0] == '+') && after[1] >= '0' && after[1] <= '9'
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
