package input_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/writer/input"
)

// Columns lists exactly the top-level columns a file holds, whatever the
// values (nested ones included), in order of first appearance, and names
// the line of bad JSON.
func TestColumns(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, data string
		want       []string
		err        string
	}{
		{"a.jsonl", "{\"id\": 1, \"s\": {\"x\": [1, 2]}}\n\n{\"ID\": 2, \"tags\": [\"a\"], \"n\": null}\n", []string{"id", "s", "tags", "n"}, ""},
		{"b.csv", "id, name ,amount\n1,a,2.5\n", []string{"id", "name", "amount"}, ""},
		{"c.jsonl", "{\"id\": 1}\n{\"id\": 2,}\n", nil, "c.jsonl:2"},
		{"d.jsonl", "", []string{}, ""},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := input.Columns(t.Context(), p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one naming %s", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// SourceSchema decodes a MERGE source with exactly its columns: table
// columns with the table's types, new ones inferred, all nullable; a
// file without columns as the table's.
func TestSourceSchema(t *testing.T) {
	dir := t.TempDir()
	table, err := actions.ParseDDL("id long not null, amount decimal(10,2), name string")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, data, want string
	}{
		{"a.jsonl", `{"op": "x", "ID": 1, "amount": "2.50"}` + "\n", "op string, id long, amount decimal(10,2)"},
		{"b.csv", "name,id\nann,1\n", "name string, id long"},
		{"c.csv", "id\n", "id long"},
		{"d.jsonl", "", "id long, amount decimal(10,2), name string"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := input.SourceSchema(t.Context(), table, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := actions.ParseDDL(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Fields) != len(want.Fields) {
			t.Fatalf("%s: %d columns, want %d", c.name, len(got.Fields), len(want.Fields))
		}
		for i, f := range got.Fields {
			if f.Name != want.Fields[i].Name || f.Type.String() != want.Fields[i].Type.String() || !f.Nullable {
				t.Errorf("%s: column %d is %s %s (nullable %v), want %s %s nullable", c.name, i, f.Name, f.Type, f.Nullable, want.Fields[i].Name, want.Fields[i].Type)
			}
		}
	}
}

// OpenSource reads a MERGE source file through one open: its schema, then
// its rows, even once the file's name is gone.
func TestOpenSourceOpensOnce(t *testing.T) {
	dir := t.TempDir()
	table, err := actions.ParseDDL("id long not null, name string")
	if err != nil {
		t.Fatal(err)
	}
	rec := int64Record(t, "id", 1, 2)
	defer rec.Release()
	for name, data := range map[string]string{
		"a.jsonl":   "{\"id\": 1, \"op\": \"u\"}\n{\"id\": 2, \"op\": null, \"n\": 2.5}\n",
		"b.csv":     "op,id\nu,1\nd,2\n",
		"c.parquet": "",
	} {
		p := filepath.Join(dir, name)
		if data == "" {
			writeParquet(t, dir, name, rec)
		} else if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		d, schema, err := input.OpenSource(t.Context(), table, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		var rows int64
		for rec, err := range d.Records(t.Context()) {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if rec.NumCols() != int64(len(schema.Fields)) {
				t.Fatalf("%s: %d columns, schema %v", name, rec.NumCols(), schema.Names())
			}
			rows += rec.NumRows()
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if rows != 2 || schema.Field("id") == nil || name != "c.parquet" && (schema.Field("op") == nil || schema.Field("op").Type != actions.TypeString) {
			t.Fatalf("%s: %d rows, schema %v", name, rows, schema)
		}
	}
}
