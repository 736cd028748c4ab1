package actions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestGoldenSchemasRoundTrip(t *testing.T) {
	schemas := goldenSchemas(t)
	if len(schemas) < 50 {
		t.Fatalf("only %d schemaStrings in the golden commits", len(schemas))
	}
	for _, s := range schemas {
		st, err := ParseSchema(s)
		if err != nil {
			t.Errorf("%v\n%s", err, s)
			continue
		}
		out, err := SchemaString(st)
		if err != nil {
			t.Errorf("%v\n%s", err, s)
			continue
		}
		again, err := ParseSchema(out)
		if err != nil {
			t.Errorf("reparse: %v\n%s", err, out)
			continue
		}
		if !reflect.DeepEqual(st, again) {
			t.Errorf("round trip changed the schema:\n%s\n%s", s, out)
		}
		// Semantic equality with the original JSON: same document up to
		// key order.
		var a, b any
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("printed schema differs from the log's:\n%s\n%s", s, out)
		}
	}
}

func TestSchemaStringPrintsWhatSparkPrints(t *testing.T) {
	// Written by Spark 3.5 for
	// CREATE TABLE t (id BIGINT NOT NULL, d DECIMAL(10,2), a ARRAY<INT>, m MAP<STRING,STRUCT<x:TIMESTAMP_NTZ>>)
	// with column mapping (metadata keys and values as Spark writes them).
	const spark = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-5f422f40-de70-45b2-88ab-1d5c90e94db1"}},{"name":"d","type":"decimal(10,2)","nullable":true,"metadata":{}},{"name":"a","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"x","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"valueContainsNull":false},"nullable":true,"metadata":{"comment":"a <b> & c"}}]}`
	st, err := ParseSchema(spark)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SchemaString(st)
	if err != nil {
		t.Fatal(err)
	}
	if got != spark {
		t.Fatalf("got\n%s\nwant\n%s", got, spark)
	}
	id := st.Fields[0]
	if n, ok := id.Metadata["delta.columnMapping.id"].(json.Number); !ok || n != "1" {
		t.Errorf("column mapping id = %#v, want json.Number 1", id.Metadata["delta.columnMapping.id"])
	}
	m := st.Fields[3].Type.(*MapType)
	if m.ValueContainsNull || m.ValueType.(*StructType).Fields[0].Type != TypeTimestampNTZ {
		t.Errorf("map = %s", m)
	}
	if st.Fields[1].Metadata != nil {
		t.Errorf("empty metadata decodes as %#v, want nil", st.Fields[1].Metadata)
	}
}

func TestParseSchemaLenientForms(t *testing.T) {
	st, err := ParseSchema(`{"type":"struct","fields":[
		{"name":"d","type":"decimal( 12 , 3 )"},
		{"name":"e","type":"decimal","nullable":false},
		{"name":"v","type":"variant","nullable":true,"metadata":{}},
		{"name":"a","type":{"type":"array","elementType":"string"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &StructType{Fields: []*StructField{
		{Name: "d", Type: &DecimalType{12, 3}, Nullable: true},
		{Name: "e", Type: &DecimalType{10, 0}},
		{Name: "v", Type: TypeVariant, Nullable: true},
		{Name: "a", Type: &ArrayType{ElementType: TypeString, ContainsNull: true}, Nullable: true},
	}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got %s", st)
	}
}

func TestParseSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"struct","fields":[{"name":"a","type":{"type":"struct","fields":[{"name":"b","type":"lnog"}]}}]}`, `field "a.b": unknown type "lnog"`},
		{`{"type":"struct","fields":[{"name":"t","type":{"type":"array","elementType":"uuid"}}]}`, `field "t.element": unknown type "uuid"`},
		{`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":"void"}}]}`, `field "m.value": unknown type "void"`},
		{`{"type":"struct","fields":[{"name":"d","type":"decimal(39,2)"}]}`, `field "d": decimal precision 39`},
		{`{"type":"struct","fields":[{"name":"d","type":"decimal(5,6)"}]}`, `field "d": decimal scale 6`},
		{`{"type":"struct","fields":[{"name":"d","type":"decimal(5,-1)"}]}`, `unknown type "decimal(5,-1)"`},
		{`{"type":"struct","fields":[{"type":"long"}]}`, `struct field 0 has no name`},
		{`{"type":"struct","fields":[{"name":"x"}]}`, `field "x": no type`},
		{`{"type":"struct","fields":[{"name":"x","type":"long","nullable":"yes"}]}`, `nullable is a string`},
		{`{"type":"struct","fields":[{"name":"x","type":"long","metadata":[]}]}`, `metadata is an array`},
		{`{"type":"struct"}`, `struct fields is null or absent`},
		{`"long"`, `top-level type is long`},
		{`{"type":"struct","fields":[]} x`, `data after`},
		{`{"type":"udt","class":"x"}`, `unknown type "udt"`},
		{``, `schema: EOF`},
	} {
		_, err := ParseSchema(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "actions: schema: ") {
			t.Errorf("ParseSchema(%s) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestStructTypeJSONMethods(t *testing.T) {
	type doc struct {
		Schema *StructType `json:"schema"`
	}
	in := `{"schema":{"type":"struct","fields":[{"name":"a","type":"date","nullable":true,"metadata":{}}]}}`
	var d doc
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	if d.Schema.Field("a").Type != TypeDate {
		t.Fatalf("schema = %s", d.Schema)
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("got %s", out)
	}
	if _, err := SchemaString(&StructType{Fields: []*StructField{{Name: "x", Type: PrimitiveType("uuid")}}}); err == nil {
		t.Error("an unknown primitive type marshals")
	}
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range goldenSchemas(f) {
		f.Add(s)
	}
	f.Add(`{"type":"struct","fields":[{"name":"a","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"decimal(3, 1)","containsNull":false},"valueContainsNull":true},"nullable":true,"metadata":{"x":[1,2.5e10,{"y":null}]}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseSchema(s)
		if err != nil {
			return
		}
		out, err := SchemaString(st)
		if err != nil {
			t.Fatalf("parsed but does not print: %v", err)
		}
		again, err := ParseSchema(out)
		if err != nil {
			t.Fatalf("printed schema does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(st, again) {
			t.Fatalf("round trip changed the schema:\n%s\n%s", s, out)
		}
		out2, err := SchemaString(again)
		if err != nil || out2 != out {
			t.Fatalf("printing is not stable:\n%s\n%s", out, out2)
		}
	})
}

func TestIndexFold(t *testing.T) {
	s := &StructType{Fields: []*StructField{{Name: "Id"}, {Name: "id"}, {Name: "Name"}}}
	for name, want := range map[string]int{"id": 1, "Id": 0, "ID": 0, "name": 2, "NAME": 2, "x": -1, "": -1} {
		if got := s.IndexFold(name); got != want {
			t.Errorf("IndexFold(%q) = %d, want %d", name, got, want)
		}
		if f := s.FieldFold(name); (f == nil) != (want < 0) || f != nil && f != s.Fields[want] {
			t.Errorf("FieldFold(%q) = %v", name, f)
		}
	}
}
