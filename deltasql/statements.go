package deltasql

import (
	"strings"
)

// CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [(columns)] [USING DELTA]
// [PARTITIONED BY (a, b)] [LOCATION 'path'] [TBLPROPERTIES (...)]
// [COMMENT 'text'] [AS SELECT ...]
//
// REPLACE TABLE t ... (the table must exist), and
// CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW CLONE source
// [VERSION AS OF n | TIMESTAMP AS OF 'text'] [TBLPROPERTIES (...)]
// [LOCATION 'path'].
func (p *parser) createTable() (node, error) {
	c := &createTable{properties: map[string]string{}}
	if p.is("REPLACE") {
		c.replace = true
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !c.replace {
		ok, err := p.accept("OR", "REPLACE")
		if err != nil {
			return nil, err
		}
		c.replace, c.orCreate = ok, ok
	}
	if err := p.expect("TABLE"); err != nil {
		return nil, err
	}
	var err error
	ifPos := p.tok.pos
	if c.ifNotExists, err = p.accept("IF", "NOT", "EXISTS"); err != nil {
		return nil, err
	}
	if c.ifNotExists && c.replace {
		return nil, p.errorf(ifPos, "IF NOT EXISTS and OR REPLACE cannot go together: the one keeps an existing table, the other replaces it")
	}
	if c.table, err = p.tableRef(false, false); err != nil {
		return nil, err
	}
	if c.table.format != "" {
		return nil, p.errorf(c.table.pos, "CREATE TABLE makes a Delta table: name it delta.`path` or by name")
	}
	switch {
	case p.is("SHALLOW"):
		if err := p.expect("SHALLOW", "CLONE"); err != nil {
			return nil, err
		}
		src, err := p.tableRef(true, false)
		if err != nil {
			return nil, err
		}
		if src.format != "" {
			return nil, p.errorf(src.pos, "SHALLOW CLONE clones a Delta table: name it delta.`path` or by name (CONVERT TO DELTA makes a folder of Parquet files one)")
		}
		c.cloneOf = &src
	case p.is("DEEP"):
		return nil, p.errorf(p.tok.pos, "DEEP CLONE is not supported (Delta Lake has SHALLOW CLONE, whose files stay the source's); INSERT INTO a new table SELECT * FROM the source copies the rows")
	case p.is("CLONE"):
		return nil, p.errorf(p.tok.pos, "write SHALLOW CLONE: CREATE TABLE target SHALLOW CLONE source")
	}
	if p.isPunct("(") {
		// The column list is DDL text (actions.ParseDDL): take it whole,
		// up to the matching parenthesis.
		open := p.tok.pos
		depth, i := 0, open
		for ; i < len(p.src); i++ {
			switch p.src[i] {
			case '(':
				depth++
			case ')':
				depth--
			case '\'', '"', '`':
				_, end, err := quoted(p.src, i, p.src[i])
				if err != nil {
					return nil, err
				}
				i = end - 1
			}
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return nil, p.errorf(open, "the column list has no closing parenthesis")
		}
		c.columns, c.columnsPos = p.src[open+1:i], open+1
		p.lx.off = i + 1
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	for {
		switch {
		case p.is("USING"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			f, pos, err := p.name("a format")
			if err != nil {
				return nil, err
			}
			if !strings.EqualFold(f, "delta") {
				return nil, p.errorf(pos, "USING %s: lakelog creates Delta tables (USING DELTA)", f)
			}
		case p.is("PARTITIONED"):
			if err := p.expect("PARTITIONED", "BY"); err != nil {
				return nil, err
			}
			if c.partitionBy, err = p.nameList("a partition column"); err != nil {
				return nil, err
			}
		case p.is("CLUSTER"):
			return nil, p.errorf(p.tok.pos, "CLUSTER BY is not supported yet: lakelog does not write liquid-clustered tables; use PARTITIONED BY, or OPTIMIZE ... ZORDER BY for data skipping")
		case p.is("LOCATION"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if c.location, _, err = p.stringLit("the location, in quotes"); err != nil {
				return nil, err
			}
		case p.is("TBLPROPERTIES"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if c.properties, _, err = p.properties(true); err != nil {
				return nil, err
			}
		case p.is("COMMENT"):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if c.comment, _, err = p.stringLit("the comment, in quotes"); err != nil {
				return nil, err
			}
		case p.is("AS") && c.cloneOf == nil:
			if err := p.advance(); err != nil {
				return nil, err
			}
			q, err := p.query()
			if err != nil {
				return nil, err
			}
			c.query = q
			return c, nil
		default:
			if c.cloneOf != nil {
				if c.columns != "" || c.partitionBy != nil || c.comment != "" {
					return nil, p.errorf(c.table.pos, "a SHALLOW CLONE takes the source's columns, partitioning and comment; it takes only TBLPROPERTIES and LOCATION")
				}
				return c, nil
			}
			if c.columns == "" && c.query == nil {
				return nil, p.errorf(c.table.pos, "CREATE TABLE needs a column list (id BIGINT, ...) or AS SELECT")
			}
			return c, nil
		}
	}
}

// INSERT INTO [TABLE] t [(columns)] VALUES (...), ... | SELECT ...
// INSERT OVERWRITE [TABLE] t ...
func (p *parser) insert() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	in := &insert{}
	switch {
	case p.is("INTO"):
	case p.is("OVERWRITE"):
		in.overwrite = true
	default:
		return nil, p.unexpected("INTO or OVERWRITE")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if _, err := p.accept("TABLE"); err != nil {
		return nil, err
	}
	var err error
	if in.table, err = p.tableRef(false, false); err != nil {
		return nil, err
	}
	if in.table.format != "" {
		return nil, p.errorf(in.table.pos, "INSERT writes to a Delta table, not to files")
	}
	if p.is("PARTITION") {
		if err := p.partitionSpec(in); err != nil {
			return nil, err
		}
	}
	if p.is("REPLACE") {
		pos := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.is("WHERE") {
			return nil, p.unexpected("WHERE after REPLACE")
		}
		if in.replaceWhere, err = p.where(); err != nil {
			return nil, err
		}
		in.replacePos = pos
		if in.overwrite {
			return nil, p.errorf(pos, "INSERT OVERWRITE replaces every row; INSERT INTO t REPLACE WHERE cond replaces the rows cond matches")
		}
	}
	byNamePos := p.tok.pos
	if in.byName, err = p.accept("BY", "NAME"); err != nil {
		return nil, err
	}
	if p.isPunct("(") {
		if in.byName {
			return nil, p.errorf(p.tok.pos, "INSERT BY NAME takes no column list: the query's column names choose the columns")
		}
		if in.columns, err = p.nameList("a column"); err != nil {
			return nil, err
		}
	}
	switch {
	case p.is("VALUES"):
		if in.byName {
			return nil, p.errorf(byNamePos, "INSERT BY NAME needs a query whose columns are named (SELECT ... AS name), not VALUES")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		for {
			row, err := p.exprList()
			if err != nil {
				return nil, err
			}
			in.values = append(in.values, row)
			more, err := p.acceptPunct(",")
			if err != nil {
				return nil, err
			}
			if !more {
				return in, nil
			}
		}
	case p.is("SELECT"):
		in.query, err = p.query()
		return in, err
	case p.is("TABLE"):
		// INSERT INTO t TABLE other: every row of other.
		pos := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		src, err := p.source()
		if err != nil {
			return nil, err
		}
		in.query = &query{pos: pos, items: []selectItem{{pos: pos, star: true}}, from: src}
		return in, nil
	}
	return nil, p.unexpected("VALUES or SELECT")
}

// exprList reads ( e, e, ... ).
func (p *parser) exprList() ([]Expr, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var out []Expr
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		more, err := p.acceptPunct(",")
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	return out, p.expectPunct(")")
}

// where reads [WHERE expr].
func (p *parser) where() (*Expr, error) {
	if !p.is("WHERE") {
		return nil, nil
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	e, err := p.expr()
	return &e, err
}

// DELETE FROM t [[AS] alias] [WHERE expr]
func (p *parser) deleteStmt() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.expect("FROM"); err != nil {
		return nil, err
	}
	d := &deleteStmt{}
	var err error
	if d.table, err = p.deltaTable(true); err != nil {
		return nil, err
	}
	d.where, err = p.where()
	return d, err
}

// deltaTable reads a table reference that must be a Delta table.
func (p *parser) deltaTable(alias bool) (tableRef, error) {
	t, err := p.tableRef(false, alias)
	if err == nil && t.format != "" {
		err = p.errorf(t.pos, "this statement changes a Delta table, not files")
	}
	return t, err
}

// assignments reads a = e, b = e, ...
func (p *parser) assignments() ([]assignment, error) {
	var out []assignment
	for {
		col, pos, err := p.qualifiedName("a column")
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct("="); err != nil {
			return nil, err
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, assignment{column: col, pos: pos, value: v})
		more, err := p.acceptPunct(",")
		if err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
	}
}

// UPDATE t [[AS] alias] SET a = e, ... [WHERE expr]
func (p *parser) update() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	u := &update{}
	var err error
	if u.table, err = p.deltaTable(true); err != nil {
		return nil, err
	}
	if err := p.expect("SET"); err != nil {
		return nil, err
	}
	if u.set, err = p.assignments(); err != nil {
		return nil, err
	}
	u.where, err = p.where()
	return u, err
}

// MERGE INTO t [[AS] a] USING source [[AS] s] ON cond WHEN ...
func (p *parser) merge() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	m := &merge{}
	if ok, err := p.accept("WITH", "SCHEMA", "EVOLUTION"); err != nil {
		return nil, err
	} else if ok {
		m.evolve = true
	}
	if err := p.expect("INTO"); err != nil {
		return nil, err
	}
	var err error
	if m.target, err = p.deltaTable(true); err != nil {
		return nil, err
	}
	if err := p.expect("USING"); err != nil {
		return nil, err
	}
	if p.isPunct("(") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		if _, err := p.accept("AS"); err != nil {
			return nil, err
		}
		n, _, err := p.name("the source's alias")
		if err != nil {
			return nil, err
		}
		m.source = source{sub: q, alias: n}
	} else if m.source, err = p.source(); err != nil {
		return nil, err
	}
	if err := p.expect("ON"); err != nil {
		return nil, err
	}
	if m.on, err = p.expr(); err != nil {
		return nil, err
	}
	for p.is("WHEN") {
		c, err := p.whenClause()
		if err != nil {
			return nil, err
		}
		m.clauses = append(m.clauses, c)
	}
	if len(m.clauses) == 0 {
		return nil, p.unexpected("WHEN MATCHED or WHEN NOT MATCHED")
	}
	return m, nil
}

// whenClause reads WHEN [NOT] MATCHED [BY TARGET | BY SOURCE] [AND cond]
// THEN UPDATE SET ... | UPDATE SET * | DELETE | INSERT * | INSERT (cols)
// VALUES (exprs).
func (p *parser) whenClause() (mergeClause, error) {
	c := mergeClause{pos: p.tok.pos}
	if err := p.advance(); err != nil {
		return c, err
	}
	not, err := p.accept("NOT")
	if err != nil {
		return c, err
	}
	if err := p.expect("MATCHED"); err != nil {
		return c, err
	}
	c.matched = "MATCHED"
	if not {
		c.matched = "NOT MATCHED"
		if ok, err := p.accept("BY"); err != nil {
			return c, err
		} else if ok {
			switch {
			case p.is("SOURCE"):
				c.matched = "NOT MATCHED BY SOURCE"
			case p.is("TARGET"):
			default:
				return c, p.unexpected("SOURCE or TARGET")
			}
			if err := p.advance(); err != nil {
				return c, err
			}
		}
	}
	if ok, err := p.accept("AND"); err != nil {
		return c, err
	} else if ok {
		e, err := p.expr()
		if err != nil {
			return c, err
		}
		c.cond = &e
	}
	if err := p.expect("THEN"); err != nil {
		return c, err
	}
	actionPos := p.tok.pos
	c, err = p.clauseAction(c)
	if err != nil {
		return c, err
	}
	switch {
	case c.matched == "NOT MATCHED" && c.action != "INSERT":
		return c, p.errorf(actionPos, "WHEN NOT MATCHED THEN %s: a source row that matches nothing can only be inserted", c.action)
	case c.matched != "NOT MATCHED" && c.action == "INSERT":
		what := "a matched row"
		if c.matched == "NOT MATCHED BY SOURCE" {
			what = "a target row no source row matches"
		}
		return c, p.errorf(actionPos, "WHEN %s THEN INSERT: %s is updated or deleted", c.matched, what)
	}
	return c, nil
}

// clauseAction reads a WHEN clause's action.
func (p *parser) clauseAction(c mergeClause) (mergeClause, error) {
	var err error
	switch {
	case p.is("UPDATE"):
		c.action = "UPDATE"
		if err := p.expect("UPDATE", "SET"); err != nil {
			return c, err
		}
		if p.isPunct("*") {
			c.star = true
			return c, p.advance()
		}
		c.set, err = p.assignments()
		return c, err
	case p.is("DELETE"):
		c.action = "DELETE"
		return c, p.advance()
	case p.is("INSERT"):
		c.action = "INSERT"
		if err := p.advance(); err != nil {
			return c, err
		}
		if p.isPunct("*") {
			c.star = true
			return c, p.advance()
		}
		if c.columns, err = p.nameList("a column"); err != nil {
			return c, err
		}
		if err := p.expect("VALUES"); err != nil {
			return c, err
		}
		pos := p.tok.pos
		if c.values, err = p.exprList(); err != nil {
			return c, err
		}
		if len(c.values) != len(c.columns) {
			return c, p.errorf(pos, "INSERT names %d columns but gives %d values", len(c.columns), len(c.values))
		}
		return c, nil
	}
	return c, p.unexpected("UPDATE, DELETE or INSERT")
}

// aggregates are the aggregate functions a SELECT knows.
var aggregates = map[string]bool{"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true}

// SELECT items FROM source [WHERE e] [GROUP BY e, ...] [ORDER BY k, ...]
// [LIMIT n]
func (p *parser) query() (*query, error) {
	q := &query{pos: p.tok.pos}
	if err := p.expect("SELECT"); err != nil {
		return nil, err
	}
	if p.is("DISTINCT") {
		return nil, p.errorf(p.tok.pos, "SELECT DISTINCT is not supported (GROUP BY the columns instead)")
	}
	for {
		it, err := p.selectItem()
		if err != nil {
			return nil, err
		}
		q.items = append(q.items, it)
		more, err := p.acceptPunct(",")
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	var err error
	if !p.is("FROM") {
		// SELECT upper('x'): one row of no columns.
		q.from = source{none: true}
		if p.tok.kind == tokIdent && !clauseWords[strings.ToUpper(p.tok.text)] && !p.is("WHERE", "LIMIT") {
			return nil, p.unexpected("FROM or the end of the statement")
		}
	} else {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if q.from, err = p.source(); err != nil {
			return nil, err
		}
	}
	if p.is("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS") || p.isPunct(",") {
		return nil, p.errorf(p.tok.pos, "joins are not supported: a SELECT reads one table")
	}
	if q.where, err = p.where(); err != nil {
		return nil, err
	}
	if ok, err := p.accept("GROUP", "BY"); err != nil {
		return nil, err
	} else if ok {
		for {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			q.groupBy = append(q.groupBy, e)
			more, err := p.acceptPunct(",")
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
		}
	}
	if p.is("HAVING") {
		return nil, p.errorf(p.tok.pos, "HAVING is not supported")
	}
	if ok, err := p.accept("ORDER", "BY"); err != nil {
		return nil, err
	} else if ok {
		for {
			start := p.tok.pos
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			k := orderKey{expr: e, text: strings.TrimSpace(p.src[start:p.tok.pos]), nullsFirst: true}
			switch {
			case p.is("ASC"):
				if err := p.advance(); err != nil {
					return nil, err
				}
			case p.is("DESC"):
				k.desc, k.nullsFirst = true, false
				if err := p.advance(); err != nil {
					return nil, err
				}
			}
			if ok, err := p.accept("NULLS"); err != nil {
				return nil, err
			} else if ok {
				switch {
				case p.is("FIRST"):
					k.nullsFirst = true
				case p.is("LAST"):
					k.nullsFirst = false
				default:
					return nil, p.unexpected("FIRST or LAST")
				}
				if err := p.advance(); err != nil {
					return nil, err
				}
			}
			q.orderBy = append(q.orderBy, k)
			more, err := p.acceptPunct(",")
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
		}
	}
	if ok, err := p.accept("LIMIT"); err != nil {
		return nil, err
	} else if ok {
		n, pos, err := p.integer("a number of rows")
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, p.errorf(pos, "LIMIT %d: a limit is 0 or more", n)
		}
		q.limit = &n
	}
	return q, nil
}

// selectItem reads *, an aggregate, or an expression, with [AS] alias.
func (p *parser) selectItem() (selectItem, error) {
	it := selectItem{pos: p.tok.pos}
	start := p.tok.pos
	switch {
	case p.isPunct("*"):
		it.star = true
		return it, p.advance()
	case p.tok.kind == tokIdent && aggregates[strings.ToUpper(p.tok.text)]:
		// An aggregate if a parenthesis follows.
		save := p.lx
		name := strings.ToUpper(p.tok.text)
		if err := p.advance(); err != nil {
			return it, err
		}
		if !p.isPunct("(") {
			p.lx = save
			p.lx.off = start
			if err := p.advance(); err != nil {
				return it, err
			}
			break
		}
		it.agg = name
		if err := p.advance(); err != nil {
			return it, err
		}
		if p.is("DISTINCT") {
			return it, p.errorf(p.tok.pos, "%s(DISTINCT ...) is not supported", name)
		}
		if p.isPunct("*") {
			if name != "COUNT" {
				return it, p.errorf(p.tok.pos, "%s(*): only COUNT takes *", name)
			}
			if err := p.advance(); err != nil {
				return it, err
			}
		} else {
			e, err := p.expr()
			if err != nil {
				return it, err
			}
			it.arg = &e
		}
		if err := p.expectPunct(")"); err != nil {
			return it, err
		}
		it.text = strings.TrimSpace(p.src[start:p.tok.pos])
		return it, p.alias(&it)
	}
	e, err := p.expr()
	if err != nil {
		return it, err
	}
	it.expr = &e
	it.text = strings.TrimSpace(p.src[start:p.tok.pos])
	return it, p.alias(&it)
}

func (p *parser) alias(it *selectItem) error {
	as, err := p.accept("AS")
	if err != nil {
		return err
	}
	if as || p.tok.kind == tokQuoted || p.tok.kind == tokIdent && !clauseWords[strings.ToUpper(p.tok.text)] {
		n, _, err := p.name("an alias")
		if err != nil {
			return err
		}
		it.alias = n
	}
	return nil
}

// DESCRIBE HISTORY t [LIMIT n] | DESCRIBE DETAIL t | DESCRIBE [TABLE] t
func (p *parser) describeStmt() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	d := &describe{what: "TABLE"}
	switch {
	case p.is("HISTORY"):
		d.what = "HISTORY"
		if err := p.advance(); err != nil {
			return nil, err
		}
	case p.is("DETAIL"):
		d.what = "DETAIL"
		if err := p.advance(); err != nil {
			return nil, err
		}
	default:
		if _, err := p.accept("TABLE"); err != nil {
			return nil, err
		}
		var err error
		if d.extended, err = p.accept("EXTENDED"); err != nil {
			return nil, err
		}
	}
	var err error
	if d.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	if d.what == "HISTORY" {
		if ok, err := p.accept("LIMIT"); err != nil {
			return nil, err
		} else if ok {
			n, pos, err := p.integer("a number of versions")
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, p.errorf(pos, "LIMIT %d: a limit is 0 or more", n)
			}
			d.limit, d.limPos = &n, pos
		}
	}
	return d, nil
}

// RESTORE [TABLE] t [TO] VERSION AS OF n | TIMESTAMP AS OF 'text'
func (p *parser) restore() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if _, err := p.accept("TABLE"); err != nil {
		return nil, err
	}
	r := &restore{}
	var err error
	if r.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	if _, err := p.accept("TO"); err != nil {
		return nil, err
	}
	pos := p.tok.pos
	if err := p.timeTravel(&r.version, &r.timestamp); err != nil {
		return nil, err
	}
	if r.version == nil && r.timestamp == "" {
		return nil, p.errorf(pos, "expected VERSION AS OF n or TIMESTAMP AS OF 'time' but found %s", p.describe())
	}
	return r, nil
}

// VACUUM t [RETAIN n HOURS] [DRY RUN]
func (p *parser) vacuum() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	v := &vacuum{}
	var err error
	if v.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	if ok, err := p.accept("RETAIN"); err != nil {
		return nil, err
	} else if ok {
		h, err := p.number("a number of hours")
		if err != nil {
			return nil, err
		}
		if err := p.expect("HOURS"); err != nil {
			return nil, err
		}
		v.retain = &h
	}
	if p.is("LITE") {
		return nil, p.errorf(p.tok.pos, "VACUUM ... LITE is not supported: lakelog's VACUUM lists the table's folder (Spark's FULL mode); leave out LITE")
	}
	if _, err := p.accept("FULL"); err != nil {
		return nil, err
	}
	if v.dryRun, err = p.accept("DRY", "RUN"); err != nil {
		return nil, err
	}
	if p.is("RETAIN") && v.retain == nil {
		return nil, p.errorf(p.tok.pos, "write RETAIN before DRY RUN: VACUUM t RETAIN n HOURS DRY RUN")
	}
	return v, nil
}

