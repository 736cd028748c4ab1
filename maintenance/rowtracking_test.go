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

// TestEnableRowTrackingBackfills: ALTER TABLE SET TBLPROPERTIES
// (delta.enableRowTracking=true) on a table with rows upgrades the
// protocol, backfills a baseRowId into every file (distinct ID ranges,
// nothing else changed) and then sets the property, as Spark does; row
// IDs then survive a DELETE and new rows get fresh ones.
func TestEnableRowTrackingBackfills(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, p string", nil, "p")
	for c := range 3 {
		snap = tabletest.Append(t, snap, fmt.Sprintf(`[{"id":%d,"p":"a"},{"id":%d,"p":"b"},{"id":%d,"p":"a"}]`, 3*c, 3*c+1, 3*c+2))
	}
	plain := tabletest.ScanLines(t, snap)
	if _, err := reader.NewScan(snap, reader.WithRowTracking()); err == nil {
		t.Fatal("row IDs of a table without row tracking")
	}
	start := snap.Version()
	res, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableRowTracking": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != start+3 {
		t.Errorf("enabled at version %d, want upgrade, backfill and property commits after %d", res.Version, start)
	}
	snap = tabletest.Open(t, store)
	if !snap.RowTrackingEnabled() {
		t.Fatalf("not enabled: protocol %+v", snap.Protocol())
	}
	if got := tabletest.ScanLines(t, snap); !slices.Equal(got, plain) {
		tabletest.DiffLines(t, "rows after backfill", got, plain)
	}
	ids := map[int64]int64{}
	seen := map[int64]bool{}
	for _, l := range tabletest.ScanLines(t, snap, reader.WithRowTracking()) {
		var id, rowID, ver int64
		if _, err := fmt.Sscanf(l, `{"id":%d,"p":%q,"_row_id":%d,"_row_commit_version":%d}`, &id, new(string), &rowID, &ver); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if seen[rowID] {
			t.Fatalf("row ID %d twice", rowID)
		}
		seen[rowID] = true
		ids[id] = rowID
		if ver != start+2 {
			t.Errorf("row %d: commit version %d, want the backfill's %d", id, ver, start+2)
		}
	}
	if len(ids) != 9 {
		t.Fatalf("%d rows with IDs", len(ids))
	}
	if hwm, err := snap.RowIDHighWaterMark(); err != nil || hwm != 8 {
		t.Fatalf("high-water mark %d %v", hwm, err)
	}
	// A second ALTER is only a property commit: nothing to backfill.
	if res, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableRowTracking": "true"}); err != nil || res.Version != snap.Version()+1 {
		t.Fatalf("second enable: %v", err)
	}
}
