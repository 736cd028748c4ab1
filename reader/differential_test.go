package reader_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

var (
	diffSeed   = flag.Uint64("diff.seed", 0, "run the differential scan test on the one table of this seed")
	diffBase   = flag.Uint64("diff.base", 0, "run the differential scan test's tables of this base seed (printed by every run)")
	diffTables = flag.Int("diff.tables", 0, "tables in the differential scan test (default 12, 4 under -race; 150 with -diff.long)")
	diffLong   = flag.Bool("diff.long", false, "differential scan test at its long size: more tables, rows, scans and larger values")
)

// TestDifferentialScans writes random tables through lakelog's writer with
// random Parquet shapes (dictionary or plain pages, dictionaries that fall
// back to plain part way, V1 or V2 pages, small and large pages and row
// groups, page indexes on or off, several files), holding every type the
// reader decodes: long, int, double (NaN, -0), string and binary values of
// 0 bytes to 100 KB (unicode, empty, null), dates, timestamps, decimals,
// lists, maps and structs, partitioned or not. Half the tables then get
// deletion vectors on a random subset of their files (a few rows, a run,
// about half or all of a file's rows; inline or in .bin files), which the
// reference read applies from its own record of the deleted rows. Each
// table is scanned with
// random filters, projections (with and without the filter's columns),
// batch sizes and parallelism, through the scans' pooled allocator in its
// checked mode, and each result must equal, value by value, the rows of
// an independent read: arrow-go's pqarrow with the plain Go allocator,
// filtered by a predicate evaluated here in Go. The checked pool fails the
// scan when anything wrote past a buffer's length, and poisons what is
// freed, so a use after free shows up as wrong rows.
//
// Each table's seed is in its subtest's name; replay one with
//
//	go test ./reader -run TestDifferentialScans -diff.seed N
//
// The run's base seed is printed to stderr first; -diff.base B replays
// every table of that run (for a crash that loses the test's log).
//
// and run the long size with -diff.long (or -diff.tables N).
func TestDifferentialScans(t *testing.T) {
	tables := 12
	if raceEnabled {
		tables = 4
	}
	if *diffLong {
		tables = 150
	}
	if *diffTables > 0 {
		tables = *diffTables
	}
	if testing.Short() && *diffTables == 0 {
		tables = 4
	}
	seeds := []uint64{}
	if *diffSeed != 0 {
		seeds = append(seeds, *diffSeed)
	} else {
		base := *diffBase
		if base == 0 {
			base = uint64(time.Now().UnixNano())
		}
		// Printed before any table is written: a crash inside arrow-go's
		// own goroutines loses the test's log, not this line.
		fmt.Fprintf(os.Stderr, "TestDifferentialScans: base seed %d (replay: go test ./reader -run TestDifferentialScans -diff.base %d)\n", base, base)
		for i := range tables {
			seeds = append(seeds, base+uint64(i)*0x9E3779B97F4A7C15)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("replay: go test ./reader -run TestDifferentialScans -diff.seed %d", seed)
			runDifferential(t, seed, *diffLong, false)
		})
	}
}

// TestDifferentialSplitRowGroups is TestDifferentialScans on tables whose
// row groups are large next to the batches, scanned through flat columns
// only (every column decoded page by page), so that parallel passes cut
// row groups into pieces decoded on several goroutines (splitUnits): the
// rows, and their order, must be those of the reference and of a serial
// scan. It fails if no row group was split.
func TestDifferentialSplitRowGroups(t *testing.T) {
	tables := 6
	if raceEnabled || testing.Short() {
		tables = 2
	}
	if *diffTables > 0 {
		tables = *diffTables
	}
	base := *diffBase
	if base == 0 {
		base = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(os.Stderr, "TestDifferentialSplitRowGroups: base seed %d (replay: go test ./reader -run TestDifferentialSplitRowGroups -diff.base %d)\n", base, base)
	before, beforeCols, remoteBefore := reader.UnitsSplit(), reader.BatchesByColumns(), remoteSplits.Load()
	for i := range tables {
		// Seeds with bit 1 set make tables read through the object-store
		// path too (odd tables), where row groups are split as on local
		// disk, the fetcher serving every piece's decoders.
		seed := base + uint64(i)*0x9E3779B97F4A7C15
		if seed &^= 2; i%2 == 1 {
			seed |= 2
		}
		if *diffSeed != 0 {
			seed = *diffSeed
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("replay: go test ./reader -run TestDifferentialSplitRowGroups -diff.seed %d", seed)
			runDifferentialWith(t, seed, diffOptions{long: *diffLong, flat: true, remote: seed&2 != 0})
		})
		if *diffSeed != 0 {
			break
		}
	}
	if *diffSeed != 0 {
		return // one table: it need not split anything
	}
	if !t.Failed() && reader.UnitsSplit() == before {
		t.Fatal("no row group was split: the test checked nothing of splitUnits")
	}
	if !t.Failed() && tables > 1 && remoteSplits.Load() == remoteBefore {
		t.Fatal("no row group was split through the object-store path")
	}
	if !t.Failed() && tables > 1 && reader.BatchesByColumns() == beforeCols {
		t.Fatal("no batch was decoded column by column: the test checked nothing of decodePages")
	}
}

// diffSchema is every table's schema; p is the partition column of the
// partitioned ones.
const diffSchema = "id long not null, i int, d double, s string, b binary, dt date, ts timestamp, " +
	"dec decimal(12,3), l array<long>, m map<string,long>, st struct<a: long, b: string>, p string"

