package actions

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseDDL(t *testing.T) {
	st, err := ParseDDL("id long not null, name string, amount decimal(10,2), ts timestamp, tags array<string>, m map<string,int>, s struct<a:int,b:string>")
	if err != nil {
		t.Fatal(err)
	}
	want := &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong},
		{Name: "name", Type: TypeString, Nullable: true},
		{Name: "amount", Type: &DecimalType{10, 2}, Nullable: true},
		{Name: "ts", Type: TypeTimestamp, Nullable: true},
		{Name: "tags", Type: &ArrayType{ElementType: TypeString, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &MapType{KeyType: TypeString, ValueType: TypeInteger, ValueContainsNull: true}, Nullable: true},
		{Name: "s", Type: &StructType{Fields: []*StructField{
			{Name: "a", Type: TypeInteger, Nullable: true},
			{Name: "b", Type: TypeString, Nullable: true},
		}}, Nullable: true},
	}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got  %s\nwant %s", FormatDDL(st), FormatDDL(want))
	}
}

func TestParseDDLSynonymsAndCase(t *testing.T) {
	for in, want := range map[string]DataType{
		"BIGINT": TypeLong, "Int": TypeInteger, "INTEGER": TypeInteger, "smallint": TypeShort,
		"TINYINT": TypeByte, "bool": TypeBoolean, "Boolean": TypeBoolean, "real": TypeFloat,
		"FLOAT": TypeFloat, "Double": TypeDouble, "timestamp_ntz": TypeTimestampNTZ,
		"TIMESTAMP_LTZ": TypeTimestamp, "varchar(20)": TypeString, "CHAR(3)": TypeString,
		"binary": TypeBinary, "DATE": TypeDate, "variant": TypeVariant,
		"DECIMAL": &DecimalType{10, 0}, "dec(5)": &DecimalType{5, 0}, "NUMERIC( 38 , 38 )": &DecimalType{38, 38},
		"ARRAY<ARRAY<INT>>":            &ArrayType{ElementType: &ArrayType{ElementType: TypeInteger, ContainsNull: true}, ContainsNull: true},
		"Map<String, Struct<>>":        &MapType{KeyType: TypeString, ValueType: &StructType{Fields: []*StructField{}}, ValueContainsNull: true},
		"struct<x int, `y z`: string>": &StructType{Fields: []*StructField{{Name: "x", Type: TypeInteger, Nullable: true}, {Name: "y z", Type: TypeString, Nullable: true}}},
	} {
		st, err := ParseDDL("c " + in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := st.Fields[0].Type; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %s want %s", in, got, want)
		}
	}
}

func TestParseDDLNamesAndOptions(t *testing.T) {
	st, err := ParseDDL("`a``b` INT COMMENT 'it''s \\'x\\'\\n' NOT NULL, `select` string not null comment \"q\", s struct<n: long NOT NULL COMMENT 'inner'>")
	if err != nil {
		t.Fatal(err)
	}
	f := st.Fields[0]
	if f.Name != "a`b" || f.Nullable || f.Metadata["comment"] != "it's 'x'\n" {
		t.Errorf("field 0 = %+v", f)
	}
	f = st.Fields[1]
	if f.Name != "select" || f.Nullable || f.Metadata["comment"] != "q" {
		t.Errorf("field 1 = %+v", f)
	}
	inner := st.Fields[2].Type.(*StructType).Fields[0]
	if inner.Nullable || inner.Metadata["comment"] != "inner" {
		t.Errorf("nested field = %+v", inner)
	}
	got := FormatDDL(st)
	want := "`a``b` integer not null comment 'it\\'s \\'x\\'\\n', select string not null comment 'q', s struct<n:long not null comment 'inner'>"
	if got != want {
		t.Errorf("FormatDDL:\n got %s\nwant %s", got, want)
	}
	again, err := ParseDDL(got)
	if err != nil || !reflect.DeepEqual(again, st) {
		t.Errorf("reparse: %v", err)
	}
}

func TestParseDDLErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		column int
		msg    string
	}{
		{"id long not null, name lnog", 24, `unknown type "lnog"`},
		{"", 1, "empty schema"},
		{"   ", 4, "empty schema"},
		{"a int,", 7, "expected a column name, found end of input"},
		{"a int b", 7, `expected ",", found "b"`},
		{"a", 2, "expected a type, found end of input"},
		{"a array<int", 12, `expected ">", found end of input`},
		{"a map<int>", 10, `expected ",", found ">"`},
		{"a struct<x int y>", 16, `expected "," or ">", found "y"`},
		{"a decimal(39,1)", 3, "decimal precision 39"},
		{"a decimal(5,6)", 3, "decimal scale 6"},
		{"a decimal(x)", 11, `expected a number, found "x"`},
		{"a int, A string", 8, `duplicate column "A"`},
		{"s struct<x int, X int>", 17, `duplicate column "X"`},
		{"a int not nul", 11, `expected NULL after NOT`},
		{"a int comment x", 15, "expected a quoted comment"},
		{"a int comment 'x", 15, "unterminated string"},
		{"`a int", 1, "unterminated backquoted name"},
		{"`` int", 1, "empty column name"},
		{"a int; drop", 6, `unexpected character ';'`},
		{"é int, b ïnt", 10, `unknown type "ïnt"`},
		{"a " + strings.Repeat("array<", 200) + "int" + strings.Repeat(">", 200), 603, "nest deeper"},
	} {
		_, err := ParseDDL(tc.in)
		var de *DDLError
		if !errors.As(err, &de) {
			t.Errorf("%q: err = %v, want a *DDLError", tc.in, err)
			continue
		}
		if de.Column != tc.column || !strings.Contains(de.Msg, tc.msg) {
			t.Errorf("%q: got %q, want column %d and %q", tc.in, err, tc.column, tc.msg)
		}
	}
	_, err := ParseDDL("id long not null, name lnog")
	if got := err.Error(); got != `actions: DDL at column 24: unknown type "lnog"` {
		t.Errorf("message = %s", got)
	}
}

func TestFormatDDLOfParsedSchemas(t *testing.T) {
	// Every golden schema prints as DDL that parses back to the same types
	// and names (metadata other than comments has no DDL form).
	for _, s := range goldenSchemas(t) {
		st, err := ParseSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		ddl := FormatDDL(st)
		back, err := ParseDDL(ddl)
		if err != nil {
			t.Errorf("%v\n%s", err, ddl)
			continue
		}
		if FormatDDL(back) != ddl {
			t.Errorf("DDL changed:\n%s\n%s", ddl, FormatDDL(back))
		}
	}
}

func FuzzParseDDL(f *testing.F) {
	for _, s := range []string{
		"id long not null, name string, amount decimal(10,2), ts timestamp, tags array<string>, m map<string,int>, s struct<a:int,b:string>",
		"`a``b` INT COMMENT 'it''s' NOT NULL, c numeric(5)",
		"x struct<y: array<map<string, struct<z: timestamp_ntz not null comment \"\\t\">>>>",
		"a varchar(3), b bigint, c tinyint, d smallint, e bool, f real, g binary, h date, v variant",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseDDL(s)
		if err != nil {
			var de *DDLError
			if !errors.As(err, &de) || de.Column < 1 {
				t.Fatalf("error %v is not a *DDLError with a column", err)
			}
			return
		}
		ddl := FormatDDL(st)
		again, err := ParseDDL(ddl)
		if err != nil {
			t.Fatalf("FormatDDL output does not parse: %v\n%s", err, ddl)
		}
		if !reflect.DeepEqual(st, again) {
			t.Fatalf("round trip changed the schema:\n%s\n%s", s, ddl)
		}
		if _, err := SchemaString(st); err != nil {
			t.Fatalf("parsed DDL has no schemaString: %v", err)
		}
	})
}

func TestParseDDLRejectsInvalidUTF8(t *testing.T) {
	_, err := ParseDDL("ab int comment '\xcf'")
	var de *DDLError
	if !errors.As(err, &de) || de.Column != 17 || de.Msg != "invalid UTF-8" {
		t.Fatalf("err = %v", err)
	}
}

func TestParseDDLGenerated(t *testing.T) {
	st, err := ParseDDL("ts timestamp, d date GENERATED ALWAYS AS ( CAST(ts AS DATE) ) not null comment 'day', s string generated always as (concat(')', \"(\", `a)b`))")
	if err != nil {
		t.Fatal(err)
	}
	d, s := st.Fields[1], st.Fields[2]
	if d.Metadata[MetaGenerationExpression] != "CAST(ts AS DATE)" || d.Nullable || d.Metadata["comment"] != "day" {
		t.Errorf("d: %+v", d)
	}
	if s.Metadata[MetaGenerationExpression] != "concat(')', \"(\", `a)b`)" {
		t.Errorf("s: %v", s.Metadata)
	}
	if got := FormatDDL(st); got != "ts timestamp, d date not null generated always as (CAST(ts AS DATE)) comment 'day', s string generated always as (concat(')', \"(\", `a)b`))" {
		t.Errorf("FormatDDL: %s", got)
	}
	back, err := ParseDDL(FormatDDL(st))
	if err != nil || FormatDDL(back) != FormatDDL(st) {
		t.Errorf("round trip: %v %s", err, FormatDDL(back))
	}
	for _, bad := range []string{
		"d date generated always as CAST(ts AS DATE)",
		"d date generated as (1)",
		"d date generated always as (cast(ts as date)",
		"d date generated always as ()",
		"s struct<d: date generated always as (1)>",
		"d date generated always as (1) generated always as (2)",
	} {
		if _, err := ParseDDL(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
