// Package checkpoint reads and writes Delta checkpoints and the
// _last_checkpoint hint, as PROTOCOL.md ("Checkpoints", "Checkpoint Specs",
// "Sidecar Files", "Checkpoint Schema", "Last Checkpoint File Schema") and
// Spark and delta-rs define them.
//
// The package knows files, not logs: the caller (the deltalog package)
// lists _delta_log/, picks a checkpoint and passes its files' keys. It
// imports only actions and objstore.
//
// # Reading
//
// Read yields every action of one checkpoint, whatever its form: a classic
// single file (<v>.checkpoint.parquet, V1 or V2 spec), all parts of a
// multi-part checkpoint (<v>.checkpoint.<i>.<n>.parquet), or a UUID-named
// V2 checkpoint (<v>.checkpoint.<uuid>.parquet or .json). Sidecar actions
// are followed into _delta_log/_sidecars/. Columns are matched by name, so
// files of every Spark and delta-rs version read alike: missing columns
// read as null, extra ones (commitInfo and cdc in old checkpoints,
// partitionValues_parsed) are skipped, and add.stats_parsed is read only to
// render add.stats when a file has no stats column. Only the columns of
// the kinds asked for are decoded (OnlyKinds, WithoutStats). Row groups
// are decoded concurrently with a bounded number of batches in flight, so
// memory does not grow with the checkpoint.
//
// ReadFiles reads the same checkpoints but keeps their add actions as
// Arrow columns (FileColumns, laid out by a FileLayout from the
// checkpoint's metaData): path, size, time, partition values as
// dictionaries, the stats JSON parsed straight into typed min, max and
// null-count columns, deletion vectors, tags and row tracking fields, and
// no *actions.Add per file; FileColumns.Add builds one on request. A
// file whose stats or partition values the columns cannot hold exactly
// keeps them as written (Irregular). FilesBuilder builds the same
// columns from add actions (a snapshot's commits).
//
// Errors that make a checkpoint unusable (a missing part or sidecar, a
// truncated or malformed file, an incomplete multi-part set) wrap
// ErrCorrupt: the caller falls back to an older checkpoint or to the JSON
// commits. The store's own errors and the context's do not.
//
// # Writing
//
// Write writes a classic V1 checkpoint with the checkpoint schema Spark
// writes (top-level struct columns txn, add, remove, metaData, protocol,
// domainMetadata; one action per row, the other columns null), optionally
// with add.stats_parsed and add.partitionValues_parsed (WithStatsAsStruct).
// WithParts writes a multi-part checkpoint instead (split as Spark splits
// it), and WithV2 a UUID-named V2 checkpoint, with sidecar files or not.
// WriteFiles writes the adds from FileColumns rows instead of add actions
// (the stats JSON rendered from the typed columns, stats_parsed taken from
// them). It streams: one row group of actions is buffered and the encoded file is
// piped into the store's Put, which makes the object appear whole or not
// at all.
//
// # The hint
//
// ReadLast and WriteLast read and write _delta_log/_last_checkpoint,
// including the MD5 checksum of PROTOCOL.md "JSON checksum" (computed, as
// Spark does, over the sorted canonical path=value entries). A missing
// hint reads as nil; a corrupt one (empty, malformed, wrong checksum) is
// ErrCorrupt, and the caller lists the log instead.
package checkpoint
