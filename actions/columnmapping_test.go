package actions

import (
	"encoding/json"
	"testing"
)

func TestColumnMapping(t *testing.T) {
	for _, tc := range []struct {
		conf    map[string]string
		want    string
		invalid bool
	}{
		{nil, "none", false},
		{map[string]string{"delta.columnMapping.mode": "NAME"}, "name", false},
		{map[string]string{"delta.columnMapping.mode": "id"}, "id", false},
		{map[string]string{"delta.columnMapping.mode": ""}, "none", true},
		{map[string]string{"delta.columnMapping.mode": " name"}, "none", true},
		{map[string]string{"delta.columnMapping.mode": "Weird"}, "none", true},
	} {
		p := (&Metadata{Configuration: tc.conf}).Properties()
		if got := p.ColumnMappingMode; got != tc.want {
			t.Errorf("%v: mode %q, want %q", tc.conf, got, tc.want)
		}
		if invalid := p.InvalidProperty(PropColumnMappingMode) != nil; invalid != tc.invalid {
			t.Errorf("%v: invalid %v, want %v", tc.conf, invalid, tc.invalid)
		}
	}
	if (*Metadata)(nil).Properties().ColumnMappingMode != ColumnMappingNone {
		t.Error("nil metadata is not mode none")
	}
	st, err := ParseSchema(`{"type":"struct","fields":[
		{"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":12,"delta.columnMapping.physicalName":"col-1"}},
		{"name":"b","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1.5}},
		{"name":"c","type":"long","nullable":true,"metadata":{}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := st.Fields[0], st.Fields[1], st.Fields[2]
	if a.PhysicalName("name") != "col-1" || a.PhysicalName("id") != "col-1" || a.PhysicalName("none") != "a" {
		t.Errorf("physical names of a: %q %q %q", a.PhysicalName("name"), a.PhysicalName("id"), a.PhysicalName("none"))
	}
	if c.PhysicalName("name") != "c" {
		t.Errorf("a field without a physical name: %q", c.PhysicalName("name"))
	}
	if id, ok := a.FieldID(); !ok || id != 12 {
		t.Errorf("FieldID(a) = %d, %v", id, ok)
	}
	if _, ok := b.FieldID(); ok {
		t.Error("a fractional id is an id")
	}
	if _, ok := c.FieldID(); ok {
		t.Error("a field without an id has one")
	}
	built := &StructField{Name: "x", Metadata: map[string]any{MetaColumnMappingID: 7}}
	if id, ok := built.FieldID(); !ok || id != 7 {
		t.Errorf("FieldID of a Go int = %d, %v", id, ok)
	}
	built.Metadata[MetaColumnMappingID] = json.Number("9")
	if id, ok := built.FieldID(); !ok || id != 9 {
		t.Errorf("FieldID of a json.Number = %d, %v", id, ok)
	}
}

func TestFieldLookups(t *testing.T) {
	st, err := ParseSchema(`{"type":"struct","fields":[
		{"name":"Id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},
		{"name":"name","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if f := st.FieldFold("ID"); f == nil || f.Name != "Id" {
		t.Errorf("FieldFold(ID) = %v", f)
	}
	if st.Field("ID") != nil || st.FieldFold("nope") != nil {
		t.Error("lookups find what is not there")
	}
	if f := st.FieldByPhysicalName("col-2", ColumnMappingName); f == nil || f.Name != "name" {
		t.Errorf("FieldByPhysicalName(col-2) = %v", f)
	}
	if f := st.FieldByPhysicalName("name", ColumnMappingNone); f == nil || f.Name != "name" {
		t.Errorf("FieldByPhysicalName(name, none) = %v", f)
	}
	if st.FieldByPhysicalName("name", ColumnMappingName) != nil {
		t.Error("a logical name matches in name mode")
	}
}
