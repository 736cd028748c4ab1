package reader_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/golden"
	"github.com/lakelog/lakelog/test/tabletest"
)

func goldenSnapshot(t *testing.T, name string) (*deltalog.Snapshot, string) {
	t.Helper()
	c, err := golden.Find(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	store, err := objstore.NewLocal(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), store, "")
	if err != nil {
		t.Fatal(err)
	}
	return snap, c.Dir
}

// TestDeletionVectorRowSelection reads table-with-dv-small (values 0..9
// at row indexes 0..9, a vector deleting rows 0 and 9) through every way
// of reading: Records, ReadFile, WithRowIndex, Count with and without a
// filter, and a filter on the deleted values.
func TestDeletionVectorRowSelection(t *testing.T) {
	snap, _ := goldenSnapshot(t, "table-with-dv-small")
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	want := []string{`{"value":1}`, `{"value":2}`, `{"value":3}`, `{"value":4}`, `{"value":5}`, `{"value":6}`, `{"value":7}`, `{"value":8}`}
	tabletest.DiffLines(t, "rows", collect(t, mustScan(t, snap, reader.WithAllocator(mem))), want)
	// Small batches: the deleted rows fall at batch edges.
	tabletest.DiffLines(t, "rows", collect(t, mustScan(t, snap, reader.WithAllocator(mem), reader.WithBatchSize(3))), want)
	sc := mustScan(t, snap, reader.WithAllocator(mem), reader.WithRowIndex())
	for _, line := range collect(t, sc) {
		var v, idx int
		if _, err := fmtSscanRow(line, &v, &idx); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if v != idx || idx == 0 || idx == 9 {
			t.Errorf("row %s: the row index must be the value and never 0 or 9", line)
		}
	}
	var n int
	for f, err := range sc.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range sc.ReadFile(ctx, f) {
			if err != nil {
				t.Fatal(err)
			}
			n += int(rec.NumRows())
		}
	}
	if n != 8 {
		t.Errorf("ReadFile: %d rows, want 8", n)
	}
	n = 0
	for rec, err := range mustScan(t, snap, reader.WithColumns()).Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n += int(rec.NumRows())
	}
	if n != 8 {
		t.Errorf("no columns: %d rows, want 8", n)
	}
	for pred, want := range map[string]int64{"": 8, "value > 5": 3, "value = 0 OR value = 9": 0, "value <= 1": 1} {
		var opts []reader.Option
		if pred != "" {
			opts = append(opts, reader.WithFilter(mustParse(t, pred)))
		}
		got, err := mustScan(t, snap, opts...).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Count(%q) = %d, want %d", pred, got, want)
		}
		lines := collect(t, mustScan(t, snap, opts...))
		if int64(len(lines)) != want {
			t.Errorf("Records(%q): %d rows, want %d", pred, len(lines), want)
		}
	}
}

// fmtSscanRow reads {"value":V,"_row_index":I}.
func fmtSscanRow(line string, v, idx *int) (int, error) {
	var err error
	line = strings.NewReplacer(`{"value":`, "", `"_row_index":`, "", "}", "").Replace(line)
	parts := strings.Split(line, ",")
	if len(parts) != 2 {
		return 0, errors.New("not a value and a row index")
	}
	if *v, err = atoi(parts[0]); err != nil {
		return 0, err
	}
	*idx, err = atoi(parts[1])
	return 2, err
}

