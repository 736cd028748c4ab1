package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var rewriteDocs = flag.Bool("rewrite", false, "rewrite the CLI synopses of DESIGN.md and README.md from the verb table")

// The synopses of DESIGN.md's CLI contract and README.md's command table
// are the verb table's: a verb or flag added to a declaration shows in
// both (go test ./cmd/lakelog -run TestDocsMatchVerbTable -rewrite).
func TestDocsMatchVerbTable(t *testing.T) {
	for _, d := range []struct {
		file, begin, end, want string
	}{
		{"../../DESIGN.md", "<!-- verbs: begin (generated from cmd/lakelog's verb table) -->\n```\n", "```\n<!-- verbs: end -->", designSynopsis()},
		{"../../README.md", "<!-- verbs: begin (generated from cmd/lakelog's verb table) -->\n", "<!-- verbs: end -->", readmeTable()},
	} {
		b, err := os.ReadFile(d.file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		i := strings.Index(text, d.begin)
		j := strings.Index(text, d.end)
		if i < 0 || j < i {
			t.Fatalf("%s: no generated block between %q and %q", d.file, d.begin, d.end)
		}
		got := text[i+len(d.begin) : j]
		if got == d.want {
			continue
		}
		if *rewriteDocs {
			if err := os.WriteFile(d.file, []byte(text[:i+len(d.begin)]+d.want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s's synopsis is not the verb table's (rerun with -rewrite):\ngot:\n%s\nwant:\n%s", d.file, got, d.want)
	}
}
