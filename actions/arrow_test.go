package actions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestArrowTypes(t *testing.T) {
	for _, tc := range []struct {
		t    DataType
		want string
	}{
		{TypeString, "utf8"},
		{TypeLong, "int64"},
		{TypeInteger, "int32"},
		{TypeShort, "int16"},
		{TypeByte, "int8"},
		{TypeFloat, "float32"},
		{TypeDouble, "float64"},
		{TypeBoolean, "bool"},
		{TypeBinary, "binary"},
		{TypeDate, "date32"},
		{TypeTimestamp, "timestamp[us, tz=UTC]"},
		{TypeTimestampNTZ, "timestamp[us]"},
		{&DecimalType{10, 2}, "decimal(10, 2)"},
		{&ArrayType{ElementType: TypeString, ContainsNull: false}, "list<element: utf8>"},
		{&ArrayType{ElementType: TypeString, ContainsNull: true}, "list<element: utf8, nullable>"},
		{&MapType{KeyType: TypeString, ValueType: TypeLong, ValueContainsNull: true}, "map<utf8, int64, items_nullable>"},
		{&MapType{KeyType: TypeString, ValueType: TypeLong}, "map<utf8, int64, items_non_nullable>"},
		{&StructType{Fields: []*StructField{{Name: "a", Type: TypeInteger}, {Name: "b", Type: TypeString, Nullable: true}}}, "struct<a: int32, b: utf8 nullable>"},
	} {
		at, err := ArrowType(tc.t)
		if err != nil {
			t.Errorf("%s: %v", tc.t, err)
			continue
		}
		if at.String() != tc.want {
			t.Errorf("%s: Arrow %s, want %s", tc.t, at, tc.want)
		}
		back, err := FromArrowType(at)
		if err != nil || !reflect.DeepEqual(back, tc.t) {
			t.Errorf("%s: back from Arrow as %v, %v", tc.t, back, err)
		}
	}
	if _, err := ArrowType(TypeVariant); err == nil || !strings.HasPrefix(err.Error(), "actions: ") {
		t.Errorf("variant: %v", err)
	}
}

func TestFromArrowTypeWidens(t *testing.T) {
	for _, tc := range []struct {
		at   arrow.DataType
		want DataType
	}{
		{arrow.BinaryTypes.LargeString, TypeString},
		{arrow.BinaryTypes.StringView, TypeString},
		{arrow.BinaryTypes.LargeBinary, TypeBinary},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, TypeBinary},
		{arrow.PrimitiveTypes.Uint8, TypeShort},
		{arrow.PrimitiveTypes.Uint16, TypeInteger},
		{arrow.PrimitiveTypes.Uint32, TypeLong},
		{arrow.PrimitiveTypes.Uint64, &DecimalType{20, 0}},
		{arrow.FixedWidthTypes.Float16, TypeFloat},
		{arrow.FixedWidthTypes.Date64, TypeDate},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "America/New_York"}, TypeTimestamp},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, TypeTimestampNTZ},
		{&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, TypeTimestamp},
		{&arrow.Decimal256Type{Precision: 38, Scale: 4}, &DecimalType{38, 4}},
		{&arrow.Decimal64Type{Precision: 18, Scale: 0}, &DecimalType{18, 0}},
		{arrow.LargeListOfField(arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), &ArrayType{ElementType: TypeInteger, ContainsNull: true}},
		{arrow.FixedSizeListOfNonNullable(3, arrow.PrimitiveTypes.Float64), &ArrayType{ElementType: TypeDouble}},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, TypeString},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), &MapType{KeyType: TypeString, ValueType: TypeLong, ValueContainsNull: true}},
	} {
		got, err := FromArrowType(tc.at)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, %v; want %s", tc.at, got, err, tc.want)
		}
	}
	for _, at := range []arrow.DataType{
		arrow.Null, arrow.FixedWidthTypes.Time64us, &arrow.Decimal256Type{Precision: 76, Scale: 0},
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.FixedWidthTypes.MonthInterval}),
	} {
		if _, err := FromArrowType(at); err == nil {
			t.Errorf("%s has a Delta type", at)
		}
	}
	_, err := FromArrowType(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.ListOf(arrow.Null)}))
	if err == nil || !strings.Contains(err.Error(), `field "x.element"`) {
		t.Errorf("error does not name the nested field: %v", err)
	}
}