// OPTIMIZE t [WHERE e] [ZORDER BY (a, b)]
func (p *parser) optimize() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	o := &optimize{}
	var err error
	if o.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	if p.is("FULL") {
		return nil, p.errorf(p.tok.pos, "OPTIMIZE ... FULL reclusters a table with liquid clustering, which lakelog does not support yet; OPTIMIZE t compacts small files")
	}
	if o.where, err = p.where(); err != nil {
		return nil, err
	}
	if ok, err := p.accept("ZORDER", "BY"); err != nil {
		return nil, err
	} else if ok {
		if o.zorder, err = p.nameList("a column"); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// ALTER TABLE t SET TBLPROPERTIES (...) | UNSET TBLPROPERTIES [IF EXISTS]
// (...), or a column or constraint form (alterColumn).
func (p *parser) alter() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.expect("TABLE"); err != nil {
		return nil, err
	}
	a := &alterProperties{}
	var err error
	if a.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	pos := p.tok.pos
	switch {
	case p.is("SET"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.is("TBLPROPERTIES") {
			break
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		a.set, _, err = p.properties(true)
		return a, err
	case p.is("UNSET"):
		if err := p.expect("UNSET", "TBLPROPERTIES"); err != nil {
			return nil, err
		}
		if a.ifExists, err = p.accept("IF", "EXISTS"); err != nil {
			return nil, err
		}
		_, a.unset, err = p.properties(false)
		return a, err
	case p.is("ADD", "DROP", "RENAME", "ALTER", "CHANGE", "REPLACE"):
		return p.alterColumn(a.table)
	}
	return nil, p.errorf(pos, "ALTER TABLE %s is not supported: lakelog runs SET/UNSET TBLPROPERTIES, ADD COLUMNS, REPLACE COLUMNS, RENAME COLUMN, DROP COLUMNS, ALTER COLUMN (TYPE, DROP NOT NULL, COMMENT, FIRST, AFTER), ADD CONSTRAINT and DROP CONSTRAINT", strings.TrimSpace(p.src[pos:min(len(p.src), pos+40)]))
}

// alterColumn reads ALTER TABLE's column and constraint forms, as Spark
// writes them:
//
//	ADD COLUMN[S] [(] c type [NOT NULL] [COMMENT 'x'] [FIRST | AFTER b], ... [)]
//	RENAME COLUMN c TO d
//	DROP COLUMN[S] [IF EXISTS] [(] c, ... [)]
//	ALTER | CHANGE [COLUMN] c TYPE type | DROP NOT NULL | COMMENT 'x' | FIRST | AFTER b
//	REPLACE COLUMNS (c type [NOT NULL] [COMMENT 'x'], ...)
//	ADD CONSTRAINT name CHECK (expr)
//	DROP CONSTRAINT [IF EXISTS] name
func (p *parser) alterColumn(t tableRef) (node, error) {
	a := &alterColumns{table: t, pos: p.tok.pos}
	var err error
	switch {
	case p.is("REPLACE"):
		a.op = "REPLACE COLUMNS"
		if err := p.expect("REPLACE", "COLUMNS"); err != nil {
			return nil, err
		}
		if !p.isPunct("(") {
			return nil, p.unexpected("'(' and the table's new columns (name type [NOT NULL] [COMMENT 'x'], ...)")
		}
		return a, p.columnDefs(a)
	case p.is("ADD"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.is("CONSTRAINT") {
			a.op = "ADD CONSTRAINT"
			if err := p.advance(); err != nil {
				return nil, err
			}
			if a.constraint, _, err = p.name("the constraint's name"); err != nil {
				return nil, err
			}
			if err := p.expect("CHECK"); err != nil {
				return nil, err
			}
			// The expression's text, parentheses and all: the schema
			// package parses and stores it as Spark does.
			start := p.tok.pos
			if !p.isPunct("(") {
				return nil, p.unexpected("'(' and the constraint's expression")
			}
			text, end, err := p.rawUntil(start, false, false)
			if err != nil {
				return nil, err
			}
			text = strings.TrimSpace(text)
			a.check = strings.TrimSpace(text[1 : len(text)-1])
			return a, p.skipTo(end)
		}
		a.op = "ADD COLUMNS"
		if !p.is("COLUMN", "COLUMNS") {
			return nil, p.unexpected("COLUMN, COLUMNS or CONSTRAINT")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		return a, p.columnDefs(a)
	case p.is("RENAME"):
		a.op = "RENAME COLUMN"
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.is("TO") {
			return nil, p.errorf(a.pos, "ALTER TABLE RENAME TO is not supported: a Delta table named by its path is renamed by moving its folder")
		}
		if err := p.expect("COLUMN"); err != nil {
			return nil, err
		}
		if a.column, err = p.columnPath(); err != nil {
			return nil, err
		}
		if err := p.expect("TO"); err != nil {
			return nil, err
		}
		if a.newName, _, err = p.name("the new name"); err != nil {
			return nil, err
		}
		return a, nil
	case p.is("DROP"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.is("FEATURE") {
			return nil, p.errorf(a.pos, "ALTER TABLE DROP FEATURE is not supported yet: lakelog cannot yet remove a table feature from the protocol (Spark 4 does, rewriting what the feature needs and, for reader features, truncating the history); run it in Spark, or keep the feature and turn its property off (for deletion vectors, delta.enableDeletionVectors = false)")
		}
		if p.is("CONSTRAINT") {
			a.op = "DROP CONSTRAINT"
			if err := p.advance(); err != nil {
				return nil, err
			}
			if a.ifExists, err = p.accept("IF", "EXISTS"); err != nil {
				return nil, err
			}
			a.constraint, _, err = p.name("the constraint's name")
			return a, err
		}
		a.op = "DROP COLUMNS"
		if !p.is("COLUMN", "COLUMNS") {
			return nil, p.unexpected("COLUMN, COLUMNS or CONSTRAINT")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if a.ifExists, err = p.accept("IF", "EXISTS"); err != nil {
			return nil, err
		}
		err := p.commaList(func() error {
			c, err := p.columnPath()
			a.columns = append(a.columns, c)
			return err
		})
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	// ALTER | CHANGE [COLUMN] c action
	a.op = "CHANGE COLUMN"
	if err := p.advance(); err != nil {
		return nil, err
	}
	if _, err := p.accept("COLUMN"); err != nil {
		return nil, err
	}
	if a.column, err = p.columnPath(); err != nil {
		return nil, err
	}
	at := p.tok.pos
	switch {
	case p.is("TYPE"):
		a.action = "TYPE"
		if err := p.advance(); err != nil {
			return nil, err
		}
		a.typePos = p.tok.pos
		if p.tok.kind == tokEOF {
			return nil, p.unexpected("a type")
		}
		a.typ = strings.TrimSpace(p.src[a.typePos:])
		return a, p.skipTo(len(p.src))
	case p.is("DROP"):
		if err := p.expect("DROP", "NOT", "NULL"); err != nil {
			return nil, err
		}
		a.action = "DROP NOT NULL"
		return a, nil
	case p.is("SET"):
		if err := p.expect("SET", "NOT", "NULL"); err != nil {
			return nil, err
		}
		return nil, p.errorf(at, "ALTER COLUMN %s SET NOT NULL is not supported: Delta does not tighten a nullable column (Spark refuses it too); ADD CONSTRAINT name CHECK (%s IS NOT NULL) checks the rows and every later write", a.column, a.column)
	case p.is("COMMENT"):
		a.action = "COMMENT"
		if err := p.advance(); err != nil {
			return nil, err
		}
		a.comment, _, err = p.stringLit("the comment, in quotes")
		return a, err
	case p.is("FIRST"):
		a.action = "FIRST"
		return a, p.advance()
	case p.is("AFTER"):
		a.action = "AFTER"
		if err := p.advance(); err != nil {
			return nil, err
		}
		a.newName, _, err = p.name("the column to put it after")
		return a, err
	}
	return nil, p.unexpected("TYPE, DROP NOT NULL, COMMENT, FIRST or AFTER")
}

// columnDefs reads ADD and REPLACE COLUMNS' column definitions, each
// as its text (schema.ParseColumn reads it) and where it starts.
func (p *parser) columnDefs(a *alterColumns) error {
	return p.commaList(func() error {
		start := p.tok.pos
		if p.tok.kind == tokEOF || p.isPunct(")") {
			return p.unexpected("a column definition (name type ...)")
		}
		text, end, err := p.rawUntil(start, true, true)
		if err != nil {
			return err
		}
		a.defs, a.defsPos = append(a.defs, strings.TrimSpace(text)), append(a.defsPos, start)
		return p.skipTo(end)
	})
}

// columnPath reads a column path (a.b, `x y`.c) and returns it as SQL
// text for the schema package (schema.ParseColumnPath).
func (p *parser) columnPath() (string, error) {
	parts, _, err := p.qualifiedName("a column")
	if err != nil {
		return "", err
	}
	for i, part := range parts {
		if !plainName(part) {
			parts[i] = "`" + strings.ReplaceAll(part, "`", "``") + "`"
		}
	}
	return strings.Join(parts, "."), nil
}

// plainName reports whether s is a name that needs no backquotes.
func plainName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// rawUntil returns the text from start up to the first comma (when
// atComma) or unmatched closing parenthesis outside parentheses, angle
// brackets (when angles: a type's STRUCT<...>) and quotes, or to the
// end of the statement, and where it ended. Without atComma it ends
// after the parenthesis that closes the one at start.
func (p *parser) rawUntil(start int, atComma, angles bool) (string, int, error) {
	var open []int // where each open parenthesis or bracket is
	i := start
	for ; i < len(p.src); i++ {
		c := p.src[i]
		if !angles && (c == '<' || c == '>') {
			continue
		}
		switch c {
		case '(', '<':
			open = append(open, i)
		case ')':
			switch {
			case len(open) == 0:
				return p.src[start:i], i, nil
			case p.src[open[len(open)-1]] == '<':
				return "", 0, p.errorf(open[len(open)-1], "no closing angle bracket")
			}
			open = open[:len(open)-1]
			if len(open) == 0 && !atComma {
				return p.src[start : i+1], i + 1, nil
			}
		case '>':
			if len(open) > 0 && p.src[open[len(open)-1]] == '<' {
				open = open[:len(open)-1]
			}
		case ',':
			if len(open) == 0 && atComma {
				return p.src[start:i], i, nil
			}
		case '\'', '"', '`':
			_, end, err := quoted(p.src, i, c)
			if err != nil {
				return "", 0, err
			}
			i = end - 1
		}
	}
	if len(open) > 0 {
		return "", 0, p.errorf(open[len(open)-1], "no closing parenthesis or angle bracket")
	}
	return p.src[start:i], i, nil
}

// skipTo moves the lexer to byte off and reads the token there.
func (p *parser) skipTo(off int) error {
	p.lx.off = off
	return p.advance()
}
