package deltasql

import (
	"errors"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/expr"
)

// Parse reads the statements of text, separated by semicolons. Nothing
// runs: a syntax error anywhere is an *Error pointing at it before any
// statement has run.
func Parse(text string) ([]*Statement, error) {
	clean, starts, ends, err := Split(text)
	if err != nil {
		return nil, err
	}
	var out []*Statement
	for i := range starts {
		p := &parser{orig: text, src: clean[:ends[i]], lx: lexer{src: clean[:ends[i]], off: starts[i]}}
		if err := p.advance(); err != nil {
			return nil, p.fix(err)
		}
		n, err := p.statement()
		if err != nil {
			return nil, p.fix(err)
		}
		if p.tok.kind != tokEOF {
			return nil, p.fix(p.unexpected("the end of the statement"))
		}
		pos := p.firstPos
		out = append(out, &Statement{Text: text, Pos: pos, End: ends[i], Kind: n.kind(), node: n})
	}
	if len(out) == 0 {
		return nil, errAt(text, 0, nil, "no statement")
	}
	return out, nil
}

type parser struct {
	orig     string // the text as given, for errors
	src      string // the text with comments blanked, up to the statement's end
	lx       lexer
	tok      token
	firstPos int
	started  bool
}

// fix gives an error the original text (with its comments) for its
// context.
func (p *parser) fix(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Text = p.orig
	}
	return err
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	if !p.started {
		p.started, p.firstPos = true, t.pos
	}
	p.tok = t
	return nil
}

func (p *parser) errorf(pos int, format string, a ...any) *Error {
	return errAt(p.orig, pos, nil, format, a...)
}

// describe names the current token for an error.
func (p *parser) describe() string {
	switch p.tok.kind {
	case tokEOF:
		return "the end of the statement"
	case tokString:
		return "the string '" + p.tok.text + "'"
	case tokQuoted:
		return "`" + p.tok.text + "`"
	}
	return "'" + p.tok.text + "'"
}

func (p *parser) unexpected(want string) error {
	return p.errorf(p.tok.pos, "expected %s but found %s", want, p.describe())
}

// is reports whether the current token is one of the keywords.
func (p *parser) is(kws ...string) bool {
	if p.tok.kind != tokIdent {
		return false
	}
	for _, kw := range kws {
		if strings.EqualFold(p.tok.text, kw) {
			return true
		}
	}
	return false
}

