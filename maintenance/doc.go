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
//
// # The operations
//
//   - RESTORE (`Restore(ctx, snap, ToVersion(n) | ToTimestamp(t))`) is one
//     commit that copies no data: files of the target version not live now are
//     added back (dataChange true, with the deletion vector they had then),
//     live files the target lacks are removed. Files are matched by (canonical
//     path, deletion-vector id), as log replay matches them, so a file whose
//     vector changed since comes back with its old vector (delta-rs matches by
//     path and gets this wrong). The target's metadata is restored, keeping
//     what must not go backwards, as Spark's RestoreTableCommand does: the
//     identity high-water marks where the current ones are farther, and a
//     column-mapped table's delta.columnMapping.maxColumnId (restoring
//     across a rename or drop works); the protocol is the union of both,
//     never downgraded. Before committing, every
//     file to add back and its vector file are checked with `Head` in
//     parallel: a missing one is a `*MissingFilesError` naming them, and no
//     commit. The transaction reads the whole table. Metrics are Spark's
//     (`tableSizeAfterRestore`, `numOfFilesAfterRestore`, `numRemovedFiles`,
//     `numRestoredFiles`, `removedFilesSize`, `restoredFilesSize`).
//   - VACUUM lists the table root and deletes what no version inside the
//     retention window can reach: a file is kept when it (or its deletion
//     vector) is live, when a remove whose `deletionTimestamp` is inside the
//     window names it, or when it was modified inside the window (a writer may
//     be about to commit it). Data files of old removes, vector files,
//     `_change_data/` files and files no version referenced go. Nothing under
//     `_delta_log/` is touched, nor hidden names (`.` or `_` first, except
//     `_change_data` and partition folders), as in Spark. The retention is the
//     table's `delta.deletedFileRetentionDuration` (7 days); a shorter one is
//     `ErrRetentionTooShort` unless `Force`. `DryRun` lists files and sizes and
//     commits nothing; otherwise `VACUUM START` (`numFilesToDelete`,
//     `sizeOfDataToDelete`) and `VACUUM END` (`status`, `numDeletedFiles`)
//     commits frame the deletes. The live files' keys come from the
//     snapshot's columns (no add action built); the table is listed in key
//     ranges concurrently (`objstore.ListRanges`, cut at every 2,000th known
//     file and at the partition folders, at most 512 ranges), and the files
//     are deleted with `objstore.DeleteKeys`: S3 `DeleteObjects` of 1,000
//     keys, Azure blob batches of 256, GCS JSON API batches of 100, keys a
//     batch reports failed retried with backoff; list and delete requests run
//     `VacuumConcurrency` (16) at a time. `test/cloud`'s `TestMaintenance*`
//     run OPTIMIZE, Z-order, RESTORE and VACUUM against MinIO,
//     fake-gcs-server and Azurite.
//   - OPTIMIZE groups the selected files (`Where`: partition columns only,
//     planned through a scan that is not recorded as a read) by partition and
//     packs the files under `MinFileSize` (default ¾ of the target, so that
//     its own output is not rewritten again) and files with deletion vectors
//     into bins of at most the target size (`TargetSize`, else
//     `delta.targetFileSize`, else 1 GiB) or `MaxBytesPerCommit`; a bin of one
//     file without a vector is left alone. Bins are rewritten in parallel
//     through `reader` (vectors applied; a bin's files read a few batches
//     ahead of its writer, small batches gathered to 64Ki rows) and
//     `writer.WriteFiles` (dataChange false); groups of bins up to `MaxBytesPerCommit` commit
//     separately. Each commit reads only the files it removes, so concurrent
//     appends rebase and only a concurrent removal of one of its files aborts
//     it. `ZOrderBy` rewrites whole partitions with rows sorted by interleaved
//     bits of range-normalized, order-preserving 64-bit keys of each column;
//     `zOrderBy` is recorded as Spark records it. Its files carry the tag
//     `lakelog.zOrderBy`, and a partition whose files all carry it for the same
//     columns is not rewritten again. It holds one partition's rows in memory.
//   - Properties: `SetProperties`/`UnsetProperties` are metadata commits
//     (`SET TBLPROPERTIES`, `UNSET TBLPROPERTIES`) checked by
//     `deltalog.CheckProperties` (Create's check) and upgrading the protocol a
//     property needs by the one protocol rule, never downgrading it;
//     `delta.feature.NAME=supported` adds a feature to the protocol instead of
//     setting a property, as Spark.
package maintenance
