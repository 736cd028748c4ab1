package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func writeTestParquet(t *testing.T, path, rows string) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

func TestConvertVerb(t *testing.T) {
	dir := t.TempDir()
	writeTestParquet(t, filepath.Join(dir, "day=2024-01-01", "a.parquet"), `[{"id":1,"name":"a"},{"id":2,"name":null}]`)
	writeTestParquet(t, filepath.Join(dir, "day=2024-01-02", "b.parquet"), `[{"id":3,"name":"c"}]`)
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)

	code, _, stderr := lakelog(t, "convert", dir)
	if code == 0 || !strings.Contains(stderr, "day=2024-01-01") || !strings.Contains(stderr, "no partition columns") {
		t.Fatalf("unpartitioned convert of a partitioned folder: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := lakelog(t, "convert", dir, "--partition-by", "day date")
	if code != 0 || !strings.Contains(stdout, "2 files") || !strings.Contains(stdout, "3 rows") || !strings.Contains(stdout, "version 0") {
		t.Fatalf("convert: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = lakelog(t, "scan", dir, "--sorted", "--format", "jsonl")
	want := `{"id":1,"name":"a","day":"2024-01-01"}
{"id":2,"name":null,"day":"2024-01-01"}
{"id":3,"name":"c","day":"2024-01-02"}
`
	if code != 0 || stdout != want {
		t.Fatalf("scan: exit %d\n%s\nwant\n%s", code, stdout, want)
	}
	code, stdout, _ = lakelog(t, "convert", dir, "--partition-by", "day date")
	if code != 0 || !strings.Contains(stdout, "already a Delta table") {
		t.Fatalf("second convert: exit %d %s", code, stdout)
	}
	code, stdout, _ = lakelog(t, "history", dir, "--format", "jsonl")
	if code != 0 || strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, `"CONVERT"`) {
		t.Fatalf("history: %s", stdout)
	}

	bad := t.TempDir()
	writeTestParquet(t, filepath.Join(bad, "a.parquet"), `[{"id":1,"name":"a"}]`)
	os.WriteFile(filepath.Join(bad, "b.json"), []byte(`{"id":2}`), 0o644)
	code, _, stderr = lakelog(t, "convert", bad)
	if code == 0 || !strings.Contains(stderr, "b.json") || !strings.Contains(stderr, "not a Parquet file") {
		t.Fatalf("non-Parquet file: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bad, "_delta_log")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused convert left a _delta_log: %v", err)
	}
}
