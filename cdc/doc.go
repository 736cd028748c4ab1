// Package cdc lands a database's changes, captured by Debezium into
// Kafka, in Delta tables: a bronze table holding each change event once,
// and a silver table equal to the source table.
//
// # Decoding (Decoder)
//
// Events are Debezium's JSON envelope as Kafka Connect's JsonConverter
// writes it with the schema part (key.converter.schemas.enable and
// value.converter.schemas.enable true). The types come from each event's
// own Connect schema, never from an earlier event or a guess:
//
//	int8 int16 int32 int64          byte short integer long
//	float double boolean            float double boolean
//	string, bytes                   string, binary
//	Decimal(scale, precision)       decimal(precision, scale), the scale
//	                                of the event itself (after ALTER ...
//	                                TYPE numeric(14,3) events say 3)
//	VariableScaleDecimal            decimal(38, s) or exact text, as the
//	                                caller chooses (WithVariableNumeric);
//	                                refused until it does
//	Date, IsoDate                   date
//	Timestamp, MicroTimestamp,      timestamp_ntz (Postgres's timestamp
//	NanoTimestamp, IsoTimestamp     without time zone)
//	ZonedTimestamp                  timestamp (UTC)
//	Time, MicroTime, NanoTime       string "HH:MM:SS[.ffffff]" as Postgres
//	                                prints a time: Delta has no time type
//	                                (Spark's TIME is not a Delta type), and
//	                                the text sorts in time order
//	ZonedTime, Interval, Json, Xml, string (json and jsonb keep their text)
//	Uuid, Enum, EnumSet, Ltree
//	MicroDuration                   long (Debezium's microseconds, months
//	                                counted as 30 days)
//	Bits                            binary (boolean for bit(1))
//	array, map, struct              array, map<string,_>, struct
//
// Any other logical type, and Connect type names JsonConverter does not
// write, are refused with a *TypeError naming the column and the type.
// A value its schema does not describe is a *ValueError naming the
// column. NOT NULL (optional false) and defaults are carried on Column;
// the record key's fields are the primary key (Event.Key).
//
// Debezium's placeholder for a value it does not have (an unchanged
// TOASTed column under Postgres's default replica identity) is never a
// value: Event.Unavailable marks the column and Row holds nil. It is
// recognised in each form Debezium sends it (text, bytes, a text array,
// an integer array of its bytes).
//
// Known losses upstream of this package, documented rather than hidden:
// Debezium sends numeric NaN and Infinity as null with
// decimal.handling.mode=precise (use string to keep them); MicroDuration
// counts a month as 30 days.
//
// # Positions
//
// Event.Position is a streamed change's place in Postgres's log
// (Debezium's sequence: the last committed LSN, then the change's LSN);
// positions only grow, so a change that Debezium re-sends after a Connect
// crash is recognised by a position at or below one already landed.
// Snapshot reads have none (a snapshot's rows share one LSN).
//
// # Silver's storage (deletion vectors)
//
// Silver is created with deletion vectors (delta.enableDeletionVectors
// true, the deletionVectors table feature: reader version 3, writer
// version 7): its MERGEs mark the rows an update or delete replaces in a
// deletion vector beside the file and write only the new rows
// (merge-on-read), rather than rewriting every file they touch whole
// (copy-on-write), whose replaced copies would stay on disk until VACUUM.
// Auto compaction counts a file with a deletion vector as one to
// rewrite, so the deleted rows do not pile up. Silver.Properties (or
// pipeline.yaml's deletion_vectors) with delta.enableDeletionVectors
// false creates silver without them, for readers that cannot read
// deletion vectors (delta-rs 1.6 refuses such a table). An existing silver table is left as
// it is unless Properties names the property: true then enables deletion
// vectors on it, raising its protocol (every reader of the table must
// support the feature; readers without it refuse the table, delta-rs
// 1.6 among them), false
// makes later MERGEs rewrite files again.
package cdc
