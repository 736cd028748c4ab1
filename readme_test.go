package lakelog_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeSnippet: the README's Go lines are Example's, which the
// tests compile and run, so the README cannot show code that does not.
func TestReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Go in ten lines")
	_, block, ok2 := strings.Cut(after, "```go\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no Go block under \"Go in ten lines\"")
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(example), "// README begin\n")
	body, _, _ = strings.Cut(body, "\t// README end")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if want := strings.Join(lines, "\n") + "\n"; block != want {
		t.Errorf("README.md's Go lines differ from Example's:\n%s\nwant:\n%s", block, want)
	}
}
