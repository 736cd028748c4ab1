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
package convert
