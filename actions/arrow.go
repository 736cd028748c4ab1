package actions

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// ParquetFieldIDKey is the Arrow field metadata key that the Parquet
// writer (pqarrow) turns into a Parquet field id, and the reader fills
// from one.
const ParquetFieldIDKey = "PARQUET:field_id"

// ArrowType returns the Arrow type that holds values of the Delta type t:
//
//	string        String          long      Int64
//	integer       Int32           short     Int16
//	byte          Int8            float     Float32
//	double        Float64         boolean   Boolean
//	binary        Binary          date      Date32
//	timestamp     Timestamp(us, "UTC")
//	timestamp_ntz Timestamp(us, no zone)
//	decimal(p,s)  Decimal128(p, s)
//	array         List, element named "element", nullable as containsNull
//	map           Map, value nullable as valueContainsNull
//	struct        Struct, children nullable as the fields
//
// variant has no Arrow form here and is an error.
func ArrowType(t DataType) (arrow.DataType, error) {
	at, err := arrowType(t, false, "", "")
	if err != nil {
		return nil, fmt.Errorf("actions: arrow type: %w", err)
	}
	return at, nil
}

// ToArrowSchema returns the Arrow schema of s. With physical set and a
// column mapping mode other than "none", fields (nested ones too) are
// named by their physical names and carry their column mapping ids as
// PARQUET:field_id metadata (in both modes, as Spark writes them), so
// that Parquet files written from the schema match the table; in mode
// "id" a field without an id is an error. Without physical, the logical
// names are used and no metadata is set.
func ToArrowSchema(s *StructType, physical bool, mode string) (*arrow.Schema, error) {
	if s == nil {
		return nil, errors.New("actions: arrow schema: nil schema")
	}
	fields, err := arrowFields(s, physical, mode, "")
	if err != nil {
		return nil, fmt.Errorf("actions: arrow schema: %w", err)
	}
	return arrow.NewSchema(fields, nil), nil
}

func arrowFields(s *StructType, physical bool, mode, path string) ([]arrow.Field, error) {
	out := make([]arrow.Field, 0, len(s.Fields))
	for i, f := range s.Fields {
		if f == nil {
			return nil, fieldErr(path, fmt.Errorf("struct field %d is nil", i))
		}
		fpath := joinPath(path, f.Name)
		at, err := arrowType(f.Type, physical, mode, fpath)
		if err != nil {
			return nil, err
		}
		af := arrow.Field{Name: f.Name, Type: at, Nullable: f.Nullable}
		if physical && mode != ColumnMappingNone && mode != "" {
			af.Name = f.PhysicalName(mode)
			id, ok := f.FieldID()
			switch {
			case ok:
				af.Metadata = arrow.NewMetadata([]string{ParquetFieldIDKey}, []string{strconv.FormatInt(id, 10)})
			case mode == ColumnMappingID:
				return nil, fieldErr(fpath, errors.New("no column mapping id"))
			}
		}
		out = append(out, af)
	}
	return out, nil
}

func arrowType(t DataType, physical bool, mode, path string) (arrow.DataType, error) {
	switch x := t.(type) {
	case PrimitiveType:
		switch x {
		case TypeString:
			return arrow.BinaryTypes.String, nil
		case TypeLong:
			return arrow.PrimitiveTypes.Int64, nil
		case TypeInteger:
			return arrow.PrimitiveTypes.Int32, nil
		case TypeShort:
			return arrow.PrimitiveTypes.Int16, nil
		case TypeByte:
			return arrow.PrimitiveTypes.Int8, nil
		case TypeFloat:
			return arrow.PrimitiveTypes.Float32, nil
		case TypeDouble:
			return arrow.PrimitiveTypes.Float64, nil
		case TypeBoolean:
			return arrow.FixedWidthTypes.Boolean, nil
		case TypeBinary:
			return arrow.BinaryTypes.Binary, nil
		case TypeDate:
			return arrow.FixedWidthTypes.Date32, nil
		case TypeTimestamp:
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
		case TypeTimestampNTZ:
			return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
		}
		return nil, fieldErr(path, fmt.Errorf("type %s has no Arrow form", x))
	case *DecimalType:
		if x == nil {
			return nil, fieldErr(path, errors.New("nil type"))
		}
		if err := x.validate(); err != nil {
			return nil, fieldErr(path, err)
		}
		return &arrow.Decimal128Type{Precision: int32(x.Precision), Scale: int32(x.Scale)}, nil
	case *ArrayType:
		if x == nil {
			return nil, fieldErr(path, errors.New("nil type"))
		}
		et, err := arrowType(x.ElementType, physical, mode, joinPath(path, "element"))
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: x.ContainsNull}), nil
	case *MapType:
		if x == nil {
			return nil, fieldErr(path, errors.New("nil type"))
		}
		kt, err := arrowType(x.KeyType, physical, mode, joinPath(path, "key"))
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(x.ValueType, physical, mode, joinPath(path, "value"))
		if err != nil {
			return nil, err
		}
		return arrow.MapOfFields(arrow.Field{Name: "key", Type: kt}, arrow.Field{Name: "value", Type: vt, Nullable: x.ValueContainsNull}), nil
	case *StructType:
		if x == nil {
			return nil, fieldErr(path, errors.New("nil type"))
		}
		fields, err := arrowFields(x, physical, mode, path)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	case nil:
		return nil, fieldErr(path, errors.New("nil type"))
	}
	return nil, fieldErr(path, fmt.Errorf("unknown type %T", t))
}