// diffSchemaPhysical is diffSchema under the physical names of the
// column-mapped tables.
const diffSchemaPhysical = "col_id long not null, col_i int, col_d double, col_s string, col_b binary, col_dt date, col_ts timestamp, " +
	"col_dec decimal(12,3), col_l array<long>, col_m map<string,long>, col_st struct<col_a: long, col_b: string>, col_p string"

// diffColumns are the schema's top-level columns, in order.
var diffColumns = []string{"id", "i", "d", "s", "b", "dt", "ts", "dec", "l", "m", "st", "p"}

// diffGen draws one table's values and scans.
type diffGen struct {
	r    *rand.Rand
	long bool
	// vocabulary the string values are drawn from, so that filters on
	// strings hit values that exist.
	prefixes []string
	maxID    int64
	flat     bool    // diffOptions.flat
	nullRate float64 // of the nullable columns, per append
	bigRate  float64 // of strings and binaries far over a page, per append
}

// runDifferential checks the scans of one random table against the
// reference read. With remote, each scan (and a limited one) is also run
// through a store read by GetRange with random latency (the object-store
// path), and must return what the in-place read returns, in its order.
func runDifferential(t *testing.T, seed uint64, long, remote bool) {
	runDifferentialWith(t, seed, diffOptions{long: long, remote: remote})
}

// diffOptions vary runDifferential's tables and scans. flat: large row
// groups (several thousand rows, one per file) and scans that read
// only flat columns (no array, map or struct column in the projection or
// the filter), the tables splitUnits splits.
//
// cloud, when set, is an empty store of a real object store server (or
// one in front of it: a proxy that injects faults, a latency): the
// table is copied into it and the remote scans read it from there,
// delayed by up to latency per GetRange.
type diffOptions struct {
	long, remote, flat bool
	cloud              objstore.Store
	latency            time.Duration
}

