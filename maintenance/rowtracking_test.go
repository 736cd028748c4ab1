package maintenance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestOptimizeKeepsRowIDs: OPTIMIZE (bin-packing and Z-order) of a
// row-tracking table moves every row to a new file with its row ID and
// commit version unchanged, and tags the commit as Spark does.
func TestOptimizeKeepsRowIDs(t *testing.T) {
	ctx := context.Background()
	for _, zorder := range [][]string{nil, {"v", "id"}} {
		t.Run(fmt.Sprint("zorder=", zorder), func(t *testing.T) {
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, "id long, v long, p string", map[string]string{"delta.enableRowTracking": "true", "delta.enableDeletionVectors": "true"}, "p")
			for c := range 6 {
				var rows []string
				for i := range 7 {
					id := c*7 + i
					rows = append(rows, fmt.Sprintf(`{"id":%d,"v":%d,"p":%q}`, id, (id*37)%11, []string{"a", "b"}[id%2]))
				}
				snap = tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
			}
			before := tabletest.ScanLines(t, snap, reader.WithRowTracking())
			slices.Sort(before)
			var opts []maintenance.OptimizeOption
			if zorder != nil {
				opts = append(opts, maintenance.ZOrderBy(zorder...))
			}
			res, err := maintenance.Optimize(ctx, snap, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Commits) == 0 {
				t.Fatal("nothing optimized")
			}
			after := tabletest.Open(t, store)
			if after.NumFiles() != 2 {
				t.Fatalf("%d files after OPTIMIZE, want one per partition", after.NumFiles())
			}
			got := tabletest.ScanLines(t, after, reader.WithRowTracking())
			slices.Sort(got)
			tabletest.DiffLines(t, "rows with row IDs after OPTIMIZE", got, before)
			body, err := store.Get(ctx, after.Root()+fmt.Sprintf("_delta_log/%020d.json", after.Version()))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body), `"tags":{"delta.rowTracking.preserved":"true"}`) {
				t.Errorf("OPTIMIZE commit without the preserved tag: %s", body)
			}
		})
	}
}
