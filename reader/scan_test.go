package reader_test

import (
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// fourFiles makes a partitioned table of four files (one append per
// partition value) with ten rows.
func fourFiles(t *testing.T) (objstore.Store, *deltalog.Snapshot) {
	t.Helper()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, name string, p string", nil, "p")
	tabletest.AppendTo(t, store, `[{"id": 1, "name": "a", "p": "x"}, {"id": 2, "name": "b", "p": "x"}, {"id": 3, "name": "c", "p": "x"}]`)
	tabletest.AppendTo(t, store, `[{"id": 4, "name": "d", "p": "y"}, {"id": 5, "name": null, "p": "y"}]`)
	tabletest.AppendTo(t, store, `[{"id": 6, "name": "f", "p": null}, {"id": 7, "name": "g", "p": null}]`)
	snap := tabletest.AppendTo(t, store, `[{"id": 8, "name": "h", "p": "z"}, {"id": 9, "name": "i", "p": "z"}, {"id": 10, "name": "j", "p": "z"}]`)
	return store, snap
}

func TestProjectionAndFilter(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	_, snap := fourFiles(t)
	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprint("parallelism ", par), func(t *testing.T) {
			sc := mustScan(t, snap, reader.WithColumns("NAME", "p"), reader.WithFilter(mustParse(t, "id >= 3 AND id < 7 AND p <> 'z'")),
				reader.WithAllocator(mem), reader.WithParallelism(par))
			var names []string
			for _, f := range sc.Schema().Fields() {
				names = append(names, f.Name)
			}
			if got := strings.Join(names, ","); got != "name,p" {
				t.Errorf("schema %s, want name,p in the table's spelling", got)
			}
			// p <> 'z' is NULL for the null partition, so id 6 is not returned.
			tabletest.DiffLines(t, "rows", tabletest.Sorted((collect(t, sc))...), tabletest.Sorted(`{"name":"c","p":"x"}`, `{"name":"d","p":"y"}`, `{"name":null,"p":"y"}`))
		})
	}
}

func TestOnlyPartitionColumns(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	_, snap := fourFiles(t)
	sc := mustScan(t, snap, reader.WithColumns("p"), reader.WithAllocator(mem), reader.WithBatchSize(2))
	got := collect(t, sc)
	want := []string{`{"p":"x"}`, `{"p":"x"}`, `{"p":"x"}`, `{"p":"y"}`, `{"p":"y"}`, `{"p":null}`, `{"p":null}`, `{"p":"z"}`, `{"p":"z"}`, `{"p":"z"}`}
	tabletest.DiffLines(t, "rows", tabletest.Sorted((got)...), tabletest.Sorted((want)...))
	sc = mustScan(t, snap, reader.WithColumns(), reader.WithAllocator(mem))
	var rows int64
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumCols() != 0 {
			t.Fatalf("%d columns, want none", rec.NumCols())
		}
		rows += rec.NumRows()
	}
	if rows != 10 {
		t.Errorf("%d rows, want 10", rows)
	}
}

func TestLimit(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	_, snap := fourFiles(t)
	for _, par := range []int{1, 4} {
		for _, tc := range []struct{ limit, want int64 }{{0, 0}, {1, 1}, {4, 4}, {10, 10}, {100, 10}} {
			t.Run(fmt.Sprintf("limit %d parallelism %d", tc.limit, par), func(t *testing.T) {
				sc := mustScan(t, snap, reader.WithLimit(tc.limit), reader.WithAllocator(mem), reader.WithParallelism(par))
				if got := int64(len(collect(t, sc))); got != tc.want {
					t.Errorf("%d rows, want %d", got, tc.want)
				}
				if m := sc.Metrics(); m.RowsReturned != tc.want {
					t.Errorf("RowsReturned %d, want %d", m.RowsReturned, tc.want)
				}
			})
		}
	}
}

// TestParallelOrder checks that the parallel reader yields exactly the
// serial reader's sequence: files in path order, rows in file order.
func TestParallelOrder(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, g int", nil, "g")
	var rows []string
	for i := range 200 {
		rows = append(rows, fmt.Sprintf(`{"id": %d, "g": %d}`, i, i%13))
	}
	for range 3 {
		tabletest.AppendTo(t, store, "["+strings.Join(rows, ",")+"]")
	}
	snap := tabletest.Open(t, store)
	serial := collect(t, mustScan(t, snap, reader.WithParallelism(1), reader.WithAllocator(mem), reader.WithBatchSize(7)))
	parallel := collect(t, mustScan(t, snap, reader.WithParallelism(4), reader.WithAllocator(mem), reader.WithBatchSize(7)))
	if len(serial) != 600 || !slices.Equal(serial, parallel) {
		t.Errorf("parallel output (%d rows) differs from serial (%d rows)", len(parallel), len(serial))
	}
	var paths []string
	for f, err := range mustScan(t, snap).Files(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, f.Add.Path)
	}
	if !slices.IsSorted(paths) {
		t.Errorf("files not in path order: %v", paths)
	}
}

