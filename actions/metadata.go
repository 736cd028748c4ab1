package actions

import "fmt"

// Schema parses the table schema in SchemaString.
func (m *Metadata) Schema() (*StructType, error) {
	if m == nil {
		return nil, fmt.Errorf("actions: no metaData")
	}
	if m.SchemaString == "" {
		return nil, fmt.Errorf("actions: metaData %s has no schemaString", m.ID)
	}
	return ParseSchema(m.SchemaString)
}
