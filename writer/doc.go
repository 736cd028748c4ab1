// Package writer writes data into Delta tables: Parquet data files with
// Delta statistics, committed by append and overwrite transactions. The
// operations that rewrite rows (dml's ReplaceWhere, DELETE, UPDATE and
// MERGE, maintenance's OPTIMIZE) write their files with WriteFiles.
//
// # Transactions
//
// Append and Overwrite take the snapshot they build on and the input as
// an iter.Seq2 of Arrow record batches, write the data files, then commit
// once through deltalog. CreateTable does the same for a new table. Each returns the deltalog.CommitResult. They are all-or-nothing:
// if the input is bad, a file cannot be written, or the commit loses to a
// conflicting one, nothing is committed. Data files written before the
// failure stay in the store as orphans that no snapshot references;
// VACUUM removes them.
//
// # Input and schema enforcement
//
// Input batches are matched to the table's schema by column name, ignoring
// case as Spark does:
//
//   - a column the table lacks is an error (a *SchemaError naming it),
//     unless WithMergeSchema is given, which appends it to the schema;
//   - a missing column is filled with nulls if it is nullable, else an
//     error;
//   - a type must be the column's or safely widen to it: smaller integers
//     to larger ones, float to double, integers and narrower decimals to
//     decimals that hold them, large and view strings, dictionaries, and
//     any timestamp unit (nanoseconds are truncated to microseconds, as
//     Delta stores them). A timestamp column takes Arrow timestamps with a
//     time zone; a timestamp_ntz column those without;
//   - a null in a non-nullable column, struct field, array element or map
//     value is an error naming the column and the 1-based input row,
//     counted over all batches.
//
// Every such error wraps ErrSchemaMismatch.
//
// # Data files
//
// Files are written with arrow-go's Parquet writer (snappy by default,
// WithCompression for zstd and others), named as Spark names them,
// part-<n>-<uuid>-c000.<codec>.parquet, under Hive-style partition folders
// (col=value/, escaped as Spark escapes them; null values go to
// __HIVE_DEFAULT_PARTITION__). Partition columns are not stored in the
// files; their values go to add.partitionValues. add.path is relative
// and percent-encoded as a URI path. A file is closed and another begun
// when it reaches the target size (WithTargetFileSize, default 128 MiB).
// Timestamps are stored as INT64 TIMESTAMP(MICROS) with isAdjustedToUTC
// true for timestamp and false for timestamp_ntz; decimals as
// FIXED_LEN_BYTE_ARRAY; lists and maps in the standard three-level form.
// Columns are dictionary-encoded unless a sample of the first rows a
// write routes to a file shows more than half of a top-level column's
// values distinct: such columns are written plain, which saves the
// dictionary's hashing and memory and the readers' dictionary decoding.
// A table whose every column is a partition column gets files without
// columns whose footer records the row count, as Spark writes them.
//
// Memory stays bounded whatever the input's size: batches stream into
// the Parquet writers, which stream into the store; at most
// WithMaxOpenFiles files are open at once (the least recently used is
// finished when another partition needs one), and their buffered row
// groups together are kept under WithBufferSize.
//
// Each add carries statistics as Spark computes them (see stats.go):
// numRecords, and for the first delta.dataSkippingNumIndexedCols leaf
// columns minValues, maxValues and nullCount.
//
// # Commits
//
// commitInfo carries the operation ("WRITE", or "CREATE TABLE AS SELECT"),
// operationParameters as Spark writes them (mode, partitionBy, predicate)
// and operationMetrics (numFiles, numOutputRows, numOutputBytes, and for
// overwrites numRemovedFiles and numRemovedBytes), with isBlindAppend set
// by deltalog. WithAppTransaction makes a write idempotent per application
// and version.
//
// # Writing
//
// Rows are conformed to the table schema (errors name file, line and column),
// partitioned, encoded on all cores and written as files rolled at the target
// size, with stats as Spark writes them and page indexes. `Append` of no rows
// commits nothing (`ErrEmptyInput`) unless it records an app transaction or
// widens the schema. Nothing is committed when any input or write fails.
// Writer options are file-writing settings, resolved once:
// `writer.Resolve(opts...)` checks them and returns `*writer.Settings`
// (delta-rs's WriterProperties is the model), and operations built on the
// writer (`dml`, `maintenance`) resolve theirs before doing any work, derive
// variants with `Settings.With`, and hand them on with
// `writer.WithSettings`. How an operation commits is not a writer setting:
// `writer.WithCommitOptions` (Append, Overwrite, CreateTable) and each
// operation's own `WithCommitOptions` take `deltalog.CommitOption` values;
// `WriteFiles` and `WriteChangeFiles`, which commit nothing, refuse them. A
// bad option fails the operation before it reads anything.
// `WriteResult.Changes` makes written files a `deltalog.Changes` (Spark's
// write metrics, the schema change, identity marks) for
// `Transaction.Stage`.
// Stats from the footer (`writer/footerstats.go`). A file's Delta stats
// take bounds and null counts from the Parquet writer's own column chunk
// statistics, merged over row groups, not from a second pass over the rows.
// Rows are still looked at only where Delta's rules differ: float columns
// are scanned for NaN (no bounds then), a string longer than the writer's
// statistics limit (4 KiB, which makes it drop the chunk's bounds) flushes
// the row group and the leaf is observed row by row from there, array and
// map columns (nullCount only) are counted as before. Truncation to 32
// characters applies to either source. `TestFooterStatsDifferential`
// checks it against the row-by-row collector on random data.
// Dictionary pass-through (`writer/dictpass.go`). DELETE and UPDATE read
// with `reader.WithDictionaries`: a string or binary column whose batch of
// values all come from one dictionary-encoded chunk arrives as an Arrow
// dictionary array sharing the chunk's dictionary. The writer keeps it (for
// data columns, not partition or generated ones) and pqarrow writes its
// dictionary once and the indices, instead of hashing every value. Per row
// group and column the first dictionary passes; another one, or one after
// plain values, is decoded (pqarrow would otherwise fall back to plain for
// the chunk), and so are dictionaries with an empty entry (arrow-go
// v18.8.0's direct path drops empty values from the chunk's min/max) and
// rows split across partitions. The writer cuts row groups at the Parquet
// writer's row limit itself. `TestDictionaryPassThroughDifferential` (writer)
// and `TestDictionariesDifferential` (reader) compare both paths on random
// data. MERGE does not use it yet. Empty strings need one more guard
// (`writer/emptyvalues.go`): arrow-go's Take and Filter give a string or
// binary array whose values are all "" a nil value buffer, and v18.8.0's
// Parquet statistics read a value sliced from nil as no value, so the ""
// left the chunk's min (a file's min above "", and `s = ”` skipped it).
// The writer gives every such array, at any depth, an empty value buffer
// before encoding (`TestEmptyStringsWithoutValueBytes`).
// CHECK constraints (`delta.constraints.<name>`, feature
// `checkConstraints`). `writer.WriteFiles` binds the table's constraints
// once per write and checks every conformed batch of rows that change
// data (append, overwrite, replaceWhere, the rows DELETE/UPDATE/MERGE
// write in both modes; not OPTIMIZE's rearrangement nor change data
// files): a row for which one is FALSE or NULL fails the whole operation
// with a `*writer.ConstraintError` (`ErrConstraintViolation`) naming the
// constraint, its expression, the row and the values of the columns it
// reads, and nothing is committed. `schema.AddConstraint` checks the
// existing rows first, reading the whole table (so a concurrent append
// aborts it).
//
// Generated columns (`GENERATED ALWAYS AS (expr)` in the DDL,
// `delta.generationExpression`, feature `generatedColumns`). Writes that
// change data compute a generated column where the input lacks it and
// check a value the input gives (null-safe equal to the expression, else a
// `*writer.ConstraintError` of kind "generated column"); UPDATE and MERGE
// recompute the generated columns whose expressions read a column they
// assign (INSERT: all of them), from the new values, as Spark does.
// Expressions are `expr`'s (operators, CAST): a table whose expression
// lakelog cannot evaluate (Spark's `year(ts)`, say) is read but not
// written. A partition column generated as `CAST(c AS DATE)` prunes by
// predicates on `c` (`c < v` implies `part <= CAST(v AS DATE)`, and so on,
// Spark's OptimizablePartitionExpression): `expr.NewPruner` adds the
// implied predicates, so scans, DML and the conflict checker all use them.
//
// Identity columns (`GENERATED ALWAYS|BY DEFAULT AS IDENTITY [(START
// WITH s INCREMENT BY i)]` in the DDL, top-level long columns; field
// metadata `delta.identity.start`, `.step`, `.allowExplicitInsert`,
// `.highWaterMark` as Spark writes them; feature `identityColumns`,
// legacy writer version 6). `actions.Identity` is the definition and its
// arithmetic: the first value is `start`, or the mark plus `step`; values
// overflowing a long are refused (`*writer.ConstraintError` naming the
// column, nothing committed). `writer.Identity` generates values in input
// order for a write: an append, overwrite or CTAS generates them where the
// input lacks the column, refuses a supplied GENERATED ALWAYS column
// (`*writer.SchemaError` naming it) and keeps supplied BY DEFAULT values
// without moving the mark (Spark tracks marks only for generated values);
// MERGE's INSERT clauses get values where they assign none
// (`Identity.FillNulls`), and refuse to assign an ALWAYS column (listed or
// through `INSERT *` from a source column); UPDATE and MERGE refuse to SET
// identity columns; rewrites copy rows with their values
// (`writer.WithTableRows`); OPTIMIZE generates nothing. The commit carries
// the new marks in its metadata (`deltalog.Changes.IdentityMarks`) and, when
// that is its only metadata change, Spark's commitInfo tag
// `delta.identity.schemaUpdate` (`Transaction.SetTag`). Concurrency is
// Spark's: two commits that both move the mark conflict
// (`ErrMetadataChanged`, nothing of the loser committed, its files
// orphaned; a retry from a new snapshot starts past the winner's mark),
// while a transaction without a metadata change rebases over a tagged
// identity-only winner. Values already in Parquet files are not rebased
// by rewriting them: the loser fails instead. RESTORE keeps the current
// mark where it is farther than the restored schema's
// (`actions.MergeIdentityHighWaterMarks`, Spark's
// copySchemaWithMergedHighWaterMarks). `writer.TestIdentityModel` and the
// Spark interop tests (`test/interop/identity_test.go`, both directions)
// check that no value is ever given twice.
//
// Materialized partition columns (feature
// `materializePartitionColumns`, also `icebergCompatV1/V2`, or the
// property `delta.writePartitionColumnsToParquet=true`): data files hold
// the partition columns as well, with no stats for them; readers still
// take partition values from the adds.
//
// Schema evolution on write (Spark's mergeSchema). With
// `writer.WithMergeSchema` the input's new columns and struct fields
// (nested too, through arrays and maps) are added as nullable after the
// existing ones, and on a table with `delta.enableTypeWidening=true` a
// column or struct field whose input type is wider widens as Spark's
// schema evolution widens (`actions.CanWidenOnWrite`: integers to wider
// integers, float to double, decimals to more digits, date to
// timestamp_ntz; not integers to double or decimal), recorded in its
// `delta.typeChanges`; old files are read widened. The new schema is
// committed with the files (`WriteResult.Metadata`), the protocol raised
// to what it needs. Refused, naming the column and both types, with
// nothing committed: a wider type on a table without type widening (the
// message names the property), a widening of a column a CHECK constraint
// or generated column reads (naming it), of a date partition column, and
// any other type difference. `writer.WithOverwriteSchema(partitionBy...)`
// on `Overwrite` (Spark's overwriteSchema; CLI `append --mode overwrite
// --overwrite-schema [--partition-by]`) replaces the schema with the first
// input batch's columns, all nullable, and the partitioning with the one
// given (none: unpartitioned), in the overwrite's commit; a column-mapped
// table's columns all get new ids above `maxColumnId` and new physical
// names. An input with the table's columns and partitioning commits no
// metadata. The table's CHECK constraints bind against the new schema (a
// constraint on a column it lacks fails the write, naming it). Any other
// write given the option refuses it. `dml.WithSchemaEvolution` (CLI
// `merge --with-schema-evolution`; Spark's MERGE WITH SCHEMA EVOLUTION /
// autoMerge): when a clause is UPDATE SET * or INSERT *, the source's
// top-level columns the target lacks are appended (nullable; mapped tables
// give them ids and physical names) and the MERGE's files, change data
// files included, are written for that metadata (`writer.WithSchemaChange`)
// and committed with it; a target column the source lacks is then kept by
// UPDATE SET * and NULL for INSERT *.
//
// Column mapping (PROTOCOL.md "Column Mapping"). One mapping of
// logical to physical names serves every writer: `actions.PhysicalSchema`
// names every field (nested too) by its `delta.columnMapping.physicalName`,
// keeping its id. `writer.WriteFiles`, which append, overwrite,
// replaceWhere, DELETE/UPDATE/MERGE (both modes), OPTIMIZE/Z-order and
// change data files all write through, applies it where the table's
// columns meet the file's: the Parquet schema (physical names, and the ids
// as Parquet field ids in both modes, as Spark writes them; conformed
// batches are relabelled, buffers shared), the stats keys (nested too), and
// `partitionValues` keys; the input side keeps logical names. Files of a
// mapped table (or one with `delta.randomizeFilePrefixes`) go into
// folders of `delta.randomPrefixLength` random characters instead of
// Hive-style partition folders, as Spark does. Ids and names are given by
// `actions.AssignColumnMapping`: at create (`col-<uuid>`), when mode `name`
// is set on an existing table (`maintenance.AlterProperties`: physical
// name = the column's name, ids in schema order, parents first), and to
// columns merge-schema adds (raising `maxColumnId` in the same commit).
// Every commit that sets metadata checks it (`deltalog`, as Spark's
// `verifyAndUpdateMetadataChange`): each column has an id and a physical
// name, ids unique and at most `maxColumnId`, physical names unique per
// struct; the mode changes only from none to name; a column id keeps its
// physical name and `maxColumnId` never goes down. Checkpoints' parsed
// stats and partition values use the physical names.
package writer