// TestEarlyStop breaks out of a parallel scan: the workers stop and every
// batch they decoded is released (the checked allocator ends at zero).
func TestEarlyStop(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, g int", nil, "g")
	var rows []string
	for i := range 2000 {
		rows = append(rows, fmt.Sprintf(`{"id": %d, "g": %d}`, i, i%20))
	}
	tabletest.AppendTo(t, store, "["+strings.Join(rows, ",")+"]")
	snap := tabletest.Open(t, store)
	before := runtime.NumGoroutine()
	for range 20 {
		sc := mustScan(t, snap, reader.WithParallelism(4), reader.WithAllocator(mem), reader.WithBatchSize(10))
		n := 0
		for rec, err := range sc.Records(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			n += int(rec.NumRows())
			if n >= 30 {
				break
			}
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+2 {
		t.Errorf("%d goroutines after early stops, %d before", g, before)
	}
}

// TestParallelMemoryBounded reads many files with a slow consumer and
// checks that decoded batches do not pile up: the live Arrow memory stays
// within a few batches per worker.
func TestParallelMemoryBounded(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s string, g int", nil, "g")
	var rows []string
	for i := range 4000 {
		rows = append(rows, fmt.Sprintf(`{"id": %d, "s": "%s", "g": %d}`, i, strings.Repeat("v", 50), i%40))
	}
	tabletest.AppendTo(t, store, "["+strings.Join(rows, ",")+"]")
	snap := tabletest.Open(t, store)
	const batch, workers = 20, 4
	ctx := context.Background()
	// What the whole table takes when every batch is kept.
	var kept []arrow.RecordBatch
	for rec, err := range mustScan(t, snap, reader.WithParallelism(1), reader.WithAllocator(mem), reader.WithBatchSize(batch)).Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		kept = append(kept, rec)
	}
	total := mem.CurrentAlloc()
	for _, r := range kept {
		r.Release()
	}
	peakWith := func(par int) int {
		sc := mustScan(t, snap, reader.WithParallelism(par), reader.WithAllocator(mem), reader.WithBatchSize(batch))
		peak, n := 0, 0
		for rec, err := range sc.Records(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n += int(rec.NumRows())
			time.Sleep(100 * time.Microsecond) // a slow consumer
			peak = max(peak, mem.CurrentAlloc())
		}
		if n != 4000 {
			t.Fatalf("%d rows, want 4000", n)
		}
		return peak
	}
	serial, parallel := peakWith(1), peakWith(workers)
	t.Logf("whole table %d bytes; peak streaming %d bytes serially, %d with %d workers", total, serial, parallel, workers)
	// Streaming holds one file's decoding state and a batch or two, not
	// the table; each worker adds about as much, whatever the file count.
	if serial*4 > total {
		t.Errorf("serial peak %d bytes is not small against the table's %d", serial, total)
	}
	if parallel > workers*serial*3/2 {
		t.Errorf("peak with %d workers %d bytes, want at most about %d× the serial peak %d", workers, parallel, workers, serial)
	}
}

func TestScanErrors(t *testing.T) {
	_, snap := fourFiles(t)
	if _, err := reader.NewScan(snap, reader.WithColumns("nope")); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := reader.NewScan(snap, reader.WithColumns("id", "ID")); err == nil {
		t.Error("duplicate column accepted")
	}
	if _, err := reader.NewScan(snap, reader.WithFilter(mustParse(t, "nope = 1"))); err == nil {
		t.Error("filter on an unknown column accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, par := range []int{1, 4} {
		var got error
		for _, err := range mustScan(t, snap, reader.WithParallelism(par)).Records(ctx) {
			if err != nil {
				got = err
			}
		}
		if !errors.Is(got, context.Canceled) {
			t.Errorf("parallelism %d: cancelled scan gave %v, want context.Canceled", par, got)
		}
	}
}

// TestSchemaEvolutionNulls reads files written before columns and struct
// fields were added: they come back as nulls.
func TestSchemaEvolutionNulls(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s struct<a: int>", nil)
	tabletest.AppendTo(t, store, `[{"id": 1, "s": {"a": 1}}]`)
	// Widen the schema by a metadata-only commit, as ALTER TABLE ADD
	// COLUMNS does.
	snap := tabletest.Open(t, store)
	schema, err := actions.ParseDDL("id long, s struct<a: int, b: string>, added double")
	if err != nil {
		t.Fatal(err)
	}
	md := *snap.Metadata()
	md.SchemaString, _ = actions.SchemaString(schema)
	tx := snap.NewTransaction()
	tx.SetMetadata(&md)
	tx.SetOperation("ADD COLUMNS", nil, nil)
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.AppendTo(t, store, `[{"id": 2, "s": {"a": 2, "b": "x"}, "added": 2.5}]`)
	got := tabletest.Sorted((collect(t, mustScan(t, snap, reader.WithAllocator(mem))))...)
	tabletest.DiffLines(t, "rows", got, []string{`{"id":1,"s":{"a":1,"b":null},"added":null}`, `{"id":2,"s":{"a":2,"b":"x"},"added":2.5}`})
}

func TestReadFile(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	_, snap := fourFiles(t)
	sc := mustScan(t, snap, reader.WithAllocator(mem), reader.WithFilter(mustParse(t, "id % 2 = 0")))
	ctx := context.Background()
	var total int
	for f, err := range sc.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range sc.ReadFile(ctx, f) {
			if err != nil {
				t.Fatal(err)
			}
			ids := rec.Column(0).(*array.Int64)
			for i := 0; i < ids.Len(); i++ {
				if ids.Value(i)%2 != 0 {
					t.Errorf("odd id %d passed the filter", ids.Value(i))
				}
			}
			total += int(rec.NumRows())
		}
	}
	if total != 5 {
		t.Errorf("%d rows, want 5", total)
	}
}

func TestCount(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store, snap := fourFiles(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opts []reader.Option
		want int64
	}{
		{nil, 10},
		{[]reader.Option{reader.WithLimit(4)}, 4},
		{[]reader.Option{reader.WithFilter(mustParse(t, "id > 3 AND p = 'z'"))}, 3},
		{[]reader.Option{reader.WithFilter(mustParse(t, "name IS NULL")), reader.WithColumns("p")}, 1},
	} {
		counting := objstore.Counting(store)
		sc := mustScan(t, tabletest.Open(t, counting), append(tc.opts, reader.WithAllocator(mem))...)
		counting.Reset()
		n, err := sc.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("Count = %d, want %d", n, tc.want)
		}
		if sc.Filter() == nil && len(dataKeysRead(counting)) != 0 {
			t.Errorf("Count without a filter read data files %v; stats suffice", dataKeysRead(counting))
		}
	}
	_ = snap
}

