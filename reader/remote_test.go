package reader_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/objstoretest"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// newRemote makes a store look like an object store to the reader
// (objstoretest.Remote): data files are read by GetRange, each delayed by
// a random latency up to latency.
func newRemote(inner objstore.Store, latency time.Duration, seed uint64) *objstoretest.Remote {
	return objstoretest.NewRemote(inner, latency, seed)
}

// wideTable writes a table of rows rows and cols long columns c0..c(n-1)
// (random values, so pages do not compress away), one file per append,
// files row groups of rgRows rows.
func wideTable(t *testing.T, store objstore.Store, files, rows, cols, rgRows int) *deltalog.Snapshot {
	t.Helper()
	ctx := context.Background()
	var ddl []string
	var fields []arrow.Field
	for c := range cols {
		ddl = append(ddl, fmt.Sprintf("c%d long", c))
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", c), Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	tabletest.Create(t, store, strings.Join(ddl, ", "), nil)
	sc := arrow.NewSchema(fields, nil)
	r := rand.New(rand.NewPCG(1, 2))
	id := int64(0)
	for range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range rows {
			for c := range cols {
				if c == 0 {
					b.Field(0).(*array.Int64Builder).Append(id)
					continue
				}
				b.Field(c).(*array.Int64Builder).Append(r.Int64())
			}
			id++
		}
		rec := b.NewRecordBatch()
		b.Release()
		props := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(rgRows)), parquet.WithDictionaryDefault(false),
			parquet.WithPageIndexEnabled(true), parquet.WithDataPageSize(8 << 10)}
		if _, err := writer.Append(ctx, tabletest.Open(t, store), seq(rec), writer.WithParquetProperties(props...)); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return tabletest.Open(t, store)
}

// scanRows reads sc whole, in order, as canonical rows.
func scanRows(t *testing.T, sc *reader.Scan) []string {
	t.Helper()
	var out []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out = append(out, string(r))
		}
	}
	return out
}

// TestRemoteScanMatchesLocal: the same scans through a store that is
// read by GetRange (the object-store path) and through the memory store
// (read in place) return the same rows in the same order.
func TestRemoteScanMatchesLocal(t *testing.T) {
	mem := objstore.NewMem()
	wideTable(t, mem, 3, 5000, 4, 1200)
	remote := newRemote(mem, 2*time.Millisecond, 1)
	local, rem := tabletest.Open(t, mem), tabletest.Open(t, remote)
	for _, opts := range [][]reader.Option{
		nil,
		{reader.WithColumns("c2")},
		{reader.WithFilter(mustParse(t, "c0 >= 4000 AND c0 < 9000")), reader.WithColumns("c1")},
		{reader.WithLimit(7777), reader.WithParallelism(1)},
		{reader.WithRowIndex(), reader.WithBatchSize(999)},
	} {
		want := scanRows(t, mustScan(t, local, opts...))
		sc := mustScan(t, rem, opts...)
		got := scanRows(t, sc)
		if !slices.Equal(got, want) {
			t.Fatalf("%d rows through GetRange, %d in place; first differing: %s", len(got), len(want), diffRows(got, want))
		}
		m := sc.Metrics()
		if m.Requests == 0 || m.UncoveredReads != 0 {
			t.Errorf("metrics %+v: want requests and no uncovered read", m)
		}
	}
}

// TestDifferentialScansObjectStore runs the differential scan test's
// random tables (filters, projections, deletion vectors, column mapping,
// uneven files and row groups) through a store read by GetRange with
// random per-request latency, counted by objstore.CountingStore: every
// scan, and the same scan under a random limit, must return exactly the
// rows the in-place read returns, in its order. Seeds as in
// TestDifferentialScans (-diff.seed, -diff.base, -diff.tables).
func TestDifferentialScansObjectStore(t *testing.T) {
	tables := 2
	if raceEnabled || testing.Short() {
		tables = 1
	}
	if *diffTables > 0 {
		tables = *diffTables
	}
	var seeds []uint64
	if *diffSeed != 0 {
		seeds = []uint64{*diffSeed}
	} else {
		base := *diffBase
		if base == 0 {
			base = uint64(time.Now().UnixNano())
		}
		fmt.Fprintf(os.Stderr, "TestDifferentialScansObjectStore: base seed %d (replay: go test ./reader -run TestDifferentialScansObjectStore -diff.base %d)\n", base, base)
		for i := range tables {
			seeds = append(seeds, base+uint64(i)*0x9E3779B97F4A7C15)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("replay: go test ./reader -run TestDifferentialScansObjectStore -diff.seed %d", seed)
			runDifferential(t, seed, false, true)
		})
	}
}

