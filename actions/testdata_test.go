package actions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// goldenDir is the shared corpus of Delta tables written by other engines.
const goldenDir = "../../shared/testdata/delta"

// goldenCommits returns every JSON commit file of every golden table, or
// skips the test when the corpus is absent.
func goldenCommits(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "delta", "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("no golden tables under %s", goldenDir)
	}
	return files
}

// goldenSchemas returns the schemaString of every metaData action in the
// golden commits.
func goldenSchemas(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, f := range goldenCommits(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		as, err := ParseCommit(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, a := range as {
			if a.Metadata != nil && a.Metadata.SchemaString != "" {
				out = append(out, a.Metadata.SchemaString)
			}
		}
	}
	return out
}

// goldenProtocols returns every protocol action in the golden commits.
func goldenProtocols(t testing.TB) []*Protocol {
	t.Helper()
	var out []*Protocol
	for _, f := range goldenCommits(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		as, err := ParseCommit(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, a := range as {
			if a.Protocol != nil {
				out = append(out, a.Protocol)
			}
		}
	}
	return out
}
