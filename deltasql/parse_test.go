package deltasql

import (
	"errors"
	"strings"
	"testing"
)

// The statements of Delta's documentation parse, each to its kind.
func TestParseStatements(t *testing.T) {
	for _, c := range []struct{ sql, kind string }{
		{"CREATE TABLE IF NOT EXISTS default.people10m (id INT, firstName STRING, birthDate TIMESTAMP, salary INT) USING DELTA", "CREATE TABLE"},
		{"CREATE TABLE delta.`/tmp/delta/people10m` (id INT NOT NULL, gender STRING) USING DELTA PARTITIONED BY (gender) LOCATION '/tmp/delta/people10m' TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', delta.appendOnly = false) COMMENT 'people'", "CREATE TABLE"},
		{"CREATE TABLE t USING DELTA AS SELECT * FROM read_files('x.csv', format => 'csv')", "CREATE TABLE AS SELECT"},
		{"CREATE OR REPLACE TABLE t (a INT) USING DELTA", "CREATE OR REPLACE TABLE"},
		{"REPLACE TABLE t USING DELTA AS SELECT 1 AS a", "REPLACE TABLE AS SELECT"},
		{"CREATE TABLE IF NOT EXISTS c SHALLOW CLONE delta.`/t` VERSION AS OF 3 TBLPROPERTIES ('a' = 'b')", "CLONE"},
		{"ALTER TABLE t ALTER COLUMN a FIRST", "ALTER TABLE"},
		{"ALTER TABLE t CHANGE COLUMN s.a AFTER b", "ALTER TABLE"},
		{"ALTER TABLE t REPLACE COLUMNS (a INT COMMENT 'x', b STRING)", "ALTER TABLE"},
		{"INSERT INTO people10m VALUES (1, 'a'), (2, NULL)", "WRITE"},
		{"INSERT OVERWRITE TABLE people10m SELECT * FROM parquet.`/data/p.parquet`", "WRITE"},
		{"INSERT INTO t (id, name) SELECT id, name FROM json.`x.jsonl` WHERE id > 3", "WRITE"},
		{"INSERT INTO t BY NAME SELECT name, id FROM json.`x.jsonl`", "WRITE"},
		{"DELETE FROM people10m WHERE birthDate < '1955-01-01'", "DELETE"},
		{"DELETE FROM delta.`/tmp/delta/people-10m`", "DELETE"},
		{"UPDATE people10m SET gender = 'Female' WHERE gender = 'F'", "UPDATE"},
		{"UPDATE delta.`/t` AS p SET p.age = p.age + 1, name = 'x'", "UPDATE"},
		{`MERGE INTO people10m
USING people10mupdates
ON people10m.id = people10mupdates.id
WHEN MATCHED THEN
  UPDATE SET
    id = people10mupdates.id,
    firstName = people10mupdates.firstName
WHEN NOT MATCHED
  THEN INSERT (id, firstName) VALUES (people10mupdates.id, people10mupdates.firstName)`, "MERGE"},
		{"MERGE INTO target t USING source s ON t.key = s.key WHEN MATCHED AND s.d THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED BY TARGET THEN INSERT * WHEN NOT MATCHED BY SOURCE AND t.d < '2026-01-01' THEN DELETE", "MERGE"},
		{"MERGE INTO t USING (SELECT * FROM csv.`u.csv` WHERE op <> 'x') AS s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET t.flag = true", "MERGE"},
		{"SELECT * FROM people10m VERSION AS OF 0", "SELECT"},
		{"SELECT COUNT(*), SUM(salary) AS total FROM people10m TIMESTAMP AS OF '2019-01-29 00:37:58' WHERE gender = 'F' GROUP BY gender ORDER BY total DESC NULLS LAST LIMIT 10", "SELECT"},
		{"SELECT * FROM table_changes('tableName', 0, 10)", "SELECT"},
		{"SELECT * FROM table_changes_by_path('/path', '2021-04-21 05:45:46', '2021-05-21 12:00:00')", "SELECT"},
		{"DESCRIBE HISTORY people10m LIMIT 1", "DESCRIBE HISTORY"},
		{"DESCRIBE DETAIL delta.`/t`", "DESCRIBE DETAIL"},
		{"DESC TABLE EXTENDED people10m", "DESCRIBE TABLE"},
		{"RESTORE TABLE db.target_table TO VERSION AS OF 1", "RESTORE"},
		{"RESTORE delta.`/path/to/table` TIMESTAMP AS OF '2019-01-01'", "RESTORE"},
		{"VACUUM eventsTable RETAIN 100 HOURS DRY RUN", "VACUUM"},
		{"OPTIMIZE events WHERE date >= '2017-01-01' ZORDER BY (eventType)", "OPTIMIZE"},
		{"ALTER TABLE t SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 30 days')", "ALTER TABLE"},
		{"ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS (owner)", "ALTER TABLE"},
		{"ALTER TABLE t ADD COLUMNS (a INT NOT NULL COMMENT 'x, y' FIRST, b MAP<STRING, DECIMAL(10,2)>)", "ALTER TABLE"},
		{"ALTER TABLE t ADD COLUMN s.c INT AFTER b", "ALTER TABLE"},
		{"ALTER TABLE t RENAME COLUMN s.`a b` TO c", "ALTER TABLE"},
		{"ALTER TABLE t DROP COLUMN IF EXISTS a, s.b", "ALTER TABLE"},
		{"ALTER TABLE t CHANGE a TYPE DECIMAL(12, 2)", "ALTER TABLE"},
		{"ALTER TABLE t ALTER COLUMN a DROP NOT NULL", "ALTER TABLE"},
		{"ALTER TABLE t ALTER COLUMN a COMMENT 'x'", "ALTER TABLE"},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0 AND (b < 3 OR s = ')'))", "ALTER TABLE"},
		{"ALTER TABLE t DROP CONSTRAINT IF EXISTS c", "ALTER TABLE"},
		{"SET spark.databricks.delta.retentionDurationCheck.enabled = false", "SET"},
	} {
		if strings.HasPrefix(c.sql, "RESTORE TABLE db.") {
			// db.name: only the default database is known.
			if _, err := Parse(c.sql); err == nil {
				t.Errorf("%s: parsed a table of another database", c.sql)
			}
			continue
		}
		stmts, err := Parse(c.sql)
		if err != nil {
			t.Errorf("%s:\n%v", c.sql, err)
			continue
		}
		if len(stmts) != 1 || stmts[0].Kind != c.kind {
			t.Errorf("%s: %d statements, kind %q; want one %q", c.sql, len(stmts), stmts[0].Kind, c.kind)
		}
	}
}

