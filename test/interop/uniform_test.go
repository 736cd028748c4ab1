package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/uniform"
	"github.com/lakelog/lakelog/writer"
)

// requireIcebergPython is the python of the pyiceberg venv
// (LAKELOG_ICEBERG_PYTHON, set by peers_env), or ends the test as
// requirePeer does: fails under CI, skips with LAKELOG_SKIP_PEERS=1.
func requireIcebergPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("LAKELOG_ICEBERG_PYTHON")
	if py != "" {
		if _, err := exec.LookPath(py); err == nil {
			return py
		}
	}
	switch {
	case os.Getenv("CI") == "true":
		t.Fatalf("interop: pyiceberg is missing under CI (LAKELOG_ICEBERG_PYTHON=%q): .ci/run must install it (source .ci/peers.sh; peers_install; peers_env)", py)
	case os.Getenv("LAKELOG_SKIP_PEERS") == "1":
		t.Skipf("interop: pyiceberg is missing and LAKELOG_SKIP_PEERS=1: skipping")
	default:
		t.Fatalf("interop: pyiceberg is missing (LAKELOG_ICEBERG_PYTHON=%q): source .ci/peers.sh; peers_install; peers_env, or LAKELOG_SKIP_PEERS=1", py)
	}
	return ""
}

type icebergRead struct {
	Snapshots []struct {
		ID           int64 `json:"id"`
		DeltaVersion int64 `json:"delta_version"`
		Rows         int64 `json:"rows"`
	} `json:"snapshots"`
	Current *int64 `json:"current"`
}

// TestUniformPyiceberg: a UniForm table through a history of appends,
// copy-on-write DELETE and UPDATE, an overwrite and OPTIMIZE, converted
// after each commit; pyiceberg reads every Iceberg snapshot, by id and by
// time travel to its timestamp, with exactly lakelog's rows at the Delta
// version the snapshot records; unpartitioned, and partitioned by a date
// and a boolean (nulls too).
func TestUniformPyiceberg(t *testing.T) {
	py := requireIcebergPython(t)
	for _, parts := range [][]string{nil, {"day", "ok"}} {
		t.Run(fmt.Sprintf("partitioned by %v", parts), func(t *testing.T) { uniformPyiceberg(t, py, parts) })
	}
}

func uniformPyiceberg(t *testing.T, py string, parts []string) {
	ctx := context.Background()
	store, dir := newLocal(t)
	schema, asc := tableSchema(t, "id long not null, name string, score double, day date, at timestamp, amount decimal(12,3), ok boolean, b binary")
	g := newGen(11)
	props := map[string]string{
		actions.PropColumnMappingMode:             actions.ColumnMappingName,
		actions.PropEnableIcebergCompatV2:         "true",
		actions.PropUniversalFormatEnabledFormats: "iceberg",
	}
	createTable(t, store, "", schema, parts, props, g.batch(memory.DefaultAllocator, asc, 40))
	convert := func() {
		t.Helper()
		if _, err := uniform.Sync(ctx, store, ""); err != nil {
			t.Fatalf("uniform.Sync: %v", err)
		}
	}
	convert()
	r := rand.New(rand.NewPCG(5, 6))
	for step := range 8 {
		snap := open(t, store, "")
		var err error
		switch step % 4 {
		case 0:
			_, err = writer.Append(ctx, snap, seq(g.batch(memory.DefaultAllocator, asc, 1+r.IntN(40))))
		case 1:
			var pred expr.Expr
			pred, err = expr.Parse(fmt.Sprintf("score > %d", r.IntN(50)))
			if err == nil {
				_, err = dml.Delete(ctx, snap, pred)
			}
		case 2:
			set, _ := expr.ParseAssignment("name = 'updated'")
			pred, _ := expr.Parse("ok = true")
			_, err = dml.Update(ctx, snap, pred, []*expr.Assignment{set})
		case 3:
			if step == 3 {
				_, err = writer.Overwrite(ctx, snap, seq(g.batch(memory.DefaultAllocator, asc, 20)))
			} else {
				_, err = maintenance.Optimize(ctx, snap)
			}
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		convert()
	}
	checkPyiceberg(t, py, store, dir, 8)
}

// checkPyiceberg reads the newest Iceberg metadata of the table in dir
// with pyiceberg: every snapshot, by id and by time travel, must hold
// lakelog's rows at the Delta version it records; there must be at
// least minSnapshots.
func checkPyiceberg(t *testing.T, py string, store objstore.Store, dir string, minSnapshots int) {
	t.Helper()
	out := t.TempDir()
	meta, err := filepath.Glob(filepath.Join(dir, "metadata", "v*.metadata.json"))
	if err != nil || len(meta) == 0 {
		t.Fatalf("no metadata: %v", err)
	}
	latest := meta[0]
	for _, m := range meta {
		if len(m) > len(latest) || (len(m) == len(latest) && m > latest) {
			latest = m
		}
	}
	cmd := exec.Command(py, "iceberg_read.py", "file://"+latest, out)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	body, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("pyiceberg: %v\n%s", err, stderr)
	}
	var res icebergRead
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("pyiceberg answered %q: %v", body, err)
	}
	if len(res.Snapshots) < minSnapshots {
		t.Fatalf("pyiceberg saw %d snapshots, want one per data commit (at least %d)", len(res.Snapshots), minSnapshots)
	}
	for _, s := range res.Snapshots {
		want := lakelogLines(t, open(t, store, "", deltalog.AtVersion(s.DeltaVersion)))
		sameRows(t, fmt.Sprintf("pyiceberg, snapshot %d (Delta version %d)", s.ID, s.DeltaVersion), parquetLines(t, filepath.Join(out, fmt.Sprintf("%d.parquet", s.ID))), want)
		sameRows(t, fmt.Sprintf("pyiceberg, time travel to snapshot %d's time (Delta version %d)", s.ID, s.DeltaVersion), parquetLines(t, filepath.Join(out, fmt.Sprintf("ts-%d.parquet", s.ID))), want)
	}
}

