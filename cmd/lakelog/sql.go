package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lakelog/lakelog/deltasql"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/reader"
)

func init() {
	register(&verb{
		name: "sql", section: sectionSQL,
		args:    []arg{{name: "STATEMENT", optional: true}},
		summary: "run Delta SQL statements as Spark users write them: SELECT, INSERT, DELETE, UPDATE, MERGE, CREATE TABLE, DESCRIBE HISTORY, RESTORE, VACUUM, OPTIMIZE, ...",
		flags: []flagDef{
			{name: "f", kind: textFlag, arg: "FILE", help: "read the statements from FILE (- for stdin), separated by ;"},
			{name: "catalog", kind: textFlag, arg: "FILE", help: "the catalog of table names (default lakelog-catalog.json in the current directory; CREATE TABLE name registers a table there)"},
			{name: "no-deletion-vectors", kind: boolFlag, help: "DELETE, UPDATE and MERGE rewrite the touched files even where the table enables deletion vectors"},
		},
		formats: allFormats, progress: true,
		more: sqlHelp,
		run:  runSQL,
	})
}

const sqlHelp = `Tables are named by path, delta.` + "`s3://bucket/orders`" + `, delta.` + "`./orders`" + `, or by name in
the catalog; files are read as tables: read_files('x.csv'), csv.` + "`x.csv`" + `,
json.` + "`x.jsonl`" + `, parquet.` + "`x.parquet`" + `, CSV columns typed as Spark's
inferSchema types them (read_files takes format, header, inferSchema,
delimiter or sep, and schema => 'id INT, d DATE'). Statements:

  CREATE TABLE [IF NOT EXISTS] t (id BIGINT NOT NULL, ...) USING DELTA
      [PARTITIONED BY (c)] [LOCATION 'path'] [TBLPROPERTIES ('k' = 'v')]
      [AS SELECT ...]
  INSERT INTO|OVERWRITE t [(cols) | BY NAME] VALUES (...), ... | SELECT ...
      (columns by position, as Spark; BY NAME matches a SELECT's by name)
  DELETE FROM t [WHERE ...]       UPDATE t SET c = e, ... [WHERE ...]
  MERGE INTO t [AS a] USING source [AS s] ON cond
      WHEN MATCHED [AND cond] THEN UPDATE SET * | UPDATE SET c = e, ... | DELETE
      WHEN NOT MATCHED [AND cond] THEN INSERT * | INSERT (cols) VALUES (...)
      WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET ... | DELETE
  SELECT cols | aggregates FROM t [VERSION AS OF n | TIMESTAMP AS OF '...']
      [WHERE ...] [GROUP BY ...] [ORDER BY ... [DESC]] [LIMIT n]
      (COUNT(*), COUNT, SUM, MIN, MAX, AVG; one table, no joins)
  SELECT * FROM table_changes('t', 2, 5)   (or table_changes_by_path)
  DESCRIBE HISTORY t [LIMIT n]   DESCRIBE DETAIL t   DESCRIBE t
  RESTORE TABLE t TO VERSION AS OF n | TIMESTAMP AS OF '...'
  VACUUM t [RETAIN n HOURS] [DRY RUN]
  OPTIMIZE t [WHERE ...] [ZORDER BY (c, ...)]
  ALTER TABLE t SET TBLPROPERTIES (...) | UNSET TBLPROPERTIES [IF EXISTS] (...)
      | ADD COLUMNS (c type [NOT NULL] [COMMENT 'x'] [FIRST | AFTER b], ...)
      | RENAME COLUMN c TO d | DROP COLUMN[S] [IF EXISTS] c, ...
      | ALTER COLUMN c TYPE type | DROP NOT NULL | COMMENT 'x'
      | ADD CONSTRAINT name CHECK (cond) | DROP CONSTRAINT [IF EXISTS] name
  SET spark.databricks.delta.retentionDurationCheck.enabled = false

Each statement runs through the same library call as the command that does
the same (MERGE as lakelog merge, VACUUM as lakelog vacuum, ...). Every
statement is parsed before the first runs; they run in order and stop at
the first error, which points at its line and column. A statement prints
the rows Spark returns for it (DELETE: num_affected_rows, ...); with
--format table a line says what it committed.`

