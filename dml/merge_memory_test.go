package dml_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestMergeReleasesSource: MERGE releases everything it allocates and
// every reference it takes to its source's columns, for each clause shape
// on plain tables, tables with deletion vectors and tables with the change
// feed. The source, the writer and the commit share one checked
// allocator. A MERGE with only a DELETE clause, or only an INSERT clause
// on a table with deletion vectors or the change feed, kept a reference
// to the source's columns (about 320 bytes for two rows).
func TestMergeReleasesSource(t *testing.T) {
	tables := map[string]map[string]string{
		"plain": nil,
		"dv":    {"delta.enableDeletionVectors": "true"},
		"cdf":   {"delta.enableChangeDataFeed": "true"},
		"dv+cdf+rowTracking": {
			"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true", "delta.enableRowTracking": "true",
		},
	}
	shapes := map[string]func(t *testing.T) []dml.Clause{
		"delete": func(t *testing.T) []dml.Clause { return []dml.Clause{dml.WhenMatchedDelete(nil)} },
		"insert": func(t *testing.T) []dml.Clause { return []dml.Clause{dml.WhenNotMatchedInsertAll(nil)} },
		"update": func(t *testing.T) []dml.Clause {
			return []dml.Clause{dml.WhenMatchedUpdate(nil, mustSet(t, "v = s.v")...)}
		},
		"bySourceDelete": func(t *testing.T) []dml.Clause { return []dml.Clause{dml.WhenNotMatchedBySourceDelete(nil)} },
		"all": func(t *testing.T) []dml.Clause {
			return []dml.Clause{
				dml.WhenMatchedUpdate(mustParse(t, "s.v = 'B'"), mustSet(t, "v = s.v")...),
				dml.WhenMatchedDelete(nil),
				dml.WhenNotMatchedInsertAll(nil),
				dml.WhenNotMatchedBySourceUpdate(nil, mustSet(t, "v = 'x'")...),
			}
		},
	}
	for tname, props := range tables {
		for sname, clauses := range shapes {
			t.Run(tname+"/"+sname, func(t *testing.T) {
				mem := tabletest.CheckedMem(t)
				store := objstore.NewMem()
				tabletest.Create(t, store, "k long, v string", props)
				snap := tabletest.AppendTo(t, store, `[{"k":1,"v":"a"},{"k":2,"v":"b"},{"k":3,"v":"c"}]`)
				src := tabletest.Batch(t, mem, snap, `[{"k":2,"v":"B"},{"k":9,"v":"i"}]`)
				res, err := dml.Merge(context.Background(), snap, tabletest.Batches(t, src), mustParse(t, "t.k = s.k"), clauses(t),
					dml.WithAliases("t", "s"), dml.WithWriterOptions(writer.WithAllocator(mem)))
				if err != nil {
					t.Fatal(err)
				}
				if res.Version != snap.Version()+1 {
					t.Fatalf("MERGE committed version %d, want %d", res.Version, snap.Version()+1)
				}
				if err := res.WaitHooks(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
