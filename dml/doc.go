// Package dml changes a table's rows: operations that read the rows they
// replace and write the ones they keep. ReplaceWhere overwrites the rows
// a predicate selects; Delete, Update and Merge (Spark's DELETE, UPDATE
// and MERGE INTO) rewrite the files they touch (copy-on-write) or mark
// the changed rows in deletion vectors, and write change data files when
// the table records its change data feed. Each is one commit or none.
//
// dml plans through reader (one planning path: partition pruning, stats
// skipping, the read set recorded on the transaction with
// reader.RecordReads), writes data files through writer and asks
// deltalog's Snapshot.Supports before any work. ReplaceWhere commits
// through writer.Commit; DELETE, UPDATE and MERGE share one machine
// (rewrite.go) that commits their removes, adds, deletion vectors and cdc
// actions on the deltalog transaction. MERGE has a file per phase
// (merge*.go). Nothing but the command line and programs imports it.
//
// # DELETE, UPDATE, MERGE and replaceWhere
//
// `dml.ReplaceWhere` plans the files the predicate may touch through a scan
// that records its reads on the transaction, writes the new rows through
// `writer.WriteFiles` with a row check (every row must satisfy the
// predicate), rewrites the rows the touched files keep, and commits through
// `Transaction.Stage` of the write's `Changes`.
//
// DELETE, UPDATE and MERGE (`dml.Delete`, `dml.Update`, `dml.Merge`)
// share one machine (`dml/rewrite.go`), in two passes:
//
//  1. *Match.* A scan plans the target files under the operation's predicate
//     and records it and the planned files on the transaction
//     (`reader.RecordReads`), so that the conflict checker sees exactly what
//     was read. DELETE and UPDATE read only the predicate's columns and the
//     row index (`reader.WithRowIndex`: a row's position in its file) of each
//     planned file; a file whose partition values and stats show that every
//     row matches (`Pruner.AllMatch`) is not read at all. MERGE reads the
//     whole source into memory, hashes it on the ON condition's equalities
//     between a target column and a source expression (the rest of ON is
//     checked per candidate pair), prunes the target by the source keys
//     (an IN list of up to 64 values, else their range; the whole table when
//     there are NOT MATCHED BY SOURCE clauses), and reads the columns ON and
//     the clause conditions need. Each file gets two row-index bitmaps
//     (roaring): rows deleted and rows updated (MERGE also keeps, per updated
//     row, its clause and source row). A target row matched twice is
//     `dml.ErrDuplicateMatch`.
//  2. *Rewrite*, files in parallel. Copy-on-write writes every kept row of a
//     touched file again plus the new versions of updated rows and removes the
//     file. With deletion vectors (`delta.enableDeletionVectors` and the
//     `deletionVectors` feature; `dml.WithoutDeletionVectors` opts out) only
//     the new versions are written; the old rows are marked in a vector that
//     is the union with the file's current one, written by
//     `deletionvector.Writer` (inline when small, else packed into one `.bin`
//     per commit), committed as a remove of the file with its old vector and
//     an add with the new one (stats marked `tightBounds: false`); a file with
//     no row left is removed. With `delta.enableChangeDataFeed` the deleted
//     rows, the pre- and post-images of updated rows and MERGE's inserts go
//     to `_change_data/` files (`writer.WriteChangeFiles`, written
//     concurrently with the data) and `cdc` actions in the same commit.
//
// Nothing matched: nothing is committed (`Result.CommitResult` is nil). Any
// failure commits nothing and deletes the files the operation wrote.
// `Result.Metrics` are Spark's operationMetrics for the operation; the
// commit's operationParameters are Spark's (`predicate`, and for MERGE
// `matchedPredicates`, `notMatchedPredicates`,
// `notMatchedBySourcePredicates`). MERGE's source is held in memory; the
// rewrite streams.
//
// Files of `dml`: one per operation (`delete.go`, `update.go`,
// `replacewhere.go`), the shared machine in `rewrite.go` (planning and
// matching rows, the rewrite, the commit), deletion vectors in `dv.go`;
// MERGE has a file per phase: `merge.go` (the API, `Merge` and its
// operationParameters), `merge_source.go` (the source read once into
// memory and indexed by its join keys, computed once), `merge_bind.go` (ON
// and the clauses bound to `{target, source}`; names are qualified by
// copying the expression with `expr.RewriteColumns`), `merge_filter.go`
// (the target files planned under the source's keys), `merge_join.go` (the
// hash join and each target row's clause), `merge_values.go` (the rows
// written). Record batches are concatenated by `internal/arrowbatch.Concat`,
// shared with `maintenance`. The CLI opens a MERGE source file once
// (`input.OpenSource`: its columns and types in one pass, then its rows).
package dml
