// Package metamorphic is a metamorphic test of lakelog's features in
// combination, in the style of pebble's metamorphic package: a generator
// (generator.go, config.go) draws a table configuration (column mapping
// none, name or id; deletion vectors; the change data feed; row
// tracking; identity columns ALWAYS and BY DEFAULT; a generated column;
// CHECK constraints; 0-2 partition columns; UniForm) and a schema of
// every type with edge values, then a sequence of operations (ops.go),
// each run through the Go API or through deltasql's Session (what
// `lakelog sql` runs): append, overwrite, replaceWhere, DELETE, UPDATE,
// MERGE with every clause kind, OPTIMIZE and Z-order, RESTORE, column
// add/rename/drop/re-add/widen, features enabled on the existing table,
// property changes, CHECK constraints added and dropped, checkpoints, log
// cleanup and VACUUM.
//
// A plain in-memory model (model.go: rows of values keyed by column,
// columns known by an id a rename keeps and a drop ends; no Delta)
// predicts each operation's rows, or its refusal. After each step
// (checks.go) the table must hold the model's rows; a refused operation
// must have committed nothing; every earlier version read by time travel
// must hold that version's rows (or, before a VACUUM or log cleanup, fail
// cleanly); the change feed of a random range must be the model's changes
// (exactly where the model knows them, else their net effect), or fail
// with cdf.ErrNotRecorded or cdf.ErrSchemaChange where the model says the
// range cannot be read; row IDs must be unique and stable for rows the
// step did not write; generated identity values must be unique and
// beyond the high-water mark; CHECK constraints must hold; and a UniForm
// table's newest Iceberg metadata, read with iceberg-go, must hold the
// same rows.
//
// Run is the whole of it for one seed; the package's test runs several
// (METAMORPHIC_SEED replays one, -metamorphic.long runs longer ones), and
// test/interop has Spark and delta-rs read the final tables of some runs.
// A failure prints the seed, the table's configuration and every
// operation with its outcome.
package metamorphic
