package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// issueRef is what a message must not say: the project's issue numbers
// mean nothing to a user.
var issueRef = regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`)

// TestNoMessageNamesAnIssue: no string literal of the module's own code
// (not its tests) names an issue number: errors, help and output speak to
// users, who do not know the project's issues.
func TestNoMessageNamesAnIssue(t *testing.T) {
	root := repoRoot(t)
	for _, bad := range literalsMatching(t, root, issueRef) {
		t.Error(bad)
	}
}

// TestNoMessageNamesAnIssueCatches: the check finds a planted literal and
// passes comments and clean literals.
func TestNoMessageNamesAnIssueCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\n// issue 24 may be named in a comment.\nvar a = \"fine\"\nvar b = `comes with table features, issue 24`\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := literalsMatching(t, dir, issueRef)
	if len(got) != 1 || !strings.Contains(got[0], "p.go:5") {
		t.Fatalf("found %q, want the literal on line 5 only", got)
	}
}

// literalsMatching lists, as "file:line: literal", the string literals of
// the non-test Go files under root (testdata and hidden folders
// skipped) that re matches.
func literalsMatching(t *testing.T, root string, re *regexp.Regexp) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				s = lit.Value
			}
			if re.MatchString(s) {
				rel, _ := filepath.Rel(root, path)
				out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