// TestNarrow derives scans from a planned one: a filter is ANDed with the
// scan's, a projection replaces it, and the filter's columns are still
// read (and its files still pruned) when the projection leaves them out.
func TestNarrow(t *testing.T) {
	ctx := context.Background()
	_, snap := fourFiles(t)
	base := mustScan(t, snap, reader.WithFilter(mustParse(t, "id >= 3")))
	sub, err := base.Narrow(reader.WithFilter(mustParse(t, "p = 'y'")), reader.WithColumns("id"))
	if err != nil {
		t.Fatal(err)
	}
	tabletest.DiffLines(t, "rows", tabletest.Sorted((collect(t, sub))...), []string{`{"id":4}`, `{"id":5}`})
	if m := sub.Metrics(); m.FilesPrunedByPartition != 3 {
		t.Errorf("narrowed scan pruned %d files by partition, want 3", m.FilesPrunedByPartition)
	}
	// No columns: row counts only, under both filters.
	count, err := base.Narrow(reader.WithColumns(), reader.WithFilter(mustParse(t, "name IS NOT NULL")))
	if err != nil {
		t.Fatal(err)
	}
	n, err := count.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 7 { // ids 3..10 less id 5, whose name is null
		t.Errorf("count of the narrowed scan: %d, want 7", n)
	}
	// The base scan is unchanged.
	if got := len(collect(t, base)); got != 8 {
		t.Errorf("base scan after Narrow: %d rows, want 8", got)
	}
	if _, err := base.Narrow(reader.WithColumns("nope")); err == nil {
		t.Error("Narrow to an unknown column: no error")
	}
}

