package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// shared holds the folders that benchmarks share (tables written once per
// process); TestMain removes them.
var shared struct {
	sync.Mutex
	dirs []string
}

// tempDir makes a folder that lives until the test binary ends.
func tempDir(prefix string) (string, error) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	shared.Lock()
	defer shared.Unlock()
	shared.dirs = append(shared.dirs, d)
	return d, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Lock()
	for _, d := range shared.dirs {
		os.RemoveAll(d)
	}
	shared.Unlock()
	os.Exit(code)
}

// dataPathRows is the table size of the data-path benchmarks: the
// runner's -scale small (1M rows), or 100k rows under -short.
func dataPathRows() int64 {
	if testing.Short() {
		return 100_000
	}
	return 1_000_000
}

// reportRows reports rows per second for a benchmark that handled rows rows
// per iteration.
func reportRows(b *testing.B, rows int64) {
	if b.N > 0 && b.Elapsed() > 0 {
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}
}

// BenchmarkGenerate measures generating the data-path rows alone, the part
// of BenchmarkAppend that is not lakelog's.
func BenchmarkGenerate(b *testing.B) {
	n := dataPathRows()
	b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c workload.Checksum
			for rec, err := range workload.Batches(nil, n) {
				if err != nil {
					b.Fatal(err)
				}
				c.Add(rec)
			}
			if c.Rows != n {
				b.Fatalf("%d rows", c.Rows)
			}
		}
		reportRows(b, n)
	})
}

// BenchmarkAppend creates a table with the data-path rows in one commit
// (writer.CreateTable, generation included), in memory and on local disk,
// with the runner's target file size (~150 files).
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	n := dataPathRows()
	for _, kind := range []string{"mem", "local"} {
		b.Run(fmt.Sprintf("%s/rows=%d", kind, n), func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				var st objstore.Store = objstore.NewMem()
				if kind == "local" {
					l, err := objstore.NewLocal(filepath.Join(dir, fmt.Sprint(i)))
					if err != nil {
						b.Fatal(err)
					}
					st = l
				}
				i++
				if _, err := writer.CreateTable(ctx, st, "", workload.Metadata(), workload.Batches(nil, n),
					writer.WithTargetFileSize(workload.TargetFileSize(n))); err != nil {
					b.Fatal(err)
				}
			}
			reportRows(b, n)
		})
	}
}

// sharedTable is a local table that benchmarks share, written once per
// process.
type sharedTable struct {
	once sync.Once
	dir  string
	err  error
}

// get returns the table's store, building it in a new folder named with
// prefix on first use.
func (s *sharedTable) get(b *testing.B, prefix string, build func(objstore.Store) error) objstore.Store {
	b.Helper()
	s.once.Do(func() {
		if s.dir, s.err = tempDir(prefix); s.err != nil {
			return
		}
		var st objstore.Store
		if st, s.err = objstore.NewLocal(s.dir); s.err != nil {
			return
		}
		s.err = build(st)
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	st, err := objstore.NewLocal(s.dir)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// scanTable is the local data-path table the scan benchmarks share.
var scanTable sharedTable

func dataPathTable(b *testing.B) objstore.Store {
	b.Helper()
	return scanTable.get(b, "lakelog-bench-scan-", createDataPathTable)
}

// scanAll opens the table in st (at version when not nil), plans a scan
// with opts and reads it all, as the runner's scan rows do, returning the
// rows' checksum and the scan.
func scanAll(b *testing.B, st objstore.Store, version *int64, opts ...reader.Option) (workload.Checksum, *reader.Scan) {
	b.Helper()
	ctx := context.Background()
	var open []deltalog.Option
	if version != nil {
		open = append(open, deltalog.AtVersion(*version))
	}
	snap, err := deltalog.Open(ctx, st, "", open...)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		b.Fatal(err)
	}
	var got workload.Checksum
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			b.Fatal(err)
		}
		got.Add(rec)
	}
	return got, sc
}

// createDataPathTable writes the data-path table's rows as version 0.
func createDataPathTable(st objstore.Store) error {
	n := dataPathRows()
	_, err := writer.CreateTable(context.Background(), st, "", workload.Metadata(), workload.Batches(nil, n),
		writer.WithTargetFileSize(workload.TargetFileSize(n)))
	return err
}

// BenchmarkScan reads the data-path table (local disk, warm cache): every
// row and column ("full"), and the rows of 1% of the sorted id range
// ("range", where statistics skip most files), each time opening the
// table, planning and reading, as the runner's scan rows do. "plan" is
// the range scan's planning alone.
func BenchmarkScan(b *testing.B) {
	ctx := context.Background()
	n := dataPathRows()
	lo, hi := n/2, n/2+n/100-1
	rangePred, err := expr.Parse(fmt.Sprintf("id BETWEEN %d AND %d", lo, hi))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		opts []reader.Option
		want workload.Checksum
	}{
		{"full", nil, workload.Expect(0, n)},
		{"range", []reader.Option{reader.WithFilter(rangePred)}, workload.Expect(lo, hi+1)},
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%s/rows=%d", c.name, n), func(b *testing.B) {
			st := dataPathTable(b)
			b.ReportAllocs()
			for b.Loop() {
				got, _ := scanAll(b, st, nil, c.opts...)
				if got.Rows != c.want.Rows || got.SumID != c.want.SumID {
					b.Fatalf("read %+v, want %+v", got, c.want)
				}
			}
			reportRows(b, c.want.Rows)
		})
	}
	b.Run(fmt.Sprintf("plan-range/rows=%d", n), func(b *testing.B) {
		st := dataPathTable(b)
		snap, err := deltalog.Open(ctx, st, "")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			sc, err := reader.NewScan(snap, reader.WithFilter(rangePred))
			if err != nil {
				b.Fatal(err)
			}
			files := 0
			for _, err := range sc.Files(ctx) {
				if err != nil {
					b.Fatal(err)
				}
				files++
			}
			if files == 0 || files == snap.NumFiles() {
				b.Fatalf("planned %d of %d files", files, snap.NumFiles())
			}
		}
	})
}
