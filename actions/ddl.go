package actions

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DDLError reports a syntax or type error in DDL text. Column is the
// 1-based position, in characters, where the problem starts.
type DDLError struct {
	Column int
	Msg    string
}

func (e *DDLError) Error() string {
	return fmt.Sprintf("actions: DDL at column %d: %s", e.Column, e.Msg)
}

// maxDDLDepth bounds the nesting of array, map and struct types.
const maxDDLDepth = 100

// ddlTypeNames maps Spark's DDL type names (lower-cased) to Delta types.
// decimal, char, varchar, array, map and struct take arguments and are
// handled by the parser.
var ddlTypeNames = map[string]PrimitiveType{
	"boolean": TypeBoolean, "bool": TypeBoolean,
	"tinyint": TypeByte, "byte": TypeByte,
	"smallint": TypeShort, "short": TypeShort,
	"int": TypeInteger, "integer": TypeInteger,
	"bigint": TypeLong, "long": TypeLong,
	"float": TypeFloat, "real": TypeFloat,
	"double":    TypeDouble,
	"date":      TypeDate,
	"timestamp": TypeTimestamp, "timestamp_ltz": TypeTimestamp,
	"timestamp_ntz": TypeTimestampNTZ,
	"string":        TypeString,
	"binary":        TypeBinary,
	"variant":       TypeVariant,
}

