package reader

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
)

// columnMapping finds a table's columns in its data files (PROTOCOL.md
// "Column Mapping"). In mode "none" a column is the file column of its
// name (exactly, else ignoring case, as Spark reads). In mode "name" it
// is the file column of its physical name, exactly; in mode "id" the one
// whose Parquet field id is its delta.columnMapping.id. Nested struct
// fields (through arrays and maps too) resolve the same way. A column
// not found reads as nulls; logical names are never tried.
type columnMapping struct {
	table *actions.TableConfig
	mode  string // table.ColumnMappingMode()
}

// newColumnMapping checks that every field of the table's schema, nested
// ones too, carries what its mode resolves it by: a physical name in modes
// "name" and "id", and a column id in mode "id". A field without them
// would otherwise be read by its logical name, which the protocol
// forbids.
func newColumnMapping(table *actions.TableConfig) (columnMapping, error) {
	mode, schema := table.ColumnMappingMode(), table.Schema()
	m := columnMapping{table: table, mode: mode}
	if mode == actions.ColumnMappingNone {
		return m, nil
	}
	var check func(prefix string, t actions.DataType) error
	check = func(prefix string, t actions.DataType) error {
		switch t := t.(type) {
		case *actions.StructType:
			for _, f := range t.Fields {
				name := prefix + f.Name
				if p, _ := f.Metadata[actions.MetaColumnMappingPhysical].(string); p == "" {
					return fmt.Errorf("reader: column mapping mode %s: column %q has no %s", mode, name, actions.MetaColumnMappingPhysical)
				}
				if _, ok := f.FieldID(); !ok && mode == actions.ColumnMappingID {
					return fmt.Errorf("reader: column mapping mode %s: column %q has no %s", mode, name, actions.MetaColumnMappingID)
				}
				if err := check(name+".", f.Type); err != nil {
					return err
				}
			}
		case *actions.ArrayType:
			return check(prefix, t.ElementType)
		case *actions.MapType:
			if err := check(prefix, t.KeyType); err != nil {
				return err
			}
			return check(prefix, t.ValueType)
		}
		return nil
	}
	return m, check("", schema)
}

// on reports whether the table is column-mapped.
func (m columnMapping) on() bool { return m.mode != actions.ColumnMappingNone }

// partitionValue is the column's entry of an add's partitionValues, which
// are keyed by physical names under column mapping.
func (m columnMapping) partitionValue(pv map[string]*string, f *actions.StructField) (*string, bool) {
	if m.on() {
		v, ok := pv[m.table.PhysicalName(f)]
		return v, ok
	}
	if v, ok := pv[f.Name]; ok {
		return v, true
	}
	for k, v := range pv {
		if strings.EqualFold(k, f.Name) {
			return v, true
		}
	}
	return nil, false
}

// matches reports whether the file field ff is the table field f. A
// field without a physical name in a mapped table is not a table column
// (newColumnMapping checked those) but a file column (WithFileColumns:
// the change data feed's _change_type, which Spark and lakelog write
// without a field id): it is matched by its name.
func (m columnMapping) matches(ff *arrow.Field, f *actions.StructField) bool {
	if p, _ := f.Metadata[actions.MetaColumnMappingPhysical].(string); p == "" && m.on() {
		return ff.Name == f.Name
	}
	switch m.mode {
	case actions.ColumnMappingName:
		return ff.Name == m.table.PhysicalName(f)
	case actions.ColumnMappingID:
		id, ok := f.FieldID()
		fid, fok := parquetFieldID(ff)
		return ok && fok && id == fid
	}
	return ff.Name == f.Name
}

