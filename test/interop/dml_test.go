package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/writer"
)

// TestPeersReadLakelogDML changes a partitioned table with lakelog's
// DELETE, UPDATE and MERGE, copy-on-write and with deletion vectors, with
// the change data feed on, and checks after each operation that Spark and
// delta-rs read the rows lakelog reads, and that Spark's change feed
// (readChangeFeed, as table_changes) and delta-rs's load_cdf return, for
// the operation's version, the changes between the rows before and after
// it.
func TestPeersReadLakelogDML(t *testing.T) {
	sp := requirePeer(t, spark)
	rs := requirePeer(t, deltaRS)
	for _, dv := range []bool{false, true} {
		name := map[bool]string{false: "copy-on-write", true: "deletion vectors"}[dv]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store, dir := newLocal(t)
			props := map[string]string{"delta.enableChangeDataFeed": "true"}
			if dv {
				props["delta.enableDeletionVectors"] = "true"
			}
			schema, err := actions.ParseDDL("id long not null, p string, v long, s string")
			if err != nil {
				t.Fatal(err)
			}
			text, _ := actions.SchemaString(schema)
			tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: text, PartitionColumns: []string{"p"}, Configuration: props})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			sc, _ := actions.ToArrowSchema(schema, false, "")
			for b := range 3 {
				var rows []string
				for i := b * 100; i < (b+1)*100; i++ {
					rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%c","v":%d,"s":"s%d"}`, i, 'a'+i%3, i*7%100, i%5))
				}
				rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
				if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), writer.WithTargetFileSize(4<<10)); err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			var srcRows []string
			for i := 100; i < 130; i++ {
				v := i
				if i%10 == 0 {
					v = -i
				}
				srcRows = append(srcRows, fmt.Sprintf(`{"id":%d,"p":"%c","v":%d,"s":"merged"}`, i, 'a'+i%3, v))
			}
			for i := 1000; i < 1030; i++ {
				srcRows = append(srcRows, fmt.Sprintf(`{"id":%d,"p":"%c","v":%d,"s":"inserted"}`, i, 'a'+i%3, i))
			}
			ops := []struct {
				name string
				run  func(snap *deltalog.Snapshot) (*dml.Result, error)
			}{
				{"DELETE WHERE v < 10", func(snap *deltalog.Snapshot) (*dml.Result, error) {
					return dml.Delete(ctx, snap, parse(t, "v < 10"))
				}},
				{"UPDATE", func(snap *deltalog.Snapshot) (*dml.Result, error) {
					set := []*expr.Assignment{assign(t, "v = v + 1000"), assign(t, "s = 'updated'")}
					return dml.Update(ctx, snap, parse(t, "p = 'a' AND id < 150"), set)
				}},
				{"MERGE", func(snap *deltalog.Snapshot) (*dml.Result, error) {
					src := jsonBatch(t, sc, "["+strings.Join(srcRows, ",")+"]")
					defer src.Release()
					return dml.Merge(ctx, snap, seq(src), parse(t, "target.id = source.id"), []dml.Clause{
						dml.WhenMatchedDelete(parse(t, "source.v < 0")),
						dml.WhenMatchedUpdateAll(nil),
						dml.WhenNotMatchedInsertAll(nil),
					})
				}},
				{"DELETE of a partition", func(snap *deltalog.Snapshot) (*dml.Result, error) {
					return dml.Delete(ctx, snap, parse(t, "p = 'c'"))
				}},
			}
			for _, op := range ops {
				before := open(t, store, "")
				beforeLines := lakelogLines(t, before)
				res, err := op.run(before)
				if err != nil {
					t.Fatalf("%s: %v", op.name, err)
				}
				if res.CommitResult == nil {
					t.Fatalf("%s: nothing committed", op.name)
				}
				v := res.Version
				after := lakelogLines(t, open(t, store, ""))
				if slices.Equal(after, beforeLines) {
					t.Fatalf("%s changed no row: it tests nothing", op.name)
				}
				t.Logf("%s: version %d, metrics %v", op.name, v, res.Metrics)
				for _, p := range []*peer{sp, rs} {
					req := request{Path: dir}
					if p == rs && dv {
						// delta-rs's pyarrow reader refuses deletion
						// vectors; its DataFusion scan applies them.
						req.Reader = "datafusion"
					}
					got, _ := peerRead(t, p, req)
					sameRows(t, fmt.Sprintf("%s after %s", p.engine, op.name), got, after)
					want := expectedChanges(t, beforeLines, after, v)
					sameRows(t, fmt.Sprintf("%s change feed of %s (version %d)", p.engine, op.name, v), withoutStamps(peerChanges(t, p, dir, v, v)), want)
				}
				want := expectedChanges(t, beforeLines, after, v)
				sameRows(t, fmt.Sprintf("lakelog's change feed of %s (version %d)", op.name, v), withoutStamps(lakelogChanges(t, store, v, v)), want)
			}
		})
	}
}

