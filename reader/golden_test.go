package reader_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// goldenDir is the shared corpus of Delta tables written by other engines
// (Spark, Databricks, delta-rs), each with expected rows from an
// independent source; see its README.md.
const goldenDir = "../../shared/testdata/delta"

// goldenCase is the part of a case's expected.json this test checks.
type goldenCase struct {
	Case             string            `json:"case"`
	ExpectError      bool              `json:"expect_error"`
	MetadataOnly     bool              `json:"metadata_only"`
	Features         []string          `json:"features"`
	LatestVersion    *int64            `json:"latest_version"`
	NumRows          *int64            `json:"num_rows"`
	Columns          []string          `json:"columns"`
	PartitionColumns []string          `json:"partition_columns"`
	RowsSHA256       *string           `json:"rows_sha256"`
	RowsSHA256UTC    *string           `json:"rows_sha256_utc_partition_timestamps"`
	Rows             []json.RawMessage `json:"rows"`
	Versions         map[string]int64  `json:"versions"`
	Projections      []struct {
		Columns    []string `json:"columns"`
		RowsSHA256 string   `json:"rows_sha256"`
	} `json:"projections"`
	VersionRowsSHA256 map[string]string `json:"version_rows_sha256"`
}

// knownUnsupported lists the cases this reader cannot read yet, with the
// missing piece. For each, the test asserts that reading fails with an
// error (never wrong rows); when one starts to pass, the test says so, so
// that the list cannot go stale. It is the complete list: every other
// data case must match its expected rows.
var knownUnsupported = map[string]string{}

// uncheckedMemory lists cases read with Go's allocator instead of a checked
// one: arrow-go v18.8.0's DELTA_BINARY_PACKED decoder allocates a buffer it
// never frees (it has no Release), which a checked allocator reports as a
// leak although the garbage collector reclaims it.
var uncheckedMemory = map[string]string{
	"parquet-decimal-dictionaries-v2": "DELTA_BINARY_PACKED pages (arrow-go decoder buffer)",
}

func loadGoldenCases(t *testing.T) []goldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no golden tables under %s", goldenDir)
		}
		t.Skipf("no golden tables under %s", goldenDir)
	}
	var out []goldenCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c goldenCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

// TestGoldenTables reads every data case of the corpus and compares the
// canonical rows' count and hash with the expected ones, at the latest
// version and at every version the case lists (time travel).
func TestGoldenTables(t *testing.T) {
	cases := loadGoldenCases(t)
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Case] = true
		if c.ExpectError || c.MetadataOnly {
			continue
		}
		t.Run(c.Case, func(t *testing.T) {
			if reason, ok := knownUnsupported[c.Case]; ok {
				err := readGoldenCase(t, c)
				switch {
				case err == nil:
					t.Errorf("case is listed as unsupported (%s) but now reads without error; remove it from knownUnsupported", reason)
				case !errors.Is(err, reader.ErrUnsupported):
					t.Errorf("case is listed as unsupported (%s); want an error wrapping reader.ErrUnsupported, got: %v", reason, err)
				default:
					t.Logf("refused, as expected (%s): %v", reason, err)
				}
				return
			}
			if err := readGoldenCase(t, c); err != nil {
				t.Fatal(err)
			}
		})
	}
	for name := range knownUnsupported {
		if !seen[name] {
			t.Errorf("knownUnsupported names %q, which is not in the corpus", name)
		}
	}
}