// runSQL parses every statement, then runs them in order, printing each
// one's rows.
func runSQL(ctx context.Context, c *call) error {
	text, err := sqlText(c)
	if err != nil {
		return err
	}
	stmts, err := deltasql.Parse(text)
	if err != nil {
		return sqlError(err, 0, 0)
	}
	catPath := c.text("catalog")
	if catPath == "" {
		catPath = "lakelog-catalog.json"
	}
	cat, err := deltasql.OpenCatalog(catPath, "")
	if err != nil {
		return err
	}
	opts := []deltasql.Option{deltasql.WithCatalog(cat)}
	if c.on("no-deletion-vectors") {
		opts = append(opts, deltasql.WithDMLOptions(dml.WithoutDeletionVectors()))
	}
	if m := c.meter(); m != nil {
		opts = append(opts, deltasql.WithProgress(func(what string, done, total int) { m.set(what, int64(done), int64(total), "", "") }))
		defer m.clear()
	}
	sess := deltasql.New(opts...)
	defer sess.Close()
	for i, st := range stmts {
		res, err := sess.Run(ctx, st)
		if err != nil {
			return sqlError(err, i+1, len(stmts))
		}
		if err := c.printResult(ctx, res, i > 0); err != nil {
			if len(stmts) > 1 {
				err = fmt.Errorf("statement %d of %d (those before it ran): %w", i+1, len(stmts), err)
			}
			return err
		}
		warnHooks(c.stderr, "lakelog sql", res.WaitHooks())
	}
	return nil
}

// sqlText is the statements: the argument, or -f FILE.
func sqlText(c *call) (string, error) {
	file := c.text("f")
	switch {
	case file != "" && len(c.args) > 0:
		return "", usagef("give the statements as an argument or with -f FILE, not both")
	case file == "-":
		b, err := io.ReadAll(c.stdin)
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("-f: %w", err)
		}
		return string(b), nil
	case len(c.args) == 0:
		return "", usagef(`give a statement ("SELECT * FROM delta.` + "`./t`" + `") or -f FILE`)
	}
	return c.args[0], nil
}

// sqlError shows where in the statements an error is.
func sqlError(err error, n, of int) error {
	var e *deltasql.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	if of > 1 {
		msg = fmt.Sprintf("statement %d of %d (those before it ran): %s", n, of, msg)
	}
	ctx := "  " + strings.ReplaceAll(e.Context(), "\n", "\n  ")
	return fmt.Errorf("%s\n%s", msg, ctx)
}

// printResult prints a statement's rows in the format asked; in the
// table format a line says what it committed. In the other formats a
// statement that changes a table prints one record: the statement, the
// operation and version committed (null when none was), the commit's
// operationMetrics as numbers, and the columns of the row Spark returns
// for it (DELETE's num_affected_rows, ...).
func (c *call) printResult(ctx context.Context, res *deltasql.Result, separate bool) error {
	if separate && (c.format == formatTable || c.format == formatCSV) && (res.Schema != nil || res.Summary != "" || res.Command) {
		fmt.Fprintln(c.stdout)
	}
	if res.Command && c.format != formatTable {
		return c.printCommand(res)
	}
	if res.Schema != nil {
		if err := c.printRows(ctx, res.Schema, res.Rows()); err != nil {
			return err
		}
	}
	if c.format == formatTable && res.Summary != "" {
		fmt.Fprintln(c.stdout, res.Summary)
	}
	return nil
}

// printCommand prints the record of a statement that changes a table
// (printResult).
func (c *call) printCommand(res *deltasql.Result) error {
	keys := []string{"statement", "operation", "version", "operationMetrics"}
	var op, version any
	if res.Version != nil {
		op, version = res.Operation, *res.Version
	}
	metrics, err := marshalRecord(numericMetrics(res.Metrics))
	if err != nil {
		return err
	}
	vals := []json.RawMessage{mustJSON(res.Kind), mustJSON(op), mustJSON(version), metrics}
	var rows [][]byte
	for rec, err := range res.Rows() {
		if err != nil {
			return err
		}
		for i := range int(rec.NumRows()) {
			row, err := reader.AppendJSONRow(nil, rec, i)
			if err != nil {
				return err
			}
			rows = append(rows, row)
		}
	}
	switch {
	case len(rows) == 1: // Spark's one row: its columns beside the others
		cols, err := splitCanonical(rows[0], len(res.Schema.Fields()))
		if err != nil {
			return err
		}
		for i, f := range res.Schema.Fields() {
			keys = append(keys, f.Name)
			vals = append(vals, cols[i])
		}
	case len(rows) > 1:
		keys = append(keys, "rows")
		vals = append(vals, json.RawMessage("["+string(bytes.Join(rows, []byte(",")))+"]"))
	}
	w := bufio.NewWriter(c.stdout)
	if c.format == formatCSV {
		cw := csv.NewWriter(w)
		cw.Write(keys)
		fields := make([]string, len(vals))
		for i, v := range vals {
			fields[i], _ = cellText(v)
		}
		cw.Write(fields)
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return w.Flush()
	}
	w.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(mustJSON(k))
		w.WriteByte(':')
		w.Write(vals[i])
	}
	w.WriteString("}\n")
	return w.Flush()
}

// mustJSON is v (a string, number or nil) as JSON.
func mustJSON(v any) json.RawMessage {
	b, err := marshalRecord(v)
	if err != nil {
		panic(err) // only ever called with strings, integers and nil
	}
	return b
}
