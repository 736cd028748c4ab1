package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// trackedIDs are a table version's rows as id -> [row ID, row commit version].
type trackedIDs map[int64][2]int64

// sparkRowIDs is what Spark's _metadata.row_id and row_commit_version say
// for every row of the table at version (latest when < 0).
func sparkRowIDs(t *testing.T, sp *peer, dir string, version int64) trackedIDs {
	t.Helper()
	at := ""
	if version >= 0 {
		at = fmt.Sprintf(" VERSION AS OF %d", version)
	}
	res := sp.call(t, request{Op: "sql_rows", Statements: []string{
		"SELECT id, _metadata.row_id, _metadata.row_commit_version FROM delta.`" + dir + "`" + at}})
	out := trackedIDs{}
	for _, r := range res.StatementRows[0].Rows {
		id, rowID, ver := int64(r[0].(float64)), int64(r[1].(float64)), int64(r[2].(float64))
		if _, dup := out[id]; dup {
			t.Fatalf("Spark: id %d twice", id)
		}
		out[id] = [2]int64{rowID, ver}
	}
	return out
}

// lakelogRowIDs is what reader.WithRowTracking says for the latest version.
func lakelogRowIDs(t *testing.T, store objstore.Store) trackedIDs {
	t.Helper()
	out := trackedIDs{}
	for _, l := range tabletest.ScanLines(t, open(t, store, ""), reader.WithColumns("id"), reader.WithRowTracking()) {
		var id, rowID, ver int64
		if _, err := fmt.Sscanf(l, `{"id":%d,"_row_id":%d,"_row_commit_version":%d}`, &id, &rowID, &ver); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out[id] = [2]int64{rowID, ver}
	}
	return out
}

// checkTracked checks a version's IDs against the previous version's: no
// row ID twice; a row that stays keeps its ID, and its commit version
// unless changed says it changed (then it is the new version); and the
// two engines agree.
func checkTracked(t *testing.T, what string, prev, cur, other trackedIDs, version int64, changed func(id int64) bool) {
	t.Helper()
	seen := map[int64]int64{}
	for id, c := range cur {
		if o, dup := seen[c[0]]; dup {
			t.Errorf("%s: row ID %d of rows %d and %d", what, c[0], o, id)
		}
		seen[c[0]] = id
		p, ok := prev[id]
		switch {
		case !ok:
		case p[0] != c[0]:
			t.Errorf("%s: row %d: row ID %d -> %d", what, id, p[0], c[0])
		case changed(id) && c[1] != version:
			t.Errorf("%s: row %d changed but its commit version is %d, not %d", what, id, c[1], version)
		case !changed(id) && c[1] != p[1]:
			t.Errorf("%s: row %d unchanged but its commit version moved %d -> %d", what, id, p[1], c[1])
		}
	}
	if other != nil {
		for id, c := range cur {
			if other[id] != c {
				t.Errorf("%s: row %d: Spark says %v, lakelog %v", what, id, c, other[id])
			}
		}
		if len(other) != len(cur) {
			t.Errorf("%s: Spark %d rows, lakelog %d", what, len(cur), len(other))
		}
	}
}

