package deltasql

import (
	"github.com/lakelog/lakelog/expr"
)

// Statement is one parsed statement. Its Text is the text it was parsed
// from (the whole input of Parse), Pos and End its span in it.
type Statement struct {
	Text     string
	Pos, End int
	Kind     string // the statement as history names it: "SELECT", "MERGE", "DESCRIBE HISTORY", ...
	node     node
}

// SQL is the statement's own text.
func (s *Statement) SQL() string { return s.Text[s.Pos:s.End] }

// node is a statement's syntax tree.
type node interface{ kind() string }

// Expr is an expression of a statement and where it starts.
type Expr struct {
	expr.Expr
	Pos int
}

// tableRef names a table: by path (delta.`s3://b/t`), by name in the
// catalog, or a file read as a table (csv.`x.csv`, read_files('x.csv')).
type tableRef struct {
	pos    int
	path   string // delta.`path`
	name   string // a catalog name
	format string // "": a Delta table; csv, json, parquet: files
	files  []string
	// read_files' options: header, inferSchema (booleans), delimiter
	// (or sep), schema (DDL text)
	header, inferSchema *bool
	delimiter           rune
	schema              string
	schemaPos           int
	// time travel: VERSION AS OF n, TIMESTAMP AS OF 'text'
	version   *int64
	timestamp string
	alias     string
}

// changesRef is table_changes('t', from[, to]) or
// table_changes_by_path('path', from[, to]): the change data feed.
type changesRef struct {
	pos            int
	table          tableRef
	fromV, toV     *int64
	fromTS, toTS   string
	fromPos, toPos int
}

// source is what a query reads: a table (or files), a change feed, or
// (as a MERGE source) a query in parentheses with its alias.
type source struct {
	none    bool // SELECT without FROM
	table   *tableRef
	changes *changesRef
	sub     *query
	alias   string
}

func (s source) pos() int {
	switch {
	case s.none:
		return 0
	case s.changes != nil:
		return s.changes.pos
	case s.sub != nil:
		return s.sub.pos
	}
	return s.table.pos
}

type createTable struct {
	table       tableRef
	ifNotExists bool
	columns     string // the column list's text, DDL
	columnsPos  int
	partitionBy []string
	properties  map[string]string
	location    string
	comment     string
	query       *query // CREATE TABLE ... AS SELECT
	// replace: CREATE OR REPLACE TABLE (orCreate) or REPLACE TABLE
	replace, orCreate bool
	// cloneOf: CREATE TABLE t SHALLOW CLONE source [VERSION AS OF n]
	cloneOf *tableRef
}

type insert struct {
	table     tableRef
	overwrite bool
	// byName: INSERT ... BY NAME matches the query's columns to the
	// table's by name; otherwise by position, as Spark.
	byName  bool
	columns []string
	values  [][]Expr
	query   *query
	// INSERT INTO t REPLACE WHERE cond: the rows cond matches are
	// replaced (dml.ReplaceWhere).
	replaceWhere *Expr
	replacePos   int
	// PARTITION (p = v, ...): static partition values, columns the rows
	// do not give.
	static      map[string]Expr
	staticOrder []string
	staticPos   int
}

type deleteStmt struct {
	table tableRef
	where *Expr
}

type assignment struct {
	column []string // a name, possibly qualified by the table's alias
	pos    int
	value  Expr
}

type update struct {
	table tableRef
	set   []assignment
	where *Expr
}

// mergeClause is one WHEN clause.
type mergeClause struct {
	pos     int
	matched string // "MATCHED", "NOT MATCHED", "NOT MATCHED BY SOURCE"
	cond    *Expr
	action  string // "UPDATE", "DELETE", "INSERT"
	star    bool   // UPDATE SET * / INSERT *
	set     []assignment
	columns []string // INSERT (columns)
	values  []Expr   // INSERT VALUES (values)
}

type merge struct {
	evolve  bool // MERGE WITH SCHEMA EVOLUTION
	target  tableRef
	source  source
	on      Expr
	clauses []mergeClause
}

// selectItem is one output column: an expression or an aggregate.
type selectItem struct {
	pos   int
	star  bool
	agg   string // COUNT, SUM, MIN, MAX, AVG, or ""
	arg   *Expr  // the aggregate's argument (nil: COUNT(*))
	expr  *Expr
	alias string
	text  string // the item's source text, for its default name
}

type orderKey struct {
	expr Expr
	text string
	desc bool
	// nullsFirst is Spark's default: NULLS FIRST ascending, LAST
	// descending, unless NULLS FIRST/LAST says otherwise.
	nullsFirst bool
}

type query struct {
	pos     int
	items   []selectItem
	from    source
	where   *Expr
	groupBy []Expr
	orderBy []orderKey
	limit   *int64
}

type describe struct {
	table tableRef
	what  string // "HISTORY", "DETAIL", "TABLE"
	// extended: DESCRIBE TABLE EXTENDED adds the table's details.
	extended bool
	limit    *int64
	limPos   int
}

type restore struct {
	table     tableRef
	version   *int64
	timestamp string
}

type vacuum struct {
	table  tableRef
	retain *float64 // hours
	dryRun bool
}

type optimize struct {
	table  tableRef
	where  *Expr
	zorder []string
}

type alterProperties struct {
	table    tableRef
	set      map[string]string
	unset    []string
	ifExists bool
}

// alterColumns is ALTER TABLE's column and constraint forms; op is
// Spark's operation name (ADD COLUMNS, RENAME COLUMN, DROP COLUMNS,
// CHANGE COLUMN, ADD CONSTRAINT, DROP CONSTRAINT), each run by the
// schema package function `lakelog alter` calls.
type alterColumns struct {
	table tableRef
	op    string
	pos   int // of the form (ADD, RENAME, ...), for errors
	// ADD COLUMNS: the definitions' text (schema.ParseColumn) and where
	// each starts.
	defs    []string
	defsPos []int
	// the column concerned (SQL path text): RENAME, ALTER COLUMN; DROP's
	// columns.
	column  string
	columns []string
	newName string // RENAME COLUMN ... TO
	// ALTER COLUMN's action: "TYPE" (typ), "DROP NOT NULL", "COMMENT"
	// (comment).
	action  string
	typ     string
	typePos int
	comment string
	// constraints
	constraint string
	check      string
	ifExists   bool
}

func (a *alterColumns) kind() string { return "ALTER TABLE" }

func (c *createTable) kind() string {
	op := "CREATE TABLE"
	switch {
	case c.cloneOf != nil:
		return "CLONE"
	case c.replace && c.orCreate:
		op = "CREATE OR REPLACE TABLE"
	case c.replace:
		op = "REPLACE TABLE"
	}
	if c.query != nil {
		op += " AS SELECT"
	}
	return op
}
func (i *insert) kind() string        { return "WRITE" }
func (*deleteStmt) kind() string      { return "DELETE" }
func (*update) kind() string          { return "UPDATE" }
func (*merge) kind() string           { return "MERGE" }
func (*query) kind() string           { return "SELECT" }
func (d *describe) kind() string      { return "DESCRIBE " + d.what }
func (*restore) kind() string         { return "RESTORE" }
func (*vacuum) kind() string          { return "VACUUM" }
func (*optimize) kind() string        { return "OPTIMIZE" }
func (*alterProperties) kind() string { return "ALTER TABLE" }

// setConf is SET key = value: the Spark settings lakelog honours.
type setConf struct {
	key, value string
	pos        int
}

func (*setConf) kind() string { return "SET" }
