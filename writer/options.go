package writer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// Defaults.
const (
	// DefaultTargetFileSize is the size at which a data file is closed and
	// the next one started (Spark's and delta-rs's 128 MiB).
	DefaultTargetFileSize = 128 << 20
	// DefaultMaxOpenFiles bounds how many data files (one per partition
	// being written) are open at once; see WithMaxOpenFiles.
	DefaultMaxOpenFiles = 16
	// DefaultBufferSize is how many bytes of encoded row groups the open
	// files may hold in memory together before the largest is flushed.
	DefaultBufferSize = 256 << 20
)

// Option configures a write.
type Option func(*config)

type config struct {
	codec          compress.Compression
	codecName      string
	targetFileSize int64
	maxOpenFiles   int
	bufferSize     int64
	mem            memory.Allocator
	mergeSchema    bool
	overwrite      *overwriteSchema     // WithOverwriteSchema
	schemaChange   *actions.TableConfig // WithSchemaChange
	dataChange     bool
	commit         []deltalog.CommitOption // WithCommitOptions
	parquetProps   []parquet.WriterProperty
	rowCheck       rowCheck
	changeFiles    bool     // WriteChangeFiles: _change_data/cdc-*.parquet
	tableRows      bool     // WithTableRows
	rowTracking    bool     // WithMaterializedRowTracking
	hidden         []string // trailing columns written as named (rowtracking.go)
	// materializePartitions: the data files hold the partition columns
	// too (materializePartitionColumns, delta.writePartitionColumnsToParquet).
	materializePartitions bool
	err                   error
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		codec:          compress.Codecs.Snappy,
		codecName:      "snappy",
		targetFileSize: DefaultTargetFileSize,
		maxOpenFiles:   DefaultMaxOpenFiles,
		bufferSize:     DefaultBufferSize,
		mem:            memory.DefaultAllocator,
		dataChange:     true,
	}
	return c.apply(opts)
}

// apply applies opts to c and returns it, or the first option's error.
func (c *config) apply(opts []Option) (*config, error) {
	for _, o := range opts {
		o(c)
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// clone is a copy of c that options can change without changing c.
func (c *config) clone() *config {
	n := *c
	n.commit = slices.Clone(c.commit)
	n.parquetProps = slices.Clone(c.parquetProps)
	if c.overwrite != nil {
		o := *c.overwrite
		n.overwrite = &o
	}
	return &n
}

// Settings are a write's file-writing options resolved once and checked:
// what an operation built on the writer (DELETE, UPDATE, MERGE,
// replaceWhere, OPTIMIZE) resolves from its writer options before doing
// anything, asks for what it needs beside the files (the allocator), and
// hands on to WriteFiles and WriteChangeFiles with WithSettings. How the
// operation commits is not a writer setting: it takes
// deltalog.CommitOption values of its own. A Settings never changes; With
// derives another. (delta-rs's WriterProperties is the model.)
type Settings struct{ c *config }

// Resolve applies opts once: a bad option (an unknown codec, a negative
// size, an app transaction without an id) is an error here, not later.
func Resolve(opts ...Option) (*Settings, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Settings{c: c}, nil
}

// With is s with opts applied on top.
func (s *Settings) With(opts ...Option) (*Settings, error) {
	c, err := s.c.clone().apply(opts)
	if err != nil {
		return nil, err
	}
	return &Settings{c: c}, nil
}

// WithSettings writes with resolved settings: the write starts from s,
// and options given after it apply on top (options before it are
// replaced, so it comes first).
func WithSettings(s *Settings) Option {
	return func(c *config) {
		err := c.err
		*c = *s.c.clone()
		if err != nil {
			c.err = err
		}
	}
}

// Allocator is the Arrow allocator of the write (WithAllocator), for an
// operation that allocates beside the files it writes.
func (s *Settings) Allocator() memory.Allocator { return s.c.mem }

// WithCompression sets the data files' Parquet codec: "snappy" (the
// default, as Spark), "zstd", "gzip", "lz4" (LZ4_RAW) or "none".
func WithCompression(codec string) Option {
	return func(c *config) {
		switch strings.ToLower(codec) {
		case "snappy":
			c.codec, c.codecName = compress.Codecs.Snappy, "snappy"
		case "zstd":
			c.codec, c.codecName = compress.Codecs.Zstd, "zstd"
		case "gzip":
			c.codec, c.codecName = compress.Codecs.Gzip, "gz"
		case "lz4", "lz4_raw":
			c.codec, c.codecName = compress.Codecs.Lz4Raw, "lz4raw"
		case "none", "uncompressed":
			c.codec, c.codecName = compress.Codecs.Uncompressed, ""
		default:
			c.err = fmt.Errorf("writer: unknown compression %q (want snappy, zstd, gzip, lz4 or none)", codec)
		}
	}
}

// WithTargetFileSize sets the size in bytes at which a data file is closed
// and another started (default DefaultTargetFileSize). Files come out
// near that size, a little above or below.
func WithTargetFileSize(bytes int64) Option {
	return func(c *config) {
		if bytes <= 0 {
			c.err = fmt.Errorf("writer: target file size %d must be positive", bytes)
		}
		c.targetFileSize = bytes
	}
}

// WithMaxOpenFiles bounds the data files open at once when the input
// spreads over many partitions (default DefaultMaxOpenFiles). When one
// more is needed the least recently written one is finished, so unsorted
// input over many partitions gives more, smaller files.
func WithMaxOpenFiles(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.err = fmt.Errorf("writer: max open files %d must be at least 1", n)
		}
		c.maxOpenFiles = n
	}
}