func runDifferentialWith(t *testing.T, seed uint64, o diffOptions) {
	long, remote := o.long, o.remote
	ctx := context.Background()
	g := &diffGen{r: rand.New(rand.NewPCG(seed, seed^0x5bd1e995)), long: long,
		prefixes: []string{"", "a", "ab", "abc", "b", "ba", "é", "日本", "z", "😀"}, flat: o.flat}
	store := objstore.NewMem()
	// Odd seeds make column-mapped tables (name mode): the files are
	// written under physical names (col_ and the logical name), then a
	// commit maps them to the logical ones, as Spark's ALTER TABLE does.
	// (Decided by the seed, not g.r, so that other tables keep theirs.)
	mapped := seed%2 == 1
	phys := func(name string) string { return name }
	ddl := diffSchema
	if mapped {
		phys = func(name string) string { return "col_" + name }
		ddl = diffSchemaPhysical
	}
	var parts []string
	if g.r.IntN(2) == 0 {
		parts = []string{phys("p")}
	}
	tabletest.Create(t, store, ddl, nil, parts...)
	snap := tabletest.Open(t, store)
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}

	appends := 1 + g.r.IntN(4)
	maxRows := 2500
	if raceEnabled {
		maxRows = 800
	}
	var shapes []string
	total := 0
	indexed := false // some flat file has the page index
	for a := range appends {
		rows := 1 + g.r.IntN(maxRows)
		if long {
			rows = 1 + g.r.IntN(20000)
		}
		if o.flat {
			rows = maxRows + g.r.IntN(maxRows)
		}
		g.nullRate = []float64{0, 0.05, 0.3, 0.9}[g.r.IntN(4)]
		g.bigRate = []float64{0, 0, 0.002, 0.02}[g.r.IntN(4)]
		total += rows
		props, shape := g.parquetShape()
		if o.flat {
			// One row group per file, with its offset index; small pages.
			// (Without the page index, a large row group is decoded column
			// by column instead of split.)
			// The last append has it when no other has: a table with
			// none splits nothing.
			index := g.r.IntN(4) > 0 || a == appends-1 && !indexed
			indexed = indexed || index
			props = append(props, parquet.WithMaxRowGroupLength(64<<20), parquet.WithPageIndexEnabled(index),
				parquet.WithDataPageSize([]int64{64, 1 << 10, 16 << 10}[g.r.IntN(3)]))
			shape += fmt.Sprintf(" (then: one row group, page index %v, small pages)", index)
		}
		shapes = append(shapes, shape)
		var recs []arrow.RecordBatch
		for left := rows; left > 0; {
			n := min(left, 1+g.r.IntN(rows))
			recs = append(recs, g.batch(sc, n))
			left -= n
		}
		opts := []writer.Option{writer.WithParquetProperties(props...)}
		if g.r.IntN(3) == 0 && !o.flat {
			opts = append(opts, writer.WithTargetFileSize(int64(8<<10+g.r.IntN(256<<10))))
		}
		if _, err := writer.Append(ctx, tabletest.Open(t, store), seq(recs...), opts...); err != nil {
			t.Fatalf("append (%s): %v", shape, err)
		}
		for _, r := range recs {
			r.Release()
		}
	}
	snap = tabletest.Open(t, store)
	var deleted map[string]map[int64]bool
	if g.r.IntN(2) == 0 {
		var how string
		deleted, how = g.deletionVectors(t, ctx, store, snap)
		snap = tabletest.Open(t, store)
		shapes = append(shapes, how)
	}
	if mapped {
		logical := map[string]string{"col_a": "a"}
		for _, c := range diffColumns {
			logical[phys(c)] = c
		}
		snap = mapColumns(t, store, snap, "name", logical)
	}
	t.Logf("table: %d files, partitioned=%v, column mapping=%v, appends: %s", countFiles(snap), len(parts) > 0, mapped, strings.Join(shapes, "; "))

	ref := referenceRows(t, ctx, store, snap, deleted, phys)
	var remoteSnap *deltalog.Snapshot
	var counting *objstore.CountingStore
	switch {
	case o.cloud != nil:
		copyObjects(t, ctx, store, o.cloud)
		var st objstore.Store = o.cloud
		if o.latency > 0 {
			st = newRemote(st, o.latency, seed)
		}
		counting = objstore.Counting(st)
		remoteSnap = tabletest.Open(t, counting)
		remote = true
	case remote:
		counting = objstore.Counting(newRemote(store, time.Millisecond, seed))
		remoteSnap = tabletest.Open(t, counting)
	}
	scans := 10
	switch {
	case long:
		scans = 30
	case o.cloud != nil:
		scans = 6 // each a few round trips to a real server, and its limited twin
	}
	if o.flat {
		scans += 2 // the last two made to split (below)
	}
	for k := range scans {
		filter := g.predicate(2)
		var cols []string
		if g.r.IntN(3) > 0 || o.flat {
			cols = g.projection()
		}
		batch := []int{1, 3, 17, 100, 1000, 4096, reader.DefaultBatchSize}[g.r.IntN(7)]
		if o.flat {
			for usesNested(t, filter.text) {
				filter = g.predicate(2)
			}
			cols = slices.DeleteFunc(cols, func(c string) bool { return c == "l" || c == "m" || c == "st" })
			if len(cols) == 0 {
				cols = []string{"id"}
			}
			batch = []int{17, 100, 300}[g.r.IntN(3)]
		}
		if batch < 17 && total > 1500 && !long {
			batch = 17 // batches of one row or three cost seconds on larger tables
		}
		par := 1 + g.r.IntN(4)
		if o.flat {
			par = 2 + g.r.IntN(3)
		}
		what := fmt.Sprintf("scan %d: --where %q --columns %v, batch %d, parallelism %d", k, filter.text, cols, batch, par)

		// A parallel pass decodes units (runs of row groups) of a file on
		// several goroutines; a small decode-ahead budget makes units wait
		// for the consumer.
		ahead := []int64{1, 64 << 10, 64 << 20}[g.r.IntN(3)]
		if o.flat && k == scans-1 {
			// Only a row group larger than the budget is split (or
			// decoded column by column), and only when every column
			// read is decoded page by page: a flat table's extra last
			// scan (its draws made, then replaced) has the smallest
			// budget and batch and reads two flat numeric columns,
			// so that every table has a scan that splits.
			ahead, batch = 1, 17
			cols = []string{"id", "d"}
			filter = diffPred{text: "id >= 0", eval: func(r diffRow) tri { return triOf(r.id >= 0) }}
			what = fmt.Sprintf("scan %d: --where %q --columns %v, batch %d, parallelism %d", k, filter.text, cols, batch, par)
		}
		if o.flat && k == scans-2 {
			// And one that splits where the page index leaves only some
			// pages: a range of ids (mostly ascending, so pages' bounds
			// are narrow) and flat columns decoded page by page.
			ahead, batch = 1, []int{17, 100}[g.r.IntN(2)]
			cols = nil
			for _, c := range []string{"id", "i", "d", "s", "b", "dt", "ts", "p"} {
				if g.r.IntN(2) == 0 {
					cols = append(cols, c)
				}
			}
			if len(cols) == 0 {
				cols = []string{"s"}
			}
			lo := g.r.Int64N(g.maxID + 1)
			hi := lo + g.maxID/8
			filter = diffPred{text: fmt.Sprintf("id BETWEEN %d AND %d", lo, hi), eval: func(r diffRow) tri { return triOf(r.id >= lo && r.id <= hi) }}
			what = fmt.Sprintf("scan %d: --where %q --columns %v, batch %d, parallelism %d", k, filter.text, cols, batch, par)
		}
		views := g.r.IntN(2) == 0 // strings and binaries as views
		what += fmt.Sprintf(", decode ahead %d, views %v", ahead, views)
		pool := reader.NewCheckedPool()
		opts := []reader.Option{reader.WithFilter(mustParse(t, filter.text)), reader.WithBatchSize(batch),
			reader.WithParallelism(par), reader.WithAllocator(pool), reader.DecodeAhead(ahead)}
		if views {
			opts = append(opts, reader.WithStringViews())
		}
		if cols != nil {
			opts = append(opts, reader.WithColumns(cols...))
		}
		s := mustScan(t, snap, opts...)
		var got []string
		var scanErr error
		for rec, err := range s.Records(ctx) {
			if err != nil {
				scanErr = err
				break
			}
			if !rec.Schema().Equal(s.Schema()) {
				t.Fatalf("%s: a batch of schema %v, the scan's is %v", what, rec.Schema(), s.Schema())
			}
			if views {
				for i, f := range rec.Schema().Fields() {
					var err error
					switch v := rec.Column(i).(type) {
					case *array.StringView:
						err = v.ValidateFull()
					case *array.BinaryView:
						err = v.ValidateFull()
					}
					if err != nil {
						t.Fatalf("%s: column %s: %v", what, f.Name, err)
					}
				}
			}
			rows, err := reader.CanonicalRows(rec)
			if err != nil {
				t.Fatalf("%s: canonical rows: %v", what, err)
			}
			for _, r := range rows {
				got = append(got, string(r))
			}
		}
		if scanErr != nil {
			t.Fatalf("%s: %v", what, scanErr)
		}
		if err := pool.Check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if remote {
			remoteOpts := append(slices.Clone(opts[:3]), reader.DecodeAhead(ahead))
			if views {
				remoteOpts = append(remoteOpts, reader.WithStringViews())
			}
			compareRemote(t, what, snap, remoteSnap, counting, remoteOpts, cols, got, g.r)
		}
		if par > 1 {
			// In the order of a serial scan (files one after another, rows
			// in file order), whatever ran in parallel.
			serialOpts := append(slices.Clone(opts[:2]), reader.WithParallelism(1))
			if views {
				serialOpts = append(serialOpts, reader.WithStringViews())
			}
			if cols != nil {
				serialOpts = append(serialOpts, reader.WithColumns(cols...))
			}
			serial := mustScan(t, snap, serialOpts...)
			if ser := scanRows(t, serial); !slices.Equal(got, ser) {
				t.Fatalf("%s: parallel and serial scans differ in rows or order: %s", what, diffRows(got, ser))
			}
		}
		want := ref.matching(filter, cols)
		if k%3 == 0 {
			n, err := mustScan(t, snap, reader.WithFilter(mustParse(t, filter.text))).Count(ctx)
			if err != nil {
				t.Fatalf("%s: count: %v", what, err)
			}
			if n != int64(len(want)) {
				t.Fatalf("%s: Count %d, want %d", what, n, len(want))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %s", what, diffRows(got, want))
		}
	}
}

