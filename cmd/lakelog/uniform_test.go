package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// TestCLIUniform: create --uniform iceberg writes Iceberg metadata with
// the table, every write verb after it converts its commit, and
// uniform sync reports the table converted; iceberg-go reads the rows
// the scan prints.
func TestCLIUniform(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "events")
	ok(t, "create", tbl, "--schema", "id long not null, kind string", "--uniform", "iceberg")
	ok(t, "append", tbl, writeFile(t, dir, "a.jsonl", `{"id":1,"kind":"a"}`+"\n"+`{"id":2,"kind":"b"}`+"\n"+`{"id":3,"kind":"c"}`+"\n"))
	ok(t, "delete", tbl, "--where", "id = 2")
	out := ok(t, "uniform", "sync", tbl)
	if !strings.Contains(out, "already at version 2") {
		t.Fatalf("uniform sync after the write verbs converted them: %q", out)
	}
	hint, err := os.ReadFile(filepath.Join(tbl, "metadata", "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	meta := "file://" + filepath.Join(tbl, "metadata", "v"+strings.TrimSpace(string(hint))+".metadata.json")
	fs := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	it, err := table.NewFromLocation(context.Background(), []string{"events"}, meta, fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	at, err := it.Scan(table.WithSelectedFields("id")).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if at.NumRows() != 2 {
		t.Fatalf("iceberg-go read %d rows, want 2", at.NumRows())
	}
	if code, _, stderr := lakelog(t, "uniform", "convert", tbl); code != exitUsage || !strings.Contains(stderr, "the action is sync") {
		t.Fatalf("uniform convert: %d %q", code, stderr)
	}
	plain := filepath.Join(dir, "plain")
	ok(t, "create", plain, "--schema", "id long")
	if code, _, stderr := lakelog(t, "uniform", "sync", plain); code != exitError || !strings.Contains(stderr, "does not enable UniForm") {
		t.Fatalf("uniform sync of a plain table: %d %q", code, stderr)
	}
}

// TestSQLWritesConvertUniform: a write through lakelog sql brings a
// UniForm table's Iceberg metadata to its version, as the verbs do (the
// conversion is the library's post-commit hook, not the CLI's).
func TestSQLWritesConvertUniform(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "events")
	ok(t, "create", tbl, "--schema", "id long not null, kind string", "--uniform", "iceberg")
	ok(t, "sql", "INSERT INTO delta.`"+tbl+"` VALUES (1, 'a'), (2, 'b')")
	ok(t, "sql", "INSERT INTO delta.`"+tbl+"` VALUES (3, 'c')")
	out := ok(t, "uniform", "sync", tbl)
	if !strings.Contains(out, "already at version 2") {
		t.Fatalf("uniform sync after two SQL inserts: %q; the inserts did not convert their commits", out)
	}
}
