// Package conflict decides what happens to a transaction that lost the race
// for a version: rebase onto the winners, or abort with a typed *Error.
//
// Check is a pure function of the transaction (Txn: what it read and what
// it writes), the table it read (its *actions.TableConfig) and the winning commits (Winner):
// nil means the transaction may be committed at the next free version;
// otherwise it returns a *Error, and the transaction must not be
// committed. A conflict is terminal for the transaction: trying the same
// actions again cannot succeed, though the caller may read the table again
// and redo its operation. Check does no I/O and reads no clock.
//
// The rules are Spark's ConflictChecker (below, "Conflict rules"),
// applied to each winner in version order, in Spark's order:
// ProtocolChanged, MetadataChanged, ConcurrentTransaction (txn appIds and
// domain metadata), ConcurrentAppend, ConcurrentDeleteRead,
// ConcurrentDeleteDelete. Every abort wraps ErrConflict and one kind
// sentinel, so callers test with errors.Is and read the winning version,
// the files, the partitions and the appId with errors.As.
//
// Isolation levels follow Spark. Serializable counts every file a winner
// added; WriteSerializable (the default) does not count the files of a
// winner that is a blind append, unless the transaction changes the
// metadata; a transaction whose actions are all file actions with
// dataChange=false (OPTIMIZE) is checked at SnapshotIsolation, which counts
// no added files. A blind append reads nothing, so it never conflicts with
// a concurrent append, DELETE, UPDATE or MERGE.
//
// Where lakelog knowingly differs from Spark:
//
//   - Added files are matched against the whole read predicate, by
//     partition values and by min/max stats (expr.Pruner). Spark matches
//     only the partition-column part of the predicate, so on an
//     unpartitioned table it conflicts on any counted add. We rebase when
//     stats prove the new file holds no row the transaction could have
//     read; a file without stats may match anything, as in Spark.
//   - A transaction that read files but gave no predicate is taken to
//     have read under an unknown predicate: every counted add matches.
//   - A winner's protocol change is harmless only when it neither adds nor
//     drops a table feature (compared with Txn.ReadProtocol). Spark also
//     lets through added features it knows need nothing of concurrent
//     writers; we cannot know that of every feature.
//   - A transaction that drops features aborts on any winner (Spark
//     revalidates the removal against the winner's snapshot).
//   - Any winner metadata change aborts: we do not merge IDENTITY
//     high-water marks or allow-listed property changes, and the row
//     tracking domain conflicts like any other (Spark reassigns row IDs).
//
// Wiring it into the commit loop (deltalog.Checker has the shape of
// NewChecker's result):
//
//	tx := snap.NewTransaction(deltalog.WithChecker(conflict.NewChecker(snap.Config())))
//
// # Conflict rules
//
// Spark's ConflictChecker: a winner that changed the protocol or metadata
// aborts the transaction (except a winner whose only metadata change is
// identity high-water marks, tagged `delta.identity.schemaUpdate`, when the
// transaction changes no metadata); concurrent appends that match the transaction's read
// predicate (by partition values and by min/max stats), removes of files it
// read or removes, and `txn` versions of an app id it read abort it with
// `ErrConcurrentAppend`, `ErrConcurrentDeleteRead`,
// `ErrConcurrentDeleteDelete` and `ErrConcurrentTransaction`, all wrapping
// `ErrConflict`. Otherwise it rebases. `conflict/doc.go` lists where lakelog
// knowingly differs from Spark. A schema change (`schema`, merge-schema,
// overwrite-schema, MERGE's schema evolution) is a metadata change: every
// transaction that started before it aborts, so no file written for the
// old layout is committed after a rename or drop; a schema change that
// reads no rows rebases over concurrent plain writes, as Spark's ALTER
// (`schema.TestSchemaChangeRaces`: each change against append, UPDATE and
// merge-schema append, both orders, name and id mode; and
// `test/model.TestConcurrentWritersSchemaChanges`: the concurrent-writers
// model on a column-mapped table where writers also add, rename, drop and
// widen columns, with faults).
package conflict
