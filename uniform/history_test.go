package uniform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/uniform"
	"github.com/lakelog/lakelog/writer"
)

// TestRandomHistoryReadByIcebergGo: random histories of appends,
// overwrites, copy-on-write DELETE and UPDATE, OPTIMIZE and RESTORE,
// converted after some commits and caught up after others; iceberg-go
// reads every Iceberg snapshot (by id) with exactly lakelog's rows at
// the Delta version it records. LAKELOG_UNIFORM_SEED replays a seed.
func TestRandomHistoryReadByIcebergGo(t *testing.T) {
	seed := testseed.From(t, "LAKELOG_UNIFORM_SEED")
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

// TestPartitionedReadByIcebergGo: a table partitioned by a date and a
// string column (nulls too): the Iceberg identity spec over the same
// field ids, partition values in the manifests (and, by IcebergCompatV2,
// in the data files); iceberg-go reads every snapshot with lakelog's
// rows through appends, deletes, updates and OPTIMIZE.
func TestPartitionedReadByIcebergGo(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema, "day", "ok")
	r := rand.New(rand.NewPCG(31, 32))
	var next int64
	for step := range 6 {
		snap := tabletest.Open(t, store)
		switch step {
		case 2:
			pred, _ := expr.Parse("id % 2 = 0")
			if _, err := dml.Delete(ctx, snap, pred); err != nil {
				t.Fatal(err)
			}
		case 3:
			set, _ := expr.ParseAssignment("score = score * 2")
			pred, _ := expr.Parse("ok = true")
			if _, err := dml.Update(ctx, snap, pred, []*expr.Assignment{set}); err != nil {
				t.Fatal(err)
			}
		case 5:
			if _, err := maintenance.Optimize(ctx, snap); err != nil {
				t.Fatal(err)
			}
		default:
			tabletest.Append(t, snap, randomRows(r, &next, 40))
		}
		res := sync(t, store)
		got, md := icebergLines(t, res.MetadataLocation, nil)
		tabletest.DiffLines(t, fmt.Sprintf("step %d: iceberg-go rows", step), got, tabletest.ScanLines(t, tabletest.Open(t, store)))
		spec := md.PartitionSpec()
		if spec.NumFields() != 2 {
			t.Fatalf("partition spec %s, want day and ok", spec)
		}
	}
	checkEverySnapshot(t, store)
}

// TestPartitionValuesMaterialized: an IcebergCompatV2 table's data files
// hold its partition columns (by physical name, with their field ids)
// after the data columns, as the protocol requires.
func TestPartitionValuesMaterialized(t *testing.T) {
	store := localTable(t, "id long, p string", "p")
	snap := tabletest.AppendTo(t, store, `[{"id": 1, "p": "a"}, {"id": 2, "p": null}]`)
	n := 0
	for a := range snap.Files() {
		body, err := store.Get(context.Background(), tabletest.Root+"/"+a.Path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := file.NewParquetReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sc := f.MetaData().Schema
		want := []string{snap.Schema().Field("id").PhysicalName("name"), snap.Schema().Field("p").PhysicalName("name")}
		if sc.NumColumns() != 2 || sc.Column(0).Name() != want[0] || sc.Column(1).Name() != want[1] {
			t.Fatalf("%s has columns %s, want %v", a.Path, sc, want)
		}
		id, _ := snap.Schema().Field("p").FieldID()
		if got := sc.Column(1).SchemaNode().FieldID(); int64(got) != id {
			t.Fatalf("partition column's field id %d, want %d", got, id)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d files, want 2", n)
	}
}

// TestManifestsMerged: past WithMaxManifests the manifests but the
// newest are merged, so a snapshot lists a bounded number; every
// snapshot still reads as lakelog's rows, deletes after a merge too.
func TestManifestsMerged(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema, "ok")
	r := rand.New(rand.NewPCG(41, 42))
	var next int64
	for step := range 10 {
		snap := tabletest.Open(t, store)
		if step == 7 {
			pred, _ := expr.Parse("id % 3 = 1")
			if _, err := dml.Delete(ctx, snap, pred); err != nil {
				t.Fatal(err)
			}
		} else {
			tabletest.Append(t, snap, randomRows(r, &next, 8))
		}
		res, err := uniform.Sync(ctx, store, tabletest.Root, uniform.WithMaxManifests(3))
		if err != nil {
			t.Fatal(err)
		}
		_, md := icebergLines(t, res.MetadataLocation, nil)
		mfs, err := md.CurrentSnapshot().Manifests(icebergio.LocalFS{})
		if err != nil {
			t.Fatal(err)
		}
		if len(mfs) > 3 {
			t.Fatalf("step %d: %d manifests, want at most 3", step, len(mfs))
		}
	}
	checkEverySnapshot(t, store)
}
