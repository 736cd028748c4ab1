package input

import (
	"context"

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