// TestRowTrackingSparkTableLakelogWrites: Spark creates a row-tracking
// table and writes; lakelog appends, DELETEs, UPDATEs, MERGEs (copy-on-write
// and with deletion vectors) and OPTIMIZEs; after each, Spark reads
// _metadata.row_id and row_commit_version: unique, stable for every row
// that stays, the commit version moved only for changed rows, and equal to
// lakelog's own _row_id/_row_commit_version. Then Spark writes again and
// the engines still agree.
func TestRowTrackingSparkTableLakelogWrites(t *testing.T) {
	sp := requirePeer(t, spark)
	for _, dv := range []bool{false, true} {
		t.Run(fmt.Sprint("dv=", dv), func(t *testing.T) {
			ctx := context.Background()
			store, dir := newLocal(t)
			table := "delta.`" + dir + "`"
			sp.call(t, request{Op: "sql", Statements: []string{
				"CREATE TABLE " + table + " (id BIGINT, p STRING, v BIGINT) USING delta PARTITIONED BY (p) " +
					fmt.Sprintf("TBLPROPERTIES ('delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = '%t')", dv),
				"INSERT INTO " + table + " SELECT id, CAST(id % 2 AS STRING), id * 7 % 100 FROM range(0, 60)",
				"INSERT INTO " + table + " SELECT id, CAST(id % 2 AS STRING), id * 7 % 100 FROM range(60, 90)",
			}})
			prev := sparkRowIDs(t, sp, dir, -1)
			checkTracked(t, "Spark's writes", trackedIDs{}, prev, lakelogRowIDs(t, store), 0, func(int64) bool { return false })
			_, sc := tableSchema(t, "id long, p string, v long")
			none := func(int64) bool { return false }
			steps := []struct {
				name    string
				changed func(id int64) bool
				run     func(snap *deltalog.Snapshot) error
			}{
				{"append", none, func(snap *deltalog.Snapshot) error {
					var rows []string
					for i := 90; i < 120; i++ {
						rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%d","v":%d}`, i, i%2, i))
					}
					rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
					defer rec.Release()
					_, err := writer.Append(ctx, snap, seq(rec), writer.WithCommitOptions(noHooks))
					return err
				}},
				{"DELETE", none, func(snap *deltalog.Snapshot) error {
					_, err := dml.Delete(ctx, snap, parse(t, "id % 7 = 0"))
					return err
				}},
				{"UPDATE", func(id int64) bool { return id%5 == 0 }, func(snap *deltalog.Snapshot) error {
					_, err := dml.Update(ctx, snap, parse(t, "id % 5 = 0"), []*expr.Assignment{assign(t, "v = v + 1000")})
					return err
				}},
				{"MERGE", func(id int64) bool { return id >= 20 && id < 40 && id%2 == 0 }, func(snap *deltalog.Snapshot) error {
					var rows []string
					for i := 20; i < 40; i += 2 {
						rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%d","v":%d}`, i, i%2, -i))
					}
					for i := 200; i < 210; i++ {
						rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%d","v":%d}`, i, i%2, i))
					}
					rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
					defer rec.Release()
					_, err := dml.Merge(ctx, snap, seq(rec), parse(t, "target.id = source.id"), []dml.Clause{
						dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)})
					return err
				}},
				{"OPTIMIZE", none, func(snap *deltalog.Snapshot) error {
					_, err := maintenance.Optimize(ctx, snap, maintenance.OptimizeCommitOptions(noHooks))
					return err
				}},
			}
			for _, st := range steps {
				if err := st.run(open(t, store, "")); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				v := open(t, store, "").Version()
				cur := sparkRowIDs(t, sp, dir, v)
				checkTracked(t, "lakelog "+st.name, prev, cur, lakelogRowIDs(t, store), v, st.changed)
				prev = cur
			}
			// Spark writes after lakelog: new rows above lakelog's mark.
			sp.call(t, request{Op: "sql", Statements: []string{
				"INSERT INTO " + table + " SELECT id, CAST(id % 2 AS STRING), id FROM range(300, 320)",
				"UPDATE " + table + " SET v = -1 WHERE id = 1",
			}})
			cur := sparkRowIDs(t, sp, dir, -1)
			checkTracked(t, "Spark after lakelog", prev, cur, lakelogRowIDs(t, store), open(t, store, "").Version(), func(id int64) bool { return id == 1 })
		})
	}
}

// TestRowTrackingLakelogTableSparkWrites: lakelog creates a row-tracking
// table and appends; Spark reads the same IDs, UPDATEs and INSERTs; lakelog
// reads Spark's IDs and appends above Spark's mark.
func TestRowTrackingLakelogTableSparkWrites(t *testing.T) {
	sp := requirePeer(t, spark)
	ctx := context.Background()
	store, dir := newLocal(t)
	schema, sc := tableSchema(t, "id long, p string, v long")
	createTable(t, store, "", schema, nil, map[string]string{"delta.enableRowTracking": "true"})
	for b := range 3 {
		var rows []string
		for i := b * 40; i < (b+1)*40; i++ {
			rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%d","v":%d}`, i, i%3, i))
		}
		rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
		if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), writer.WithCommitOptions(noHooks)); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	prev := sparkRowIDs(t, sp, dir, -1)
	checkTracked(t, "lakelog's appends", trackedIDs{}, prev, lakelogRowIDs(t, store), 0, func(int64) bool { return false })
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{"UPDATE " + table + " SET v = v + 1 WHERE id % 4 = 0"}})
	v := open(t, store, "").Version()
	cur := sparkRowIDs(t, sp, dir, -1)
	checkTracked(t, "Spark UPDATE", prev, cur, lakelogRowIDs(t, store), v, func(id int64) bool { return id%4 == 0 })
	prev = cur
	sp.call(t, request{Op: "sql", Statements: []string{"INSERT INTO " + table + " SELECT id, 'x', id FROM range(1000, 1010)"}})
	rec := jsonBatch(t, sc, `[{"id":2000,"p":"y","v":1},{"id":2001,"p":"y","v":2}]`)
	defer rec.Release()
	if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), writer.WithCommitOptions(noHooks)); err != nil {
		t.Fatal(err)
	}
	cur = sparkRowIDs(t, sp, dir, -1)
	checkTracked(t, "Spark INSERT then lakelog append", prev, cur, lakelogRowIDs(t, store), -1, func(int64) bool { return false })
}
