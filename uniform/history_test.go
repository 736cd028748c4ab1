package uniform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/uniform"
	"github.com/lakelog/lakelog/writer"
)

// TestRandomHistoryReadByIcebergGo: random histories of appends,
// overwrites, copy-on-write DELETE and UPDATE, OPTIMIZE and RESTORE,
// converted after some commits and caught up after others; iceberg-go
// reads every Iceberg snapshot (by id) with exactly lakelog's rows at
// the Delta version it records. LAKELOG_UNIFORM_SEED replays a seed.
func TestRandomHistoryReadByIcebergGo(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("LAKELOG_UNIFORM_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (LAKELOG_UNIFORM_SEED replays it)", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	store := localTable(t, testSchema)
	var next int64
	steps := 12
	for step := range steps {
		snap := tabletest.Open(t, store)
		var what string
		switch k := r.IntN(10); {
		case k < 4 || snap.NumFiles() == 0:
			what = "append"
			tabletest.Append(t, snap, randomRows(r, &next, 1+r.IntN(30)))
		case k == 4:
			what = "overwrite"
			mem := tabletest.CheckedMem(t)
			if _, err := writer.Overwrite(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, mem, snap, randomRows(r, &next, 5))), writer.WithAllocator(mem)); err != nil {
				t.Fatal(err)
			}
		case k == 5 || k == 6:
			what = fmt.Sprintf("delete where id %% %d = %d", 2+r.IntN(4), r.IntN(2))
			pred, err := expr.Parse(what[len("delete where "):])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Delete(ctx, snap, pred); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case k == 7:
			what = fmt.Sprintf("update set score = score + 1 where id > %d", r.Int64N(next+1))
			pred, _ := expr.Parse(fmt.Sprintf("id > %d", r.Int64N(next+1)))
			set, err := expr.ParseAssignment("score = score + 1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Update(ctx, snap, pred, []*expr.Assignment{set}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case k == 8:
			what = "optimize"
			if _, err := maintenance.Optimize(ctx, snap); err != nil {
				t.Fatal(err)
			}
		default:
			v := r.Int64N(snap.Version()) // an earlier version
			what = fmt.Sprintf("restore to %d", v)
			if _, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(v)); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if r.IntN(3) > 0 || step == steps-1 {
			res := sync(t, store)
			t.Logf("step %d: %s; sync %+v", step, what, *res)
			if res.MetadataLocation != "" {
				got, _ := icebergLines(t, res.MetadataLocation, nil)
				tabletest.DiffLines(t, fmt.Sprintf("step %d (%s): iceberg-go rows", step, what), got, tabletest.ScanLines(t, tabletest.Open(t, store)))
			}
		} else {
			t.Logf("step %d: %s; not converted", step, what)
		}
	}
	checkEverySnapshot(t, store)
}

// checkEverySnapshot reads each Iceberg snapshot by id and compares it
// with lakelog's rows at the Delta version the snapshot records. The
// snapshot must name the schema of that version, and its rows come
// under that schema's names (a column renamed since is matched by id).
func checkEverySnapshot(t *testing.T, store objstore.Store) {
	t.Helper()
	meta := metadataOf(t, store)
	_, md := icebergLines(t, meta, nil)
	current := md.CurrentSchema()
	for _, s := range md.Snapshots() {
		v, err := strconv.ParseInt(s.Summary.Properties[uniform.PropDeltaVersion], 10, 64)
		if err != nil {
			t.Fatalf("snapshot %d has no %s: %v", s.SnapshotID, uniform.PropDeltaVersion, err)
		}
		snap := tabletest.Open(t, store, deltalog.AtVersion(v))
		var own *iceberg.Schema
		for _, sc := range md.Schemas() {
			if s.SchemaID != nil && sc.ID == *s.SchemaID {
				own = sc
			}
		}
		if own == nil {
			t.Fatalf("snapshot %d names schema %v, which the metadata lacks", s.SnapshotID, s.SchemaID)
		}
		var names []string
		for _, f := range own.Fields() {
			names = append(names, f.Name)
		}
		if !slices.Equal(names, snap.Schema().Names()) {
			t.Fatalf("snapshot %d (Delta version %d) has schema %v, want %v", s.SnapshotID, v, names, snap.Schema().Names())
		}
		rename := map[string]string{} // a name iceberg-go may use -> the snapshot's
		for _, f := range own.Fields() {
			rename[f.Name] = f.Name
		}
		for _, f := range current.Fields() {
			if of, ok := own.FindFieldByID(f.ID); ok {
				rename[f.Name] = of.Name
			}
		}
		got, _ := icebergLines(t, meta, &s.SnapshotID)
		got = reshape(t, got, rename)
		want := reshape(t, tabletest.ScanLines(t, snap), nil)
		tabletest.DiffLines(t, fmt.Sprintf("iceberg-go rows of snapshot %d (Delta version %d)", s.SnapshotID, v), got, want)
	}
}

// reshape renames (and with rename, keeps only) the columns of JSON
// lines, sorted.
func reshape(t *testing.T, lines []string, rename map[string]string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if rename != nil {
			n := map[string]json.RawMessage{}
			for k, v := range m {
				if to, ok := rename[k]; ok {
					n[to] = v
				}
			}
			m = n
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

func deltalogAt(v int64) deltalog.Option { return deltalog.AtVersion(v) }
