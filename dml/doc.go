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
package dml