// compareRemote runs a scan (opts, cols) through remoteSnap and checks
// that it returns want, the in-place scan's rows in order; then the same
// scan with a random limit both ways.
func compareRemote(t *testing.T, what string, snap, remoteSnap *deltalog.Snapshot, counting *objstore.CountingStore, opts []reader.Option, cols []string, want []string, r *rand.Rand) {
	t.Helper()
	opts = slices.Clone(opts)
	if cols != nil {
		opts = append(opts, reader.WithColumns(cols...))
	}
	run := func(snap *deltalog.Snapshot, opts []reader.Option, limited bool) ([]string, reader.ScanMetrics) {
		what := what
		if snap == remoteSnap {
			what += " (through GetRange)"
		}
		pool := reader.NewCheckedPool()
		sc := mustScan(t, snap, append(opts, reader.WithAllocator(pool))...)
		var out []string
		for rec, err := range sc.Records(context.Background()) {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			rows, err := reader.CanonicalRows(rec)
			if err != nil {
				t.Fatalf("%s: canonical rows: %v", what, err)
			}
			for _, row := range rows {
				out = append(out, string(row))
			}
		}
		// A scan stopped by its limit leaves a few hundred bytes allocated
		// in place too (in arrow-go's readers stopped mid-file): checked
		// only for writes past a buffer, and use after free (as rows).
		if err := pool.Check(); err != nil && (!limited || !strings.Contains(err.Error(), "not freed")) {
			t.Fatalf("%s: %v", what, err)
		}
		return out, sc.Metrics()
	}
	counting.Reset()
	split := reader.UnitsSplit()
	got, m := run(remoteSnap, opts, false)
	remoteSplits.Add(reader.UnitsSplit() - split)
	if !slices.Equal(got, want) {
		t.Fatalf("%s, through GetRange: %s", what, diffRows(got, want))
	}
	t.Logf("%s: %+v", what, m)
	if counting.Count(objstore.OpGetRange) < int(m.Requests) || m.UncoveredReads > 0 {
		t.Fatalf("%s: the store saw %d GetRanges, the scan counts %+v", what, counting.Count(objstore.OpGetRange), m)
	}
	if len(want) == 0 {
		return
	}
	limit := int64(r.IntN(len(want)) + 1)
	lopts := append(slices.Clone(opts), reader.WithLimit(limit))
	wantL, _ := run(snap, lopts, true)
	gotL, mL := run(remoteSnap, lopts, true)
	if !slices.Equal(gotL, wantL) || int64(len(gotL)) != limit {
		t.Fatalf("%s, limit %d, through GetRange (%d rows, %d in place): %s", what, limit, len(gotL), len(wantL), diffRows(gotL, wantL))
	}
	if mL.UncoveredReads > 0 {
		t.Fatalf("%s, limit %d, through GetRange: %d reads not covered by the plan: %+v", what, limit, mL.UncoveredReads, mL)
	}
}

// remoteSplits counts the units row groups were split into by scans
// through the object-store path (compareRemote).
var remoteSplits atomic.Int64

// copyObjects copies every object of from into to.
func copyObjects(t *testing.T, ctx context.Context, from, to objstore.Store) {
	t.Helper()
	for info, err := range from.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		b, err := from.Get(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		if err := to.Put(ctx, info.Key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
			t.Fatalf("copy %s: %v", info.Key, err)
		}
	}
}

// usesNested reports whether the filter text reads an array, map or
// struct column.
func usesNested(t *testing.T, text string) bool {
	for _, c := range expr.Columns(mustParse(t, text)) {
		if c == "l" || c == "m" || c == "st" || strings.HasPrefix(c, "st.") {
			return true
		}
	}
	return false
}

func countFiles(snap *deltalog.Snapshot) int {
	n := 0
	for range snap.Files() {
		n++
	}
	return n
}

// parquetShape draws the Parquet writer settings of one append.
func (g *diffGen) parquetShape() ([]parquet.WriterProperty, string) {
	version := []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2}[g.r.IntN(2)]
	dict := g.r.IntN(3) > 0
	dictLimit := []int64{256, 4 << 10, 64 << 10, 1 << 20}[g.r.IntN(4)]
	pageSize := []int64{64, 1 << 10, 16 << 10, 160 << 10, 1 << 20}[g.r.IntN(5)]
	rowGroup := []int64{7, 100, 1000, 64 << 20}[g.r.IntN(4)]
	pageIndex := g.r.IntN(3) > 0
	props := []parquet.WriterProperty{
		parquet.WithDataPageVersion(version), parquet.WithDictionaryDefault(dict),
		parquet.WithDictionaryPageSizeLimit(dictLimit), parquet.WithDataPageSize(pageSize),
		parquet.WithMaxRowGroupLength(rowGroup), parquet.WithPageIndexEnabled(pageIndex),
	}
	shape := fmt.Sprintf("pages v%d, dictionary %v (limit %d), page %d B, row group %d rows, page index %v",
		int(version)+1, dict, dictLimit, pageSize, rowGroup, pageIndex)
	return props, shape
}