// ParseDDL parses a column list in Spark's DDL syntax, the CLI's --schema:
//
//	id long not null, name string comment 'display name',
//	amount decimal(10,2), ts timestamp, tags array<string>,
//	m map<string,int>, s struct<a:int,b:string not null>
//
// Type names are case-insensitive, with Spark's synonyms: bigint, int,
// smallint, tinyint, bool, real (float), dec and numeric (decimal),
// timestamp_ltz (timestamp); char(n) and varchar(n) read as string.
// decimal alone is decimal(10,0) and decimal(p) is decimal(p,0). A name may
// be backquoted (`a b`; a doubled backquote stands for one). NOT NULL and
// COMMENT 'text' may follow a type, in either order; the comment goes to
// the field's metadata under "comment", as Spark stores it. GENERATED
// ALWAYS AS (expression) makes a top-level column a generated column
// (delta.generationExpression). Array elements
// and map values are nullable: DDL cannot say otherwise. Column names must
// be unique, ignoring case, within each struct. Errors are *DDLError.
func ParseDDL(text string) (*StructType, error) {
	p := &ddlParser{text: text}
	if !utf8.ValidString(text) {
		off := 0
		for off < len(text) {
			r, n := utf8.DecodeRuneInString(text[off:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			off += n
		}
		return nil, p.errAt(token{off: off}, "invalid UTF-8")
	}
	p.next()
	if p.tok.kind == tokEOF {
		return nil, p.errAt(p.tok, "empty schema")
	}
	st, err := p.fields(tokEOF, 0)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// FormatDDL prints s in the syntax ParseDDL reads, using Delta's type
// names: "id long not null, tags array<string>, s struct<a:integer>".
// Field metadata other than "comment", and non-nullable array elements or
// map values, have no DDL form and are left out.
func FormatDDL(s *StructType) string {
	var b strings.Builder
	if s == nil {
		return ""
	}
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		writeDDLField(&b, f, " ")
	}
	return b.String()
}

func writeDDLField(b *strings.Builder, f *StructField, sep string) {
	if f == nil {
		return
	}
	b.WriteString(quoteDDLName(f.Name))
	b.WriteString(sep)
	writeDDLType(b, f.Type)
	if !f.Nullable {
		b.WriteString(" not null")
	}
	if g, ok := f.Metadata[MetaGenerationExpression].(string); ok {
		b.WriteString(" generated always as (")
		b.WriteString(g)
		b.WriteString(")")
	}
	if c, ok := f.Metadata["comment"].(string); ok {
		b.WriteString(" comment ")
		b.WriteString(quoteDDLString(c))
	}
}

func writeDDLType(b *strings.Builder, t DataType) {
	switch x := t.(type) {
	case *ArrayType:
		b.WriteString("array<")
		writeDDLType(b, x.ElementType)
		b.WriteString(">")
	case *MapType:
		b.WriteString("map<")
		writeDDLType(b, x.KeyType)
		b.WriteString(",")
		writeDDLType(b, x.ValueType)
		b.WriteString(">")
	case *StructType:
		b.WriteString("struct<")
		for i, f := range x.Fields {
			if i > 0 {
				b.WriteString(",")
			}
			writeDDLField(b, f, ":")
		}
		b.WriteString(">")
	case nil:
		b.WriteString("?")
	default:
		b.WriteString(t.String())
	}
}

// quoteDDLName backquotes a name unless it is a plain identifier.
func quoteDDLName(name string) string {
	plain := name != ""
	for _, r := range name {
		if !isIdentRune(r) {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteDDLString quotes s as a single-quoted SQL string with backslash
// escapes.
func quoteDDLString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func isIdentRune(r rune) bool {
	return r == '_' || r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokIdent          // plain identifier or keyword
	tokQuoted         // backquoted identifier
	tokString         // '...' or "..."
	tokPunct          // one of , : < > ( )
	tokBad            // a lexing error; text holds the message
)

type token struct {
	kind tokKind
	text string // identifier, unquoted string, punctuation or error
	off  int    // byte offset of the token's start
}

type ddlParser struct {
	text string
	pos  int
	tok  token
}

func (p *ddlParser) errAt(t token, format string, args ...any) error {
	return &DDLError{Column: utf8.RuneCountInString(p.text[:t.off]) + 1, Msg: fmt.Sprintf(format, args...)}
}

// describe names a token for an error message.
func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "a string"
	case tokQuoted:
		return strconv.Quote("`" + t.text + "`")
	}
	return strconv.Quote(t.text)
}

// next reads the next token into p.tok.
func (p *ddlParser) next() {
	for p.pos < len(p.text) {
		r, n := utf8.DecodeRuneInString(p.text[p.pos:])
		if !unicode.IsSpace(r) {
			break
		}
		p.pos += n
	}
	start := p.pos
	if p.pos >= len(p.text) {
		p.tok = token{kind: tokEOF, off: start}
		return
	}
	c := p.text[p.pos]
	switch {
	case strings.IndexByte(",:<>()", c) >= 0:
		p.pos++
		p.tok = token{kind: tokPunct, text: string(c), off: start}
	case c == '`':
		var b strings.Builder
		i := p.pos + 1
		for {
			j := strings.IndexByte(p.text[i:], '`')
			if j < 0 {
				p.tok = token{kind: tokBad, text: "unterminated backquoted name", off: start}
				p.pos = len(p.text)
				return
			}
			b.WriteString(p.text[i : i+j])
			i += j + 1
			if i < len(p.text) && p.text[i] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			break
		}
		p.pos = i
		p.tok = token{kind: tokQuoted, text: b.String(), off: start}
	case c == '\'' || c == '"':
		s, end, ok := unquoteSQLString(p.text, p.pos)
		if !ok {
			p.tok = token{kind: tokBad, text: "unterminated string", off: start}
			p.pos = len(p.text)
			return
		}
		p.pos = end
		p.tok = token{kind: tokString, text: s, off: start}
	default:
		i := p.pos
		for i < len(p.text) {
			r, n := utf8.DecodeRuneInString(p.text[i:])
			if !isIdentRune(r) {
				break
			}
			i += n
		}
		if i == p.pos {
			r, _ := utf8.DecodeRuneInString(p.text[p.pos:])
			p.tok = token{kind: tokBad, text: fmt.Sprintf("unexpected character %q", r), off: start}
			p.pos = len(p.text)
			return
		}
		p.pos = i
		p.tok = token{kind: tokIdent, text: p.text[start:i], off: start}
	}
}

// unquoteSQLString reads the string literal starting at text[start] (a
// quote character). Backslash escapes \n \t \r \b \0 and \<any> are
// understood, as is a doubled quote. It returns the value and the offset
// after the closing quote.
func unquoteSQLString(text string, start int) (string, int, bool) {
	q := text[start]
	var b strings.Builder
	i := start + 1
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\\':
			if i+1 >= len(text) {
				return "", 0, false
			}
			r, n := utf8.DecodeRuneInString(text[i+1:])
			switch r {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteString(text[i+1 : i+1+n])
			}
			i += 1 + n
		case c == q:
			if i+1 < len(text) && text[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, false
}

// expect consumes the punctuation s or fails.
func (p *ddlParser) expect(s string) error {
	if p.tok.kind == tokBad {
		return p.errAt(p.tok, "%s", p.tok.text)
	}
	if p.tok.kind != tokPunct || p.tok.text != s {
		return p.errAt(p.tok, "expected %q, found %s", s, describe(p.tok))
	}
	p.next()
	return nil
}

func (p *ddlParser) isPunct(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

func (p *ddlParser) isKeyword(k string) bool {
	return p.tok.kind == tokIdent && strings.EqualFold(p.tok.text, k)
}

// fields parses a comma-separated field list up to the closing token
// (end of input, or '>' for a struct type, which is not consumed).
func (p *ddlParser) fields(closing tokKind, depth int) (*StructType, error) {
	st := &StructType{Fields: []*StructField{}}
	seen := map[string]bool{}
	for {
		if closing == tokPunct && p.isPunct(">") && len(st.Fields) == 0 {
			return st, nil // struct<>
		}
		nameTok := p.tok
		f, err := p.field(depth)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(f.Name)
		if seen[key] {
			return nil, p.errAt(nameTok, "duplicate column %q", f.Name)
		}
		seen[key] = true
		st.Fields = append(st.Fields, f)
		switch {
		case p.isPunct(","):
			p.next()
		case closing == tokEOF && p.tok.kind == tokEOF:
			return st, nil
		case closing == tokPunct && p.isPunct(">"):
			return st, nil
		case p.tok.kind == tokBad:
			return nil, p.errAt(p.tok, "%s", p.tok.text)
		default:
			want := `","`
			if closing == tokPunct {
				want = `"," or ">"`
			}
			return nil, p.errAt(p.tok, "expected %s, found %s", want, describe(p.tok))
		}
	}
}

// field parses: name [':'] type [NOT NULL] [COMMENT 'text'].
func (p *ddlParser) field(depth int) (*StructField, error) {
	var name string
	switch p.tok.kind {
	case tokIdent, tokQuoted:
		name = p.tok.text
	case tokBad:
		return nil, p.errAt(p.tok, "%s", p.tok.text)
	default:
		return nil, p.errAt(p.tok, "expected a column name, found %s", describe(p.tok))
	}
	if name == "" {
		return nil, p.errAt(p.tok, "empty column name")
	}
	p.next()
	if p.isPunct(":") {
		p.next()
	}
	t, err := p.dataType(depth)
	if err != nil {
		return nil, err
	}
	f := &StructField{Name: name, Type: t, Nullable: true}
	var sawNotNull, sawComment, sawGenerated bool
	for {
		switch {
		case p.isKeyword("generated") && !sawGenerated:
			if err := p.generated(f, depth); err != nil {
				return nil, err
			}
			sawGenerated = true
		case p.isKeyword("not") && !sawNotNull:
			p.next()
			if !p.isKeyword("null") {
				return nil, p.errAt(p.tok, "expected NULL after NOT, found %s", describe(p.tok))
			}
			p.next()
			f.Nullable = false
			sawNotNull = true
		case p.isKeyword("comment") && !sawComment:
			p.next()
			if p.tok.kind != tokString {
				if p.tok.kind == tokBad {
					return nil, p.errAt(p.tok, "%s", p.tok.text)
				}
				return nil, p.errAt(p.tok, "expected a quoted comment, found %s", describe(p.tok))
			}
			if f.Metadata == nil {
				f.Metadata = map[string]any{}
			}
			f.Metadata["comment"] = p.tok.text
			p.next()
			sawComment = true
		default:
			return f, nil
		}
	}
}

// MetaGenerationExpression is the field metadata key of a generated
// column's expression (the generatedColumns feature), its SQL text.
const MetaGenerationExpression = "delta.generationExpression"

// generated parses a generated column's clause after its type, as
// Spark's CREATE TABLE writes it: GENERATED ALWAYS AS (expression). The
// expression's text (inside the parentheses, trimmed) goes to the
// field's metadata under delta.generationExpression; its parentheses
// must balance (quotes and backquotes respected). Only a top-level
// column can be generated.
func (p *ddlParser) generated(f *StructField, depth int) error {
	at := p.tok
	p.next()
	if !p.isKeyword("always") {
		return p.errAt(p.tok, "expected ALWAYS after GENERATED, found %s", describe(p.tok))
	}
	p.next()
	if !p.isKeyword("as") {
		return p.errAt(p.tok, "expected AS, found %s", describe(p.tok))
	}
	p.next()
	if !p.isPunct("(") {
		return p.errAt(p.tok, "expected \"(\" and the generation expression after GENERATED ALWAYS AS, found %s", describe(p.tok))
	}
	open := p.tok
	end, ok := matchingParen(p.text, open.off)
	if !ok {
		return p.errAt(open, "unbalanced parentheses in the generation expression")
	}
	text := strings.TrimSpace(p.text[open.off+1 : end])
	if text == "" {
		return p.errAt(open, "empty generation expression")
	}
	if depth > 0 {
		return p.errAt(at, "generated column %q: only a top-level column can be generated", f.Name)
	}
	p.pos = end + 1
	p.next()
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	f.Metadata[MetaGenerationExpression] = text
	return nil
}

// matchingParen is the offset of the ')' that closes the '(' at
// text[open], skipping quoted strings and backquoted names.
func matchingParen(text string, open int) (int, bool) {
	depth := 0
	for i := open; i < len(text); i++ {
		switch c := text[i]; c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i, true
			}
		case '\'', '"', '`':
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return 0, false
			}
			i = j
		}
	}
	return 0, false
}

// dataType parses a type.
func (p *ddlParser) dataType(depth int) (DataType, error) {
	if depth >= maxDDLDepth {
		return nil, p.errAt(p.tok, "types nest deeper than %d levels", maxDDLDepth)
	}
	t := p.tok
	switch t.kind {
	case tokIdent:
	case tokBad:
		return nil, p.errAt(t, "%s", t.text)
	default:
		return nil, p.errAt(t, "expected a type, found %s", describe(t))
	}
	name := strings.ToLower(t.text)
	if pt, ok := ddlTypeNames[name]; ok {
		p.next()
		return pt, nil
	}
	p.next()
	switch name {
	case "decimal", "dec", "numeric":
		d := &DecimalType{Precision: 10, Scale: 0}
		if p.isPunct("(") {
			p.next()
			prec, err := p.smallInt()
			if err != nil {
				return nil, err
			}
			d.Precision = prec
			if p.isPunct(",") {
				p.next()
				scale, err := p.smallInt()
				if err != nil {
					return nil, err
				}
				d.Scale = scale
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
		}
		if err := d.validate(); err != nil {
			return nil, p.errAt(t, "%v", err)
		}
		return d, nil
	case "char", "varchar":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		n, err := p.smallInt()
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, p.errAt(t, "%s length must be positive", name)
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return TypeString, nil
	case "array":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		elem, err := p.dataType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return &ArrayType{ElementType: elem, ContainsNull: true}, nil
	case "map":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		k, err := p.dataType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		v, err := p.dataType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return &MapType{KeyType: k, ValueType: v, ValueContainsNull: true}, nil
	case "struct":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		st, err := p.fields(tokPunct, depth+1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return st, nil
	}
	return nil, p.errAt(t, "unknown type %q", t.text)
}

// smallInt reads a non-negative integer argument such as a precision.
func (p *ddlParser) smallInt() (int, error) {
	t := p.tok
	if t.kind != tokIdent || !allDigits(t.text) {
		if t.kind == tokBad {
			return 0, p.errAt(t, "%s", t.text)
		}
		return 0, p.errAt(t, "expected a number, found %s", describe(t))
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n > 1<<20 {
		return 0, p.errAt(t, "number %s is too large", t.text)
	}
	p.next()
	return n, nil
}
