package actions

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"
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

// NewPhysicalName is the physical name Spark gives a column it adds to a
// column-mapped table: "col-" and a random UUID.
func NewPhysicalName() string { return "col-" + uuid.NewString() }

// CopyStruct returns a deep copy of s: its fields, their types and their
// metadata maps, so that the copy can be changed without touching s
// (snapshots share their schema).
func CopyStruct(s *StructType) *StructType {
	if s == nil {
		return nil
	}
	out := &StructType{Fields: make([]*StructField, len(s.Fields))}
	for i, f := range s.Fields {
		out.Fields[i] = CopyField(f)
	}
	return out
}

// CopyField returns a deep copy of f.
func CopyField(f *StructField) *StructField {
	if f == nil {
		return nil
	}
	nf := *f
	nf.Type = CopyType(f.Type)
	if f.Metadata != nil {
		nf.Metadata = copyMetadata(f.Metadata)
	}
	return &nf
}

// CopyType returns a deep copy of t.
func CopyType(t DataType) DataType {
	switch x := t.(type) {
	case *StructType:
		return CopyStruct(x)
	case *ArrayType:
		if x == nil {
			return x
		}
		return &ArrayType{ElementType: CopyType(x.ElementType), ContainsNull: x.ContainsNull}
	case *MapType:
		if x == nil {
			return x
		}
		return &MapType{KeyType: CopyType(x.KeyType), ValueType: CopyType(x.ValueType), ValueContainsNull: x.ValueContainsNull}
	case *DecimalType:
		if x == nil {
			return x
		}
		d := *x
		return &d
	}
	return t
}

func copyMetadata(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyJSONValue(v)
	}
	return out
}

func copyJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyMetadata(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSONValue(e)
		}
		return out
	}
	return v
}

// PhysicalSchema is the one mapping of a table's logical schema to the
// schema of its data files (PROTOCOL.md "Column Mapping"): a copy of s in
// which every field, nested ones too, is named by its physical name under
// mode, metadata (the column mapping ids) kept. Under mode "none" it is s
// itself. Writers name data file columns, stats keys and partitionValues
// keys by it; readers find columns by it.
func PhysicalSchema(s *StructType, mode string) *StructType {
	if s == nil || mode == ColumnMappingNone || mode == "" {
		return s
	}
	out := CopyStruct(s)
	renamePhysical(out, mode)
	return out
}

func renamePhysical(t DataType, mode string) {
	switch x := t.(type) {
	case *StructType:
		for _, f := range x.Fields {
			f.Name = f.PhysicalName(mode)
			renamePhysical(f.Type, mode)
		}
	case *ArrayType:
		renamePhysical(x.ElementType, mode)
	case *MapType:
		renamePhysical(x.KeyType, mode)
		renamePhysical(x.ValueType, mode)
	}
}

// walkFields calls fn for every field of t, nested ones too (inside
// structs, array elements and map keys and values), parents before their
// children, in schema order: the order in which Spark numbers columns.
func walkFields(t DataType, fn func(f *StructField)) {
	switch x := t.(type) {
	case *StructType:
		for _, f := range x.Fields {
			fn(f)
			walkFields(f.Type, fn)
		}
	case *ArrayType:
		walkFields(x.ElementType, fn)
	case *MapType:
		walkFields(x.KeyType, fn)
		walkFields(x.ValueType, fn)
	}
}

// PhysicalNamesByID maps the column mapping id of every field of s that
// has one (nested fields included) to its physical name.
func PhysicalNamesByID(s *StructType) map[int64]string {
	out := map[int64]string{}
	walkFields(s, func(f *StructField) {
		if id, ok := f.FieldID(); ok {
			out[id] = f.PhysicalName(ColumnMappingName)
		}
	})
	return out
}

// MaxColumnID is the largest column mapping id in s (nested fields
// included), or 0 when none has one.
func MaxColumnID(s *StructType) int64 {
	var m int64
	walkFields(s, func(f *StructField) {
		if id, ok := f.FieldID(); ok && id > m {
			m = id
		}
	})
	return m
}

// AssignColumnMapping gives every field of s (nested ones too) that lacks
// them a column mapping id and a physical name, as Spark does: ids count
// up from maxID in schema order, parents before children; a physical name
// is the field's own name when keepNames is set (enabling column mapping
// on an existing table, whose data files use the names) and NewPhysicalName
// otherwise (a new table, a new column). It returns a copy of s and the
// new largest id, the table's delta.columnMapping.maxColumnId.
func AssignColumnMapping(s *StructType, maxID int64, keepNames bool) (*StructType, int64) {
	out := CopyStruct(s)
	maxID = max(maxID, MaxColumnID(out))
	walkFields(out, func(f *StructField) {
		if f.Metadata == nil {
			f.Metadata = map[string]any{}
		}
		if _, ok := f.FieldID(); !ok {
			maxID++
			f.Metadata[MetaColumnMappingID] = maxID
		}
		if p, ok := f.Metadata[MetaColumnMappingPhysical].(string); !ok || p == "" {
			if keepNames {
				f.Metadata[MetaColumnMappingPhysical] = f.Name
			} else {
				f.Metadata[MetaColumnMappingPhysical] = NewPhysicalName()
			}
		}
	})
	return out, maxID
}

// CheckColumnMapping checks a column-mapped schema as Spark checks one
// before a commit: every field, nested ones too, has an id and a physical
// name; ids are unique in the table; physical names are unique among the
// fields of each struct; and no id exceeds maxID
// (delta.columnMapping.maxColumnId). Errors name the column path.
func CheckColumnMapping(s *StructType, maxID int64) error {
	ids := map[int64]string{}
	var check func(t DataType, path string) error
	check = func(t DataType, path string) error {
		switch x := t.(type) {
		case *StructType:
			names := map[string]string{}
			for _, f := range x.Fields {
				fpath := joinPath(path, f.Name)
				id, ok := f.FieldID()
				if !ok {
					return fmt.Errorf("actions: column mapping: column %q has no %s", fpath, MetaColumnMappingID)
				}
				p, _ := f.Metadata[MetaColumnMappingPhysical].(string)
				if p == "" {
					return fmt.Errorf("actions: column mapping: column %q has no %s", fpath, MetaColumnMappingPhysical)
				}
				if other, dup := ids[id]; dup {
					return fmt.Errorf("actions: column mapping: columns %q and %q have the same id %d", other, fpath, id)
				}
				ids[id] = fpath
				if id > maxID {
					return fmt.Errorf("actions: column mapping: column %q has id %d, above %s %d", fpath, id, PropColumnMappingMaxColumnID, maxID)
				}
				if other, dup := names[p]; dup {
					return fmt.Errorf("actions: column mapping: columns %q and %q have the same physical name %q", other, fpath, p)
				}
				names[p] = fpath
				if err := check(f.Type, fpath); err != nil {
					return err
				}
			}
		case *ArrayType:
			return check(x.ElementType, joinPath(path, "element"))
		case *MapType:
			if err := check(x.KeyType, joinPath(path, "key")); err != nil {
				return err
			}
			return check(x.ValueType, joinPath(path, "value"))
		}
		return nil
	}
	return check(s, "")
}