func (g *diffGen) null() bool { return g.r.Float64() < g.nullRate }

// text draws a string: mostly short, from the vocabulary; some empty, some
// unicode, some far longer than a page.
func (g *diffGen) text() string {
	var b strings.Builder
	b.WriteString(g.prefixes[g.r.IntN(len(g.prefixes))])
	n := g.r.IntN(12)
	if g.r.Float64() < g.bigRate {
		n = 1000 + g.r.IntN(9000)
		if g.r.IntN(4) == 0 {
			n = 50_000 + g.r.IntN(50_000)
		}
	}
	for range n {
		switch g.r.IntN(20) {
		case 0:
			b.WriteString("ü")
		case 1:
			b.WriteString("語")
		default:
			b.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	return b.String()
}

func (g *diffGen) bytesValue() []byte {
	n := g.r.IntN(20)
	if g.r.Float64() < g.bigRate {
		n = 1000 + g.r.IntN(100_000)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

// batch draws n rows of the table's Arrow schema sc.
func (g *diffGen) batch(sc *arrow.Schema, n int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	// Sorted ids make narrow pages, which the page index skips; the flat
	// tables (split row groups) have them more often.
	sorted := g.r.IntN(2) == 0 || g.flat && g.r.IntN(2) == 0
	for range n {
		var id int64
		if sorted {
			g.maxID += 1 + int64(g.r.IntN(3))
			id = g.maxID
		} else {
			id = int64(g.r.IntN(int(g.maxID) + 1000))
			g.maxID = max(g.maxID, id)
		}
		bld.Field(0).(*array.Int64Builder).Append(id)
		g.maybe(bld.Field(1), func(b array.Builder) { b.(*array.Int32Builder).Append(int32(g.r.IntN(200) - 100)) })
		g.maybe(bld.Field(2), func(b array.Builder) {
			v := g.r.NormFloat64() * 100
			switch g.r.IntN(50) {
			case 0:
				v = math.NaN()
			case 1:
				v = math.Copysign(0, -1)
			case 2:
				v = math.Inf(1 - 2*g.r.IntN(2))
			}
			b.(*array.Float64Builder).Append(v)
		})
		g.maybe(bld.Field(3), func(b array.Builder) { b.(*array.StringBuilder).Append(g.text()) })
		g.maybe(bld.Field(4), func(b array.Builder) { b.(*array.BinaryBuilder).Append(g.bytesValue()) })
		g.maybe(bld.Field(5), func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32(19000 + g.r.IntN(1000))) })
		g.maybe(bld.Field(6), func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + g.r.Int64N(100_000_000_000_000)))
		})
		g.maybe(bld.Field(7), func(b array.Builder) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(g.r.Int64N(2_000_000_000) - 1_000_000_000))
		})
		g.maybe(bld.Field(8), func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Int64Builder)
			for range g.r.IntN(5) {
				if g.r.IntN(6) == 0 {
					vb.AppendNull()
				} else {
					vb.Append(g.r.Int64N(1000))
				}
			}
		})
		g.maybe(bld.Field(9), func(b array.Builder) {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			for k := range g.r.IntN(4) {
				mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d%s", k, g.prefixes[g.r.IntN(len(g.prefixes))]))
				if g.r.IntN(5) == 0 {
					mb.ItemBuilder().AppendNull()
				} else {
					mb.ItemBuilder().(*array.Int64Builder).Append(g.r.Int64N(100))
				}
			}
		})
		g.maybe(bld.Field(10), func(b array.Builder) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			if g.r.IntN(5) == 0 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Int64Builder).Append(g.r.Int64N(500))
			}
			if g.r.IntN(5) == 0 {
				sb.FieldBuilder(1).AppendNull()
			} else {
				sb.FieldBuilder(1).(*array.StringBuilder).Append(g.text())
			}
		})
		if g.r.IntN(5) == 0 {
			bld.Field(11).AppendNull()
		} else {
			bld.Field(11).(*array.StringBuilder).Append(fmt.Sprintf("p%d", g.r.IntN(3)))
		}
	}
	return bld.NewRecordBatch()
}

func (g *diffGen) maybe(b array.Builder, appendValue func(array.Builder)) {
	if g.null() {
		b.AppendNull()
		return
	}
	appendValue(b)
}

// projection draws a non-empty subset of the columns in random order, or
// (rarely) no columns at all.
func (g *diffGen) projection() []string {
	if g.r.IntN(15) == 0 {
		return []string{}
	}
	cols := slices.Clone(diffColumns)
	g.r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	return cols[:1+g.r.IntN(len(cols))]
}

// diffPred is a filter as text for the reader and as a Go function for the
// reference rows, in SQL's three-valued logic.
type diffPred struct {
	text string
	eval func(row diffRow) tri
}

type tri int8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (a tri) and(b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triNull || b == triNull:
		return triNull
	}
	return triTrue
}

func (a tri) or(b tri) tri {
	switch {
	case a == triTrue || b == triTrue:
		return triTrue
	case a == triNull || b == triNull:
		return triNull
	}
	return triFalse
}

