// Package actions is the vocabulary of the Delta transaction log: the
// actions of a commit file and their JSON codec, the table schema and its
// two text forms, typed scalar values, partition values, table features,
// column mapping and the Arrow form of a schema. It does no I/O and
// imports no other lakelog package.
//
// # Commits
//
// ParseCommit reads a newline-delimited commit file into []Action, one
// per line; MarshalCommit writes them back. A decoded commit marshals to
// text that decodes to the same actions: fields of commitInfo that lakelog
// does not model are kept verbatim in CommitInfo.Extra, and an action of
// an unknown kind is kept in Action.Unknown. Collections the protocol
// requires (metaData's partitionColumns, configuration and format options,
// partitionValues of add and cdc, feature lists of a table-features
// protocol) are written as empty rather than left out. Nothing is
// HTML-escaped. A bad line is a *LineError carrying its line number.
//
// # Schemas
//
// ParseSchema and SchemaString convert between a StructType and the
// schemaString of metaData, exactly as Spark prints it. ParseDDL and
// FormatDDL convert between a StructType and Spark's DDL column list
// ("id long not null, tags array<string>"), the form people type.
// ToArrowSchema and FromArrowSchema convert to and from Arrow, by logical
// or physical (column-mapped) names.
//
// # Values
//
// A value of a Delta type is held in one Go type per Delta type (see
// values.go): int64 for long, Date for date, Decimal for decimal(p,s), and
// so on; nil is null. ParsePartitionValue and FormatPartitionValue convert
// partitionValues entries; ParseStatValue converts the bounds in
// add.stats; CompareValues orders two values of one type as Spark does.
// Time zone rules: a timestamp without a zone (in a partition value or a
// stat) is read as UTC.
//
// # Features
//
// The Feature* constants name the table features. Protocol.ReaderFeatureSet
// and WriterFeatureSet say what a table needs of a client, legacy protocol
// versions included; deciding what lakelog supports is deltalog's job.
//
// Parsers in this package never panic on any input; they are fuzzed
// (go test -fuzz=FuzzParseCommit, FuzzParseSchema, FuzzParseDDL,
// FuzzPartitionValue).
package actions
