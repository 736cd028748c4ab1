package uniform

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/apache/iceberg-go"
	"github.com/lakelog/lakelog/actions"
)

// metaNestedIDs is the field metadata key under which IcebergCompatV2
// records the ids of array elements and map keys and values
// (PROTOCOL.md, "Writer Requirements for IcebergCompatV2").
const metaNestedIDs = "parquet.field.nested.ids"

// icebergSchema translates a column-mapped Delta schema into an Iceberg
// schema: the same logical names, field ids from delta.columnMapping.id
// (the ids the data files carry as Parquet field ids, so that Iceberg
// readers find the columns by id whatever their physical names), and the
// ids of array elements and map keys and values from
// parquet.field.nested.ids. Types map as Spark's converter maps them:
// byte, short and integer to int; timestamp to timestamptz and
// timestamp_ntz to timestamp.
func icebergSchema(s *actions.StructType, id int) (*iceberg.Schema, error) {
	fields, err := icebergFields(s, "")
	if err != nil {
		return nil, err
	}
	return iceberg.NewSchema(id, fields...), nil
}

func icebergFields(s *actions.StructType, prefix string) ([]iceberg.NestedField, error) {
	out := make([]iceberg.NestedField, 0, len(s.Fields))
	for _, f := range s.Fields {
		id, ok := f.FieldID()
		if !ok {
			return nil, fmt.Errorf("column %q has no %s (UniForm needs column mapping)", prefix+f.Name, actions.MetaColumnMappingID)
		}
		ids := nestedIDs(f)
		// Keys of nested ids start with the field's physical name in
		// Spark's tables and with its name in PROTOCOL.md's example.
		t, err := icebergType(f.Type, prefix+f.Name, []string{f.PhysicalName(actions.ColumnMappingName), f.Name}, ids)
		if err != nil {
			return nil, err
		}
		out = append(out, iceberg.NestedField{ID: int(id), Name: f.Name, Type: t, Required: !f.Nullable, Doc: comment(f)})
	}
	return out, nil
}

func comment(f *actions.StructField) string {
	c, _ := f.Metadata["comment"].(string)
	return c
}

// nestedIDs reads a field's parquet.field.nested.ids.
func nestedIDs(f *actions.StructField) map[string]int {
	m, ok := f.Metadata[metaNestedIDs].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, v := range m {
		if n, ok := jsonInt(v); ok {
			out[k] = int(n)
		}
	}
	return out
}

func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), x == math.Trunc(x)
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// icebergType translates one type; keys are the candidate paths of the
// type in its field's nested ids (physical name first).
func icebergType(t actions.DataType, col string, keys []string, ids map[string]int) (iceberg.Type, error) {
	nested := func(suffix string) ([]string, int, error) {
		next := make([]string, len(keys))
		for i, k := range keys {
			next[i] = k + "." + suffix
		}
		for _, k := range next {
			if id, ok := ids[k]; ok {
				return next, id, nil
			}
		}
		return nil, 0, fmt.Errorf("column %q: the %s of its %s has no id in %s (IcebergCompatV2 assigns them)", col, suffix, t, metaNestedIDs)
	}
	switch t := t.(type) {
	case *actions.DecimalType:
		return iceberg.DecimalTypeOf(t.Precision, t.Scale), nil
	case *actions.StructType:
		fs, err := icebergFields(t, col+".")
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fs}, nil
	case *actions.ArrayType:
		k, id, err := nested("element")
		if err != nil {
			return nil, err
		}
		et, err := icebergType(t.ElementType, col+".element", k, ids)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: et, ElementRequired: !t.ContainsNull}, nil
	case *actions.MapType:
		kk, kid, err := nested("key")
		if err != nil {
			return nil, err
		}
		vk, vid, err := nested("value")
		if err != nil {
			return nil, err
		}
		kt, err := icebergType(t.KeyType, col+".key", kk, ids)
		if err != nil {
			return nil, err
		}
		vt, err := icebergType(t.ValueType, col+".value", vk, ids)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: kid, KeyType: kt, ValueID: vid, ValueType: vt, ValueRequired: !t.ValueContainsNull}, nil
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger:
			return iceberg.PrimitiveTypes.Int32, nil
		case actions.TypeLong:
			return iceberg.PrimitiveTypes.Int64, nil
		case actions.TypeFloat:
			return iceberg.PrimitiveTypes.Float32, nil
		case actions.TypeDouble:
			return iceberg.PrimitiveTypes.Float64, nil
		case actions.TypeBoolean:
			return iceberg.PrimitiveTypes.Bool, nil
		case actions.TypeString:
			return iceberg.PrimitiveTypes.String, nil
		case actions.TypeBinary:
			return iceberg.PrimitiveTypes.Binary, nil
		case actions.TypeDate:
			return iceberg.PrimitiveTypes.Date, nil
		case actions.TypeTimestamp:
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case actions.TypeTimestampNTZ:
			return iceberg.PrimitiveTypes.Timestamp, nil
		}
	}
	return nil, fmt.Errorf("column %q has type %s, which IcebergCompatV2 does not allow", col, t)
}

// partitionSpec is the identity spec of the Delta partition columns, the
// partition field ids from 1000 in column order (Iceberg's), each named
// as its column.
func partitionSpec(s *actions.StructType, cols []string, specID int) (iceberg.PartitionSpec, error) {
	fields := make([]iceberg.PartitionField, 0, len(cols))
	for i, c := range cols {
		f := s.Field(c)
		if f == nil {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition column %q is not in the schema", c)
		}
		id, ok := f.FieldID()
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition column %q has no %s", c, actions.MetaColumnMappingID)
		}
		fields = append(fields, iceberg.PartitionField{SourceIDs: []int{int(id)}, FieldID: iceberg.PartitionDataIDStart + i, Name: f.Name, Transform: iceberg.IdentityTransform{}})
	}
	return iceberg.NewPartitionSpecID(specID, fields...), nil
}
