// Package deltasql runs Delta SQL statements as Spark users write them:
//
//	stmts, err := deltasql.Parse("DELETE FROM delta.`s3://b/orders` WHERE day < '2026-01-01'")
//	sess := deltasql.New(deltasql.WithCatalog(cat))
//	defer sess.Close()
//	res, err := sess.Run(ctx, stmts[0])
//	for rec, err := range res.Rows() { ... }   // Spark's row: num_affected_rows
//
// It parses statements (expressions with package expr, so that WHERE
// and SET read as `lakelog --where` and `--set` do) and runs each through
// the library call of the lakelog verb that does the same: CREATE TABLE
// (deltalog.Create, writer.CreateTable), INSERT (writer.Append,
// writer.Overwrite), DELETE, UPDATE, MERGE (dml), SELECT (reader scans
// and cdf feeds, with WHERE, GROUP BY with COUNT, SUM, MIN, MAX and AVG,
// ORDER BY and LIMIT over arrow-go compute), table_changes (cdf),
// DESCRIBE HISTORY / DETAIL (deltalog), RESTORE, VACUUM, OPTIMIZE and
// ALTER TABLE SET/UNSET TBLPROPERTIES (maintenance), ALTER TABLE's column
// and constraint forms (schema). There is no second implementation of
// any operation here. INSERT matches columns by position, as Spark, or
// BY NAME.
//
// Tables are named by path (delta.`s3://b/t`, delta.`./t`) or by name in
// a Catalog file; files are read as tables with read_files('x.csv') or
// Spark's csv.`x.csv`, json.`x.jsonl`, parquet.`x.parquet`, also as a
// MERGE or INSERT source. A statement that cannot run fails with an
// *Error giving the line and column it is about (Error.Context shows
// it), wrapping the library's error; every statement of a text is parsed
// before any runs.
//
// CREATE OR REPLACE TABLE and REPLACE TABLE replace an existing table's
// schema, partitioning, properties and rows in one commit (its id
// stays). Of a table named by its path, Spark's CREATE OR REPLACE
// refuses a schema other than the table's and, given the same one, keeps
// the rows and commits nothing (while REPLACE TABLE replaces); lakelog's
// replaces it as REPLACE does, as it does a table of the catalog.
//
// Not supported: joins, subqueries other than a MERGE source, DISTINCT,
// HAVING, ALTER COLUMN SET NOT NULL (Delta refuses it).
package deltasql
