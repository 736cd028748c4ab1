// Package convert turns a folder of Parquet files into a Delta table in
// place, as Spark's CONVERT TO DELTA does: no data file is read past its
// footer, copied or moved; one commit (version 0) adds every file.
//
// ToDelta lists the folder (object stores too), skips hidden names as
// Spark does (a name starting with "_" or "." unless it holds "=", so
// _delta_log, _SUCCESS and .crc files are passed over but a partition
// folder "_p=1" is not), reads every file's footer in parallel and then:
//
//   - the table schema is the files' schemas, every field nullable,
//     merged as Spark merges them (fields matched by name without regard
//     to case and appended in the order first seen; byte, short and int
//     widen to each other; any other difference is refused naming both
//     files), then the partition columns given with PartitionBy;
//   - each file's partition values come from its folders (Hive style
//     "p=v/", values %-escaped, __HIVE_DEFAULT_PARTITION__ for null),
//     which must name the partition columns in order; a value that does
//     not parse as its column's type is refused;
//   - each file's stats come from the footer's column statistics:
//     numRecords, and per leaf column nullCount, minValues and maxValues
//     as the writer renders them (strings cut to 32 characters, times to
//     the millisecond), for the columns the table's properties index.
//     Bounds the footer cannot give safely are left out (see stats.go).
//
// Anything that is not a Parquet file (no "PAR1" at its end, a footer
// that does not decode) is refused naming it, and nothing is written. A
// folder that already holds a Delta table is left alone: ToDelta returns
// a Result with AlreadyDelta set and writes nothing, as Spark's CONVERT
// does on a Delta table, so running it twice is harmless. Two converts
// of the same folder racing: one commit wins, the other finds version 0
// taken and answers as if the table had been there.
//
// # CONVERT TO DELTA
//
// `convert.ToDelta(ctx, store, root, opts...)` (`lakelog convert PATH
// [--partition-by 'p type, ...']`) makes a folder of Parquet files a Delta
// table in place, as Spark's `CONVERT TO DELTA parquet.`path“: no data file
// is read past its footer, copied or moved; one commit (version 0, operation
// `CONVERT`, Spark's parameters `numFiles`, `partitionedBy`, `collectStats`)
// adds every file with `dataChange` true, through `deltalog.Create`, so the
// protocol, property checks and the commit loop are the writer's.
//   - Listing: every key under the root; a path segment starting with `_` or
//     `.` that holds no `=` hides the file (Spark's `dirNameFilter`:
//     `_delta_log`, `_SUCCESS`, `.crc`, `_temporary`), counted in
//     `Result.Skipped`.
//   - Partitions: with `PartitionBy` each file's folders must be exactly
//     `name=value`, one per column in order (names without regard to case);
//     values are %-unescaped, `__HIVE_DEFAULT_PARTITION__` is null, an empty
//     value is refused; the value is recorded as its text, checked to parse as
//     the column's type (Spark casts and records the string). Without
//     `PartitionBy` a `name=value` folder is refused (Spark's "expecting 0
//     partition columns"); other subfolders are read.
//   - Footers: one ranged read of the last 64 KiB (a second when the footer
//     is larger), `PAR1` checked, 32 at a time. Anything else (no `PAR1`, an
//     encrypted `PARE` footer, a footer that does not decode) is
//     `ErrNotParquet` naming the file.
//   - Schema: each file's Parquet schema as Spark's converter reads it (not
//     the Arrow schema in its metadata; INT96 is a timestamp;
//     TIMESTAMP(NANOS) is refused, as Spark refuses it), every field
//     nullable, merged in listing order as Spark's `SchemaMergingUtils`:
//     fields matched without regard to case, new ones appended, byte, short
//     and int widened, decimals and all else equal; a conflict is
//     `ErrSchemaConflict` naming the first file with the column and the file
//     that disagrees. Partition columns follow the data columns. Each
//     distinct Parquet schema is converted once.
//   - Stats from the footer's column statistics (`convert/stats.go`), for the
//     columns the new table's properties index: numRecords; nullCount summed
//     over row groups (not for arrays and maps, whose counts are of
//     elements; a column missing from a file counts all its rows); min and
//     max of integers, dates, timestamps (milliseconds, max rounded up),
//     decimals and UTF-8 strings (truncated as the writer truncates,
//     `actions.TruncateStatsMin/Max`), rendered by the writer's own code in
//     `actions` (`FormatStatsDate`, `FormatStatsTimestamp`, `StatsValues`,
//     `RenderStats`: one stats JSON for both). Float and double bounds are left out:
//     Parquet writers leave NaN out of min and max, but Spark orders NaN
//     above every number, so a footer bound could skip a file with NaN. No
//     bounds for unsigned integers and INT96. `convert` tests compare them
//     with the writer's stats from the values on random files.
//   - A folder that is already a Delta table is left alone
//     (`Result.AlreadyDelta`; the CLI prints "already a Delta table" and
//     exits 0), as Spark's CONVERT of a Delta table is a no-op. A convert
//     that loses version 0 to another writer answers the same; a lost
//     response of its own is read back by the commit loop. Bad input writes
//     nothing: every check runs before the commit, which is the only write.
//   - Not done: converting to a column-mapped table (refused), Iceberg
//     sources, catalog tables.
package convert