// FromArrowType returns the Delta type for values of the Arrow type t, for
// data brought to a table (Parquet, CSV or JSON read through Arrow):
// String, LargeString and StringView are string; Binary, LargeBinary,
// BinaryView and FixedSizeBinary are binary; signed integers, floats and
// booleans map to the same width (Float16 to float); Uint8, Uint16 and
// Uint32 widen to short, integer and long, and Uint64 to decimal(20,0), as
// Spark reads them from Parquet; Date32 and Date64 are date; a Timestamp
// of any unit is timestamp when it has a time zone and timestamp_ntz when
// not; Decimal32 to Decimal256 of precision at most 38 are decimal; List,
// LargeList, FixedSizeList and list views are array; Map is map; Struct is
// struct. A dictionary is its value type, an extension its storage type.
func FromArrowType(t arrow.DataType) (DataType, error) {
	dt, err := fromArrowType(t, "")
	if err != nil {
		return nil, fmt.Errorf("actions: from arrow type: %w", err)
	}
	return dt, nil
}

// FromArrowSchema returns the Delta schema of an Arrow schema: fields in
// order, nullable as Arrow says, types as FromArrowType maps them. Arrow
// metadata is not carried over.
func FromArrowSchema(s *arrow.Schema) (*StructType, error) {
	if s == nil {
		return nil, errors.New("actions: from arrow schema: nil schema")
	}
	st, err := fromArrowFields(s.Fields(), "")
	if err != nil {
		return nil, fmt.Errorf("actions: from arrow schema: %w", err)
	}
	return st, nil
}

func fromArrowFields(fs []arrow.Field, path string) (*StructType, error) {
	st := &StructType{Fields: make([]*StructField, 0, len(fs))}
	for _, f := range fs {
		fpath := joinPath(path, f.Name)
		t, err := fromArrowType(f.Type, fpath)
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, &StructField{Name: f.Name, Type: t, Nullable: f.Nullable})
	}
	return st, nil
}

func fromArrowType(t arrow.DataType, path string) (DataType, error) {
	if t == nil {
		return nil, fieldErr(path, errors.New("nil Arrow type"))
	}
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return TypeString, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return TypeBinary, nil
	case arrow.BOOL:
		return TypeBoolean, nil
	case arrow.INT8:
		return TypeByte, nil
	case arrow.INT16, arrow.UINT8:
		return TypeShort, nil
	case arrow.INT32, arrow.UINT16:
		return TypeInteger, nil
	case arrow.INT64, arrow.UINT32:
		return TypeLong, nil
	case arrow.UINT64:
		return &DecimalType{Precision: 20, Scale: 0}, nil
	case arrow.FLOAT16, arrow.FLOAT32:
		return TypeFloat, nil
	case arrow.FLOAT64:
		return TypeDouble, nil
	case arrow.DATE32, arrow.DATE64:
		return TypeDate, nil
	case arrow.TIMESTAMP:
		if ts, ok := t.(*arrow.TimestampType); ok && ts.TimeZone != "" {
			return TypeTimestamp, nil
		}
		return TypeTimestampNTZ, nil
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		d, ok := t.(arrow.DecimalType)
		if !ok {
			break
		}
		dt := &DecimalType{Precision: int(d.GetPrecision()), Scale: int(d.GetScale())}
		if err := dt.validate(); err != nil {
			return nil, fieldErr(path, fmt.Errorf("arrow %s: %w", t, err))
		}
		return dt, nil
	case arrow.MAP:
		m := t.(*arrow.MapType)
		kt, err := fromArrowType(m.KeyType(), joinPath(path, "key"))
		if err != nil {
			return nil, err
		}
		vt, err := fromArrowType(m.ItemType(), joinPath(path, "value"))
		if err != nil {
			return nil, err
		}
		return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: m.ItemField().Nullable}, nil
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		l, ok := t.(arrow.ListLikeType)
		if !ok {
			break
		}
		ef := l.ElemField()
		et, err := fromArrowType(ef.Type, joinPath(path, "element"))
		if err != nil {
			return nil, err
		}
		return &ArrayType{ElementType: et, ContainsNull: ef.Nullable}, nil
	case arrow.STRUCT:
		return fromArrowFields(t.(*arrow.StructType).Fields(), path)
	case arrow.DICTIONARY:
		return fromArrowType(t.(*arrow.DictionaryType).ValueType, path)
	case arrow.EXTENSION:
		if e, ok := t.(arrow.ExtensionType); ok {
			return fromArrowType(e.StorageType(), path)
		}
	}
	return nil, fieldErr(path, fmt.Errorf("arrow type %s has no Delta type", t))
}
