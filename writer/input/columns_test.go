package input_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