// Several statements, comments, and semicolons inside strings.
func TestParseSplits(t *testing.T) {
	text := "-- setup; not a statement\nDELETE FROM t WHERE s = 'a;b'; /* ; */ SELECT * FROM t;\n\n;UPDATE t SET s = 'x' -- trailing\n"
	stmts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range stmts {
		kinds = append(kinds, s.Kind)
	}
	if strings.Join(kinds, ",") != "DELETE,SELECT,UPDATE" {
		t.Fatalf("kinds %v", kinds)
	}
	if got := stmts[0].SQL(); got != "DELETE FROM t WHERE s = 'a;b'" {
		t.Errorf("first statement %q", got)
	}
	// A comment inside an expression is not arithmetic.
	st, err := Parse("DELETE FROM t WHERE a = 1 -- minus minus\n")
	if err != nil {
		t.Fatal(err)
	}
	if w := st[0].node.(*deleteStmt).where; w.Expr.String() != "a = 1" {
		t.Errorf("where %s", w.Expr)
	}
}

// A syntax error points at its line and column, in any statement of the
// text, and nothing runs (Parse returns no statements).
func TestParseErrorPositions(t *testing.T) {
	for _, c := range []struct {
		sql       string
		line, col int
		msgPrefix string
	}{
		{"SELECT * FORM t", 1, 10, "expected FROM or the end of the statement but found 'FORM'"},
		{"DELETE FROM t WHERE a = ", 1, 25, "expected an expression but found end of input"},
		{"SELECT 1 FROM t;\nUPDATE t SET a = (1 + WHERE", 2, 28, "expected ')' but found end of input"},
		{"MERGE INTO t USING s ON t.id = s.id", 1, 36, "expected WHEN MATCHED or WHEN NOT MATCHED"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN INSERT *", 1, 55, "WHEN MATCHED THEN INSERT: a matched row is updated or deleted"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN DELETE", 1, 59, "WHEN NOT MATCHED THEN DELETE: a source row that matches nothing can only be inserted"},
		{"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN INSERT *", 1, 69, "WHEN NOT MATCHED BY SOURCE THEN INSERT: a target row no source row matches is updated or deleted"},
		{"VACUUM t RETAIN 7 DAYS", 1, 19, "expected HOURS but found 'DAYS'"},
		{"SELECT * FROM t LIMIT -1", 1, 23, "LIMIT -1: a limit is 0 or more"},
		{"ALTER TABLE t SET LOCATION 'x'", 1, 15, "ALTER TABLE SET LOCATION 'x' is not supported"},
		{"ALTER TABLE t ALTER COLUMN a SET NOT NULL", 1, 30, "ALTER COLUMN a SET NOT NULL is not supported"},
		{"ALTER TABLE t ADD COLUMNS (a INT", 1, 33, "expected ')'"},
		{"ALTER TABLE t ADD COLUMNS (a STRUCT<b: INT)", 1, 36, "no closing angle bracket"},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0", 1, 38, "no closing parenthesis"},
		{"ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0) x", 1, 46, "expected the end of the statement"},
		{"ALTER TABLE t RENAME COLUMN a b", 1, 31, "expected TO"},
		{"ALTER TABLE t RENAME TO u", 1, 15, "ALTER TABLE RENAME TO is not supported"},
		{"ALTER TABLE t ALTER COLUMN a AFTER", 1, 35, "expected the column to put it after"},
		{"ALTER TABLE t DROP FEATURE deletionVectors TRUNCATE HISTORY", 1, 15, "ALTER TABLE DROP FEATURE is not supported yet"},
		{"ALTER TABLE t REPLACE COLUMNS a INT", 1, 31, "expected '(' and the table's new columns"},
		{"CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)", 1, 25, "IF NOT EXISTS and OR REPLACE cannot go together"},
		{"CREATE TABLE c DEEP CLONE t", 1, 16, "DEEP CLONE is not supported"},
		{"CREATE TABLE c SHALLOW CLONE t (a INT)", 1, 14, "a SHALLOW CLONE takes the source's columns"},
		{"ALTER TABLE t DROP COLUMNS", 1, 27, "expected a column"},
		{"SELECT * FROM a JOIN b ON a.x = b.x", 1, 17, "joins are not supported"},
		{"FROBNICATE t", 1, 1, "'FROBNICATE' does not start a statement lakelog runs"},
		{"SELCT 1", 1, 1, "'SELCT' does not start a statement lakelog runs (did you mean SELECT?)"},
		{"SELECT 'unterminated FROM t", 1, 8, "unterminated string"},
		{"INSERT INTO t VALUES (1, 2", 1, 27, "expected ')'"},
	} {
		_, err := Parse(c.sql)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want an *Error", c.sql, err)
			continue
		}
		if e.Line != c.line || e.Column != c.col || !strings.HasPrefix(e.Msg, c.msgPrefix) {
			t.Errorf("%q: line %d, column %d: %s\nwant line %d, column %d: %s...", c.sql, e.Line, e.Column, e.Msg, c.line, c.col, c.msgPrefix)
		}
		lines := strings.Split(e.Context(), "\n")
		if len(lines) != 2 || strings.Index(lines[1], "^") != c.col-1 {
			t.Errorf("%q: context\n%s", c.sql, e.Context())
		}
	}
}
