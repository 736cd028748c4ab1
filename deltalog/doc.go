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
package deltalog
