package input

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
)

// parquetReaderAt is the random access Parquet needs.
type parquetReaderAt interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// parquetSource is an open Parquet file.
type parquetSource struct {
	name   string
	pf     *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema
	rows   int64
}

func openParquet(r parquetReaderAt, name string, cfg *config) (*parquetSource, error) {
	pf, err := file.NewParquetReader(r, file.WithReadProps(parquet.NewReaderProperties(cfg.mem)))
	if err != nil {
		return nil, &Error{File: name, Msg: "not a readable Parquet file: " + err.Error(), Err: err}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(cfg.batchSize)}, cfg.mem)
	if err != nil {
		pf.Close()
		return nil, &Error{File: name, Msg: "cannot read the Parquet schema: " + err.Error(), Err: err}
	}
	sc, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, &Error{File: name, Msg: "cannot read the Parquet schema: " + err.Error(), Err: err}
	}
	return &parquetSource{name: name, pf: pf, fr: fr, schema: sc, rows: pf.NumRows()}, nil
}

// deltaSchema is the Delta schema of the file's columns
// (actions.FromArrowSchema), for schema inference.
func (p *parquetSource) deltaSchema() (*actions.StructType, error) {
	s, err := actions.FromArrowSchema(p.schema)
	if err != nil {
		return nil, &Error{File: p.name, Msg: err.Error(), Err: err}
	}
	return s, nil
}

func (p *parquetSource) records(ctx context.Context, d *Decoder, yield func(arrow.RecordBatch, error) bool) error {
	rr, err := p.fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return &Error{File: p.name, Msg: "cannot read Parquet: " + err.Error(), Err: err}
	}
	defer rr.Release()
	var done int64
	for rr.Next() {
		rec := rr.RecordBatch()
		done += rec.NumRows()
		if d.size > 0 && p.rows > 0 {
			d.read.Store(int64(float64(d.size) * float64(done) / float64(p.rows)))
		}
		if rec.NumRows() == 0 {
			continue
		}
		if !yield(rec, nil) {
			return nil
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return &Error{File: p.name, Msg: fmt.Sprintf("cannot read Parquet after row %d: %v", done, err), Err: err}
	}
	if d.size > 0 {
		d.read.Store(d.size)
	}
	return nil
}

func (p *parquetSource) close() error { return p.pf.Close() }
