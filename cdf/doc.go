// Package cdf reads a Delta table's change data feed: every row change
// between two versions, or two commit times, with its type, version and
// timestamp, streamed as Arrow record batches.
//
// A feed is planned with Open over Versions(from, to) or
// Timestamps(start, end) (both ends inclusive; a timestamp range maps to
// the first version committed at or after start through the last
// committed at or before end, as Spark maps startingTimestamp and
// endingTimestamp) and read with Feed.Records. Each batch holds the
// table's columns (projected with WithColumns) under the end version's
// schema, then _change_type (insert, delete, update_preimage,
// update_postimage), _commit_version (long) and _commit_timestamp
// (timestamp: the in-commit timestamp where the table records them, else
// the commit file's modification time, as time travel has them).
//
// The rules are PROTOCOL.md's (Change Data Files): a version with cdc
// actions is read from its change data files only, each row carrying its
// own _change_type; otherwise its dataChange adds are inserts (their live
// rows) and its dataChange removes deletes (the rows the removed file
// still held, its deletion vector applied); a remove and an add of the
// same file with different deletion vectors yield only the rows whose
// bit changed (newly deleted rows as deletes, restored rows as inserts).
// Files removed or added with dataChange false (OPTIMIZE) change nothing.
//
// Filters (WithFilter) are split on their top-level AND terms: terms on
// table columns are pushed down to the files (partition pruning,
// statistics skipping, the reader's row filter); terms naming a metadata
// column are evaluated on the change rows.
//
// Errors, each terminal and naming the version: a version committed while
// delta.enableChangeDataFeed was not true (ErrNotRecorded); a version
// whose schema cannot be read under the end version's (a column dropped,
// renamed or narrowed, other partition columns, column mapping:
// ErrSchemaChange); a file VACUUM removed (ErrFileMissing, naming the
// file); a start beyond the latest version (deltalog.ErrVersionNotFound,
// or an empty feed with EmptyBeyondLatest). An end beyond the latest
// version is the latest. Tables with column mapping are refused
// (ErrUnsupportedFeature) until the reader reads them.
//
// Streaming and memory: the log is read through deltalog.Commits (commit
// files fetched ahead), files are read by up to WithParallelism readers
// at once, each at most two batches ahead of the consumer, and batches
// come out in version order (within a version, in the order of its
// actions). Memory is bounded by about parallelism × 3 batches plus one
// version's actions, whatever the length of the range.
package cdf