func TestToArrowSchemaColumnMapping(t *testing.T) {
	st, err := ParseSchema(`{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},
		{"name":"s","type":{"type":"struct","fields":[
			{"name":"x","type":"date","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-c"}}]},
		 "nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-b"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	logical, err := ToArrowSchema(st, false, ColumnMappingID)
	if err != nil {
		t.Fatal(err)
	}
	if got := logical.String(); !strings.Contains(got, "id: type=int64") || !strings.Contains(got, "s: type=struct<x: date32 nullable>") || logical.Field(0).HasMetadata() {
		t.Errorf("logical schema:\n%s", got)
	}
	for _, mode := range []string{ColumnMappingID, ColumnMappingName} {
		phys, err := ToArrowSchema(st, true, mode)
		if err != nil {
			t.Fatal(err)
		}
		f0, f1 := phys.Field(0), phys.Field(1)
		inner := f1.Type.(*arrow.StructType).Field(0)
		if f0.Name != "col-a" || f1.Name != "col-b" || inner.Name != "col-c" {
			t.Errorf("%s: physical names %s %s %s", mode, f0.Name, f1.Name, inner.Name)
		}
		id, hasID := f0.Metadata.GetValue(ParquetFieldIDKey)
		innerID, _ := inner.Metadata.GetValue(ParquetFieldIDKey)
		switch {
		case mode == ColumnMappingID && (!hasID || id != "1" || innerID != "3"):
			t.Errorf("id mode: field ids %q %q", id, innerID)
		case mode == ColumnMappingName && (!hasID || id != "1" || innerID != "3"):
			t.Errorf("name mode: field ids %q %q (Spark writes them in both modes)", id, innerID)
		}
	}
	back, err := FromArrowSchema(logical)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, withoutMetadata(st)) {
		t.Errorf("FromArrowSchema: %s, want %s", FormatDDL(back), FormatDDL(st))
	}
	noIDs, _ := ParseDDL("a int")
	if _, err := ToArrowSchema(noIDs, true, ColumnMappingID); err == nil {
		t.Error("id mode without ids succeeded")
	}
}

// Every golden schema (variant aside) converts to Arrow and back.
func TestGoldenSchemasToArrow(t *testing.T) {
	for _, s := range goldenSchemas(t) {
		st, err := ParseSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		as, err := ToArrowSchema(st, false, ColumnMappingNone)
		if err != nil {
			t.Errorf("%v\n%s", err, s)
			continue
		}
		back, err := FromArrowSchema(as)
		if err != nil {
			t.Errorf("%v\n%s", err, as)
			continue
		}
		if !reflect.DeepEqual(back, withoutMetadata(st)) {
			t.Errorf("Arrow round trip:\n%s\n%s", FormatDDL(st), FormatDDL(back))
		}
	}
}

// withoutMetadata returns a copy of the type with no field metadata.
func withoutMetadata[T DataType](t T) T {
	var out DataType
	switch x := any(t).(type) {
	case *StructType:
		st := &StructType{Fields: make([]*StructField, len(x.Fields))}
		for i, f := range x.Fields {
			st.Fields[i] = &StructField{Name: f.Name, Type: withoutMetadata(f.Type), Nullable: f.Nullable}
		}
		out = st
	case *ArrayType:
		out = &ArrayType{ElementType: withoutMetadata(x.ElementType), ContainsNull: x.ContainsNull}
	case *MapType:
		out = &MapType{KeyType: withoutMetadata(x.KeyType), ValueType: withoutMetadata(x.ValueType), ValueContainsNull: x.ValueContainsNull}
	default:
		return t
	}
	return out.(T)
}