// expectedChanges is the change feed between two states of a table whose
// rows are identified by "id" (sorted canonical lines): deleted rows,
// inserted rows, and the pre- and post-images of changed rows, each with
// _change_type and _commit_version.
func expectedChanges(t *testing.T, before, after []string, version int64) []string {
	t.Helper()
	index := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			var row map[string]any
			if err := json.Unmarshal([]byte(l), &row); err != nil {
				t.Fatal(err)
			}
			m[fmt.Sprint(row["id"])] = l
		}
		return m
	}
	tag := func(line, kind string) string {
		return strings.TrimSuffix(line, "}") + fmt.Sprintf(`,"_change_type":"%s","_commit_version":%d}`, kind, version)
	}
	b, a := index(before), index(after)
	var out []string
	for id, l := range b {
		switch n, ok := a[id]; {
		case !ok:
			out = append(out, tag(l, "delete"))
		case n != l:
			out = append(out, tag(l, "update_preimage"), tag(n, "update_postimage"))
		}
	}
	for id, l := range a {
		if _, ok := b[id]; !ok {
			out = append(out, tag(l, "insert"))
		}
	}
	slices.Sort(out)
	return out
}

// withoutStamps is change rows without their _commit_timestamp, which
// the peers take from different sources.
func withoutStamps(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = commitStamp.ReplaceAllString(l, "}")
	}
	slices.Sort(out)
	return out
}

func jsonBatch(t *testing.T, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func parse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func assign(t *testing.T, s string) *expr.Assignment {
	t.Helper()
	a, err := expr.ParseAssignment(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSparkDMLWithDeletionVectorsLakelogReads has Spark change a table with
// DELETE, UPDATE and MERGE with deletion vectors on (Spark then marks rows
// in vectors rather than rewriting files), and checks that lakelog reads
// every version as Spark does.
func TestSparkDMLWithDeletionVectorsLakelogReads(t *testing.T) {
	sp := requirePeer(t, spark)
	store, dir := newLocal(t)
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table + " (id BIGINT, p STRING, v BIGINT, s STRING) USING delta PARTITIONED BY (p) " +
			"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true')",
		"INSERT INTO " + table + " SELECT id, CAST(id % 3 AS STRING), id * 7 % 100, concat('s', id % 5) FROM range(0, 300)",
		"INSERT INTO " + table + " SELECT id, CAST(id % 3 AS STRING), id * 7 % 100, concat('s', id % 5) FROM range(300, 400)",
		"DELETE FROM " + table + " WHERE v < 10",
		"UPDATE " + table + " SET v = v + 1000, s = 'updated' WHERE p = '0' AND id < 150",
		"MERGE INTO " + table + " t USING (SELECT id, CAST(id % 3 AS STRING) AS p, CASE WHEN id % 10 = 0 THEN -id ELSE id END AS v, 'merged' AS s " +
			"FROM range(100, 130) UNION ALL SELECT id, CAST(id % 3 AS STRING), id, 'inserted' FROM range(1000, 1030)) src " +
			"ON t.id = src.id WHEN MATCHED AND src.v < 0 THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
		"DELETE FROM " + table + " WHERE id % 7 = 3",
	}})
	latest := sp.call(t, request{Op: "version", Path: dir}).Version
	snap := open(t, store, "")
	dvFiles := 0
	for f := range snap.Files() {
		if f.DeletionVector != nil {
			dvFiles++
		}
	}
	if dvFiles == 0 {
		t.Fatalf("spark left no file with a deletion vector in version %d: the test tests nothing", latest)
	}
	t.Logf("spark's table: version %d, %d of %d files with deletion vectors", latest, dvFiles, snap.NumFiles())
	for v := int64(0); v <= latest; v++ {
		want, _ := peerRead(t, sp, request{Path: dir, Version: &v})
		sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), want)
	}
}
