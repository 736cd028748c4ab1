package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"golang.org/x/sync/errgroup"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// tailSize is how much of a file's end the first read fetches: the
// footer of a file of a few hundred columns fits.
const tailSize = 64 << 10

// footer is what a file's footer gives the conversion.
type footer struct {
	md     *metadata.FileMetaData
	schema *actions.StructType // every field nullable
	// columns maps a leaf's lower-cased path ("a.b") to its column index,
	// for leaves outside lists and maps.
	columns map[string]int
}

// readFooters reads every file's footer, cfg.concurrency at a time.
func readFooters(ctx context.Context, store objstore.Store, files []*file, cfg *config) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.concurrency)
	var done atomic.Int64
	schemas := &schemaCache{}
	for _, f := range files {
		g.Go(func() error {
			ft, err := readFooter(ctx, store, f.key, f.size, schemas)
			if err != nil {
				return err
			}
			f.footer, f.rows = ft, ft.md.NumRows
			if cfg.progress != nil {
				cfg.progress(int(done.Add(1)), len(files))
			}
			return nil
		})
	}
	return g.Wait()
}

func notParquet(key, why string, err error) error {
	if err == nil {
		err = ErrNotParquet
	} else {
		err = fmt.Errorf("%w: %w", ErrNotParquet, err)
	}
	return &FileError{Key: key, Msg: "not a Parquet file: " + why, Err: err}
}

// readFooter fetches and decodes one file's footer: one read of the
// tail, a second only when the footer is larger.
func readFooter(ctx context.Context, store objstore.Store, key string, size int64, schemas *schemaCache) (*footer, error) {
	if size < 12 {
		return nil, notParquet(key, fmt.Sprintf("%d bytes is too short", size), nil)
	}
	n := min(size, tailSize)
	tail, err := store.GetRange(ctx, key, size-n, n)
	if err != nil {
		return nil, &FileError{Key: key, Msg: "read footer: " + err.Error(), Err: err}
	}
	if int64(len(tail)) != n {
		return nil, &FileError{Key: key, Msg: fmt.Sprintf("read footer: got %d of %d bytes (did the file change?)", len(tail), n), Err: errors.New("short read")}
	}
	switch magic := tail[n-4:]; {
	case bytes.Equal(magic, []byte("PARE")):
		return nil, notParquet(key, "its footer is encrypted", nil)
	case !bytes.Equal(magic, []byte("PAR1")):
		return nil, notParquet(key, fmt.Sprintf("it does not end with PAR1 (ends with %q)", magic), nil)
	}
	flen := int64(binary.LittleEndian.Uint32(tail[n-8:]))
	if flen+8 > size-4 {
		return nil, notParquet(key, fmt.Sprintf("footer length %d beyond the file's %d bytes", flen, size), nil)
	}
	var buf []byte
	if flen+8 <= n {
		buf = tail[n-8-flen : n-8]
	} else {
		if buf, err = store.GetRange(ctx, key, size-8-flen, flen); err != nil {
			return nil, &FileError{Key: key, Msg: "read footer: " + err.Error(), Err: err}
		}
	}
	md, err := metadata.NewFileMetaData(buf, nil)
	if err != nil {
		return nil, notParquet(key, "the footer does not decode: "+err.Error(), err)
	}
	sc, err := schemas.deltaSchema(md)
	if err != nil {
		return nil, &FileError{Key: key, Msg: err.Error(), Err: err}
	}
	ft := &footer{md: md, schema: sc, columns: map[string]int{}}
	for i := 0; i < md.Schema.NumColumns(); i++ {
		col := md.Schema.Column(i)
		if col.MaxRepetitionLevel() == 0 {
			ft.columns[strings.ToLower(strings.Join(col.ColumnPath(), "."))] = i
		}
	}
	return ft, nil
}

// schemaCache converts each distinct Parquet schema once: the files of a
// folder mostly share one. The Delta schemas it returns are shared and
// never changed.
type schemaCache struct {
	mu      sync.Mutex
	entries []schemaEntry
}

