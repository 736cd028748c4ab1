package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// Compression is the codec of a written checkpoint's column chunks. Spark,
// delta-rs and delta-kernel read all of them.
type Compression int

// The codecs Write offers.
const (
	Snappy Compression = iota // the default, as Spark writes
	Zstd
	Uncompressed
)

func (c Compression) codec() (compress.Compression, error) {
	switch c {
	case Snappy:
		return compress.Codecs.Snappy, nil
	case Zstd:
		return compress.Codecs.Zstd, nil
	case Uncompressed:
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("checkpoint: unknown compression %d", int(c))
}

type writeConfig struct {
	compression Compression
	batchRows   int
	mem         memory.Allocator
	statsJSON   bool
	parsed      *parsedSpec
}

// DefaultBatchRows is the number of actions Write buffers before writing
// them as one row group.
const DefaultBatchRows = 20000

// WithCompression sets the codec (default Snappy).
func WithCompression(c Compression) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.compression = c })
}

// WithRowGroupSize sets how many actions Write buffers and writes as one
// row group (default DefaultBatchRows). Write's memory grows with it, not
// with the number of actions.
func WithRowGroupSize(n int) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.batchRows = max(n, 1) })
}

// WithoutStatsJSON omits the add.stats column, as the table property
// delta.checkpoint.writeStatsAsJson=false asks.
func WithoutStatsJSON() WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.statsJSON = false })
}

// Write writes the classic checkpoint of version: the object
// <logDir>/<version %020d>.checkpoint.parquet, one row per action of acts
// (the reconciled state of the table at version: protocol, metaData, txn,
// domainMetadata, add, and the unexpired remove tombstones). commitInfo and
// cdc actions and domainMetadata tombstones (removed=true) are skipped, as
// the protocol requires; anything else is written as given. acts must hold
// exactly one protocol and one metaData action.
//
// Write streams: it buffers one row group of actions (WithRowGroupSize) and
// pipes the encoded Parquet file into the store's Put, so memory does not
// grow with the table. The object appears whole or not at all: an error
// from acts, the encoder or the store aborts the Put, and nothing is left
// under the final name. The Put overwrites an existing checkpoint of the
// same version, which is equivalent by construction.
//
// The returned LastCheckpoint describes the file, for WriteLast.
func Write(ctx context.Context, store objstore.Store, logDir string, version int64, acts iter.Seq2[actions.Action, error], opts ...WriteOption) (LastCheckpoint, error) {
	cfg := writeConfig{compression: Snappy, batchRows: DefaultBatchRows, mem: memory.DefaultAllocator, statsJSON: true}
	for _, o := range opts {
		if o != nil {
			o.applyWrite(&cfg)
		}
	}
	if version < 0 {
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write: negative version %d", version)
	}
	key := joinKey(logDir, ClassicName(version))
	sc := schemaConfig{statsJSON: cfg.statsJSON}
	var parsed *parsedEncoder
	if cfg.parsed != nil {
		var err error
		parsed, err = newParsedEncoder(cfg.parsed)
		if err != nil {
			return LastCheckpoint{}, fmt.Errorf("checkpoint: write %s: %w", key, err)
		}
		sc.partitionValuesParsed, sc.statsParsed = parsed.fields()
	}
	schema := checkpointSchema(sc)
	codec, err := cfg.compression.codec()
	if err != nil {
		return LastCheckpoint{}, err
	}

	pr, pw := io.Pipe()
	putDone := make(chan error, 1)
	go func() {
		err := store.Put(ctx, key, pr, objstore.PutOptions{})
		// Unblock the encoder if the store stopped reading early.
		pr.CloseWithError(errors.Join(errPutReturned, err))
		putDone <- err
	}()

	cw := &countingWriter{w: pw}
	stats, werr := encodeFile(ctx, cw, schema, codec, cfg, parsed, acts)
	if werr != nil {
		pw.CloseWithError(werr)
	} else {
		pw.Close()
	}
	perr := <-putDone
	switch {
	case werr != nil && !errors.Is(werr, errPutReturned):
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write %s: %w", key, werr)
	case perr != nil:
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write %s: %w", key, perr)
	case werr != nil:
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write %s: %w", key, werr)
	}

	schemaJSON, err := deltaSchemaJSON(schema)
	if err != nil {
		return LastCheckpoint{}, err
	}
	size := cw.n
	adds := stats.adds
	return LastCheckpoint{
		Version:          version,
		Size:             stats.rows,
		SizeInBytes:      &size,
		NumOfAddFiles:    &adds,
		CheckpointSchema: schemaJSON,
	}, nil
}

// errPutReturned is the pipe's error when the store's Put returned before
// reading the whole body.
var errPutReturned = errors.New("checkpoint: store stopped reading the checkpoint")

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type writeStats struct {
	rows, adds int64
}

// encodeFile writes the Parquet file of acts to w, one row group per batch.
func encodeFile(ctx context.Context, w io.Writer, schema *arrow.Schema, codec compress.Compression, cfg writeConfig, parsed *parsedEncoder, acts iter.Seq2[actions.Action, error]) (st writeStats, err error) {
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(cfg.mem),
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(int64(cfg.batchRows)),
		parquet.WithStats(false),
		parquet.WithCreatedBy("lakelog"),
	)
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(cfg.mem)))
	if err != nil {
		return st, err
	}
	closed := false
	defer func() {
		if !closed {
			fw.Close()
		}
	}()
	rb := array.NewRecordBuilder(cfg.mem, schema)
	defer rb.Release()
	enc := newEncoder(rb, parsed)

	flush := func() error {
		rec := rb.NewRecordBatch()
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		return fw.Write(rec)
	}
	var protocols, metadatas int
	pending := 0
	for a, err := range acts {
		if err != nil {
			return st, err
		}
		if a.DomainMetadata != nil && a.DomainMetadata.Removed {
			continue
		}
		ok, err := enc.append(&a)
		if err != nil {
			return st, err
		}
		if !ok {
			continue
		}
		switch {
		case a.Protocol != nil:
			protocols++
		case a.Metadata != nil:
			metadatas++
		case a.Add != nil:
			st.adds++
		}
		st.rows++
		pending++
		if pending == cfg.batchRows {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if err := flush(); err != nil {
				return st, err
			}
			pending = 0
		}
	}
	if protocols != 1 || metadatas != 1 {
		return st, fmt.Errorf("checkpoint needs one protocol and one metaData action, got %d and %d", protocols, metadatas)
	}
	if err := flush(); err != nil {
		return st, err
	}
	closed = true
	return st, fw.Close()
}
