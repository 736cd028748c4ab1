package maintenance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestOptimizeColumnMapped: OPTIMIZE (with a partition predicate) and
// Z-order rewrite the files of column-mapped tables under physical names:
// rows unchanged, partitionValues and stats keyed by physical names.
func TestOptimizeColumnMapped(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, "id long, region string, s struct<a:long>", map[string]string{"delta.columnMapping.mode": mode}, "region")
			for i := range 12 {
				snap = tabletest.Append(t, snap, fmt.Sprintf(`[{"id":%d,"region":%q,"s":{"a":%d}}]`, i, []string{"US", "EU"}[i%2], 100-i))
			}
			before := tabletest.ScanLines(t, snap)
			if _, err := maintenance.Optimize(ctx, snap, maintenance.Where(mustParse(t, "region = 'US'"))); err != nil {
				t.Fatal(err)
			}
			if _, err := maintenance.Optimize(ctx, tabletest.Open(t, store), maintenance.ZOrderBy("id")); err != nil {
				t.Fatal(err)
			}
			after := tabletest.Open(t, store)
			if got := tabletest.ScanLines(t, after); !slices.Equal(got, before) {
				t.Fatalf("rows changed:\n%v\nwant\n%v", got, before)
			}
			region := after.Schema().Field("region").PhysicalName(mode)
			idPhys := after.Schema().Field("id").PhysicalName(mode)
			for f := range after.Files() {
				if _, ok := f.PartitionValues[region]; !ok || !strings.Contains(f.Stats, idPhys) || strings.Contains(f.Stats, `"id"`) {
					t.Errorf("file %s: partitionValues %v stats %s", f.Path, f.PartitionValues, f.Stats)
				}
			}
			if after.NumFiles() != 2 {
				t.Errorf("%d files after OPTIMIZE, want 2", after.NumFiles())
			}
		})
	}
}

// TestEnableColumnMapping: setting delta.columnMapping.mode=name on a
// table keeps the columns' names as physical names, gives them ids in
// Spark's order (parents before children), sets maxColumnId, upgrades the
// protocol, and the rows written before and after read back. Other mode
// changes are refused and commit nothing.
func TestEnableColumnMapping(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, s struct<a:int,b:string>, d date", nil)
	snap = tabletest.Append(t, snap, `[{"id":1,"s":{"a":1,"b":"q"},"d":"2020-01-01"}]`)
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.columnMapping.mode": "name"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if snap.Config().ColumnMappingMode() != actions.ColumnMappingName {
		t.Fatalf("mode %q", snap.Config().ColumnMappingMode())
	}
	var got []string
	var walk func(fs []*actions.StructField)
	walk = func(fs []*actions.StructField) {
		for _, f := range fs {
			id, _ := f.FieldID()
			got = append(got, fmt.Sprintf("%s=%s#%d", f.Name, f.PhysicalName("name"), id))
			if st, ok := f.Type.(*actions.StructType); ok {
				walk(st.Fields)
			}
		}
	}
	walk(snap.Schema().Fields)
	if want := []string{"id=id#1", "s=s#2", "a=a#3", "b=b#4", "d=d#5"}; !slices.Equal(got, want) {
		t.Errorf("mapping %v, want %v", got, want)
	}
	if p := snap.Protocol(); snap.Properties().ColumnMappingMaxColumnID != 5 || !p.HasReaderFeature("columnMapping") || !p.HasWriterFeature("columnMapping") {
		t.Errorf("maxColumnId %d protocol %+v", snap.Properties().ColumnMappingMaxColumnID, p)
	}
	snap = tabletest.Append(t, snap, `[{"id":2,"s":null,"d":null}]`)
	want := []string{`{"id":1,"s":{"a":1,"b":"q"},"d":"2020-01-01"}`, `{"id":2,"s":null,"d":null}`}
	if got := tabletest.ScanLines(t, snap); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for _, m := range []string{"id", "none"} {
		before := tabletest.Open(t, store).Version()
		_, err := maintenance.SetProperties(ctx, tabletest.Open(t, store), map[string]string{"delta.columnMapping.mode": m})
		if err == nil || !strings.Contains(err.Error(), `changing delta.columnMapping.mode from "name" to "`+m+`" is not supported`) {
			t.Errorf("mode name to %s: %v", m, err)
		}
		if v := tabletest.Open(t, store).Version(); v != before {
			t.Errorf("mode name to %s moved the table to version %d", m, v)
		}
	}
}
