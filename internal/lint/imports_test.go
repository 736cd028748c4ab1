// Package lint checks rules of the repository that the compiler does not:
// the import rules of DESIGN.md.
package lint

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lakelog/lakelog"

// importRule is one row of DESIGN.md's table of packages: the package
// (a folder, covering the packages under it) and what it may import.
type importRule struct {
	pkg      string   // "deltalog", "objstore", "internal/arrowpool"
	imports  []string // the rows it may import, by their package
	anything bool     // "everything"
	public   bool     // "the public API": any package but internal ones
}

// TestImportRules checks every package of the module against DESIGN.md's
// table "Packages and their import rules", read from DESIGN.md itself so
// that the table and the check cannot drift: a package imports only
// packages of its own row and of the rows its row lists; a package
// without a row fails too, so a new package is given its rules. Only the
// packages' own files count (not their tests). Also checked: conflict
// does no I/O (imports no os, net or io/fs).
func TestImportRules(t *testing.T) {
	root := repoRoot(t)
	rules := readRules(t, filepath.Join(root, "DESIGN.md"))
	for pkg, imports := range listImports(t, root) {
		for _, err := range checkImports(rules, pkg, imports) {
			t.Error(err)
		}
	}
}

// TestImportRulesCatch: the check reports a package importing one its
// row does not list, an internal package imported by the public API, a
// package without a row, and I/O in conflict, and lets legal imports be.
func TestImportRulesCatch(t *testing.T) {
	rules := parseRules(t, `
| package | what it is | imports |
| --- | --- | --- |
| `+"`actions/`"+` | x | (no lakelog package) |
| `+"`objstore/`"+` | x | (no lakelog package) |
| `+"`internal/pool/`"+` | x | (no lakelog package) |
| `+"`conflict/`"+` | x | actions |
| `+"`reader/`"+` | x | actions, objstore, internal/pool |
| `+"`writer/`"+` | x | actions |
| `+"`examples/`"+` | x | the public API |
| `+"`cmd/lakelog/`"+` | x | everything |
`)
	for _, c := range []struct {
		pkg     string
		imports []string
		bad     int
	}{
		{"reader", []string{"actions", "objstore/s3", "internal/pool", "fmt"}, 0},
		{"reader", []string{"writer"}, 1},
		{"writer/input", []string{"writer", "actions"}, 0},
		{"writer/input", []string{"reader"}, 1},
		{"objstore/s3", []string{"objstore", "objstore/internal/cloudio"}, 0},
		{"actions", []string{"objstore"}, 1},
		{"examples/quick", []string{"reader", "writer"}, 0},
		{"examples/quick", []string{"internal/pool"}, 1},
		{"cmd/lakelog", []string{"internal/pool", "writer"}, 0},
		{"newpkg", nil, 1},
		{"conflict", []string{"actions", "os"}, 1},
	} {
		var imports []string
		for _, i := range c.imports {
			if !strings.Contains(i, ".") && !slices.Contains([]string{"fmt", "os"}, i) {
				i = module + "/" + i
			}
			imports = append(imports, i)
		}
		if errs := checkImports(rules, c.pkg, imports); len(errs) != c.bad {
			t.Errorf("%s importing %v: %d errors %v, want %d", c.pkg, c.imports, len(errs), errs, c.bad)
		}
	}
}

// forbiddenIO are the standard packages a package that does no I/O must
// not import.
var forbiddenIO = []string{"os", "net", "net/http", "io/fs", "io/ioutil", "os/exec"}

// checkImports returns the errors of package pkg (module-relative) that
// imports imports (full import paths).
func checkImports(rules []importRule, pkg string, imports []string) []error {
	r := ruleOf(rules, pkg)
	if r == nil {
		return []error{fmt.Errorf("package %s has no row in DESIGN.md's table of packages and their import rules: add one", pkg)}
	}
	var errs []error
	for _, imp := range imports {
		if pkg == "conflict" && slices.Contains(forbiddenIO, imp) {
			errs = append(errs, fmt.Errorf("package conflict imports %s, but conflict does no I/O (DESIGN.md)", imp))
		}
		rel, ok := strings.CutPrefix(imp, module+"/")
		if !ok {
			continue // not a lakelog package
		}
		to := ruleOf(rules, rel)
		switch {
		case r.anything, to == r:
		case r.public && !isInternal(rel):
		case to != nil && slices.Contains(r.imports, to.pkg):
		default:
			errs = append(errs, fmt.Errorf("package %s imports %s, which DESIGN.md's table does not allow (%s may import: %s)", pkg, rel, r.pkg, r.describe()))
		}
	}
	return errs
}

func isInternal(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/")
}

func (r *importRule) describe() string {
	switch {
	case r.anything:
		return "everything"
	case r.public:
		return "the public API"
	case len(r.imports) == 0:
		return "no lakelog package"
	}
	return strings.Join(r.imports, ", ")
}

// ruleOf is the row covering pkg: its own, else the nearest folder above
// it that has one.
func ruleOf(rules []importRule, pkg string) *importRule {
	var best *importRule
	for i := range rules {
		r := &rules[i]
		if (pkg == r.pkg || strings.HasPrefix(pkg, r.pkg+"/")) && (best == nil || len(r.pkg) > len(best.pkg)) {
			best = r
		}
	}
	return best
}

func readRules(t *testing.T, path string) []importRule {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "## Packages and their import rules")
	if i < 0 {
		t.Fatalf("%s has no section \"Packages and their import rules\"", path)
	}
	return parseRules(t, text[i:])
}

// parseRules reads the first Markdown table of text: | `pkg/` | what |
// imports |, imports a comma-separated list of packages, "(no lakelog
// package)", "everything" or "the public API".
func parseRules(t *testing.T, text string) []importRule {
	t.Helper()
	var rules []importRule
	sc := bufio.NewScanner(strings.NewReader(text))
	inTable := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			t.Fatalf("DESIGN.md: a row of the import table has %d cells: %s", len(cells), line)
		}
		name := strings.TrimSpace(cells[0])
		if !strings.HasPrefix(name, "`") {
			continue // the header and its rule
		}
		r := importRule{pkg: strings.TrimSuffix(strings.Trim(name, "`"), "/")}
		if r.pkg == "." {
			r.pkg = "" // the module's root package
		}
		switch imports := strings.TrimSpace(cells[len(cells)-1]); imports {
		case "everything":
			r.anything = true
		case "the public API":
			r.public = true
		case "(no lakelog package)":
		default:
			for _, p := range strings.Split(imports, ",") {
				r.imports = append(r.imports, strings.TrimSuffix(strings.Trim(strings.TrimSpace(p), "`"), "/"))
			}
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		t.Fatal("DESIGN.md: no import table found")
	}
	for _, r := range rules {
		for _, imp := range r.imports {
			if ruleOf(rules, imp) == nil {
				t.Fatalf("DESIGN.md: row %s lists %q, which has no row", r.pkg, imp)
			}
		}
	}
	return rules
}

// listImports lists every package of the module with its imports (not
// its tests'), by go list.
func listImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		pkgs[rel] = f[1:]
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: %s", len(pkgs), out)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
