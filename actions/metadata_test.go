package actions

import "testing"

func TestMetadataSchema(t *testing.T) {
	md := &Metadata{ID: "t", SchemaString: `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]}`}
	st, err := md.Schema()
	if err != nil || st.Field("a").Type != TypeInteger {
		t.Fatalf("Schema() = %v, %v", st, err)
	}
	if _, err := (&Metadata{ID: "t"}).Schema(); err == nil {
		t.Error("an empty schemaString parses")
	}
	var nilMD *Metadata
	if _, err := nilMD.Schema(); err == nil {
		t.Error("nil metadata has a schema")
	}
}