// WithBufferSize bounds the encoded, not yet flushed row group bytes held
// by all open files together (default DefaultBufferSize). Above it, the
// open file holding the most is finished (its partition's later rows go
// to a new file).
func WithBufferSize(bytes int64) Option {
	return func(c *config) {
		if bytes <= 0 {
			c.err = fmt.Errorf("writer: buffer size %d must be positive", bytes)
		}
		c.bufferSize = bytes
	}
}

// WithAllocator sets the Arrow allocator used for conversions and
// encoding (default memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// WithParquetProperties adds Parquet writer properties, applied after
// lakelog's own (codec, statistics, page index, page size, dictionaries):
// data page size and version, dictionary use and limits, rows per row
// group. Statistics must stay on for the add actions' stats to be right.
func WithParquetProperties(props ...parquet.WriterProperty) Option {
	return func(c *config) { c.parquetProps = append(c.parquetProps, props...) }
}

// WithRowCheck validates every conformed input batch before it is
// written; rowBase is the 0-based index of the batch's first row in the
// input. An error (a *SchemaError naming the row, say) fails the write,
// and nothing is committed. replaceWhere checks its predicate this way.
func WithRowCheck(check func(rec arrow.RecordBatch, rowBase int64) error) Option {
	return func(c *config) { c.rowCheck = check }
}

// WithMergeSchema lets the input add columns, as Spark's mergeSchema
// option: input columns (and struct fields) the table lacks are appended
// to the schema as nullable, and the commit changes the table's metadata.
// Without it an unknown column is an error.
func WithMergeSchema() Option { return func(c *config) { c.mergeSchema = true } }

// WithOverwriteSchema makes an Overwrite replace the table's schema and
// partitioning with the input's (Spark's overwriteSchema option): the
// new schema is the first input batch's columns, all nullable, and the
// table is partitioned by partitionBy (none: not partitioned), which
// must be columns of the input. On a column-mapped table every column
// gets a new id and physical name. Other writes refuse it.
func WithOverwriteSchema(partitionBy ...string) Option {
	return func(c *config) { c.overwrite = &overwriteSchema{partitionBy: slices.Clone(partitionBy)} }
}

// WithSchemaChange makes WriteFiles and WriteChangeFiles write for
// table, the configuration the commit leaves after a schema change it
// makes (MERGE's schema evolution: Transaction.SetMetadata, then
// Transaction.Config): the files take its columns, physical names and
// partitioning, and input without its new columns gets nulls in them.
// WriteFiles' result then has its Metadata and SchemaChanged set; the
// commit must carry it.
func WithSchemaChange(table *actions.TableConfig) Option {
	return func(c *config) { c.schemaChange = table }
}

// WithDataChange sets add.dataChange (default true). Operations that
// rearrange data without changing it (OPTIMIZE) write false.
func WithDataChange(b bool) Option { return func(c *config) { c.dataChange = b } }

// WithCommitOptions sets how Append, Overwrite and CreateTable commit:
// an app transaction (exactly once), operation parameters, user
// metadata, the isolation level, post-commit hooks (deltalog.CommitOption,
// the options every operation takes). WriteFiles and WriteChangeFiles,
// which commit nothing, refuse them: an operation built on them takes
// commit options of its own.
func WithCommitOptions(opts ...deltalog.CommitOption) Option {
	return func(c *config) { c.commit = append(c.commit, opts...) }
}

// refuseCommitOptions refuses commit options given to a building block
// that commits nothing (WriteFiles, WriteChangeFiles), which would
// otherwise be dropped.
func refuseCommitOptions(cfg *config) error {
	if len(cfg.commit) > 0 {
		return fmt.Errorf("writer: commit options go to the operation that commits (its WithCommitOptions), not to the writer of its files")
	}
	return nil
}

// WithTableRows marks an input whose rows already hold their identity
// column values: rows an operation copies from the table's files, and
// rows DML inserts with values it generated (Identity.FillNulls). The
// writer then takes identity columns as given, neither generating values
// nor refusing GENERATED ALWAYS ones. Without it (appends, overwrites,
// replaceWhere's new rows), an input that lacks an identity column gets
// new values, and one that supplies a GENERATED ALWAYS column is refused.
func WithTableRows() Option { return func(c *config) { c.tableRows = true } }
