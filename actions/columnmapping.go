package actions

import (
	"encoding/json"
	"math"
)

// Column mapping modes (PROTOCOL.md "Column Mapping"), the values of the
// table property delta.columnMapping.mode.
const (
	ColumnMappingNone = "none"
	ColumnMappingID   = "id"
	ColumnMappingName = "name"
)

// Column mapping keys of table properties and field metadata.
const (
	PropColumnMappingMode        = "delta.columnMapping.mode"
	PropColumnMappingMaxColumnID = "delta.columnMapping.maxColumnId"
	MetaColumnMappingID          = "delta.columnMapping.id"
	MetaColumnMappingPhysical    = "delta.columnMapping.physicalName"
)

// PhysicalName returns the name of the field's column in data files under
// the given column mapping mode: delta.columnMapping.physicalName from the
// field's metadata in modes "id" and "name", else the field's name.
func (f *StructField) PhysicalName(mode string) string {
	if mode == ColumnMappingNone || mode == "" {
		return f.Name
	}
	if p, ok := f.Metadata[MetaColumnMappingPhysical].(string); ok && p != "" {
		return p
	}
	return f.Name
}

// FieldID returns the field's column mapping id
// (delta.columnMapping.id), if its metadata has an integral one.
func (f *StructField) FieldID() (int64, bool) {
	return metaInt(f.Metadata[MetaColumnMappingID])
}

// metaInt reads an integral metadata value: json.Number as decoded, or a
// Go integer or whole float put there by code.
func metaInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

// FieldByPhysicalName returns the top-level field whose physical name
// under mode is name (as partitionValues and stats are keyed), or nil.
func (s *StructType) FieldByPhysicalName(name, mode string) *StructField {
	for _, f := range s.Fields {
		if f.PhysicalName(mode) == name {
			return f
		}
	}
	return nil
}