type schemaEntry struct {
	parquet *schema.Schema
	delta   *actions.StructType
}

func (c *schemaCache) deltaSchema(md *metadata.FileMetaData) (*actions.StructType, error) {
	c.mu.Lock()
	for _, e := range c.entries {
		if e.parquet.Equals(md.Schema) {
			c.mu.Unlock()
			return e.delta, nil
		}
	}
	c.mu.Unlock()
	st, err := deltaSchemaOf(md)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) < 16 {
		c.entries = append(c.entries, schemaEntry{md.Schema, st})
	}
	c.mu.Unlock()
	return st, nil
}

// deltaSchemaOf is the Delta schema of a file's Parquet schema, as
// Spark's ParquetToSparkSchemaConverter reads it (the Parquet schema, not
// Arrow's schema in the key-value metadata), every field nullable:
// INT96 is a timestamp; TIMESTAMP(NANOS) has no Delta type (Spark refuses
// it too).
func deltaSchemaOf(md *metadata.FileMetaData) (*actions.StructType, error) {
	for i := 0; i < md.Schema.NumColumns(); i++ {
		col := md.Schema.Column(i)
		if ts, ok := col.LogicalType().(interface{ TimeUnit() schema.TimeUnitType }); ok && ts.TimeUnit() == schema.TimeUnitNanos {
			return nil, fmt.Errorf("column %s is TIMESTAMP(NANOS), which has no Delta type (Spark cannot read it either); write microseconds (pyarrow: coerce_timestamps='us')", col.Path())
		}
	}
	as, err := pqarrow.FromParquet(md.Schema, &pqarrow.ArrowReadProperties{}, nil)
	if err != nil {
		return nil, fmt.Errorf("read the Parquet schema: %w", err)
	}
	fields := make([]arrow.Field, len(as.Fields()))
	for i, f := range as.Fields() {
		f.Type = int96AsTimestamp(f.Type)
		fields[i] = f
	}
	st, err := actions.FromArrowSchema(arrow.NewSchema(fields, nil))
	if err != nil {
		return nil, err
	}
	return nullable(st).(*actions.StructType), nil
}

// int96AsTimestamp turns the nanosecond timestamps pqarrow gives INT96
// columns (the only nanosecond columns left) into a UTC timestamp.
func int96AsTimestamp(t arrow.DataType) arrow.DataType {
	switch x := t.(type) {
	case *arrow.TimestampType:
		if x.Unit == arrow.Nanosecond {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		}
	case *arrow.StructType:
		fs := x.Fields()
		for i := range fs {
			fs[i].Type = int96AsTimestamp(fs[i].Type)
		}
		return arrow.StructOf(fs...)
	case *arrow.ListType:
		f := x.ElemField()
		f.Type = int96AsTimestamp(f.Type)
		return arrow.ListOfField(f)
	case *arrow.MapType:
		k, v := x.KeyField(), x.ItemField()
		k.Type, v.Type = int96AsTimestamp(k.Type), int96AsTimestamp(v.Type)
		return arrow.MapOfWithMetadata(k.Type, k.Metadata, v.Type, v.Metadata)
	}
	return t
}

// nullable makes every field, element and value nullable, as Spark's
// asNullable does to each file's schema before merging.
func nullable(t actions.DataType) actions.DataType {
	switch x := t.(type) {
	case *actions.StructType:
		out := &actions.StructType{Fields: make([]*actions.StructField, len(x.Fields))}
		for i, f := range x.Fields {
			nf := *f
			nf.Type, nf.Nullable = nullable(f.Type), true
			out.Fields[i] = &nf
		}
		return out
	case *actions.ArrayType:
		return &actions.ArrayType{ElementType: nullable(x.ElementType), ContainsNull: true}
	case *actions.MapType:
		return &actions.MapType{KeyType: nullable(x.KeyType), ValueType: nullable(x.ValueType), ValueContainsNull: true}
	}
	return t
}
