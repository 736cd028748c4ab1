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
package writer
