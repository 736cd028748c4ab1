package uniform_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestColumnBoundsPrune: the manifests carry exact bounds of the
// integer columns, so iceberg-go plans only the files a filter on id may
// match, and reads exactly lakelog's filtered rows (null counts too: IS
// NULL on a column without nulls plans nothing).
func TestColumnBoundsPrune(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(61, 62))
	var next int64
	for range 6 {
		tabletest.AppendTo(t, store, randomRows(r, &next, 10)) // ids rise: files hold disjoint ranges
	}
	res := sync(t, store)
	fs := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, []string{"t"}, res.MetadataLocation, fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		iceberg iceberg.BooleanExpression
		lakelog string
		files   int
	}{
		{iceberg.GreaterThan(iceberg.Reference("id"), int64(45)), "id > 45", 2},
		{iceberg.LessThanEqual(iceberg.Reference("id"), int64(10)), "id <= 10", 1},
		{iceberg.IsNull(iceberg.Reference("id")), "id IS NULL", 0},
	} {
		sc := tbl.Scan(table.WithRowFilter(c.iceberg))
		tasks, err := sc.PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != c.files {
			t.Errorf("%s: iceberg-go planned %d files, want %d", c.lakelog, len(tasks), c.files)
		}
		at, err := sc.ToArrowTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(at, 1024)
		var got []string
		for tr.Next() {
			rows, err := reader.CanonicalRows(normalize(t, tr.RecordBatch()))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				got = append(got, string(r))
			}
		}
		tr.Release()
		at.Release()
		slices.Sort(got)
		pred, err := expr.Parse(c.lakelog)
		if err != nil {
			t.Fatal(err)
		}
		tabletest.DiffLines(t, "iceberg-go rows where "+c.lakelog, got, tabletest.ScanLines(t, tabletest.Open(t, store), reader.WithFilter(pred)))
	}
}
