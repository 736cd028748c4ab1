package reader_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// dataKeysRead returns the distinct data files (not log files) the store
// was asked to read.
func dataKeysRead(c *objstore.CountingStore) map[string]bool {
	out := map[string]bool{}
	for _, op := range []objstore.Op{objstore.OpGet, objstore.OpGetRange} {
		for _, k := range c.Keys(op) {
			if !strings.Contains(k, "/_delta_log/") {
				out[k] = true
			}
		}
	}
	return out
}

// TestPartitionPruningOpensOnlyMatchingFiles builds a table of 1,000 files
// over 100 partitions and checks that a query on one partition value
// opens that partition's 10 files and no other.
func TestPartitionPruningOpensOnlyMatchingFiles(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	base := objstore.NewMem()
	snap := tabletest.Create(t, base, "id long, p string", nil, "p")
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	const parts, rounds = 100, 10
	for r := range rounds {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for p := range parts {
			b.Field(0).(*array.Int64Builder).Append(int64(r*parts + p))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%03d", p))
		}
		rec := b.NewRecordBatch()
		b.Release()
		if _, err := writer.Append(ctx, tabletest.Open(t, base), seq(rec)); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	counting := objstore.Counting(base)
	snap = tabletest.Open(t, counting)
	if n := snap.NumFiles(); n != parts*rounds {
		t.Fatalf("%d files, want %d", n, parts*rounds)
	}
	counting.Reset()
	scan := mustScan(t, snap, reader.WithFilter(mustParse(t, "p = 'p042'")), reader.WithAllocator(mem))
	got := tabletest.Sorted((collect(t, scan))...)
	var want []string
	for r := range rounds {
		want = append(want, fmt.Sprintf(`{"id":%d,"p":"p042"}`, r*parts+42))
	}
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted((want)...))
	read := dataKeysRead(counting)
	if len(read) != rounds {
		t.Errorf("opened %d data files, want the partition's %d: %v", len(read), rounds, read)
	}
	for k := range read {
		if !strings.HasPrefix(k, "tbl/p=p042/") {
			t.Errorf("opened %s, outside partition p=p042", k)
		}
	}
	m := scan.Metrics()
	if m.FilesConsidered != parts*rounds || m.FilesPrunedByPartition != (parts-1)*rounds || m.FilesRead != rounds {
		t.Errorf("metrics %+v, want %d considered, %d pruned by partition, %d read", m, parts*rounds, (parts-1)*rounds, rounds)
	}
	if m.RowsReturned != rounds {
		t.Errorf("rows returned %d, want %d", m.RowsReturned, rounds)
	}
}

// TestStatsSkipping checks that a range query on a column sorted across
// files reads only the files whose min/max overlap the range.
// statsFiles is the number of files of TestStatsSkipping's table.
const statsFiles = 50

func TestStatsSkipping(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	base := objstore.NewMem()
	snap := tabletest.Create(t, base, "id long, name string", nil)
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	const files, perFile = statsFiles, 100
	for f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range perFile {
			id := int64(f*perFile + i)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%05d", id))
		}
		rec := b.NewRecordBatch()
		b.Release()
		if _, err := writer.Append(ctx, tabletest.Open(t, base), seq(rec)); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	// Stats skipping works on a snapshot replayed from commits, and on
	// one loaded from a checkpoint, whose stats Open defers.
	for _, fromCheckpoint := range []bool{false, true} {
		if fromCheckpoint {
			if _, err := tabletest.Open(t, base).Checkpoint(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(fmt.Sprintf("checkpoint=%v", fromCheckpoint), func(t *testing.T) {
			statsSkipping(t, base, mem)
		})
	}
}

func statsSkipping(t *testing.T, base objstore.Store, mem memory.Allocator) {
	const files = statsFiles
	counting := objstore.Counting(base)
	snap := tabletest.Open(t, counting)
	for _, tc := range []struct {
		pred  string
		files int
		rows  int64
	}{
		{"id >= 1250 AND id < 1350", 2, 100},  // files 12 and 13
		{"id = 4999", 1, 1},                   // the last file
		{"id > 10000", 0, 0},                  // beyond every max
		{"name < 'name-00100'", 1, 100},       // strings: the first file
		{"id < 0 OR id = 2500", 1, 1},         // OR keeps a file if either side may match
		{"id IS NULL", 0, 0},                  // nullCount 0 everywhere
		{"id % 100 = 0", files, files},        // not prunable: every file
		{"NOT (id >= 100)", 1, 100},           // negation
		{"id IN (5, 4950)", 2, 2},             // IN list
		{"name LIKE 'name-0010%'", files, 10}, // LIKE is not used for pruning
	} {
		t.Run(tc.pred, func(t *testing.T) {
			counting.Reset()
			scan := mustScan(t, snap, reader.WithFilter(mustParse(t, tc.pred)), reader.WithAllocator(mem))
			rows := collect(t, scan)
			if int64(len(rows)) != tc.rows {
				t.Errorf("%d rows, want %d", len(rows), tc.rows)
			}
			if read := dataKeysRead(counting); len(read) > tc.files {
				t.Errorf("opened %d files, want at most %d", len(read), tc.files)
			}
			m := scan.Metrics()
			if m.FilesRead > int64(tc.files) || m.FilesSkippedByStats < int64(files-tc.files) {
				t.Errorf("metrics %+v: want at most %d read and at least %d skipped", m, tc.files, files-tc.files)
			}
		})
	}
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