func (a tri) not() tri {
	switch a {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

// diffRow is one reference row's values that filters read; a nil pointer
// is null.
type diffRow struct {
	id                  int64
	i                   *int64
	d                   *float64
	s                   *string
	bNull, lNull, mNull bool
	dt                  *int64
	ts                  *int64
	dec                 *int64 // unscaled, scale 3
	stNull              bool
	stA                 *int64
	stB                 *string
	p                   *string
}

var cmpOps = []string{"=", "<>", "<", "<=", ">", ">="}

func cmpResult(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// cmpFloat orders doubles as Spark does: NaN equals NaN and is above
// every other value; -0 equals 0.
func cmpFloat(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// intLeaf compares a nullable integer-like column with a literal.
func intLeaf(col, lit string, v int64, get func(diffRow) *int64, op string) diffPred {
	return diffPred{text: fmt.Sprintf("%s %s %s", col, op, lit), eval: func(r diffRow) tri {
		x := get(r)
		if x == nil {
			return triNull
		}
		return triOf(cmpResult(op, cmpInt(*x, v)))
	}}
}

func isNull(col string, null func(diffRow) bool, not bool) diffPred {
	text := col + " IS NULL"
	if not {
		text = col + " IS NOT NULL"
	}
	return diffPred{text: text, eval: func(r diffRow) tri { return triOf(null(r) != not) }}
}

// literalString draws a string literal near the table's values; it
// holds no quote.
func (g *diffGen) literalString() string {
	s := g.prefixes[g.r.IntN(len(g.prefixes))]
	for range g.r.IntN(3) {
		s += string(rune('a' + g.r.IntN(26)))
	}
	return s
}

// leaf draws one comparison.
func (g *diffGen) leaf() diffPred {
	op := cmpOps[g.r.IntN(len(cmpOps))]
	switch g.r.IntN(17) {
	case 0, 1:
		v := g.r.Int64N(g.maxID + 2)
		return intLeaf("id", fmt.Sprint(v), v, func(r diffRow) *int64 { return &r.id }, op)
	case 2:
		lo := g.r.Int64N(g.maxID + 2)
		hi := lo + g.r.Int64N(g.maxID/4+2)
		return diffPred{text: fmt.Sprintf("id BETWEEN %d AND %d", lo, hi), eval: func(r diffRow) tri { return triOf(r.id >= lo && r.id <= hi) }}
	case 3:
		v := int64(g.r.IntN(220) - 110)
		return intLeaf("i", fmt.Sprint(v), v, func(r diffRow) *int64 { return r.i }, op)
	case 4:
		v := math.Round(g.r.NormFloat64()*10000) / 100
		return diffPred{text: fmt.Sprintf("d %s %s", op, formatDouble(v)), eval: func(r diffRow) tri {
			if r.d == nil {
				return triNull
			}
			return triOf(cmpResult(op, cmpFloat(*r.d, v)))
		}}
	case 5, 6:
		lit := g.literalString()
		return diffPred{text: fmt.Sprintf("s %s '%s'", op, lit), eval: func(r diffRow) tri {
			if r.s == nil {
				return triNull
			}
			return triOf(cmpResult(op, strings.Compare(*r.s, lit)))
		}}
	case 7:
		lit := g.literalString()
		return diffPred{text: fmt.Sprintf("s LIKE '%s%%'", lit), eval: func(r diffRow) tri {
			if r.s == nil {
				return triNull
			}
			return triOf(strings.HasPrefix(*r.s, lit))
		}}
	case 8:
		a, b := g.literalString(), g.literalString()
		return diffPred{text: fmt.Sprintf("s IN ('%s', '%s')", a, b), eval: func(r diffRow) tri {
			if r.s == nil {
				return triNull
			}
			return triOf(*r.s == a || *r.s == b)
		}}
	case 9:
		switch g.r.IntN(6) {
		case 0:
			return isNull("s", func(r diffRow) bool { return r.s == nil }, g.r.IntN(2) == 0)
		case 1:
			return isNull("b", func(r diffRow) bool { return r.bNull }, g.r.IntN(2) == 0)
		case 2:
			return isNull("l", func(r diffRow) bool { return r.lNull }, g.r.IntN(2) == 0)
		case 3:
			return isNull("m", func(r diffRow) bool { return r.mNull }, g.r.IntN(2) == 0)
		case 4:
			return isNull("st", func(r diffRow) bool { return r.stNull }, g.r.IntN(2) == 0)
		}
		return isNull("dec", func(r diffRow) bool { return r.dec == nil }, g.r.IntN(2) == 0)
	case 10:
		days := int64(19000 + g.r.IntN(1000))
		lit := time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		return intLeaf("dt", "'"+lit+"'", days, func(r diffRow) *int64 { return r.dt }, op)
	case 11:
		us := 1_700_000_000_000_000 + g.r.Int64N(100_000_000_000_000)
		us -= us % 1_000_000
		lit := time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05")
		return intLeaf("ts", "'"+lit+"'", us, func(r diffRow) *int64 { return r.ts }, op)
	case 12:
		v := g.r.Int64N(2_000_000_000) - 1_000_000_000
		lit := decimal128.FromI64(v).ToString(3)
		return intLeaf("dec", lit, v, func(r diffRow) *int64 { return r.dec }, op)
	case 13:
		v := g.r.Int64N(520)
		return diffPred{text: fmt.Sprintf("st.a %s %d", op, v), eval: func(r diffRow) tri {
			if r.stA == nil {
				return triNull
			}
			return triOf(cmpResult(op, cmpInt(*r.stA, v)))
		}}
	case 14:
		lit := g.literalString()
		return diffPred{text: fmt.Sprintf("st.b %s '%s'", op, lit), eval: func(r diffRow) tri {
			if r.stB == nil {
				return triNull
			}
			return triOf(cmpResult(op, strings.Compare(*r.stB, lit)))
		}}
	case 15:
		if g.r.IntN(4) == 0 {
			return isNull("p", func(r diffRow) bool { return r.p == nil }, g.r.IntN(2) == 0)
		}
		lit := fmt.Sprintf("p%d", g.r.IntN(4))
		return diffPred{text: fmt.Sprintf("p %s '%s'", op, lit), eval: func(r diffRow) tri {
			if r.p == nil {
				return triNull
			}
			return triOf(cmpResult(op, strings.Compare(*r.p, lit)))
		}}
	}
	// A selective range on id: the case that made filtered scans of
	// string columns return zeroed bytes.
	lo := g.r.Int64N(g.maxID + 2)
	hi := lo + g.r.Int64N(20)
	return diffPred{text: fmt.Sprintf("id >= %d AND id < %d", lo, hi), eval: func(r diffRow) tri { return triOf(r.id >= lo && r.id < hi) }}
}

func formatDouble(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v < 0 {
		return "(" + s + ")"
	}
	return s
}

// predicate draws a filter of up to depth levels of AND, OR and NOT.
func (g *diffGen) predicate(depth int) diffPred {
	if depth == 0 || g.r.IntN(3) == 0 {
		return g.leaf()
	}
	a := g.predicate(depth - 1)
	switch g.r.IntN(5) {
	case 0:
		return diffPred{text: "NOT (" + a.text + ")", eval: func(r diffRow) tri { return a.eval(r).not() }}
	case 1, 2:
		b := g.predicate(depth - 1)
		return diffPred{text: "(" + a.text + ") OR (" + b.text + ")", eval: func(r diffRow) tri { return a.eval(r).or(b.eval(r)) }}
	}
	b := g.predicate(depth - 1)
	return diffPred{text: "(" + a.text + ") AND (" + b.text + ")", eval: func(r diffRow) tri { return a.eval(r).and(b.eval(r)) }}
}

// refTable is the table as an independent read sees it: every row's
// filter values and each column's canonical JSON text.
type refTable struct {
	rows   []diffRow
	values [][]string // [row][column in diffColumns order]
}

// matching returns the canonical rows of the projection cols (nil: every
// column) of the rows for which filter is TRUE.
func (t *refTable) matching(filter diffPred, cols []string) []string {
	idx := make([]int, 0, len(diffColumns))
	if cols == nil {
		for i := range diffColumns {
			idx = append(idx, i)
		}
	} else {
		for _, c := range cols {
			idx = append(idx, slices.Index(diffColumns, c))
		}
	}
	var out []string
	for r, row := range t.rows {
		if filter.eval(row) != triTrue {
			continue
		}
		var b strings.Builder
		b.WriteByte('{')
		for k, c := range idx {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(t.values[r][c])
		}
		b.WriteByte('}')
		out = append(out, b.String())
	}
	return out
}

// deletionVectors gives a random subset of the table's files a deletion
// vector of random rows (a few, a run, about half, or all of them),
// written with deletionvector.Writer at a random inline limit and
// committed as Spark's DELETE does, a remove and an add of each file. It
// returns the deleted row indexes of each file by add path: the model
// the reference read applies, which never reads the vectors back.
func (g *diffGen) deletionVectors(t *testing.T, ctx context.Context, store objstore.Store, snap *deltalog.Snapshot) (map[string]map[int64]bool, string) {
	t.Helper()
	if err := snap.LoadStats(ctx); err != nil {
		t.Fatal(err)
	}
	limit := []int{0, 64, deletionvector.DefaultInlineLimit, 1 << 20}[g.r.IntN(4)]
	w := deletionvector.NewWriter(store, snap.Root(), deletionvector.WithInlineLimit(limit))
	tx := snap.NewTransaction()
	deleted := map[string]map[int64]bool{}
	var shapes []string
	for add := range snap.Files() {
		if g.r.IntN(3) == 0 {
			continue
		}
		st, err := actions.ParseStats(add.Stats)
		if err != nil || st.NumRecords <= 0 {
			t.Fatalf("%s: no numRecords (%v)", add.Path, err)
		}
		n := st.NumRecords
		rows := map[int64]bool{}
		shape := []string{"few", "run", "half", "all"}[g.r.IntN(4)]
		switch shape {
		case "few":
			for range 1 + g.r.IntN(5) {
				rows[g.r.Int64N(n)] = true
			}
		case "run":
			start := g.r.Int64N(n)
			for i := start; i < min(n, start+1+g.r.Int64N(n)); i++ {
				rows[i] = true
			}
		case "half":
			for i := range n {
				if g.r.IntN(2) == 0 {
					rows[i] = true
				}
			}
			rows[g.r.Int64N(n)] = true // never empty
		case "all":
			for i := range n {
				rows[i] = true
			}
		}
		shapes = append(shapes, fmt.Sprintf("%s %d/%d", shape, len(rows), n))
		bm := roaring64.New()
		for r := range rows {
			bm.Add(uint64(r))
		}
		dv, err := w.Add(bm)
		if err != nil {
			t.Fatal(err)
		}
		withDV := *add
		withDV.DeletionVector = dv
		tx.RemoveFile(add, true)
		tx.Add(actions.Action{Add: &withDV})
		deleted[add.Path] = rows
	}
	if len(deleted) == 0 {
		return nil, "no deletion vectors"
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return deleted, fmt.Sprintf("deletion vectors (inline limit %d, %d files): %s", limit, len(w.Keys()), strings.Join(shapes, ", "))
}

// referenceRows reads every data file of snap with pqarrow and the plain
// Go allocator, adds the partition values from the add actions, and drops
// the rows deleted holds for the file (by add path). phys is a column's
// name in the files and in partitionValues.
func referenceRows(t *testing.T, ctx context.Context, store objstore.Store, snap *deltalog.Snapshot, deleted map[string]map[int64]bool, phys func(string) string) *refTable {
	t.Helper()
	ref := &refTable{}
	mem := memory.NewGoAllocator()
	for add := range snap.Files() {
		data, err := store.Get(ctx, snap.TablePath(add.Path))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		part := add.PartitionValues[phys("p")]
		tr := array.NewTableReader(tbl, tbl.NumRows())
		var base int64 // file row index of the batch's first row
		for tr.Next() {
			ref.addRecord(t, tr.RecordBatch(), part, base, deleted[add.Path], phys)
			base += tr.RecordBatch().NumRows()
		}
		tr.Release()
		tbl.Release()
	}
	return ref
}

// addRecord adds the rows of rec (one data file's columns, read by
// pqarrow, from file row index base) with the partition value part when
// the table is partitioned, less the rows deleted holds.
func (ref *refTable) addRecord(t *testing.T, rec arrow.RecordBatch, part *string, base int64, deleted map[int64]bool, phys func(string) string) {
	t.Helper()
	col := func(name string) arrow.Array {
		idx := rec.Schema().FieldIndices(phys(name))
		if len(idx) != 1 {
			return nil
		}
		return rec.Column(idx[0])
	}
	// Each column's canonical text, from a one-column batch under the
	// column's own name.
	texts := make([][]string, len(diffColumns))
	for c, name := range diffColumns {
		a := col(name)
		if a == nil { // the partition column
			a = partitionArray(name, part, int(rec.NumRows()))
			defer a.Release()
		}
		if st, ok := a.DataType().(*arrow.StructType); ok && st.Field(0).Name != "a" {
			// The physical struct's fields, by position, under their
			// logical names.
			d := a.Data()
			a = array.MakeFromData(array.NewData(arrow.StructOf(
				arrow.Field{Name: "a", Type: st.Field(0).Type, Nullable: true},
				arrow.Field{Name: "b", Type: st.Field(1).Type, Nullable: true},
			), d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset()))
			defer a.Release()
		}
		one := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: name, Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, rec.NumRows())
		rows, err := reader.CanonicalRows(one)
		one.Release()
		if err != nil {
			t.Fatal(err)
		}
		texts[c] = make([]string, len(rows))
		for r, row := range rows {
			texts[c][r] = string(row[1 : len(row)-1]) // "name":value
		}
	}
	id := col("id").(*array.Int64)
	i := col("i").(*array.Int32)
	d := col("d").(*array.Float64)
	s := col("s").(*array.String)
	b := col("b")
	dt := col("dt").(*array.Date32)
	ts := col("ts").(*array.Timestamp)
	dec := col("dec").(*array.Decimal128)
	l, m := col("l"), col("m")
	var pcol *array.String // the partition column, when it is in the file
	if a := col("p"); a != nil {
		pcol = a.(*array.String)
	}
	st := col("st").(*array.Struct)
	stA := st.Field(0).(*array.Int64)
	stB := st.Field(1).(*array.String)
	for r := range int(rec.NumRows()) {
		if deleted[base+int64(r)] {
			continue
		}
		row := diffRow{id: id.Value(r), bNull: b.IsNull(r), lNull: l.IsNull(r), mNull: m.IsNull(r), stNull: st.IsNull(r), p: part}
		if pcol != nil {
			row.p = nil
			if pcol.IsValid(r) {
				v := pcol.Value(r)
				row.p = &v
			}
		}
		if i.IsValid(r) {
			v := int64(i.Value(r))
			row.i = &v
		}
		if d.IsValid(r) {
			v := d.Value(r)
			row.d = &v
		}
		if s.IsValid(r) {
			v := s.Value(r)
			if !utf8.ValidString(v) {
				t.Fatalf("invalid UTF-8 in the reference read")
			}
			row.s = &v
		}
		if dt.IsValid(r) {
			v := int64(dt.Value(r))
			row.dt = &v
		}
		if ts.IsValid(r) {
			v := int64(ts.Value(r))
			row.ts = &v
		}
		if dec.IsValid(r) {
			v := int64(dec.Value(r).LowBits()) // |v| < 2^63: two's complement
			row.dec = &v
		}
		if !row.stNull && stA.IsValid(r) {
			v := stA.Value(r)
			row.stA = &v
		}
		if !row.stNull && stB.IsValid(r) {
			v := stB.Value(r)
			row.stB = &v
		}
		ref.rows = append(ref.rows, row)
		vals := make([]string, len(diffColumns))
		for c := range diffColumns {
			vals[c] = texts[c][r]
		}
		ref.values = append(ref.values, vals)
	}
}

// partitionArray is n copies of a partition value (nil: null).
func partitionArray(name string, v *string, n int) arrow.Array {
	b := array.NewStringBuilder(memory.NewGoAllocator())
	defer b.Release()
	for range n {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewArray()
}

// diffRows describes how two sorted row lists differ, briefly.
func diffRows(got, want []string) string {
	short := func(s string) string {
		if len(s) > 300 {
			return s[:300] + fmt.Sprintf("... (%d bytes)", len(s))
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "got %d rows, want %d", len(got), len(want))
	missing, extra := 0, 0
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j >= len(want) || (i < len(got) && got[i] < want[j]):
			if extra < 3 {
				fmt.Fprintf(&b, "\n  unexpected: %s", short(got[i]))
			}
			extra++
			i++
		case i >= len(got) || want[j] < got[i]:
			if missing < 3 {
				fmt.Fprintf(&b, "\n  missing:    %s", short(want[j]))
			}
			missing++
			j++
		default:
			i++
			j++
		}
	}
	fmt.Fprintf(&b, "\n  (%d unexpected, %d missing)", extra, missing)
	return b.String()
}
