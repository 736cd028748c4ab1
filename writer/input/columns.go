package input

import (
	"context"
	"io"

	"github.com/lakelog/lakelog/actions"
)

// Columns returns the names of the top-level columns the file at path
// holds, in order of first appearance: a CSV file's header, a Parquet
// file's schema, or every key of a JSONL file's objects (the whole file is
// read; values are checked for JSON syntax only). Names differing only in
// case are one column, spelled as first seen. A MERGE source uses it to
// decode exactly the columns the file has: a table column the file lacks
// must not read as null there.
func Columns(ctx context.Context, path string, opts ...Option) ([]string, error) {
	m := &merger{table: &actions.StructType{}, byName: map[string]*newColumn{}, allNames: true}
	if err := m.file(ctx, path, opts); err != nil {
		return nil, err
	}
	names := make([]string, len(m.cols))
	for i, c := range m.cols {
		names[i] = c.name
	}
	return names, nil
}

// SourceSchema is the schema a MERGE source file is decoded with: exactly
// the columns the file holds, in its order; a column the table has takes
// the table's type (so that keys and values line up), others the type
// MergeSchema infers. Every column is nullable: a source row's nulls
// matter only where they are written. A table column the file lacks is
// absent, not null, so that UPDATE SET * and INSERT * say so instead of
// writing nulls. A file that holds no columns at all (an empty JSONL
// file) has no rows either; it is decoded as the table's columns, so an
// empty source is an empty MERGE, not an error.
func SourceSchema(ctx context.Context, table *actions.StructType, path string, opts ...Option) (*actions.StructType, error) {
	d, schema, err := OpenSource(ctx, table, path, opts...)
	if err != nil {
		return nil, err
	}
	return schema, d.Close()
}

// OpenSource opens a MERGE source file, once: it finds the file's
// columns and their types (SourceSchema) in one pass over a JSONL file
// (a CSV file's header, a Parquet file's footer), then returns the
// Decoder of the file from its start with that schema. Close the Decoder
// when done.
func OpenSource(ctx context.Context, table *actions.StructType, path string, opts ...Option) (*Decoder, *actions.StructType, error) {
	f, size, cfg, err := openFile(path, opts)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Decoder, *actions.StructType, error) {
		f.Close()
		return nil, nil, err
	}
	first, err := newDecoder(f, path, size, table, cfg)
	if err != nil {
		return fail(err)
	}
	m := &merger{table: table, byName: map[string]*newColumn{}, allNames: true, typeNew: true}
	err = m.decoder(ctx, first)
	first.Close() // its Parquet reader; the file stays open
	if err != nil {
		return fail(err)
	}
	schema := &actions.StructType{}
	for _, c := range m.cols {
		var col actions.StructField
		switch f := table.FieldFold(c.name); {
		case f != nil:
			col = *f
		case c.typ != nil:
			col = actions.StructField{Name: c.name, Type: finalType(c.typ), Metadata: map[string]any{}}
		default: // only nulls: string, as MergeSchema infers
			col = actions.StructField{Name: c.name, Type: actions.TypeString, Metadata: map[string]any{}}
		}
		col.Nullable = true
		schema.Fields = append(schema.Fields, &col)
	}
	if len(schema.Fields) == 0 {
		for _, f := range table.Fields {
			col := *f
			col.Nullable = true
			schema.Fields = append(schema.Fields, &col)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(&Error{File: path, Msg: errMsg(err), Err: err})
	}
	d, err := newDecoder(f, path, size, schema, cfg)
	if err != nil {
		return fail(err)
	}
	d.closer = f
	return d, schema, nil
}