// readGoldenCase checks one case. Mismatches are reported with t.Errorf;
// the returned error is a failure to open or read.
func readGoldenCase(t *testing.T, c goldenCase) error {
	ctx := context.Background()
	store, err := objstore.NewLocal(filepath.Join(goldenDir, c.Case, "delta"))
	if err != nil {
		return err
	}
	var mem memory.Allocator = memory.NewGoAllocator()
	if _, ok := uncheckedMemory[c.Case]; !ok {
		checked := memory.NewCheckedAllocator(mem)
		defer checked.AssertSize(t, 0)
		mem = checked
	}
	snap, err := deltalog.Open(ctx, store, "")
	if err != nil {
		return err
	}
	if c.LatestVersion != nil && snap.Version() != *c.LatestVersion {
		t.Errorf("latest version %d, want %d", snap.Version(), *c.LatestVersion)
	}
	if c.Columns != nil && !slices.Equal(snap.Schema().Names(), c.Columns) {
		t.Errorf("columns %v, want %v", snap.Schema().Names(), c.Columns)
	}
	if c.PartitionColumns != nil && !slices.Equal(snap.PartitionColumns(), c.PartitionColumns) {
		t.Errorf("partition columns %v, want %v", snap.PartitionColumns(), c.PartitionColumns)
	}
	lines, err := canonicalLines(ctx, snap, mem)
	if err != nil {
		return err
	}
	if c.NumRows != nil && int64(len(lines)) != *c.NumRows {
		t.Errorf("%d rows, want %d", len(lines), *c.NumRows)
	}
	// Count answers from statistics or footers, without decoding.
	sc, err := reader.NewScan(snap, reader.WithAllocator(mem))
	if err != nil {
		return err
	}
	if n, err := sc.Count(ctx); err != nil {
		return err
	} else if n != int64(len(lines)) {
		t.Errorf("Count %d, want %d", n, len(lines))
	}
	if c.RowsSHA256 != nil {
		got := hashLines(lines)
		if got != *c.RowsSHA256 && (c.RowsSHA256UTC == nil || got != *c.RowsSHA256UTC) {
			t.Errorf("rows_sha256 %s, want %s", got, *c.RowsSHA256)
			if c.Rows != nil {
				want := make([]string, len(c.Rows))
				for i, r := range c.Rows {
					want[i] = string(r)
				}
				reportDiff(t, lines, want)
			}
		}
	}
	for _, p := range c.Projections {
		sc, err := reader.NewScan(snap, reader.WithAllocator(mem), reader.WithColumns(p.Columns...))
		if err != nil {
			return err
		}
		plines, err := tabletest.Lines(ctx, sc)
		if err != nil {
			return err
		}
		if got := hashLines(plines); got != p.RowsSHA256 {
			t.Errorf("projection %v: rows_sha256 %s, want %s\n%s", p.Columns, got, p.RowsSHA256, strings.Join(plines, "\n"))
		}
	}
	for vs, n := range c.Versions {
		v, err := strconv.ParseInt(vs, 10, 64)
		if err != nil {
			t.Fatalf("version %q: %v", vs, err)
		}
		vsnap, err := deltalog.Open(ctx, store, "", deltalog.AtVersion(v))
		if err != nil {
			return err
		}
		vlines, err := canonicalLines(ctx, vsnap, mem)
		if err != nil {
			return err
		}
		if int64(len(vlines)) != n {
			t.Errorf("version %d: %d rows, want %d", v, len(vlines), n)
		}
		if want, ok := c.VersionRowsSHA256[vs]; ok {
			if got := hashLines(vlines); got != want {
				t.Errorf("version %d: rows_sha256 %s, want %s", v, got, want)
			}
		}
	}
	return nil
}

// canonicalLines scans the whole snapshot into sorted canonical lines.
func canonicalLines(ctx context.Context, snap *deltalog.Snapshot, mem memory.Allocator) ([]string, error) {
	sc, err := reader.NewScan(snap, reader.WithAllocator(mem))
	if err != nil {
		return nil, err
	}
	return tabletest.Lines(ctx, sc)
}

func hashLines(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// reportDiff shows the first lines that differ.
func reportDiff(t *testing.T, got, want []string) {
	t.Helper()
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < 5; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got: %s\nwant: %s", i, g, w)
			shown++
		}
	}
}

// TestTypeWideningFilters filters the corpus's type-widening table on
// widened columns. Files written before a column was widened keep stats
// in the old type, which must not prune: a float's "3.4" is
// 3.4000000953674316 once the column is a double.
func TestTypeWideningFilters(t *testing.T) {
	dir := filepath.Join(goldenDir, "type-widening", "delta")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	mem := tabletest.CheckedMem(t)
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), store, "")
	if err != nil {
		t.Fatal(err)
	}
	for pred, want := range map[string]string{
		"float_double = 3.4000000953674316":           `{"byte_long":1}`,
		"date_timestamp_ntz >= '2024-09-09 12:00:00'": `{"byte_long":9223372036854775807}`,
		"decimal_decimal_greater_scale < 100":         `{"byte_long":1}`,
		"int_decimal = 3":                             `{"byte_long":1}`,
		"byte_double > 1 AND byte_double < 2":         `{"byte_long":9223372036854775807}`,
	} {
		sc := mustScan(t, snap, reader.WithFilter(mustParse(t, pred)), reader.WithColumns("byte_long"), reader.WithAllocator(mem))
		tabletest.DiffLines(t, "rows", collect(t, sc), []string{want})
	}
}