// TestUniformSpark: Spark and lakelog on the same UniForm tables. Spark
// reads lakelog's UniForm table (partitioned, column-mapped,
// IcebergCompatV2) as Delta with lakelog's rows and appends to it,
// checking the IcebergCompatV2 rules on its own write; lakelog converts
// Spark's commit and pyiceberg reads it. A table Spark created with
// IcebergCompatV2 is continued by lakelog: it enables the Iceberg format,
// appends, and pyiceberg reads both engines' rows. (Spark's own Iceberg
// converter needs the delta-iceberg jar and a Hive metastore, which the
// peer does not have: its Iceberg output is not compared here.)
func TestUniformSpark(t *testing.T) {
	py := requireIcebergPython(t)
	sp := requirePeer(t, spark)
	ctx := context.Background()

	// lakelog's table, read and appended to by Spark.
	store, dir := newLocal(t)
	schema, asc := tableSchema(t, "id long not null, name string, day date")
	g := newGen(12)
	props := map[string]string{
		actions.PropColumnMappingMode:             actions.ColumnMappingName,
		actions.PropEnableIcebergCompatV2:         "true",
		actions.PropUniversalFormatEnabledFormats: "iceberg",
	}
	createTable(t, store, "", schema, []string{"day"}, props, g.batch(memory.DefaultAllocator, asc, 30))
	if _, err := uniform.Sync(ctx, store, ""); err != nil {
		t.Fatal(err)
	}
	got, _ := peerRead(t, sp, request{Path: dir})
	sameRows(t, "spark reads lakelog's UniForm table", got, lakelogLines(t, open(t, store, "")))
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"INSERT INTO " + table + " VALUES (1000001, 'from spark', DATE'2024-02-29'), (1000002, NULL, NULL)",
	}})
	if _, err := uniform.Sync(ctx, store, ""); err != nil {
		t.Fatalf("lakelog converts Spark's commit: %v", err)
	}
	got, _ = peerRead(t, sp, request{Path: dir})
	sameRows(t, "spark after its append", got, lakelogLines(t, open(t, store, "")))
	checkPyiceberg(t, py, store, dir, 2)

	// Spark's IcebergCompatV2 table, continued by lakelog.
	store2, dir2 := newLocal(t)
	table2 := "delta.`" + dir2 + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table2 + " (id BIGINT NOT NULL, name STRING, day DATE) USING delta PARTITIONED BY (day) " +
			"TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.enableIcebergCompatV2' = 'true', 'delta.enableDeletionVectors' = 'false')",
		"INSERT INTO " + table2 + " VALUES (1, 'a', DATE'2024-01-01'), (2, 'b', DATE'2024-01-02'), (3, NULL, NULL)",
	}})
	// Each of lakelog's commits converts itself (the post-commit hook
	// that importing uniform registers): enabling UniForm converts the
	// whole table, the append its commit; Sync then has nothing to do.
	snap := open(t, store2, "")
	res0, err := maintenance.SetProperties(ctx, snap, map[string]string{actions.PropUniversalFormatEnabledFormats: "iceberg"})
	if err != nil {
		t.Fatalf("lakelog enables UniForm on Spark's IcebergCompatV2 table: %v", err)
	}
	if err := res0.WaitHooks(); err != nil {
		t.Fatalf("the conversion after enabling UniForm: %v", err)
	}
	res1, err := writer.Append(ctx, open(t, store2, ""), seq(g.batch(memory.DefaultAllocator, asc, 10)))
	if err != nil {
		t.Fatalf("lakelog appends to Spark's IcebergCompatV2 table: %v", err)
	}
	if err := res1.WaitHooks(); err != nil {
		t.Fatalf("the conversion of lakelog's append: %v", err)
	}
	res, err := uniform.Sync(ctx, store2, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.MetadataLocation != "" || res.To != res1.Version {
		t.Fatalf("uniform.Sync after lakelog's converted commits: %+v; want nothing left to do at version %d", res, res1.Version)
	}
	got, _ = peerRead(t, sp, request{Path: dir2})
	sameRows(t, "spark reads its table after lakelog's append", got, lakelogLines(t, open(t, store2, "")))
	checkPyiceberg(t, py, store2, dir2, 1)
}