func atoi(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number: " + s)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// TestDeletionVectorCountsAgree: on every deletion-vector case, Count
// (from statistics and cardinalities) equals the rows Records returns,
// with and without a filter that keeps every row.
func TestDeletionVectorCountsAgree(t *testing.T) {
	for _, name := range []string{"basic-dv-no-checkpoint", "basic-dv-with-checkpoint", "compacted-log-files-table", "dv-partitioned-with-checkpoint", "log-replay-dv-key-cases", "table-with-dv-small", "with-short-dv"} {
		t.Run(name, func(t *testing.T) {
			snap, _ := goldenSnapshot(t, name)
			n, err := mustScan(t, snap).Count(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rows := collect(t, mustScan(t, snap)); int64(len(rows)) != n {
				t.Errorf("Count %d, Records %d rows", n, len(rows))
			}
		})
	}
}

// TestDeletionVectorCorrupt: a damaged vector file fails the read with an
// error naming the data file and the vector's file, never rows.
func TestDeletionVectorCorrupt(t *testing.T) {
	_, dir := goldenSnapshot(t, "table-with-dv-small")
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(tmp, "deletion_vector_*.bin"))
	if len(bins) != 1 {
		t.Fatalf("vector files %v", bins)
	}
	b, err := os.ReadFile(bins[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff // the checksum
	if err := os.WriteFile(bins[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := objstore.NewLocal(tmp)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(context.Background(), store, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range mustScan(t, snap).Records(context.Background()) {
		if err == nil {
			t.Fatal("a batch was read through a corrupt deletion vector")
		}
		if !errors.Is(err, deletionvector.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(bins[0])) || !strings.Contains(err.Error(), "part-00000-fae5310a") {
			t.Fatalf("got %v, want ErrCorrupt naming the data file and %s", err, filepath.Base(bins[0]))
		}
		return
	}
	t.Fatal("no error")
}

// TestDeletionVectorWithoutStats: a file with a vector but no statistics
// (the protocol requires numRecords, but a reader must not return wrong
// counts when it is missing) is counted from its footer less the vector's
// cardinality, and a vector deleting a row past the footer's count fails
// the read.
func TestDeletionVectorWithoutStats(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		rows    []uint64
		wantErr bool
	}{{[]uint64{1}, false}, {[]uint64{1, 3}, true}} { // the file holds 3 rows
		store, snap := fourFiles(t)
		var target *actions.Add
		for f := range snap.Files() {
			if f.PartitionValues["p"] != nil && *f.PartitionValues["p"] == "z" {
				target = f
			}
		}
		w := deletionvector.NewWriter(store, snap.Root())
		dv, err := w.Add(roaring64.BitmapOf(c.rows...))
		if err != nil {
			t.Fatal(err)
		}
		bare := *target
		bare.Stats = ""
		bare.DeletionVector = dv
		tx := snap.NewTransaction()
		tx.RemoveFile(target, true)
		tx.Add(actions.Action{Add: &bare})
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		snap = tabletest.Open(t, store)
		n, err := mustScan(t, snap).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(10 - len(c.rows)); n != want {
			t.Errorf("rows %v: Count %d, want %d", c.rows, n, want)
		}
		var readErr error
		rows := 0
		for rec, err := range mustScan(t, snap).Records(ctx) {
			if err != nil {
				readErr = err
				break
			}
			rows += int(rec.NumRows())
		}
		switch {
		case c.wantErr && !errors.Is(readErr, deletionvector.ErrCorrupt):
			t.Errorf("rows %v: read error %v, want ErrCorrupt (row 3 of a 3-row file)", c.rows, readErr)
		case !c.wantErr && (readErr != nil || rows != 9):
			t.Errorf("rows %v: read %d rows (%v), want 9", c.rows, rows, readErr)
		}
	}
}

// TestDeletionVectorCDFTableVersions reads cdf-table-with-dv at every
// version: its commits delete and restore rows only through deletion
// vectors (file-based and inline, one in the Rust z85 crate's padded
// form), and its expected change data says which rows each version
// holds: version v holds the rows inserted and not deleted since.
func TestDeletionVectorCDFTableVersions(t *testing.T) {
	c, err := golden.Find("cdf-table-with-dv")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var cdf struct {
		Rows []struct {
			Value   int    `json:"value"`
			Type    string `json:"_change_type"`
			Version int64  `json:"_commit_version"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(c.CDF, &cdf); err != nil {
		t.Fatal(err)
	}
	store, err := objstore.NewLocal(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	live := map[int]bool{}
	for v := int64(0); v <= *c.LatestVersion; v++ {
		for _, r := range cdf.Rows {
			if r.Version != v {
				continue
			}
			switch r.Type {
			case "insert":
				live[r.Value] = true
			case "delete":
				delete(live, r.Value)
			}
		}
		var want []string
		for val := range live {
			want = append(want, fmt.Sprintf(`{"value":%d}`, val))
		}
		snap, err := deltalog.Open(context.Background(), store, "", deltalog.AtVersion(v))
		if err != nil {
			t.Fatal(err)
		}
		got := tabletest.Sorted((collect(t, mustScan(t, snap)))...)
		if !slices.Equal(got, tabletest.Sorted((want)...)) {
			t.Errorf("version %d: rows %v, want %v", v, got, tabletest.Sorted((want)...))
		}
	}
}
