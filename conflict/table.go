package conflict

import (
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// partitionOf renders a file's partition values as "a=1/b=x" in the
// order of the table's partition columns, with logical column names; ""
// when the table is not partitioned or the values are not known.
// Partition values are keyed as the table's configuration says
// (physical names under column mapping).
func partitionOf(table *actions.TableConfig, values map[string]*string) string {
	if table == nil {
		return ""
	}
	cols := table.PartitionColumns()
	if len(cols) == 0 || len(values) == 0 {
		return ""
	}
	byLogical := make(map[string]*string, len(cols))
	for _, c := range cols {
		key := c
		if f := table.Schema().FieldFold(c); f != nil {
			key = table.PhysicalName(f)
		}
		v, ok := values[key]
		if !ok {
			return ""
		}
		byLogical[c] = v
	}
	p, err := actions.PartitionPath(cols, nil, byLogical)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, "/")
}
