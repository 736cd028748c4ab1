// Package deltalog is the Delta transaction log: log file names, listing,
// snapshots by log replay, time travel, history and the commit loop.
//
// A Snapshot is the table at one version: protocol, metadata, schema,
// active files (keyed by path and deletion vector, as PROTOCOL.md says),
// application transaction versions and domain metadata. It is immutable.
// Open loads the newest complete checkpoint at or before the version and
// replays only the commits after it; a missing or stale _last_checkpoint
// and a checkpoint a crash left broken fall back to listing and to older
// checkpoints, never to a failed read. Properties types the table's
// properties once per snapshot (actions.TableProperties), and Supports
// says whether lakelog can do an operation on the table, from one record
// per table feature (features.go).
//
// A Transaction commits one version with create-if-absent. When another
// writer took the version first, Commit reads the winning commit, asks the
// conflict checker, and either rebases onto the next version or returns a
// *conflict.Error. A lost response is recognised by commitInfo.txnId, so a
// retried create never duplicates a commit. Errors say what is retryable:
// conflicts and ErrTableExists are terminal, ErrTooManyAttempts means
// nothing was committed, ErrCommitUnknown means the outcome is not known.
//
// # The commit protocol, properties, features and snapshots
//
//  1. Data files are written under unique names; they are invisible until
//     committed.
//  2. The transaction builds its actions; `commitInfo` carries `timestamp`,
//     `operation`, `operationParameters`, `readVersion`, `isolationLevel`,
//     `isBlindAppend`, `engineInfo` and a fresh `txnId`.
//  3. `_delta_log/<version %020d>.json` is created with create-if-absent.
//  4. When the version exists, the winners are read, `conflict.Check` runs, and
//     the transaction rebases to the next version or returns a typed
//     `*conflict.Error`. Attempts are bounded, with jittered backoff.
//  5. A lost response does not duplicate data: a retried create that finds the
//     version taken reads it back, and a commit carrying our `txnId` is ours.
//     An outcome that cannot be read back is a `*CommitUnknownError`;
//     `FindCommit` tells later whether it landed.
//  6. After the commit lands, its post-commit hooks run (`PostCommitHook`,
//     `hooks.go`; in the background unless `WithPostCommit(PostCommitSync)`;
//     `CommitResult.WaitHooks` reports them): every
//     `delta.checkpointInterval` versions (default 10) a checkpoint (V2 where
//     `delta.checkpointPolicy=v2`) and log cleanup; the symlink manifest
//     where `delta.compatibility.symlinkFormatManifest.enabled`; hooks
//     registered for the process (`RegisterHook`: importing `uniform`
//     registers the Iceberg converter) and the commit's own (`WithHooks`). A
//     failed hook never fails the commit: it is a `*HookError`, retried by
//     the next commit. A table that needs a hook the program does not link
//     (UniForm without `uniform`) reports `ErrHookNotLinked`.
//     With `checkpointProtection` in the protocol, `CleanupLog` removes
//     nothing while the checkpoint it would keep is older than
//     `delta.requireCheckpointProtectionBeforeVersion` (it truncates the
//     history before that version all at once or not at all) and removes
//     commits before checkpoints; `Checkpoint` of such a table needs a
//     protocol lakelog writes. `vacuumProtocolCheck` asks nothing more:
//     VACUUM checks the whole write protocol, as every write.
//  7. A new table gets the protocol Spark would give it
//     (`actions.TableConfig.MinimalProtocol`): a legacy protocol while every
//     feature it needs has one, otherwise reader 3 / writer 7 listing exactly
//     the features needed (column mapping: reader 2 / writer 5, or
//     `columnMapping` in both lists), plus the features
//     `delta.feature.NAME=supported` asks for (taken out of the metadata, as
//     Spark takes them). `Create` refuses unknown `delta.*` properties and a
//     table whose every column is a partition column, as Spark does. An
//     existing table's protocol follows its new metadata by one rule
//     (`Transaction.SetMetadata`, `TableConfig.UpgradeProtocol`): a feature
//     the metadata needs is added when Spark adds it by itself
//     (`automaticallyUpdateProtocolOfExistingTables`: legacy features and
//     those a property enables), and otherwise refused with an
//     `*actions.FeatureNotEnabledError` naming `delta.feature.NAME=supported`
//     (timestampNtz for a new timestamp_ntz column), unless the commit asks
//     for it (`WithTableFeatures`, `EnableFeatures`). Never downgraded. A column-mapped table
//     (`delta.columnMapping.mode` name or id) gets ids and `col-<uuid>`
//     physical names for every column, nested ones too, and
//     `delta.columnMapping.maxColumnId`, as Spark assigns them.
//
// Table properties: `actions.ParseTableProperties` is the one parser of
// `metaData.configuration`. It types every property of the catalogue
// (`actions.TablePropertyKeys`: appendOnly, the change data feed (and its
// legacy name enableChangeDataCapture), deletion vectors, row tracking,
// type widening, in-commit timestamps and their enablement, checkpoint
// interval, policy and stats forms, column mapping mode and max id, the
// data-skipping column count and list, the log, deleted-file, checkpoint
// and app-transaction retentions, isolation level, target file size,
// random prefixes, UniForm formats, ...) by Spark's rules (DeltaConfigs):
// booleans `true`/`false` in any case and not padded (Scala's
// `toBoolean`), integers as Java parses them, intervals as
// `parseCalendarInterval` and Spark's `stringToInterval` parse them (no
// months, not negative), column mapping modes and isolation levels in any
// case, the stats-column list as Spark's multipart identifier list. A
// snapshot parses its metadata's properties once (`Snapshot.Properties()`)
// and every package reads the typed fields there; a transaction that sets
// new metadata parses it once. An invalid value leaves the default and is
// listed in `Invalid` (a `*actions.PropertyError` naming the property);
// `CheckProperties` (create, ALTER) refuses it, and `Supports` refuses
// every write to a table whose log holds one (`ErrInvalidProperty`), as
// Spark fails them. Keys are matched exactly when read, as Spark reads
// them; where properties are set (Create, `SetProperties`,
// `UnsetProperties`) keys of Delta's own properties are normalised from
// any case to their canonical spelling (`actions.NormalizeTableProperties`),
// as Spark normalises them. `test/interop.TestTablePropertiesSpark`
// compares the parser with Spark's DeltaConfigs on random spellings of
// every property; lakelog also accepts `delta.isolationLevel =
// WriteSerializable`, which Spark reads but refuses to set.
//
// Transactions: `Transaction.RemoveFile(add, dataChange)` writes Spark's
// remove (with the transaction's clock, `Transaction.Now`) and records the
// file as read; a scan built with `reader.RecordReads(tx)` records its filter
// and the files it plans, so an operation cannot forget its read set. The
// isolation level is the transaction's, else `delta.isolationLevel`, else
// WriteSerializable. Commit options (`CommitOption`, `options.go`) are the
// one set every operation takes; `Transaction.Start`, which every
// operation asks first, refuses bad ones before any work and answers an
// app transaction already applied. An operation's changes become the
// commit's actions in one place, `Transaction.Stage` of a `Changes`.
//
// The table configuration: `Snapshot.Config()` (and `Transaction.Config()`,
// for the table a commit leaves) is an `*actions.TableConfig`, built once:
// protocol, metadata, typed properties and schema joined, with the column
// mapping mode honoured (`delta.columnMapping.mode` where the protocol
// supports columnMapping, else none), physical names and paths, widened
// columns, the features the metadata needs, and what writes must do
// (`DeletionVectors`, `ChangeDataFeed`, `AssignsRowIDs`, `RowTracking`,
// `MaterializesPartitionColumns`, `IcebergCompat`, `UniversalFormat`,
// `V2Checkpoints`, `SymlinkManifest`). What the protocol says of each
// feature is one table in `actions/features.go` (`featureSpecs`).
//
// Feature support: `Snapshot.Supports(op)` answers, for each operation (scan,
// change data feed, append, overwrite, replaceWhere, delete, update, merge,
// optimize, vacuum, restore), whether lakelog can do it on the table, with an
// error wrapping `ErrUnsupportedFeature` naming the feature (`reader.ErrUnsupported`
// is the same error). It answers from one record per table feature
// (`deltalog/features.go`, delta-kernel-rs's FeatureInfo), keyed by the
// `actions.Feature*` constants: the operations lakelog does on a table
// that has the feature (`ops`), a `check` refusing some of them for a
// particular table (a column-mapped table is read and written, but its
// change data feed is refused for now, and so are writes to a table whose
// property asks for column mapping without the protocol's feature, or
// whose mapped schema lacks an id or a physical name; an unknown mode is
// refused; an append-only table refuses operations that remove rows;
// invariant expressions refuse writes, and so do generation expressions
// lakelog cannot evaluate and identity columns whose metadata is not a
// valid definition or that are nested), and
// `enabled`: whether
// the table's properties or schema use it. A read needs every reader
// feature recorded and allowing it; a write needs every writer feature
// the protocol lists, and every feature the table uses, recorded and
// allowing it; a feature without a record is refused. The commit checks
// the protocol and
// metadata it leaves with the same records. Making a feature writable is
// adding write operations to its record (and `enabled` for new tables).
// Scans ask before reading a file and writers before reading their input
// or uploading anything.
//
// Domain metadata (`deltalog/domains.go`): `Snapshot.Domain`/`Domains` read
// the live domains (replay keeps the last action per domain, a `removed`
// tombstone drops it; checkpoints keep live domains only).
// `Transaction.SetDomainMetadata(domain, config)` and
// `RemoveDomainMetadata(domain)` write user domains; a removal carries the
// domain's last configuration (as Spark) and fails with `ErrNoSuchDomain`
// when the read snapshot lacks it. Names starting with `delta.` (any case)
// are the system's: refused with `ErrReservedDomain` from programs (also
// through `Add`), written only by lakelog for the features it implements
// (`delta.rowTracking`). One action per domain per commit. A table whose
// protocol lacks the `domainMetadata` writer feature gets it in the commit
// that first sets a domain (`EnableFeatures`, as kernel's
// `withDomainMetadataSupported`); a commit carrying a domain without the
// feature is refused. Conflicts: two commits writing the same domain conflict
// (ConcurrentTransaction); different domains, or a domain and files, rebase.
// The post-commit snapshot folds domains on the append fast path.
//
// Row tracking (`deltalog/rowtracking.go`): when the protocol the commit
// leaves supports `rowTracking`, the commit loop gives, on every attempt,
// each add without a `baseRowId` the next `numRecords` IDs above the
// high-water mark and each add without one `defaultRowCommitVersion` = the
// version tried, and writes `delta.rowTracking` `{"rowIdHighWaterMark": N}`
// (the highest ID given). The mark starts from the read snapshot's and is
// raised past every winner's the loser rebases over, so IDs are never given
// twice nor reused; the domain never reaches the conflict checker. Adds
// that carry a `baseRowId` (re-added with a DV, restored) keep it and their
// version. An add without `numRecords` fails the commit naming the file.
// `Create` with `delta.enableRowTracking=true` lists `domainMetadata` and
// `rowTracking` and sets the materialized column names
// (`MaterializedRowTrackingNames`, `_row-id-col-<uuid>`,
// `_row-commit-version-col-<uuid>`, as Spark). `Snapshot.RowIDHighWaterMark`,
// `RowTrackingSupported`, `RowTrackingEnabled`. The feature's record allows
// reads, appends, overwrites, DELETE/UPDATE/MERGE, OPTIMIZE (Z-order too),
// VACUUM and RESTORE; replaceWhere is refused (`ErrUnsupportedFeature`)
// until it materializes the rows' IDs. OPTIMIZE (`maintenance/rowtracking.go`)
// reads bins `WithRowTracking`, renames the two columns to the materialized
// names and writes them, so moved rows keep ID and version; tagged like DML.
// Enabling on an existing table (`maintenance.SetProperties` /
// `alter --set-property delta.enableRowTracking=true`) runs Spark's three
// steps: an `UPGRADE PROTOCOL` commit adding `domainMetadata` and
// `rowTracking` with the materialized names (from then on every add gets
// IDs), a `ROW TRACKING BACKFILL` commit re-adding every file without a
// `baseRowId` unchanged (dataChange=false, each recorded as read, so a
// concurrent remove aborts it and it is planned again, up to 10 times; the
// commit loop gives the IDs), then the property commit. `lakelog scan
// --columns` takes `_metadata.row_id` and `_metadata.row_commit_version`
// anywhere in the list (printed under those names, in the order asked).
//
// Row IDs through rewrites: `reader.WithRowTracking()` adds `_row_id` and
// `_row_commit_version` (Spark's `_metadata.row_id`/`row_commit_version`,
// after `_row_index` when asked): the file's materialized column where it
// holds a value, else `baseRowId` + row index and `defaultRowCommitVersion`;
// refused on a table without `delta.enableRowTracking=true`.
// `writer.WithMaterializedRowTracking()` accepts the two materialized
// columns (by the table's property names) after the table's and writes them
// as named, no field ids; batches without them get nulls. DML
// (`dml/rowtracking.go`) reads with `WithRowTracking`, splits the two
// columns off before the rewrite and re-attaches them: copied rows keep ID
// and version, updated rows keep the ID and get a null version (the new
// file's), inserts get nulls; DV re-adds keep `baseRowId` by construction;
// the commit carries `commitInfo.tags["delta.rowTracking.preserved"]="true"`.
// The dml model test has two row tracking modes checking, after every
// operation, that a row keeps its ID for life, no ID is reused, and the
// commit version moves only to the operation's version.
//
// Commit ranges: `deltalog.Commits(ctx, store, root, from, to)` streams each
// version's actions, commitInfo and timestamp (in-commit timestamp where
// enabled, else the file time made increasing), fetching commit files ahead
// in parallel; `History` and time travel share its clock. A range learns
// where in-commit timestamps begin from the commitInfo it reads (writers put
// `inCommitTimestamp` in every commit from the enablement version on), so it
// opens no snapshot. `VersionsBetween` maps a time range to versions as
// Spark's change data feed does.
//
// Snapshots are built by replay keyed by (canonical path, deletion-vector
// id). A commit file that is empty, a line that does not decode, or a
// version missing below the one asked for is `ErrLogCorrupt`, naming the
// file; a version missing above it does not stop time travel to it. A
// checkpoint that cannot be read is passed over for an older one or for the
// commits; when nothing older serves, the error says which checkpoint failed
// and why.
//
// The columnar snapshot. A snapshot holds its live files as batches of
// Arrow columns (`checkpoint.FileColumns`), not as an `*actions.Add` per
// file; a table of a million files is a few dozen batches:
//   - Each batch is laid out by a `checkpoint.FileLayout`, derived from the
//     metaData it was read under: path, size, modificationTime, dataChange;
//     one dictionary-encoded string column per partition key (the raw
//     `partitionValues` strings, null kept apart from ""); the stats as
//     typed columns per leaf column of the schema (physical paths, struct
//     fields as their own leaves, partition columns too): `numRecords`,
//     `tightBounds`, and for each leaf its minimum and maximum in the Arrow
//     form of its type (`actions.ArrowType`) and its null count. Columns of
//     deletion vector descriptors, tags, `baseRowId`,
//     `defaultRowCommitVersion`, `clusteringProvider` and the stats of a
//     leaf exist only when some file of the batch has them; other per-file
//     fields (row tracking's, for one) go in the same way.
//   - Exact or kept as written: the stats JSON is parsed straight into the
//     columns (`checkpoint/statsparse.go`, which gives what
//     `actions.ParseStats`/`ParseStatValue` give, its number fast paths
//     bit-for-bit with strconv), and a file whose stats the columns cannot
//     hold exactly (a key the schema lacks, a value of the wrong kind or that
//     does not parse, a duplicate key, not JSON) keeps its stats text;
//     likewise partition values whose keys are not the partition columns.
//     Such files are `Irregular`: whoever evaluates the columns evaluates
//     them one by one. Rendered back (`FileColumns.Add`, `StatsJSON`), stats
//     are the same values, perhaps spelled differently. Columns of one value
//     (null counts of 0) share one buffer.
//   - A checkpoint is read straight into batches (`checkpoint.ReadFiles`): a
//     first pass reads its actions other than file actions (the row groups
//     that hold none are skipped by their column statistics) for the
//     metaData that lays the adds out, then a second pass over the same
//     opened files decodes the file actions, the path and stats columns from
//     the Parquet pages without an intermediate string, a batch of up to 32Ki
//     rows at a time on the reader's workers. Commits' adds are folded by key
//     as before and become one more batch, laid out by the final metaData.
//   - `deltalog`'s file set (`deltalog/files.go`) is the batches, a bitmap of
//     rows a later commit removed or replaced (resolved by binary search of
//     the path order, or by canonical path when a batch holds escaped paths),
//     and the live rows in (path, deletion vector id) order (each batch sorted
//     on its own if it is not already, then merged). Snapshots derived from
//     one another (`CommitResult.Snapshot`, time travel over the same
//     checkpoint) share the batches.
//   - `Snapshot.Files()` builds each `*actions.Add` as it yields it;
//     `Snapshot.ActiveFiles()` gives the columns: `All()` yields each file as
//     a `deltalog.File` (path, size, partition values, deletion vector, row
//     count, stats read from the columns; `Add()` on request), `Batches()`
//     the batches with their live rows for vectorised evaluation.
//     `reader.Scan.Files` prunes each batch with `expr.Pruner.PruneBatch`
//     (partition subexpressions once per distinct combination of the batch's
//     dictionary codes; comparisons, IN and IS NULL of a data column with
//     literals over the typed bound and null-count columns, by `MayMatch`'s
//     rules; anything else, and irregular files, one file at a time) and
//     builds add actions and stats only for the files it keeps. Checkpoints
//     are written from the same columns (`checkpoint.WriteFiles`:
//     `stats_parsed` from the typed columns, the stats JSON rendered, text
//     kept as written where it was).
//   - Snapshots opened from a checkpoint defer the stats: the batches are read
//     without them and `Snapshot.LoadStats` reads the checkpoint's adds again
//     with their stats (checking that the batches line up, path by path) and
//     attaches them to the shared batches; every reader of stats calls it.
//     `Open(..., WithStats())` reads them with the rest of the checkpoint in
//     one pass instead (then LoadStats is free); `lakelog files`, `restore`
//     and `maintenance.Restore`'s target open that way.
//   - Tombstones stay `*actions.Remove` values (most tables hold few).
//
// Loading from object stores: the commits after a checkpoint are fetched
// `commitsAhead` (8) at a time and applied in order (`readCommitsAhead`,
// shared with `Commits`). `checkpoint.Read` and `ReadFiles` on a store
// without random access read through `internal/rangefetch` (the scans'
// engine): each file's footer with one speculative tail read
// (`rangefetch.TailSize`; `ReadFiles`' second pass reuses the opened
// files), the next files (parts, sidecars) opened ahead, and every row
// group's projected column chunks queued in decoding order and fetched
// ahead of decoding: at most 16 requests in flight and 24 MB fetched and
// not yet decoded, while decoding stays bounded by `WithConcurrency`; a
// file's pieces are released when its last row group is decoded.
package deltalog