// accept consumes the keyword sequence if it is next; it reports whether
// it did (a partial match is an error).
func (p *parser) accept(kws ...string) (bool, error) {
	if !p.is(kws[0]) {
		return false, nil
	}
	for _, kw := range kws {
		if !p.is(kw) {
			return false, p.unexpected(strings.Join(kws, " "))
		}
		if err := p.advance(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// expect consumes the keywords or fails.
func (p *parser) expect(kws ...string) error {
	for _, kw := range kws {
		if !p.is(kw) {
			return p.unexpected(kw)
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) isPunct(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

func (p *parser) expectPunct(s string) error {
	if !p.isPunct(s) {
		return p.unexpected("'" + s + "'")
	}
	return p.advance()
}

// acceptPunct consumes s if it is next.
func (p *parser) acceptPunct(s string) (bool, error) {
	if !p.isPunct(s) {
		return false, nil
	}
	return true, p.advance()
}

// expr reads an expression with the expression parser (package expr)
// and resumes after it.
func (p *parser) expr() (Expr, error) {
	pos := p.tok.pos
	if p.tok.kind == tokEOF {
		return Expr{}, p.unexpected("an expression")
	}
	e, end, err := expr.ParsePrefix(p.src, pos)
	if err != nil {
		var se *expr.SyntaxError
		if errors.As(err, &se) {
			return Expr{}, p.errorf(se.Pos, "%s", se.Msg)
		}
		return Expr{}, p.errorf(pos, "%v", err)
	}
	p.lx.off = end
	if err := p.advance(); err != nil {
		return Expr{}, err
	}
	return Expr{Expr: e, Pos: pos}, nil
}

// name reads an identifier (bare or backquoted).
func (p *parser) name(what string) (string, int, error) {
	if p.tok.kind != tokIdent && p.tok.kind != tokQuoted {
		return "", 0, p.unexpected(what)
	}
	n, pos := p.tok.text, p.tok.pos
	return n, pos, p.advance()
}

// qualifiedName reads name(.name)*.
func (p *parser) qualifiedName(what string) ([]string, int, error) {
	n, pos, err := p.name(what)
	if err != nil {
		return nil, 0, err
	}
	out := []string{n}
	for p.isPunct(".") {
		if err := p.advance(); err != nil {
			return nil, 0, err
		}
		n, _, err := p.name(what)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, n)
	}
	return out, pos, nil
}

// nameList reads ( a, b, ... ) or, with bare, a, b without parentheses.
func (p *parser) nameList(what string) ([]string, error) {
	var out []string
	err := p.commaList(func() error {
		parts, _, err := p.qualifiedName(what)
		out = append(out, strings.Join(parts, "."))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// commaList reads item, item, ... in parentheses when the next token
// opens one.
func (p *parser) commaList(item func() error) error {
	paren, err := p.acceptPunct("(")
	if err != nil {
		return err
	}
	for {
		if err := item(); err != nil {
			return err
		}
		more, err := p.acceptPunct(",")
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if paren {
		return p.expectPunct(")")
	}
	return nil
}

func (p *parser) stringLit(what string) (string, int, error) {
	if p.tok.kind != tokString {
		return "", 0, p.unexpected(what)
	}
	s, pos := p.tok.text, p.tok.pos
	return s, pos, p.advance()
}

// integer reads a whole number, optionally negative.
func (p *parser) integer(what string) (int64, int, error) {
	pos := p.tok.pos
	neg, err := p.acceptPunct("-")
	if err != nil {
		return 0, 0, err
	}
	if p.tok.kind != tokNumber {
		return 0, 0, p.unexpected(what)
	}
	n, err := strconv.ParseInt(p.tok.text, 10, 64)
	if err != nil {
		return 0, 0, p.errorf(p.tok.pos, "%s: %q is not a whole number", what, p.tok.text)
	}
	if neg {
		n = -n
	}
	return n, pos, p.advance()
}

// number reads a number (hours of RETAIN may have a fraction).
func (p *parser) number(what string) (float64, error) {
	if p.tok.kind != tokNumber {
		return 0, p.unexpected(what)
	}
	f, err := strconv.ParseFloat(p.tok.text, 64)
	if err != nil {
		return 0, p.errorf(p.tok.pos, "%s: %q is not a number", what, p.tok.text)
	}
	return f, p.advance()
}

// properties reads ('k' = 'v', ...) (keys may be bare dotted names and
// values numbers or booleans, as Spark allows).
func (p *parser) properties(withValues bool) (map[string]string, []string, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, nil, err
	}
	m := map[string]string{}
	var keys []string
	for {
		var k string
		if p.tok.kind == tokString {
			k = p.tok.text
			if err := p.advance(); err != nil {
				return nil, nil, err
			}
		} else {
			parts, _, err := p.qualifiedName("a property key")
			if err != nil {
				return nil, nil, err
			}
			k = strings.Join(parts, ".")
		}
		keys = append(keys, k)
		if withValues {
			if _, err := p.acceptPunct("="); err != nil {
				return nil, nil, err
			}
			switch p.tok.kind {
			case tokString, tokNumber, tokIdent:
				m[k] = p.tok.text
				if err := p.advance(); err != nil {
					return nil, nil, err
				}
			default:
				return nil, nil, p.unexpected("a property value")
			}
		}
		more, err := p.acceptPunct(",")
		if err != nil {
			return nil, nil, err
		}
		if !more {
			break
		}
	}
	return m, keys, p.expectPunct(")")
}

// statement reads one statement.
func (p *parser) statement() (node, error) {
	switch {
	case p.is("CREATE"), p.is("REPLACE"):
		return p.createTable()
	case p.is("INSERT"):
		return p.insert()
	case p.is("DELETE"):
		return p.deleteStmt()
	case p.is("UPDATE"):
		return p.update()
	case p.is("MERGE"):
		return p.merge()
	case p.is("SELECT"):
		return p.query()
	case p.is("DESCRIBE", "DESC"):
		return p.describeStmt()
	case p.is("RESTORE"):
		return p.restore()
	case p.is("VACUUM"):
		return p.vacuum()
	case p.is("OPTIMIZE"):
		return p.optimize()
	case p.is("ALTER"):
		return p.alter()
	case p.is("SET"):
		return p.setConf()
	case p.is("CONVERT"):
		return p.convert()
	case p.is("SHOW"):
		return p.show()
	case p.is("GENERATE"):
		return p.generate()
	}
	if msg, ok := refusedStatements[strings.ToUpper(p.tok.text)]; ok && p.tok.kind == tokIdent {
		return nil, p.errorf(p.tok.pos, "%s", msg)
	}
	known := []string{"SELECT", "INSERT", "DELETE", "UPDATE", "MERGE", "CREATE", "REPLACE", "ALTER", "DESCRIBE", "SHOW", "RESTORE", "VACUUM", "OPTIMIZE", "CONVERT", "GENERATE", "SET"}
	hint := ""
	if p.tok.kind == tokIdent {
		for _, k := range known {
			if editDistance(strings.ToUpper(p.tok.text), k) <= 2 {
				hint = " (did you mean " + k + "?)"
				break
			}
		}
	}
	return nil, p.errorf(p.tok.pos, "%s does not start a statement lakelog runs%s; statements start with SELECT, INSERT, DELETE, UPDATE, MERGE, CREATE TABLE, REPLACE TABLE, ALTER TABLE, DESCRIBE, SHOW, RESTORE, VACUUM, OPTIMIZE, CONVERT TO DELTA, GENERATE or SET", p.describe(), hint)
}

// keywords that end a table reference (and so are no alias).
var clauseWords = map[string]bool{
	"WHERE": true, "SET": true, "USING": true, "ON": true, "WHEN": true, "VERSION": true, "TIMESTAMP": true,
	"GROUP": true, "ORDER": true, "LIMIT": true, "VALUES": true, "SELECT": true, "RETAIN": true, "DRY": true,
	"ZORDER": true, "PARTITIONED": true, "LOCATION": true, "TBLPROPERTIES": true, "COMMENT": true, "AS": true,
	"TO": true, "FROM": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "CROSS": true,
	"UNION": true, "HAVING": true, "WINDOW": true, "ADD": true, "DROP": true, "RENAME": true, "ALTER": true,
	"CHANGE": true, "REPLACE": true, "UNSET": true, "CLUSTER": true, "FOR": true, "OPTIONS": true,
}

// fileFormats are the prefixes of files read as tables: csv.`x.csv`.
var fileFormats = map[string]bool{"csv": true, "json": true, "parquet": true}

// tableRef reads a table: delta.`path`, csv.`file` (json, parquet),
// read_files('file'), or a name of the catalog; then time travel and an
// alias if allowed.
func (p *parser) tableRef(travel, alias bool) (tableRef, error) {
	t := tableRef{pos: p.tok.pos}
	switch {
	case p.tok.kind == tokIdent && strings.EqualFold(p.tok.text, "read_files"):
		if err := p.advance(); err != nil {
			return t, err
		}
		if err := p.readFiles(&t); err != nil {
			return t, err
		}
	case p.tok.kind == tokIdent || p.tok.kind == tokQuoted:
		first := p.tok
		parts, _, err := p.qualifiedName("a table")
		if err != nil {
			return t, err
		}
		prefix := strings.ToLower(parts[0])
		switch {
		case len(parts) == 2 && first.kind == tokIdent && prefix == "delta":
			t.path = parts[1]
		case len(parts) == 2 && first.kind == tokIdent && fileFormats[prefix]:
			t.format, t.files = prefix, []string{parts[1]}
		case len(parts) == 1:
			t.name = parts[0]
		case len(parts) == 2 && strings.EqualFold(parts[0], "default"):
			t.name = parts[1]
		default:
			return t, p.errorf(t.pos, "table %s: name a table as delta.`path`, a catalog name, or files as csv.`file`, json.`file`, parquet.`file` or read_files('file')", strings.Join(parts, "."))
		}
	case p.tok.kind == tokString:
		// DESCRIBE HISTORY '/path', VACUUM '/path': a Delta table by path.
		t.path = p.tok.text
		if err := p.advance(); err != nil {
			return t, err
		}
	default:
		return t, p.unexpected("a table (delta.`path`, a name, csv.`file`, read_files('file'))")
	}
	if err := p.atVersion(&t); err != nil {
		return t, err
	}
	if travel {
		if err := p.timeTravel(&t.version, &t.timestamp); err != nil {
			return t, err
		}
	}
	if alias {
		as, err := p.accept("AS")
		if err != nil {
			return t, err
		}
		if as || (p.tok.kind == tokIdent && !clauseWords[strings.ToUpper(p.tok.text)]) || p.tok.kind == tokQuoted {
			n, _, err := p.name("an alias")
			if err != nil {
				return t, err
			}
			t.alias = n
		}
	}
	return t, nil
}

// readFiles reads ('file' [, 'file'...] [, format => 'csv']).
func (p *parser) readFiles(t *tableRef) error {
	if err := p.expectPunct("("); err != nil {
		return err
	}
	for {
		if p.tok.kind == tokString {
			t.files = append(t.files, p.tok.text)
			if err := p.advance(); err != nil {
				return err
			}
		} else {
			key, pos, err := p.name("a file or an option")
			if err != nil {
				return err
			}
			if err := p.expectPunct("=>"); err != nil {
				return err
			}
			if err := p.readFilesOption(t, key, pos); err != nil {
				return err
			}
		}
		more, err := p.acceptPunct(",")
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if len(t.files) == 0 {
		return p.errorf(t.pos, "read_files names no file")
	}
	if t.format == "" {
		t.format = "auto"
	}
	return p.expectPunct(")")
}

// readFilesOption reads the value of read_files' option key (after =>):
// format, header, inferSchema, delimiter (sep), schema.
func (p *parser) readFilesOption(t *tableRef, key string, pos int) error {
	var text string
	if p.tok.kind == tokIdent && (strings.EqualFold(p.tok.text, "true") || strings.EqualFold(p.tok.text, "false")) {
		text = p.tok.text
		if err := p.advance(); err != nil {
			return err
		}
	} else {
		v, _, err := p.stringLit("the option's value (a string, or true or false)")
		if err != nil {
			return err
		}
		text = v
	}
	boolean := func() (*bool, error) {
		v := strings.ToLower(text)
		if v != "true" && v != "false" {
			return nil, p.errorf(pos, "read_files option %s: want true or false, not %q", key, text)
		}
		b := v == "true"
		return &b, nil
	}
	var err error
	switch strings.ToLower(key) {
	case "format":
		t.format = strings.ToLower(text)
		if !fileFormats[t.format] {
			return p.errorf(pos, "read_files format %q: want csv, json or parquet", text)
		}
	case "header":
		t.header, err = boolean()
	case "inferschema":
		t.inferSchema, err = boolean()
	case "delimiter", "sep":
		r := []rune(text)
		if len(r) != 1 || r[0] == '"' || r[0] == '\r' || r[0] == '\n' {
			return p.errorf(pos, "read_files option %s: want one character other than a quote or a line break, not %q", key, text)
		}
		t.delimiter = r[0]
	case "schema":
		t.schema, t.schemaPos = text, pos
	default:
		return p.errorf(pos, "read_files option %s is not supported (format, header, inferSchema, delimiter, sep and schema are)", key)
	}
	return err
}

// timeTravel reads [VERSION AS OF n | TIMESTAMP AS OF 'text'] (also FOR
// SYSTEM_VERSION / SYSTEM_TIME AS OF).
func (p *parser) timeTravel(version **int64, ts *string) error {
	if _, err := p.accept("FOR"); err != nil {
		return err
	}
	switch {
	case p.is("VERSION", "SYSTEM_VERSION"):
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect("AS", "OF"); err != nil {
			return err
		}
		n, pos, err := p.integer("a version")
		if err != nil {
			return err
		}
		if n < 0 {
			return p.errorf(pos, "VERSION AS OF %d: a version is 0 or more", n)
		}
		*version = &n
	case p.is("TIMESTAMP", "SYSTEM_TIME"):
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect("AS", "OF"); err != nil {
			return err
		}
		if p.tok.kind == tokString {
			s, _, err := p.stringLit("a timestamp in quotes")
			if err != nil {
				return err
			}
			*ts = s
			return nil
		}
		e, err := p.expr()
		if err != nil {
			return err
		}
		v, err := constantTimestamp(e)
		if err != nil {
			return p.errorf(e.Pos, "TIMESTAMP AS OF: %v", err)
		}
		*ts = v
	}
	return nil
}

// source reads what a query reads: a table or files, or table_changes.
func (p *parser) source() (source, error) {
	if p.tok.kind == tokIdent && (strings.EqualFold(p.tok.text, "table_changes") || strings.EqualFold(p.tok.text, "table_changes_by_path")) {
		c, err := p.changes()
		return source{changes: c}, err
	}
	t, err := p.tableRef(true, true)
	return source{table: &t}, err
}

// changes reads table_changes('name', from[, to]) or
// table_changes_by_path('path', from[, to]); from and to are versions or
// timestamps in quotes.
func (p *parser) changes() (*changesRef, error) {
	c := &changesRef{pos: p.tok.pos}
	byPath := strings.EqualFold(p.tok.text, "table_changes_by_path")
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	t, pos, err := p.stringLit("the table, in quotes")
	if err != nil {
		return nil, err
	}
	c.table.pos = pos
	switch {
	case byPath:
		c.table.path = t
	case strings.HasPrefix(strings.ToLower(t), "delta.`") && strings.HasSuffix(t, "`"):
		c.table.path = t[len("delta.`") : len(t)-1]
	default:
		c.table.name = strings.TrimPrefix(t, "default.")
	}
	bound := func(v **int64, ts *string, at *int) error {
		if err := p.expectPunct(","); err != nil {
			return err
		}
		*at = p.tok.pos
		if p.tok.kind == tokString {
			s, _, err := p.stringLit("a timestamp")
			*ts = s
			return err
		}
		n, pos, err := p.integer("a version or a timestamp in quotes")
		if err != nil {
			return err
		}
		if n < 0 {
			return p.errorf(pos, "version %d: a version is 0 or more", n)
		}
		*v = &n
		return nil
	}
	if err := bound(&c.fromV, &c.fromTS, &c.fromPos); err != nil {
		return nil, err
	}
	if p.isPunct(",") {
		if err := bound(&c.toV, &c.toTS, &c.toPos); err != nil {
			return nil, err
		}
		if (c.fromV == nil) != (c.toV == nil) {
			return nil, p.errorf(c.toPos, "give both bounds as versions or both as timestamps")
		}
	}
	return c, p.expectPunct(")")
}

// SET key = value
func (p *parser) setConf() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.is("TIME") {
		pos := p.tok.pos
		if err := p.expect("TIME", "ZONE"); err != nil {
			return nil, err
		}
		if p.tok.kind != tokString && !p.is("LOCAL") {
			return nil, p.unexpected("a time zone in quotes or LOCAL")
		}
		v := p.tok.text
		return &setConf{key: "spark.sql.session.timeZone", value: v, pos: pos}, p.advance()
	}
	parts, pos, err := p.qualifiedName("a setting")
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct("="); err != nil {
		return nil, err
	}
	if p.tok.kind == tokString {
		v := p.tok.text
		return &setConf{key: strings.Join(parts, "."), value: v, pos: pos}, p.advance()
	}
	// Spark takes the rest of the statement as the value: SET
	// spark.sql.session.timeZone = America/Los_Angeles.
	start := p.tok.pos
	v := strings.TrimSpace(p.src[start:])
	if v == "" {
		return nil, p.unexpected("a value")
	}
	p.lx.off = len(p.src)
	return &setConf{key: strings.Join(parts, "."), value: v, pos: pos}, p.advance()
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev = cur
	}
	return prev[len(b)]
}
