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
// # Object stores
//
// On a store that is not objstore.RandomAccess (S3, GCS, Azure) data
// files are fetched by an I/O stage apart from decoding: one speculative
// read of each file's tail for the footer, then only the byte ranges of
// the projected columns (and, where the page index skips pages, of the
// pages read), coalesced across small gaps and split when large, with up
// to WithFetchConcurrency ranged GETs in flight whatever the parallelism,
// running ahead of the decoders within WithFetchBudget bytes. Metrics
// counts the requests and bytes.
//
// # Column mapping
//
// In a column-mapped table (Snapshot.ColumnMappingMode "name" or "id") a
// column, and each nested struct field, is found in a data file by its
// physical name (mode name) or its Parquet field id (mode id), never by
// its logical name; partition values and stats are read by physical
// name. Batches, filters and projections use logical names. A column a
// file lacks reads as nulls, so renamed and dropped columns read as the
// table's schema says. What Snapshot.Supports(OpScan) refuses is refused
// with an error wrapping ErrUnsupported, rather than returning wrong rows.
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