// parquetFieldID is the Parquet field id pqarrow records on a field, if
// the file has one for it.
func parquetFieldID(ff *arrow.Field) (int64, bool) {
	s, ok := ff.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

// fileField finds the table column f among a data file's top-level
// columns, or nil when the file does not have it. In mode "id" a file
// without field ids is refused (PROTOCOL.md allows refusing or nulls;
// nulls for every column would pass for data).
func (m columnMapping) fileField(man *pqarrow.SchemaManifest, f *actions.StructField) (*pqarrow.SchemaField, error) {
	if m.mode == actions.ColumnMappingID {
		has := false
		for i := range man.Fields {
			if _, ok := parquetFieldID(man.Fields[i].Field); ok {
				has = true
				break
			}
		}
		if !has && len(man.Fields) > 0 {
			return nil, fmt.Errorf("column mapping mode id, but the data file has no Parquet field ids")
		}
	}
	for i := range man.Fields {
		if m.matches(man.Fields[i].Field, f) {
			return &man.Fields[i], nil
		}
	}
	if !m.on() {
		for i := range man.Fields {
			if strings.EqualFold(man.Fields[i].Field.Name, f.Name) {
				return &man.Fields[i], nil
			}
		}
	}
	return nil, nil
}

// toLogical relabels a decoded nested column d (of file field sf) so that
// its struct fields, at any depth, carry the logical names of the table
// fields they resolve to, and drops the struct fields that resolve to
// none; arrowconv.Conform then matches the table's type by name and
// fills the fields the file lacks with nulls. Buffers are shared, not
// copied. The caller releases the result.
func (m columnMapping) toLogical(d arrow.ArrayData, sf *pqarrow.SchemaField, t actions.DataType) (arrow.ArrayData, error) {
	switch lt := t.(type) {
	case *actions.StructType:
		st, ok := d.DataType().(*arrow.StructType)
		if !ok || st.NumFields() != len(sf.Children) {
			return nil, fmt.Errorf("column is %s in the data file, want a struct", d.DataType())
		}
		var fields []arrow.Field
		var children []arrow.ArrayData
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
		for i := range sf.Children {
			var f *actions.StructField
			for _, cand := range lt.Fields {
				if m.matches(sf.Children[i].Field, cand) {
					f = cand
					break
				}
			}
			if f == nil {
				continue // dropped from the table, or not this table's
			}
			c, err := m.toLogical(d.Children()[i], &sf.Children[i], f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			children = append(children, c)
			fields = append(fields, arrow.Field{Name: f.Name, Type: c.DataType(), Nullable: st.Field(i).Nullable})
		}
		return array.NewData(arrow.StructOf(fields...), d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), nil
	case *actions.ArrayType:
		if len(sf.Children) != 1 || len(d.Children()) != 1 {
			return nil, fmt.Errorf("column is %s in the data file, want a list", d.DataType())
		}
		c, err := m.toLogical(d.Children()[0], &sf.Children[0], lt.ElementType)
		if err != nil {
			return nil, fmt.Errorf("element: %w", err)
		}
		defer c.Release()
		elem := arrow.Field{Name: "element", Type: c.DataType(), Nullable: true}
		var dt arrow.DataType
		switch d.DataType().ID() {
		case arrow.LIST:
			dt = arrow.ListOfField(elem)
		case arrow.LARGE_LIST:
			dt = arrow.LargeListOfField(elem)
		default:
			return nil, fmt.Errorf("column is %s in the data file, want a list", d.DataType())
		}
		return array.NewData(dt, d.Len(), d.Buffers(), []arrow.ArrayData{c}, d.NullN(), d.Offset()), nil
	case *actions.MapType:
		if d.DataType().ID() != arrow.MAP || len(sf.Children) != 1 || len(sf.Children[0].Children) != 2 {
			return nil, fmt.Errorf("column is %s in the data file, want a map", d.DataType())
		}
		entries := d.Children()[0]
		kv := &sf.Children[0]
		key, err := m.toLogical(entries.Children()[0], &kv.Children[0], lt.KeyType)
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		defer key.Release()
		val, err := m.toLogical(entries.Children()[1], &kv.Children[1], lt.ValueType)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		defer val.Release()
		mt := arrow.MapOfFields(arrow.Field{Name: "key", Type: key.DataType()}, arrow.Field{Name: "value", Type: val.DataType(), Nullable: true})
		ed := array.NewData(mt.Elem(), entries.Len(), entries.Buffers(), []arrow.ArrayData{key, val}, entries.NullN(), entries.Offset())
		defer ed.Release()
		return array.NewData(mt, d.Len(), d.Buffers(), []arrow.ArrayData{ed}, d.NullN(), d.Offset()), nil
	}
	d.Retain()
	return d, nil
}
