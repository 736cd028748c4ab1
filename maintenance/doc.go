// Package maintenance holds the operations that keep a Delta table in
// shape without changing its rows: RESTORE (put the table back to an
// earlier version in one commit, copying no data), VACUUM (delete the files
// no version inside the retention window can reach) and OPTIMIZE
// (bin-packing small files into large ones, optionally Z-ordered), and
// auto compaction (delta.autoOptimize.autoCompact): importing the package
// registers a post-commit hook that follows each write to such a table
// with a bounded OPTIMIZE of the partitions it wrote once they hold
// enough small files (AutoCompactHook, AutoCompact), as Spark's.
//
// Each operation asks Snapshot.Supports first, takes its own options, and
// records commitInfo with Spark's operation name, operationParameters and
// operationMetrics, so that Spark's and delta-rs's DESCRIBE HISTORY read
// them as their own.
//
// The package imports the core (deltalog, reader, writer, expr, actions,
// objstore); no core package imports it.
package maintenance