// TestDeletionVectorOnWrittenTable: a vector written with
// deletionvector.Writer, inline or in a file, and committed as a
// remove/add pair, is planned like any file, counted from its cardinality
// and read without the rows it deletes.
func TestDeletionVectorOnWrittenTable(t *testing.T) {
	for _, limit := range []int{deletionvector.DefaultInlineLimit, 0} {
		t.Run(fmt.Sprint("inline limit ", limit), func(t *testing.T) {
			ctx := context.Background()
			store, snap := fourFiles(t)
			var target *actions.Add
			for f := range snap.Files() {
				if f.PartitionValues["p"] != nil && *f.PartitionValues["p"] == "z" {
					target = f
				}
			}
			w := deletionvector.NewWriter(store, snap.Root(), deletionvector.WithInlineLimit(limit))
			dv, err := w.Add(roaring64.BitmapOf(0, 2)) // ids 8 and 10
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			withDV := *target
			withDV.DeletionVector = dv
			tx := snap.NewTransaction()
			tx.RemoveFile(target, true)
			tx.Add(actions.Action{Add: &withDV})
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)
			sc := mustScan(t, snap)
			files := 0
			for _, err := range sc.Files(ctx) {
				if err != nil {
					t.Fatalf("planning a table with a deletion vector: %v", err)
				}
				files++
			}
			if files != 4 {
				t.Errorf("planned %d files, want 4", files)
			}
			n, err := sc.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != 8 { // 10 rows, 2 of them deleted
				t.Errorf("count: %d, want 8", n)
			}
			ids := tabletest.Sorted((collect(t, mustScan(t, snap, reader.WithColumns("id"))))...)
			tabletest.DiffLines(t, "rows", ids, tabletest.Sorted(`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`, `{"id":5}`, `{"id":6}`, `{"id":7}`, `{"id":9}`))
		})
	}
}

// TestRecordReads: a scan built with RecordReads leaves its read set on
// the transaction, so the conflict checker sees what the operation read:
// a concurrent remove of a file the scan planned aborts the transaction,
// one of a file it pruned does not.
func TestRecordReads(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		removed string // partition whose file a concurrent commit removes
		want    error
	}{{"y", nil}, {"x", conflict.ErrConcurrentDeleteRead}} {
		store, snap := fourFiles(t)
		tx := snap.NewTransaction()
		sc := mustScan(t, snap, reader.WithFilter(mustParse(t, "p = 'x'")), reader.RecordReads(tx))
		if got := len(collect(t, sc)); got != 3 {
			t.Fatalf("scan of p = 'x': %d rows", got)
		}
		var victim *actions.Add
		for f := range snap.Files() {
			if v := f.PartitionValues["p"]; v != nil && *v == c.removed {
				victim = f
			}
		}
		other := snap.NewTransaction()
		other.RemoveFile(victim, true)
		other.SetOperation("DELETE", nil, nil)
		if _, err := other.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		tx.Add(actions.Action{Add: &actions.Add{Path: "p=x/new.parquet", PartitionValues: map[string]*string{"p": victim.PartitionValues["p"]}, Size: 1, DataChange: true}})
		tx.SetOperation("WRITE", nil, nil)
		_, err := tx.Commit(ctx)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("concurrent remove in partition %s: commit error %v, want %v", c.removed, err, c.want)
		}
		_ = store
	}
}

// TestRowIndex checks that WithRowIndex numbers rows by their position in
// the data file, before the filter drops any, with and without a
// projection, across batch boundaries and page-index skipping.
func TestRowIndex(t *testing.T) {
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s string", nil)
	var b strings.Builder
	b.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"s":"v%d"}`, i*3, i)
	}
	b.WriteString("]")
	snap := tabletest.AppendTo(t, store, b.String(), writer.WithParquetProperties(parquet.WithMaxRowGroupLength(100), parquet.WithDataPageSize(256)))
	for _, opts := range [][]reader.Option{
		{},
		{reader.WithFilter(mustParse(t, "id < 300 OR s = 'v999'"))},
		{reader.WithFilter(mustParse(t, "id >= 1500")), reader.WithColumns("s")},
		{reader.WithColumns()},
	} {
		sc := mustScan(t, snap, append(opts, reader.WithRowIndex(), reader.WithBatchSize(33), reader.WithAllocator(mem))...)
		last := sc.Schema().Field(sc.Schema().NumFields() - 1)
		if last.Name != reader.RowIndexColumn || last.Type.ID() != arrow.INT64 {
			t.Fatalf("last column %v, want %s long", last, reader.RowIndexColumn)
		}
		n := 0
		for rec, err := range sc.Records(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
			var ids *array.Int64
			if i := rec.Schema().FieldIndices("id"); len(i) == 1 {
				ids = rec.Column(i[0]).(*array.Int64)
			}
			var ss *array.String
			if i := rec.Schema().FieldIndices("s"); len(i) == 1 {
				ss = rec.Column(i[0]).(*array.String)
			}
			for i := 0; i < idx.Len(); i++ {
				if ids != nil && ids.Value(i) != idx.Value(i)*3 {
					t.Fatalf("row with id %d has row index %d, want %d", ids.Value(i), idx.Value(i), ids.Value(i)/3)
				}
				if ss != nil && ss.Value(i) != fmt.Sprintf("v%d", idx.Value(i)) {
					t.Fatalf("row with s %s has row index %d", ss.Value(i), idx.Value(i))
				}
				n++
			}
		}
		if n == 0 {
			t.Fatalf("no rows")
		}
	}
}
