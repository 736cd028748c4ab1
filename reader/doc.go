// Package reader reads Delta tables into Arrow record batches.
//
// A Scan is planned once from a snapshot (deltalog.Open) with optional
// column projection, filter and limit:
//
//	sc, err := reader.NewScan(snap, reader.WithColumns("id", "amount"),
//		reader.WithFilter(pred), reader.WithLimit(100))
//
// Planning and reading are separate. Files yields the data files that may
// hold matching rows: a file is skipped when its partition values, or the
// min/max/null counts in its statistics, prove that no row can match. It
// reads nothing but the snapshot. Records (or ReadFile, one file at a
// time) decodes the files.
//
// # What a batch holds
//
// Every batch has exactly the scan's Schema: the projected columns by
// logical name, in the Arrow types of actions.ArrowType, whatever the
// writer of each file chose:
//
//   - partition columns are filled from add.partitionValues, typed by the
//     schema;
//   - columns (and struct fields) missing from a file, because they were
//     added later, are nulls;
//   - INT96 and millisecond timestamps become microseconds, unannotated
//     byte arrays strings, dictionary-encoded, large and view strings plain
//     strings, lists and maps of any element naming the standard form;
//   - columns widened since a file was written (the typeWidening feature:
//     integers to wider integers, decimals or double, float to double,
//     decimals to larger precision or scale, date to timestamp_ntz) are
//     converted to the table's type. Their statistics are not used to skip
//     files, since bounds written in the old type can denote other values
//     in the new one.
//
// Rows for which the filter is not TRUE are dropped, then the limit is
// applied.
//
// # Order, parallelism, memory
//
// Files are read in path order and rows within a file in file order, so
// the output is deterministic. Records decodes up to WithParallelism
// files at once (default GOMAXPROCS), each at most two batches ahead of
// the consumer, so memory stays bounded by a few batches per worker.
// Batches are released when the loop body returns; Retain one to keep it.
//
// # Not yet supported
//
// Tables with column mapping are refused with an error wrapping
// ErrUnsupported naming the feature, rather than returning wrong rows.
//
// # Deletion vectors
//
// A file with a deletion vector is read through it: the vector is loaded
// (package deletionvector) when the file is read, checked against the
// file's numRecords and row count, and the rows it deletes are dropped
// before the filter runs. WithRowIndex gives each row's position in its
// file before that, the index vectors are written against. Count without
// a filter subtracts each vector's cardinality from numRecords and reads
// no vector.
//
// # Canonical rows
//
// AppendCanonicalRow and CanonicalRows encode rows in the canonical
// encoding of the conformance corpus (testdata/delta/README.md), which
// the CLI's `scan --format jsonl` prints.
package reader
