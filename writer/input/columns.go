package input

import (
	"context"
	"slices"

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
	m := &merger{table: &actions.StructType{}, byName: map[string]*newColumn{}, namesOnly: true}
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
	names, err := Columns(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		names = table.Names()
	}
	wide := table
	if slices.ContainsFunc(names, func(n string) bool { return table.FieldFold(n) == nil }) {
		// Columns the table lacks: infer their types (another pass over
		// a JSONL file).
		if wide, err = MergeSchema(ctx, table, []string{path}, opts...); err != nil {
			return nil, err
		}
	}
	out := &actions.StructType{}
	for _, n := range names {
		f := wide.FieldFold(n)
		if f == nil { // cannot happen: MergeSchema adds every column
			return nil, &Error{File: path, Column: n, Msg: "no type for the column"}
		}
		c := *f
		c.Nullable = true
		out.Fields = append(out.Fields, &c)
	}
	return out, nil
}
