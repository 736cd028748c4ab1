package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// dmlScale is the DML benchmarks' table: 1M rows in 10 files (100k rows a
// file, as the runner's full scale), or the runner's small scale (200k
// rows in 10 files) under -short.
func dmlScale() workload.DMLScale {
	if testing.Short() {
		return workload.DMLScales["small"]
	}
	return workload.DMLScale{Rows: 1_000_000, Files: 10}
}

// dmlBases are the DML base tables (copy-on-write and deletion vectors),
// written once per process.
var dmlBases struct {
	once sync.Once
	dirs map[string]string
	err  error
}

func dmlBase(b *testing.B, mode string) string {
	b.Helper()
	dmlBases.once.Do(func() {
		dmlBases.dirs = map[string]string{}
		sc := dmlScale()
		for _, m := range []string{"cow", "dv"} {
			dir, err := tempDir("lakelog-bench-dml-")
			if err != nil {
				dmlBases.err = err
				return
			}
			st, err := objstore.NewLocal(dir)
			if err != nil {
				dmlBases.err = err
				return
			}
			if _, err := workload.CreateDMLTable(context.Background(), st, sc.Rows, sc.Files, m == "dv"); err != nil {
				dmlBases.err = err
				return
			}
			dmlBases.dirs[m] = dir
		}
	})
	if dmlBases.err != nil {
		b.Fatal(dmlBases.err)
	}
	return dmlBases.dirs[mode]
}

// BenchmarkDML runs the runner's DML workload with package dml: DELETE of
// 1% of rows spread over every file, UPDATE of 1%, and MERGE of a source
// of 1% of the table's size (half updates spread over every file, half
// inserts), copy-on-write ("cow") and with deletion vectors ("dv"). Each
// iteration opens a fresh hard-linked copy of the base table (not timed)
// and times opening it and the operation, as the runner does. It checks
// the rows the operation reports it changed.
func BenchmarkDML(b *testing.B) {
	ctx := context.Background()
	sc := dmlScale()
	for _, op := range []string{"delete", "update", "merge"} {
		_, want := workload.DMLExpect(op, sc.Rows)
		for _, mode := range []string{"cow", "dv"} {
			b.Run(fmt.Sprintf("%s/%s/rows=%d", op, mode, sc.Rows), func(b *testing.B) {
				base := dmlBase(b, mode)
				work := b.TempDir()
				src, err := workload.Collect(workload.DMLSource(nil, sc.Rows))
				if err != nil {
					b.Fatal(err)
				}
				defer workload.Release(src)
				var set map[string]string
				if op == "update" {
					set = workload.DMLSet()
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					b.StopTimer()
					table := filepath.Join(work, fmt.Sprint(i))
					i++
					if err := workload.LinkTable(base, table); err != nil {
						b.Fatal(err)
					}
					st, err := objstore.NewLocal(table)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					snap, err := deltalog.Open(ctx, st, "")
					if err != nil {
						b.Fatal(err)
					}
					_, changed, err := workload.RunDML(ctx, snap, op, workload.DMLPredicateOf(op), set, workload.Replay(src))
					if err != nil {
						b.Fatal(err)
					}
					if changed != want {
						b.Fatalf("%s changed %d rows, want %d", op, changed, want)
					}
				}
				reportRows(b, sc.Rows)
			})
		}
	}
}
