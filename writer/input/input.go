package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// Format is an input file format.
type Format int

// The input formats.
const (
	// JSONL is one JSON object per line (also called NDJSON).
	JSONL Format = iota + 1
	// CSV is comma-separated values with a header row (RFC 4180).
	CSV
	// Parquet is an Apache Parquet file.
	Parquet
)

func (f Format) String() string {
	switch f {
	case JSONL:
		return "JSONL"
	case CSV:
		return "CSV"
	case Parquet:
		return "Parquet"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf returns the format a file name's extension names: .jsonl,
// .ndjson (and .json, read as JSON Lines), .csv or .parquet, in any case.
func FormatOf(name string) (Format, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson", ".json":
		return JSONL, nil
	case ".csv":
		return CSV, nil
	case ".parquet":
		return Parquet, nil
	}
	return 0, &Error{File: name, Msg: "unknown input format (want a .jsonl, .ndjson, .csv or .parquet file)"}
}

// ErrUnknownColumn is wrapped by the *Error for an input column (or struct
// field) that the table's schema lacks; MergeSchema adds such columns.
var ErrUnknownColumn = errors.New("input: column not in the table schema")

// Defaults.
const (
	// DefaultBatchSize is the most rows per batch.
	DefaultBatchSize = 64 * 1024
	// DefaultBatchBytes is the input bytes after which a JSONL or CSV batch
	// is finished even when it has fewer rows, so that wide rows do not
	// make huge batches.
	DefaultBatchBytes = 64 << 20
	// DefaultMaxLineSize bounds one JSONL line.
	DefaultMaxLineSize = 128 << 20
)

// Option configures a Decoder.
type Option func(*config)

type config struct {
	format     Format
	batchSize  int
	batchBytes int64
	maxLine    int
	comma      rune
	mem        memory.Allocator
	// noHeader: a CSV file's first row is data; its columns are _c0,
	// _c1, ... (WithHeader(false)).
	noHeader bool
	// stringsOnly: CSV columns are not inferred (WithInferSchema(false)).
	stringsOnly bool
}

func newConfig(opts []Option) *config {
	c := &config{batchSize: DefaultBatchSize, batchBytes: DefaultBatchBytes, maxLine: DefaultMaxLineSize, comma: ',', mem: memory.DefaultAllocator}
	for _, o := range opts {
		o(c)
	}
	if c.batchSize <= 0 {
		c.batchSize = DefaultBatchSize
	}
	if c.batchBytes <= 0 {
		c.batchBytes = DefaultBatchBytes
	}
	if c.maxLine <= 0 {
		c.maxLine = DefaultMaxLineSize
	}
	return c
}

// WithFormat sets the format instead of taking it from the file name.
func WithFormat(f Format) Option { return func(c *config) { c.format = f } }

// WithBatchSize sets the most rows per batch (default DefaultBatchSize).
func WithBatchSize(rows int) Option { return func(c *config) { c.batchSize = rows } }

// WithBatchBytes sets the input bytes after which a JSONL or CSV batch is
// finished (default DefaultBatchBytes).
func WithBatchBytes(n int64) Option { return func(c *config) { c.batchBytes = n } }

// WithMaxLineSize bounds the length of a JSONL line in bytes (default
// DefaultMaxLineSize); a longer line is an error.
func WithMaxLineSize(n int) Option { return func(c *config) { c.maxLine = n } }

// WithComma sets the CSV field delimiter (default ',').
func WithComma(r rune) Option { return func(c *config) { c.comma = r } }

// WithHeader sets whether a CSV file's first row names its columns
// (default true). Without a header the first row is data and the
// columns are named by position as Spark names them: _c0, _c1, ...
func WithHeader(on bool) Option { return func(c *config) { c.noHeader = !on } }

// WithInferSchema sets whether the type of a CSV column the table lacks
// is inferred from its values as Spark's inferSchema does (default true;
// MergeSchema); false makes such columns strings.
func WithInferSchema(on bool) Option { return func(c *config) { c.stringsOnly = !on } }

// WithAllocator sets the Arrow allocator of the batches (default
// memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// Error is bad input: a value, a line or a whole file that cannot be read
// into the table. It prints as
//
//	orders.jsonl:3: column "amount": "12,5" is not a decimal(10,2)
//	orders.csv:7: 3 fields, but the header has 4
//	events.parquet: row 17: column "id": null in a non-nullable column
type Error struct {
	// File is the input's name as given.
	File string
	// Line is the 1-based line of a JSONL or CSV file (for CSV, where the
	// record or the field starts), or 0.
	Line int64
	// Row is the 1-based row of a Parquet file, or 0.
	Row int64
	// Column is the column path ("amount", "address.city",
	// "tags.element"), or "" when the error is not about one column.
	Column string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error (an I/O or Parquet error, or
	// ErrUnknownColumn), or nil.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Row > 0 {
		fmt.Fprintf(&b, "row %d: ", e.Row)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// errAt turns a decoding error at a line into an *Error.
func errAt(file string, line int64, err error) error {
	var ve *valueError
	var se *syntaxError
	var ie *Error
	switch {
	case errors.As(err, &ie):
		return ie
	case errors.As(err, &ve):
		return &Error{File: file, Line: line, Column: ve.Path, Msg: ve.Msg, Err: ve.Err}
	case errors.As(err, &se):
		return &Error{File: file, Line: line, Msg: se.of("the line")}
	}
	return &Error{File: file, Line: line, Msg: err.Error(), Err: err}
}

// Decoder decodes one input file into Arrow record batches.
//
// For JSONL and CSV the batches have exactly Schema(): the table's columns
// in schema order, under the table's names and in the Arrow types of
// actions.ArrowType, whatever order and case the input uses; columns the
// input lacks are null. Each value is parsed by its column's type, so that
// a bad value is an *Error naming the line and the column.
//
// For Parquet the batches are the file's own columns and types, as
// pqarrow reads them; the writer's schema enforcement matches them to the
// table (see the writer package).
//
// A Decoder is read once, by one goroutine; BytesRead may be called from
// any.
type Decoder struct {
	name   string
	cfg    *config
	table  *actions.StructType
	schema *arrow.Schema
	r      io.Reader // JSONL, CSV
	pq     *parquetSource
	closer io.Closer
	size   int64
	read   atomic.Int64
	used   bool
}

// Open opens the file at path for reading into a table of the given
// schema. The format comes from the extension (FormatOf) unless
// WithFormat is given. A Parquet file's footer is read here, so that a
// file that is not Parquet fails at once. Close the Decoder when done.
func Open(path string, schema *actions.StructType, opts ...Option) (*Decoder, error) {
	f, size, cfg, err := openFile(path, opts)
	if err != nil {
		return nil, err
	}
	d, err := newDecoder(f, path, size, schema, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	d.closer = f
	return d, nil
}

// openFile opens the file at path with its size (-1 when not a regular
// file) and the options, the format set from the name when not given.
func openFile(path string, opts []Option) (*os.File, int64, *config, error) {
	cfg := newConfig(opts)
	if cfg.format == 0 {
		f, err := FormatOf(path)
		if err != nil {
			return nil, 0, nil, err
		}
		cfg.format = f
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, &Error{File: path, Msg: errMsg(err), Err: err}
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, cfg, nil
}

// errMsg is an OS error without the path it repeats.
func errMsg(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// NewDecoder decodes r, named name in errors, into a table of the given
// schema. The format comes from name's extension unless WithFormat is
// given. Parquet needs random access: r must then implement io.ReaderAt
// and io.Seeker (an *os.File does).
func NewDecoder(r io.Reader, name string, schema *actions.StructType, opts ...Option) (*Decoder, error) {
	cfg := newConfig(opts)
	if cfg.format == 0 {
		f, err := FormatOf(name)
		if err != nil {
			return nil, err
		}
		cfg.format = f
	}
	size := int64(-1)
	if s, ok := r.(io.Seeker); ok {
		if end, err := s.Seek(0, io.SeekEnd); err == nil {
			if _, err := s.Seek(0, io.SeekStart); err == nil {
				size = end
			}
		}
	}
	return newDecoder(r, name, size, schema, cfg)
}

func newDecoder(r io.Reader, name string, size int64, schema *actions.StructType, cfg *config) (*Decoder, error) {
	if schema == nil {
		return nil, fmt.Errorf("input: %s: no table schema", name)
	}
	d := &Decoder{name: name, cfg: cfg, table: schema, size: size}
	switch cfg.format {
	case JSONL, CSV:
		sc, err := actions.ToArrowSchema(schema, false, "")
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		d.schema = sc
		d.r = &countingReader{r: r, n: &d.read}
	case Parquet:
		ra, ok := r.(parquetReaderAt)
		if !ok {
			return nil, fmt.Errorf("input: %s: reading Parquet needs random access (io.ReaderAt and io.Seeker)", name)
		}
		// Hidden from the Parquet reader, which would close what it
		// reads: the file is the caller's (or Close's) to close.
		pq, err := openParquet(struct{ parquetReaderAt }{ra}, name, cfg)
		if err != nil {
			return nil, err
		}
		d.pq = pq
		d.schema = pq.schema
	default:
		return nil, fmt.Errorf("input: %s: unknown format %v", name, cfg.format)
	}
	return d, nil
}

// Name is the input's name, as errors show it.
func (d *Decoder) Name() string { return d.name }

// Format is the input's format.
func (d *Decoder) Format() Format { return d.cfg.format }

// Schema is the Arrow schema of the batches.
func (d *Decoder) Schema() *arrow.Schema { return d.schema }

// Size is the input's size in bytes, or -1 when unknown.
func (d *Decoder) Size() int64 { return d.size }

// BytesRead is how far decoding has come, in input bytes (for Parquet, an
// estimate from the rows read). It is safe to call while Records runs.
func (d *Decoder) BytesRead() int64 { return d.read.Load() }

// Records decodes the input. Each batch is valid until the loop body
// returns (Retain it to keep it). The first error ends the sequence; it is
// an *Error for bad input. An input without rows (an empty JSONL file, a
// CSV file with only its header) yields one empty batch of Schema, so
// that a consumer such as a MERGE learns the columns; writers skip it.
// Records can be ranged over once.
func (d *Decoder) Records(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if d.used {
			yield(nil, fmt.Errorf("input: %s: Records called twice", d.name))
			return
		}
		d.used = true
		any, stopped := false, false
		counted := func(rec arrow.RecordBatch, err error) bool {
			any = true
			if !yield(rec, err) {
				stopped = true
				return false
			}
			return true
		}
		var err error
		switch d.cfg.format {
		case JSONL:
			err = d.jsonl(ctx, counted)
		case CSV:
			err = d.csv(ctx, counted)
		case Parquet:
			err = d.pq.records(ctx, d, counted)
		}
		switch {
		case err != nil:
			yield(nil, err)
		case !any && !stopped && d.schema != nil:
			// No rows: one empty batch, so that the consumer learns the
			// columns (an empty MERGE source); writers skip it.
			cols := make([]arrow.Array, d.schema.NumFields())
			for i, f := range d.schema.Fields() {
				cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			}
			empty := array.NewRecordBatch(d.schema, cols, 0)
			for _, c := range cols {
				c.Release()
			}
			yield(empty, nil)
			empty.Release()
		}
	}
}

// Close releases the input. It is safe to call twice.
func (d *Decoder) Close() error {
	var err error
	if d.pq != nil {
		err = d.pq.close()
		d.pq = nil
	}
	if d.closer != nil {
		if cerr := d.closer.Close(); err == nil {
			err = cerr
		}
		d.closer = nil
	}
	return err
}

// ReadFile opens path, yields its batches and closes it: Open and Records
// in one, for chaining files into one write.
func ReadFile(ctx context.Context, path string, schema *actions.StructType, opts ...Option) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		d, err := Open(path, schema, opts...)
		if err != nil {
			yield(nil, err)
			return
		}
		defer d.Close()
		for rec, err := range d.Records(ctx) {
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
