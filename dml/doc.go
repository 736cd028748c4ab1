// Package dml changes a table's rows: operations that read the rows they
// replace and write the ones they keep. Today that is ReplaceWhere;
// DELETE, UPDATE and MERGE (copy-on-write and deletion vectors, with
// change data files) come here too.
//
// dml plans through reader (one planning path: partition pruning, stats
// skipping, the read set recorded on the transaction with
// reader.RecordReads), writes through writer (data files, the commit) and
// asks deltalog's Snapshot.Supports before any work. Nothing but the
// command line and programs imports it.
package dml
