package expr

import (
	"github.com/lakelog/lakelog/actions"
)

// tableOf is the configuration of a table with the given schema,
// partition columns and column mapping mode ("none", "name" or "id"),
// under a protocol that supports column mapping when the mode asks for
// it.
func tableOf(schema *actions.StructType, partitions []string, mode string) *actions.TableConfig {
	text, err := actions.SchemaString(schema)
	if err != nil {
		panic(err)
	}
	md := &actions.Metadata{SchemaString: text, PartitionColumns: partitions, Configuration: map[string]string{}}
	p := &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	if mode != actions.ColumnMappingNone {
		md.Configuration[actions.PropColumnMappingMode] = mode
		p = &actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	}
	c, err := actions.NewTableConfig(p, md)
	if err != nil {
		panic(err)
	}
	return c
}
