package conflict

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Table is what the checker needs of the table as the transaction read it:
// the schema and partition columns its read predicates are bound to, and
// the column mapping mode, which says how partition values and stats name
// the columns. A winner that changes any of them aborts the transaction
// (MetadataChanged), so one Table serves every winner of a commit.
type Table struct {
	Schema            *actions.StructType
	PartitionColumns  []string
	ColumnMappingMode string
}

// TableOf describes the table whose metadata is md: its schema, partition
// columns and column mapping mode.
func TableOf(md *actions.Metadata) (Table, error) {
	if md == nil {
		return Table{}, fmt.Errorf("conflict: table: no metadata")
	}
	schema, err := md.Schema()
	if err != nil {
		return Table{}, fmt.Errorf("conflict: table: %w", err)
	}
	return Table{
		Schema:            schema,
		PartitionColumns:  md.PartitionColumns,
		ColumnMappingMode: md.Properties().ColumnMappingMode,
	}, nil
}

// partition renders a file's partition values as "a=1/b=x" in the order
// of the partition columns, with logical column names; "" when the table
// is not partitioned or the values are not known.
func (t *Table) partition(values map[string]*string) string {
	if len(t.PartitionColumns) == 0 || len(values) == 0 {
		return ""
	}
	byLogical := make(map[string]*string, len(t.PartitionColumns))
	for _, c := range t.PartitionColumns {
		key := c
		if f := t.field(c); f != nil {
			key = f.PhysicalName(t.ColumnMappingMode)
		}
		v, ok := values[key]
		if !ok {
			return ""
		}
		byLogical[c] = v
	}
	p, err := actions.PartitionPath(t.PartitionColumns, nil, byLogical)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, "/")
}

// field finds a top-level column by name, exactly or else ignoring case
// (Spark resolves names case-insensitively).
func (t *Table) field(name string) *actions.StructField {
	if t.Schema == nil {
		return nil
	}
	return t.Schema.FieldFold(name)
}