// TestRemoteProjectionFetchesLess: a projection of one of eight columns
// fetches about an eighth of the bytes of a full scan, not all of them.
func TestRemoteProjectionFetchesLess(t *testing.T) {
	defer reader.FetchSizes(4<<20, 16<<10, 8<<10, 1<<20)()
	mem := objstore.NewMem()
	wideTable(t, mem, 2, 20000, 8, 5000)
	remote := newRemote(mem, 0, 1)
	snap := tabletest.Open(t, remote)
	remote.Reset()
	full := mustScan(t, snap)
	scanRows(t, full)
	fullBytes := objstoretest.Bytes(remote.Ranges(".parquet"))
	remote.Reset()
	proj := mustScan(t, snap, reader.WithColumns("c3"))
	if n := len(scanRows(t, proj)); n != 40000 {
		t.Fatalf("%d rows, want 40000", n)
	}
	projBytes := objstoretest.Bytes(remote.Ranges(".parquet"))
	t.Logf("full scan: %d bytes in %d requests; one column: %d bytes in %d requests", fullBytes, full.Metrics().Requests, projBytes, proj.Metrics().Requests)
	if projBytes*4 > fullBytes {
		t.Errorf("one of 8 columns fetched %d bytes, the full scan %d", projBytes, fullBytes)
	}
	if m := proj.Metrics(); m.BytesFetched != projBytes || m.UncoveredReads != 0 {
		t.Errorf("metrics %+v, store saw %d bytes", m, projBytes)
	}
}

// TestRemoteRequestsPerRowGroup: a file of K row groups read for C
// adjacent columns takes one tail read and one coalesced ranged GET per
// row group, not one per column chunk and footer read.
func TestRemoteRequestsPerRowGroup(t *testing.T) {
	defer reader.FetchSizes(4<<20, 16<<10, 8<<10, 1<<20)()
	const k = 6
	mem := objstore.NewMem()
	wideTable(t, mem, 1, k*5000, 8, 5000)
	remote := newRemote(mem, 0, 1)
	snap := tabletest.Open(t, remote)
	remote.Reset()
	sc := mustScan(t, snap, reader.WithColumns("c2", "c3", "c4"))
	if n := len(scanRows(t, sc)); n != k*5000 {
		t.Fatalf("%d rows", n)
	}
	got := remote.Ranges(".parquet")
	t.Logf("%d requests: %v", len(got), got)
	if len(got) != k+1 {
		t.Errorf("%d ranged GETs for %d row groups of 3 adjacent columns, want %d (the tail and one per row group)", len(got), k, k+1)
	}
	if m := sc.Metrics(); m.UncoveredReads != 0 {
		t.Errorf("%d reads not covered by the plan", m.UncoveredReads)
	}
}

// TestRemoteLargeChunkSplit: a column chunk larger than a piece is fetched
// by several ranged GETs in flight at once.
func TestRemoteLargeChunkSplit(t *testing.T) {
	defer reader.FetchSizes(32<<10, 16<<10, 8<<10, 1<<20)()
	mem := objstore.NewMem()
	wideTable(t, mem, 1, 50000, 2, 50000) // a chunk of c1 is 400 KB
	remote := newRemote(mem, 5*time.Millisecond, 1)
	snap := tabletest.Open(t, remote)
	remote.Reset()
	sc := mustScan(t, snap, reader.WithColumns("c1"), reader.WithParallelism(1))
	if n := len(scanRows(t, sc)); n != 50000 {
		t.Fatalf("%d rows", n)
	}
	got := remote.Ranges(".parquet")
	var biggest int64
	for _, g := range got {
		biggest = max(biggest, g.N)
	}
	_, maxRequests := remote.MaxInFlight()
	t.Logf("%d requests, largest %d bytes, at most %d in flight", len(got), biggest, maxRequests)
	if len(got) < 10 || biggest > 32<<10 {
		t.Errorf("%d ranged GETs, the largest %d bytes: want the 400 KB chunk in pieces of at most 32 KiB", len(got), biggest)
	}
	if maxRequests < 4 {
		t.Errorf("at most %d requests in flight with parallelism 1: want many", maxRequests)
	}
}

// TestRemoteBudget: the bytes in flight in GetRange never exceed the fetch
// budget, though the table is larger, and the rows are right.
func TestRemoteBudget(t *testing.T) {
	defer reader.FetchSizes(32<<10, 16<<10, 8<<10, 16<<10)()
	const budget = 160 << 10
	mem := objstore.NewMem()
	wideTable(t, mem, 8, 3000, 4, 1000) // files of about 100 KB
	remote := newRemote(mem, 3*time.Millisecond, 1)
	want := scanRows(t, mustScan(t, tabletest.Open(t, mem)))
	snap := tabletest.Open(t, remote)
	remote.Reset()
	sc := mustScan(t, snap, reader.WithFetchBudget(budget), reader.WithParallelism(2))
	got := scanRows(t, sc)
	if !slices.Equal(got, want) {
		t.Fatal(diffRows(got, want))
	}
	total := objstoretest.Bytes(remote.Ranges(".parquet"))
	m := sc.Metrics()
	maxInFlight, maxRequests := remote.MaxInFlight()
	t.Logf("%d bytes fetched, at most %d in flight, peak buffered %d, budget %d", total, maxInFlight, m.PeakBuffered, budget)
	if total < 3*budget {
		t.Fatalf("the table (%d bytes) is not larger than the budget", total)
	}
	if maxInFlight > budget || m.PeakBuffered > budget {
		t.Errorf("%d bytes in flight, %d buffered at once: over the budget of %d", maxInFlight, m.PeakBuffered, budget)
	}
	if maxRequests < 2 {
		t.Errorf("at most %d requests in flight", maxRequests)
	}
}

