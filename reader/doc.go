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
// In a column-mapped table (Snapshot.Config().ColumnMappingMode() "name" or "id") a
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
//
// # Planning and reading
//
//   - Planning and reading are separate. `reader.NewScan(snap, opts...)`
//     plans: the bound filter, the pruner, the columns to read (the projection
//     plus the filter's columns), and which stats bounds not to trust (widened
//     columns). `Scan.Narrow` derives a scan under the same rules with another
//     filter (ANDed) or projection; `Scan.Count`, the CLI's `count` and
//     `dml.ReplaceWhere` plan through a scan, so there is one planning path.
//   - `Scan.Files` yields the files that may hold matching rows, pruning the
//     snapshot's columns a batch at a time (`expr.Pruner.PruneBatch`, see the
//     columnar snapshot) and building an add action only for a file it
//     keeps; files with deletion vectors are planned like any other (their
//     stats still bound the live rows). `Scan.Count` without a filter reads no data (numRecords,
//     or a footer's row count, less deletion-vector cardinality).
//     `Records` and `ReadFile` refuse, before reading anything, what
//     `Snapshot.Supports(OpScan)` refuses, with an error wrapping
//     `ErrUnsupported`: never wrong rows.
//   - Row selection. Reading a file with a deletion vector loads it once
//     (`deletionvector.Load`), checks it against the file's numRecords and its
//     footer's row count, and drops the deleted rows of each batch before the
//     filter runs, walking only the vector's rows in the batch's range: a
//     batch with none deleted is left as is, one with few (under 1 in 64) is
//     copied run by run of kept rows (a memmove per buffer; arrow-go's filter
//     kernel takes strings value by value, which doubled a scan's time at 1%
//     deleted), others go through the filter kernel.
//     `WithRowIndex` gives the row's position in the file before deletion.
//   - Column mapping (`reader/columnmapping.go`, PROTOCOL.md "Column
//     Mapping"): the mode is the table configuration's
//     (`TableConfig.ColumnMappingMode`: `delta.columnMapping.mode` where the
//     protocol supports the `columnMapping` feature, else `none`). In
//     mode `name` a column is found in a data file by its
//     `delta.columnMapping.physicalName`, in mode `id` by the Parquet field id
//     equal to its `delta.columnMapping.id`, and nested struct fields (inside
//     structs, arrays and maps) the same way; the decoded columns are relabelled
//     with logical names before they are conformed, so batches, filters and
//     projections use logical names. Partition values and stats (pruning,
//     widened columns) are read by physical name. Logical names are never
//     tried: a column not found is nulls (a renamed column keeps its physical
//     name; a dropped one is simply not read). A mapped schema field without a
//     physical name (or, in `id` mode, an id) fails `NewScan`; in `id` mode a
//     data file without field ids is refused, naming it.
//   - Flat columns are decoded page by page (`reader/pages.go`) straight into
//     Arrow arrays; filters on integer columns skip pages by the page index
//     (`ScanMetrics.RowsSkippedByPageIndex`, `FilesUsingPageIndex`: rows
//     ruled out are not decoded, so not in `RowsRead`).
//     Column chunks are read page by page through a 16 KiB buffer (arrow-go's
//     buffered stream), never whole: arrow-go reads a whole chunk into a new
//     slice, garbage as large as the bytes read.
//   - Parallel decoding (`reader/records.go`). `Records` with parallelism
//     P runs P workers over a pass: a planner queues the planned files (P
//     ahead, 16 on an object store); a worker opens a file (its footer parsed
//     once, its deletion vector loaded, the rows the page index leaves) and
//     cuts its row groups into units (runs of whole row groups of at least a
//     batch), and workers decode any unit of the open files, each unit with
//     its own Parquet reader and decoders over the shared object, so a table
//     of few large files uses every core. On local disk a unit of one large
//     row group (more uncompressed bytes than the decode-ahead budget, so a
//     second worker would soon wait on the budget while one decodes it:
//     lakelog writes one row group per file up to 128 MiB; delta-rs's 1Mi
//     rows are usually under it, and splitting those cost a quarter more
//     CPU in dictionary re-reads) is split into pieces of rows (`splitUnits`: at
//     least 4 batches, about 4 pieces per worker) when every column the file
//     gives is decoded page by page and the row group has an offset index:
//     each piece seeks its columns to its first row by the offset index
//     (re-reading each column's dictionary), so the workers share one large
//     row group instead of one decoding it while the others wait on the
//     decode-ahead budget. On an object store likewise: the file's plan cuts
//     the same units and the fetcher serves each piece's decoders (below). A
//     large row group not split (without an offset index, or with columns
//     pqarrow decodes) has its
//     page-decoded columns decoded side by side, batch by batch, a goroutine
//     per column (`decodePages`): each column chunk is still read in order by
//     one decoder. The consumer takes batches unit by
//     unit in path and row order (the order of a serial scan). Batches
//     decoded ahead of the consumer hold at most 32 MiB (the unit the
//     consumer reads never waits, so a pass cannot stall); with a limit, files
//     past the rows the limit needs (by their stats) are opened only when the
//     consumer reaches them.
//   - String views (`reader.WithStringViews`, `reader/views.go`): top-level
//     string and binary columns come as `Utf8View`/`BinaryView`. `pageColumn`
//     decodes them straight to views: values up to 12 bytes inline, a
//     dictionary page's longer values referenced in a buffer of the
//     dictionary's own that the batches share (a dictionary-encoded column is
//     a gather of 16-byte views), plain pages' longer values copied into
//     256 KiB buffers; other decoders' plain arrays become views referencing
//     their data. Columns the filter reads are decoded plain (expr and
//     arrow-go's kernels take no views) and made views after it; filters and
//     deletion vectors gather view columns themselves. The default stays
//     plain: the writers (arrow-go's pqarrow cannot write views), expr and the
//     compute kernels that `dml`, `maintenance` and `cdf` feed scans into take
//     plain arrays; in CPU profiles of the 10M-row data-path tables a scan
//     with views spent 7% (delta-rs's table) to 18% (lakelog's) less CPU.
//   - The pooled allocator (`reader/pool.go`) keeps arrow-go's allocator
//     contract, which its compute kernels rely on: `Allocate(n)` returns exactly
//     n bytes with capacity n, zeroed, 64-byte aligned; `Reallocate` keeps the
//     contents and returns length equal to capacity. Pooled arrays of a
//     power-of-two class hide their spare capacity; a registry keyed by address,
//     checked through a weak pointer, recovers the array on `Free`. In checked
//     mode (`LAKELOG_CHECKED_POOL=1`, or in tests) a canary past each buffer's
//     length is verified on every `Free`, freed and unzeroed memory is poisoned,
//     and outstanding bytes are counted.
//   - Reads on object stores (`internal/rangefetch`, the reader's plan in
//     `reader/fetch.go`). On a store that is not
//     `objstore.RandomAccess` (S3, GCS, Azure) a pass of `Records` (or one
//     `ReadFile`) reads data files through an I/O stage decoupled from
//     decoding: per file one speculative ranged GET of the tail (1/32 of the
//     file, 64 KiB to 1 MiB; a second only when the footer is larger, one more
//     for the page index when the filter can use it and the tail missed it);
//     from the footer, the file's units (the units `openFile` cuts, split
//     row groups included, made by the same `fileUnits` and then followed
//     by the decoders, so that plan and reads cannot disagree) and for each
//     unit a claim per column chunk it reads (`unitClaims`): the whole
//     chunk, or, where the unit reads only some of a row group's rows (a
//     piece of a split row group, or the rows the page index leaves), the
//     pages the decoder reads (`pageRanges`: the dictionary and first page,
//     which it reads before seeking, each page holding a row it reads, the
//     page after each run, each run with the 16 KiB its buffer reads past
//     it); claims queued in unit order (bytes several units claim, such as
//     a split chunk's dictionary, fetched once);
//     ranges with gaps up to 256 KiB coalesced, runs cut
//     into pieces of 4 MiB (the last of a run shorter; a piece wholly in a
//     gap is not fetched), read with `GetRangeInto` into buffers from a pool
//     of size classes, so that a scan's garbage does not grow with the bytes
//     it fetches; pieces fetched by up to
//     `WithFetchConcurrency` (16) ranged GETs in flight, in file order, ahead
//     of the `WithParallelism` decoders: the files being decoded and the next
//     two are fetched at once, so that bandwidth goes to the files decoded
//     next (planning runs up to 16 files ahead, for their tails; with a
//     limit, only the files whose stats rows reach it are read ahead).
//     Each unit's decoders read through the fetcher as the unit's owner;
//     reads are served from the pieces, and anything not planned would be
//     read directly and counted (`ScanMetrics.UncoveredReads`; the
//     differential tests fail on any). Memory: pieces fetched or in flight
//     and not yet freed hold at most a budget sized by the units planned
//     so far ((parallelism + 1) × the largest unit's claimed bytes, at
//     least 16 MiB, at most `WithFetchBudget`, 128 MiB), so a table of
//     small row groups holds little and the peak does not grow with the
//     table: a decoder reads each chunk at offsets that only grow, so a
//     piece is freed once every unit claiming it has started a read past
//     it or ended, a file's pieces when its last unit ends, all of them
//     when the consumer stops or the context ends. The only excess: when
//     one file's needed bytes exceed the budget, the oldest file's pieces
//     its decoders wait on are fetched anyway (so a scan cannot stall).
//     Decoded batches come on top (at most 32 MiB ahead). `ScanMetrics`
//     reports `Requests`, `BytesFetched`, `UncoveredReads`, `PeakBuffered`.
//     Local disk keeps reading in place.
//   - Every fast path has a randomized differential test against an independent
//     read: `reader.TestDifferentialScans` compares random filtered, projected
//     scans of random tables of every type (through the checked pool) with
//     arrow-go's pqarrow on the Go allocator, filtered in the test. It prints a
//     replayable seed; `-diff.long` runs it at a larger size.
//     `TestDifferentialSplitRowGroups` runs it on tables of one large row
//     group per file, scanned through flat columns with small batches, so
//     that row groups are split or decoded column by column (the tables of
//     seeds with bit 1 set also through the object-store path, filters on
//     the page index's columns included), and fails if neither happened, or
//     if no row group was split through the object-store path.
//     `TestDifferentialCloud` runs both on MinIO (directly and through a
//     proxy that injects faults), fake-gcs-server (slowed down) and Azurite.
package reader
