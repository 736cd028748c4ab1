package actions

import "strings"

// DataType is a Delta column type: a PrimitiveType, *DecimalType,
// *StructType, *ArrayType or *MapType.
type DataType interface {
	// String is the type in Delta's DDL spelling: "long", "decimal(10,2)",
	// "array<string>", "struct<a:int,b:string>".
	String() string
	isDataType()
}

// PrimitiveType is a Delta primitive type, named as in schemaString.
type PrimitiveType string

// The primitive types of PROTOCOL.md.
const (
	TypeString       PrimitiveType = "string"
	TypeLong         PrimitiveType = "long"
	TypeInteger      PrimitiveType = "integer"
	TypeShort        PrimitiveType = "short"
	TypeByte         PrimitiveType = "byte"
	TypeFloat        PrimitiveType = "float"
	TypeDouble       PrimitiveType = "double"
	TypeBoolean      PrimitiveType = "boolean"
	TypeBinary       PrimitiveType = "binary"
	TypeDate         PrimitiveType = "date"
	TypeTimestamp    PrimitiveType = "timestamp"
	TypeTimestampNTZ PrimitiveType = "timestamp_ntz"
	TypeVariant      PrimitiveType = "variant"
)

func (t PrimitiveType) String() string { return string(t) }
func (PrimitiveType) isDataType()      {}

// DecimalType is decimal(Precision, Scale), Precision at most 38.
type DecimalType struct {
	Precision int
	Scale     int
}

func (*DecimalType) isDataType() {}

// ArrayType is array<ElementType>.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

func (*ArrayType) isDataType() {}

// MapType is map<KeyType,ValueType>.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

func (*MapType) isDataType() {}

// StructType is an ordered list of named fields; a table schema is one.
type StructType struct {
	Fields []*StructField
}

func (*StructType) isDataType() {}

// StructField is one named field. Metadata holds the field's metadata
// object as decoded JSON (column mapping ids and physical names, comments,
// generated-column expressions, ...), kept for round trips.
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata map[string]any
}

// Field returns the field named name (exact match), or nil.
func (s *StructType) Field(name string) *StructField {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FieldFold returns the field whose name equals name ignoring case, or
// nil. Delta column names are unique regardless of case, as Spark
// resolves them.
func (s *StructType) FieldFold(name string) *StructField {
	if i := s.IndexFold(name); i >= 0 {
		return s.Fields[i]
	}
	return nil
}

// IndexFold is the index of the field FieldFold returns: the field named
// name exactly, else ignoring case; -1 when there is none.
func (s *StructType) IndexFold(name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// Names returns the fields' names in order.
func (s *StructType) Names() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

func (t *DecimalType) String() string {
	return "decimal(" + itoa(int64(t.Precision)) + "," + itoa(int64(t.Scale)) + ")"
}

func (t *ArrayType) String() string { return "array<" + t.ElementType.String() + ">" }

func (t *MapType) String() string {
	return "map<" + t.KeyType.String() + "," + t.ValueType.String() + ">"
}

func (t *StructType) String() string {
	s := "struct<"
	for i, f := range t.Fields {
		if i > 0 {
			s += ","
		}
		s += f.Name + ":" + f.Type.String()
	}
	return s + ">"
}

// NullableType is a copy of t with every struct field at any depth
// nullable: the type of a column added to a table (by merge-schema, schema
// evolution, overwrite-schema), whose rows written before it existed,
// and input that omits its fields, hold nulls, as Spark adds them.
func NullableType(t DataType) DataType {
	switch t := t.(type) {
	case *StructType:
		out := &StructType{Fields: make([]*StructField, len(t.Fields))}
		for i, f := range t.Fields {
			out.Fields[i] = &StructField{Name: f.Name, Type: NullableType(f.Type), Nullable: true}
		}
		return out
	case *ArrayType:
		return &ArrayType{ElementType: NullableType(t.ElementType), ContainsNull: t.ContainsNull}
	case *MapType:
		return &MapType{KeyType: t.KeyType, ValueType: NullableType(t.ValueType), ValueContainsNull: t.ValueContainsNull}
	}
	return t
}
