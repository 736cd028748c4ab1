// Command lakelog creates, writes, reads and inspects Delta Lake tables on
// local disk and object storage. Run "lakelog help" for the verbs.
//
// # The command-line contract
//
// A contract: scripts and tests rely on it. Spark users start with
// `lakelog sql "STATEMENT"` (or `-f file.sql`; package `deltasql`); scripts
// use the verbs. Each command is declared once,
// in a `verb` value of the file that runs it (`cmd/lakelog/verb.go`): its
// arguments, flags (each with a kind that parses and checks its value: a
// count is 0 or more, a version, a size, a duration, a time, a choice),
// groups of alternative flags, time travel, output formats and progress.
// Parsing, `CMD --help`, the command list of `lakelog help` and the synopsis
// below (and README's table) are generated from it; `TestDocsMatchVerbTable`
// fails when they differ (`-rewrite` regenerates them). Adding a verb or a
// flag is a change to one declaration and the code that reads it
// (`c.text`, `c.on`, `c.number`, ...). Implemented today:
//
// (The synopsis of every verb is generated from the verb table into DESIGN.md and README.md.)
//
//   - Exit codes: 0 success, 1 error (named on stderr), 2 usage error, 3 a
//     transaction aborted by a conflict. `lakelog CMD --help` prints every flag
//     with a sentence. `lakelog --version` prints the module version and the
//     commit the binary was built from (when the toolchain stamped it).
//   - `--format table|jsonl|json|csv` on every command that prints rows or
//     metrics (`lakelog help formats`): `table` is for people; `jsonl` one JSON
//     object a line (a row, or a record); `json` one document (an array, or
//     one object for a command reporting one result); `csv` a header and RFC
//     4180 records (null empty, nested values as JSON text). JSON is written
//     without HTML escaping. The table format never cuts a value: widths come
//     from the first 1,000 rows, a later wider value widens its column and
//     prints the header again (the count line says how often), text over 40
//     characters wraps within its column (the last column never wraps).
//   - `--limit 0` prints nothing; without `--limit`, everything; a negative
//     limit is a usage error. `--version` is 0 or more, and not given
//     together with `--timestamp`.
//   - `scan --explain` prints what planning and reading did instead of the
//     rows: files and bytes in the version, files pruned by partition values
//     and skipped by statistics, files and bytes planned, files with deletion
//     vectors and the rows they delete, files read, rows the page index
//     ruled out (and in how many files), rows decoded (what the page index
//     left, before deletion vectors) and returned, and on object
//     stores requests and bytes fetched; as a record in the other formats.
//   - `scan --format jsonl` writes the canonical row encoding of
//     `testdata/delta/README.md`; with `--sorted`, `sha256sum` of the output
//     equals a golden case's `rows_sha256`.
//   - `history` lists a version whose commit file is missing as `MISSING` and
//     exits 1.
//   - `delete`, `update` and `merge` print the version committed (or
//     `OP: nothing matched; no version was committed`, exit 0) and Spark's
//     operationMetrics, one `name value` line each, sorted; the other formats
//     print one record `{"operation", "version" (null when nothing was
//     committed), "operationMetrics"}` (as do `append`, `create`, `alter`,
//     `optimize`, `vacuum` and `restore`). `merge` takes every clause of
//     Spark's MERGE: `--when-matched`, `--when-not-matched` and
//     `--when-not-matched-by-source` (repeatable) each hold Spark's text after
//     `WHEN [NOT] MATCHED [BY SOURCE]`, `[AND cond THEN] action`, read by
//     `deltasql.MergeClause` (the SQL statement's own clause parser), with
//     `--target-alias`/`--source-alias` (default target, source). Clauses of
//     a kind apply in order, the first whose condition holds; the shorthand
//     flags come first, in the order DELETE, UPDATE SET * (WHEN MATCHED),
//     INSERT *, DELETE (BY SOURCE); `--matched-condition` belongs to the
//     first shorthand WHEN MATCHED clause, and with both shorthand matched
//     clauses it is required. SOURCE_FILE is decoded with
//     exactly the columns it holds (`input.Columns`): a table column keeps
//     the table's type, other columns are inferred (`input.MergeSchema`), a
//     table column the file lacks is absent, so `UPDATE SET *` and
//     `INSERT *` refuse it rather than write nulls.
//   - `optimize`, `vacuum` and `restore` print a summary line and then
//     `metrics: name=value ...` (Spark's operationMetrics, sorted by name);
//     `vacuum --dry-run` prints one `path<TAB>size` line per file it would
//     delete, then `dry run: N files ...`, and deletes nothing.
//   - Progress (`cmd/lakelog/progress.go`): when stderr is a terminal and
//     `--quiet` is not given, work still running after 2 s shows one line on
//     stderr, rewritten in place and cleared at the end: done of total, the
//     rate and the time left (`optimize: rows rewritten: 3 of 12 (25%),
//     0.5/s, about 18s left, 6s`). `append` (rows, bytes of the input),
//     `optimize` and Z-order (bins), `vacuum` (files deleted), `sql`'s
//     OPTIMIZE and VACUUM, and, when their rows go to a file or pipe, `scan`
//     (files read of those planning keeps, rows, bytes fetched) and `changes`
//     (versions done of the range, rows). Nothing on stdout changes; not a
//     terminal, nothing is printed. Not yet: DELETE, UPDATE, MERGE and
//     checkpoint (the library reports no progress for them yet). `BYTES` is a
//     number or one with a unit (`128m`, `1g`); `DURATION` is a number of
//     hours (`168`, as `RETAIN 168 HOURS`), Go's (`168h`) or an interval
//     (`7 days`). `vacuum` under the table's retention without `--force` exits
//     1 naming `--force`.
//   - Keys of Delta's own properties in `create --property` and `alter`
//     may be given in any case (`delta.enablechangedatafeed`); they are
//     stored in their canonical spelling, as Spark stores them.
//   - `alter` is one commit or none (`maintenance.AlterProperties`):
//     `--set-property` alone is SET TBLPROPERTIES, `--unset-property` alone
//     UNSET TBLPROPERTIES, both one SET TBLPROPERTIES commit whose
//     operationParameters also hold `unsetProperties`; unknown `delta.*` keys,
//     malformed values, a key the table does not set and a key both set and
//     unset exit 1 with no commit. `delta.constraints.*` keys are refused
//     there (CHECK constraints are added with `--add-constraint`, which
//     checks the rows).
//   - `alter`'s column changes, one per call and never with properties, each
//     one commit through the `schema` package (Spark's operation names):
//     `--add-column 'path type [NOT NULL] [COMMENT 'text'] [FIRST | AFTER
//     name]'` (repeatable: ADD COLUMNS), `--rename-column old:new`,
//     `--drop-column c` (repeatable), `--change-type c:type`, `--set-nullable
//     c`, `--comment c:text`, `--add-constraint name:EXPR`,
//     `--drop-constraint name [--if-exists]`. Paths are SQL's (`s.a`,
//     “ `a b` “, `arr.element`, `m.value`). A refused change exits 1 with
//     `schema: OP column: reason; nothing was committed` (rename and drop
//     without column mapping name the property to set); a malformed flag
//     value exits 2. They print `version N: what was done`.
//   - `sql` parses every statement of its text (separated by `;`, comments
//     `--` and `/* */`) before running the first; they run in order and stop
//     at the first error, printed as `line L, column C: ...` with the line
//     and a caret under the column (and `statement N of M` when there are
//     several). Each statement prints the rows Spark returns for it (SELECT's
//     rows; `num_affected_rows` for DELETE and UPDATE; `num_affected_rows`,
//     `num_updated_rows`, `num_deleted_rows`, `num_inserted_rows` for MERGE;
//     none for INSERT, CREATE TABLE and ALTER TABLE; RESTORE's six size
//     and count columns; VACUUM's `path`s; DESCRIBE HISTORY's and DETAIL's
//     columns; OPTIMIZE's `path` and `metrics`, the struct of Delta's
//     OptimizeMetrics field for field: files added and removed and their
//     size metrics and partitions, read back from the commits, bins, commits,
//     times, `zOrderStats` with ZORDER BY (strategy `all`; every input file
//     counts as outside a cube), null clustering and auto-compaction stats,
//     deletion vector stats on a table with deletion vectors, else null, as
//     Spark), and in the table format a line saying what
//     it committed. Tables are `delta.\`path\“ or names of the catalog file
//     (`--catalog`, default `lakelog-catalog.json`; `CREATE TABLE name`
//     registers the table at its LOCATION or in the catalog's directory);
//     files are `read_files('x')`, `csv.\`x\“, `json.\`x\“, `parquet.\`x\“.
//     INSERT matches VALUES and a query's columns to the table's columns (or
//     the columns listed) by position, whatever the query names them, as
//     Spark; `INSERT INTO t BY NAME SELECT ...` matches by name (the other
//     columns are null). A query's number goes to a narrower number column as
//     Spark's ANSI store assignment does: a value that does not fit is an
//     error naming the column. ALTER TABLE's column and constraint forms
//     (`ADD COLUMN[S]`, `RENAME COLUMN`, `DROP COLUMN[S] [IF EXISTS]`,
//     `ALTER|CHANGE [COLUMN] c TYPE t | DROP NOT NULL | COMMENT 'x'`, `ADD
//     CONSTRAINT n CHECK (e)`, `DROP CONSTRAINT [IF EXISTS] n`) call the
//     `schema` function `alter` calls, one commit each; `SET NOT NULL` is
//     refused (Delta does not tighten a nullable column; a CHECK constraint
//     does it) and moving a column (`FIRST`/`AFTER`) is not supported yet. `SET
//     spark.databricks.delta.retentionDurationCheck.enabled = false` lets
//     VACUUM go under the table's retention, as in Spark. Not yet: joins,
//     DISTINCT, HAVING, functions other than the aggregates and CAST, CREATE
//     OR REPLACE, ALTER COLUMN FIRST/AFTER.
//   - `files --format jsonl` prints one object per live file: `path`, `size`,
//     `partitionValues`, `numRecords` (null without stats), `deletedRows`
//     (the deletion vector's cardinality), `modificationTime`.
//   - `changes` prints the table columns (or `--columns`), then
//     `_change_type`, `_commit_version`, `_commit_timestamp`, always last;
//     `--where` may name them. `--to` beyond the latest version is the latest;
//     `--from` beyond it exits 1.
//   - Still to come, as the steering design describes them: `alter
//     --reorder` (Spark's ALTER COLUMN FIRST/AFTER of an existing column).
package main
