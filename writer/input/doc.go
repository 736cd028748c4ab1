// Package input decodes data files — JSON Lines, CSV with a header row,
// Parquet — into Arrow record batches for writing into a Delta table
// (writer.Append and friends), as `lakelog append` does.
//
//	d, err := input.Open("orders.jsonl", snap.Schema())
//	...
//	defer d.Close()
//	res, err := writer.Append(ctx, snap, d.Records(ctx))
//
// # Typed decoding
//
// JSONL and CSV values are parsed straight into Arrow builders of the
// table's types, so a value that does not fit its column is caught where
// it is, as an *Error naming the file, the line and the column:
//
//	orders.jsonl:3: column "amount": "12,5" is not a decimal(10,2)
//
// The batches have the table's logical Arrow schema (actions.ToArrowSchema):
// every column in schema order under the table's spelling; columns the
// input lacks are null. Column names, and struct field names, match
// ignoring case, as Spark resolves them. An input column the table lacks is
// an error; MergeSchema infers the columns an append adds.
//
// Values, by Delta type (JSON form; the CSV form is the same text without
// JSON quoting):
//
//	byte short integer long  a JSON integer, or a string holding one; an
//	                         exact integral value such as 3.0 or 1e3 is
//	                         accepted; the type's range is checked
//	float double             a JSON number, or a string holding one, or
//	                         "NaN", "Infinity", "-Infinity" (also INF and
//	                         +Infinity, any case); a finite value beyond
//	                         the range is an error, not infinity
//	decimal(p,s)             a JSON number or a string, taken from its text,
//	                         never through binary floating point: more than
//	                         s fractional digits (other than trailing zeros)
//	                         or more than p digits is an error, not rounded
//	string                   a JSON string (a number is a type error)
//	boolean                  true or false (in CSV, any case)
//	binary                   standard base64, padding optional
//	date                     "YYYY-MM-DD"
//	timestamp                RFC 3339, 'T' or a space between date and
//	                         time, "Z" or an offset; fractional digits past
//	                         microseconds are dropped. A value without a
//	                         zone is read as UTC (Spark would use the
//	                         session time zone, which a file does not have)
//	timestamp_ntz            the same without a zone; a zone is an error
//	struct                   a JSON object; unknown fields are errors,
//	                         absent ones null
//	array                    a JSON array
//	map                      a JSON object whose keys are the keys' text (the
//	                         form `lakelog scan --format jsonl` prints), or
//	                         an array of [key, value] pairs (the canonical
//	                         row encoding's); a repeated key is an error
//
// null, or an absent key, is null; in a non-nullable column (or struct
// field, array element, map value) it is an error.
//
// JSONL: one JSON object per line; blank lines are skipped, a line may end
// in CRLF, a leading byte order mark is dropped. A key given twice is an
// error. Lines are at most WithMaxLineSize bytes.
//
// CSV (RFC 4180, encoding/csv): the first row names the columns (spaces
// around names are dropped); with WithHeader(false) it is data and the
// columns are _c0, _c1, ... as Spark names them. WithComma sets the
// delimiter. MergeSchema infers the types of new CSV columns as Spark's
// inferSchema does. Every row must have as many fields as the
// header. An empty field is null — an empty string cannot be told apart
// from null, as in Spark's default. Numbers, booleans, dates and
// timestamps may have surrounding spaces; strings are taken as they are.
// A struct, array or map cell holds the value as JSON text.
//
// Parquet: read with arrow-go's pqarrow in batches. The batches keep the
// file's own column names and types; the writer's schema enforcement
// matches them to the table and names the column of any mismatch. Errors
// reading the file name it.
//
// # Memory
//
// Files are streamed: a batch is finished at WithBatchSize rows
// (default 64Ki) or, for JSONL and CSV, after WithBatchBytes of input, so
// memory stays bounded by a batch and one line whatever the file's size.
//
// # Errors
//
// Bad input is an *Error with File, Line (JSONL, CSV) or Row (Parquet),
// Column and Msg. Decoding stops at the first one: the data is either all
// good or the write fails, which is what an append needs. Malformed JSON
// names the byte offset within its line.
package input