// TestRemoteLimitStopsEarly: a scan stopped by its limit does not fetch
// the whole table.
func TestRemoteLimitStopsEarly(t *testing.T) {
	defer reader.FetchSizes(32<<10, 16<<10, 8<<10, 16<<10)()
	mem := objstore.NewMem()
	wideTable(t, mem, 10, 5000, 4, 1000)
	remote := newRemote(mem, time.Millisecond, 1)
	snap := tabletest.Open(t, remote)
	remote.Reset()
	scanRows(t, mustScan(t, snap))
	full := objstoretest.Bytes(remote.Ranges(".parquet"))
	for _, par := range []int{1, 2, 4} {
		remote.Reset()
		if n := len(scanRows(t, mustScan(t, snap, reader.WithLimit(10), reader.WithParallelism(par)))); n != 10 {
			t.Fatalf("%d rows", n)
		}
		got := objstoretest.Bytes(remote.Ranges(".parquet"))
		t.Logf("parallelism %d: limit 10 fetched %d of %d bytes", par, got, full)
		if got*10 > full*int64(par+2) { // the files the decoders had begun, and one more
			t.Errorf("parallelism %d: limit 10 fetched %d bytes of the table's %d", par, got, full)
		}
	}
}

// failingStore fails every GetRange of a data file at or past off.
type failingStore struct {
	objstore.Store
	off int64
}

func (f failingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if strings.HasSuffix(key, ".parquet") && off+n > f.off {
		return nil, fmt.Errorf("injected failure at %d", off)
	}
	return f.Store.GetRange(ctx, key, off, n)
}

// TestRemoteErrorsAndCancel: a failed ranged GET ends the scan with an
// error naming the file; a cancelled context ends it with the context's
// error, whatever the decoders and fetches were doing.
func TestRemoteErrorsAndCancel(t *testing.T) {
	defer reader.FetchSizes(32<<10, 16<<10, 8<<10, 16<<10)()
	mem := objstore.NewMem()
	wideTable(t, mem, 3, 5000, 3, 1000)
	for _, off := range []int64{0, 50 << 10} { // the tail, a column chunk
		snap := tabletest.Open(t, failingStore{mem, off})
		var err error
		for _, e := range mustScan(t, snap).Records(context.Background()) {
			if e != nil {
				err = e
			}
		}
		if err == nil || !strings.Contains(err.Error(), ".parquet") || !strings.Contains(err.Error(), "injected failure") {
			t.Errorf("failing at %d: %v, want the injected failure naming the file", off, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snap := tabletest.Open(t, newRemote(mem, 20*time.Millisecond, 1))
	var err error
	n, after := 0, 0
	for _, e := range mustScan(t, snap, reader.WithBatchSize(100)).Records(ctx) {
		if e != nil {
			err = e
			break
		}
		if n >= 2 {
			after++
		}
		if n++; n == 2 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) || after > 0 {
		t.Errorf("after cancel: %v and %d more batches, want context.Canceled next", err, after)
	}
}

// TestRemotePageSkippingFetchesLess: where the page index skips pages, they
// are not fetched: a filter selecting 1% of a file's ids fetches a small
// part of the bytes the same scan fetches without the page index.
func TestRemotePageSkippingFetchesLess(t *testing.T) {
	defer reader.FetchSizes(4<<20, 16<<10, 8<<10, 1<<20)()
	mem := objstore.NewMem()
	wideTable(t, mem, 1, 50000, 3, 50000)
	remote := newRemote(mem, 0, 1)
	snap := tabletest.Open(t, remote)
	opts := []reader.Option{reader.WithFilter(mustParse(t, "c0 BETWEEN 20000 AND 20499")), reader.WithColumns("c1")}
	want := scanRows(t, mustScan(t, tabletest.Open(t, mem), opts...))
	fetched := func() int64 {
		remote.Reset()
		sc := mustScan(t, snap, opts...)
		got := scanRows(t, sc)
		if !slices.Equal(got, want) || len(got) != 500 {
			t.Fatalf("%d rows: %s", len(got), diffRows(got, want))
		}
		if m := sc.Metrics(); m.UncoveredReads > 0 {
			t.Errorf("%d reads not covered by the plan: %v", m.UncoveredReads, remote.Ranges(".parquet"))
		}
		return objstoretest.Bytes(remote.Ranges(".parquet"))
	}
	with := fetched()
	restore := reader.PageIndex(false)
	without := fetched()
	restore()
	t.Logf("with the page index: %d bytes; without: %d", with, without)
	if with*4 > without {
		t.Errorf("the page index saved too little: %d bytes fetched with it, %d without", with, without)
	}
}
