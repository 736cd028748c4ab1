package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// TestSparkChangeFeedColumnMapped: on a column-mapped table with the
// change data feed (name mode copy-on-write, id mode with deletion
// vectors), Spark and lakelog both write (Spark: inserts, UPDATE,
// DELETE, MERGE, ADD COLUMNS; lakelog: an append, an UPDATE and a
// MERGE with schema evolution that adds a column), and Spark's
// readChangeFeed and lakelog's feed agree on every range. Then Spark
// renames a column: a range across the rename is refused by both, and
// the ranges after it agree. Then Spark widens a column (type widening)
// and adds a CHECK constraint: lakelog's append of a violating row is
// refused naming the constraint, its valid append is read by Spark.
func TestSparkChangeFeedColumnMapped(t *testing.T) {
	sp := requirePeer(t, spark)
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store, dir := newLocal(t)
			table := "delta.`" + dir + "`"
			dv := mode == "id"
			for _, stmt := range []string{
				"CREATE TABLE " + table + " (id INT, p STRING, v STRING) USING delta PARTITIONED BY (p) " +
					fmt.Sprintf("TBLPROPERTIES ('delta.columnMapping.mode' = '%s', 'delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = '%v')", mode, dv),
				"INSERT INTO " + table + " SELECT id, CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END, concat('v', id) FROM range(0, 40)",
				"UPDATE " + table + " SET v = concat(v, '-u') WHERE id % 7 = 0",
				"DELETE FROM " + table + " WHERE id % 5 = 0",
				"MERGE INTO " + table + " t USING (SELECT id, concat('m', id) AS v FROM range(30, 50)) s ON t.id = s.id " +
					"WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, p, v) VALUES (s.id, 'c', s.v)",
				"ALTER TABLE " + table + " ADD COLUMNS (extra BIGINT)",
			} {
				sp.call(t, request{Op: "sql", Statements: []string{stmt}})
			}
			// lakelog writes: versions 6, 7 and 8.
			_, sc := tableSchema(t, "id int, p string, v string, extra long")
			rec := jsonBatch(t, sc, `[{"id":100,"p":"a","v":"lakelog","extra":1},{"id":101,"p":"c","v":"lakelog","extra":2}]`)
			defer rec.Release()
			if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), writer.WithCommitOptions(noHooks)); err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Update(ctx, open(t, store, ""), parse(t, "id < 12"), []*expr.Assignment{assign(t, "extra = id * 10")}); err != nil {
				t.Fatal(err)
			}
			_, ssc := tableSchema(t, "id int, p string, v string, extra long, note string")
			src := jsonBatch(t, ssc, `[{"id":1,"p":"b","v":"merged","extra":11,"note":"n1"},{"id":200,"p":"a","v":"new","extra":3,"note":"n200"}]`)
			defer src.Release()
			if _, err := dml.Merge(ctx, open(t, store, ""), seq(src), parse(t, "target.id = source.id"),
				[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}, dml.WithSchemaEvolution(), dml.WithCommitOptions(noHooks)); err != nil {
				t.Fatal(err)
			}
			latest := open(t, store, "").Version()
			if latest != 8 {
				t.Fatalf("version %d, want 8", latest)
			}
			// Spark reads every range under the latest schema; lakelog under
			// the range's end version's (extra from version 5, note from 8).
			adjust := func(_, to int64, line string) string {
				if to < 8 {
					line = strings.Replace(line, `,"note":null`, "", 1)
				}
				if to < 5 {
					line = strings.Replace(line, `,"extra":null`, "", 1)
				}
				return line
			}
			// Three ranges (every single version would cost a Spark job
			// each): the whole history, lakelog's writes, the last one.
			for _, r := range [][2]int64{{0, latest}, {5, latest}, {latest, latest}} {
				want := peerChanges(t, sp, dir, r[0], r[1])
				for i := range want {
					want[i] = adjust(r[0], r[1], want[i])
				}
				slices.Sort(want)
				sameRows(t, fmt.Sprintf("lakelog's changes %d to %d", r[0], r[1]), lakelogChanges(t, store, r[0], r[1]), want)
			}

			// Spark renames v: both refuse a range across it.
			sp.call(t, request{Op: "sql", Statements: []string{"ALTER TABLE " + table + " RENAME COLUMN v TO val"}})      // 9
			sp.call(t, request{Op: "sql", Statements: []string{"UPDATE " + table + " SET val = 'renamed' WHERE id = 2"}}) // 10
			from, to := int64(7), int64(10)
			_, err := sp.do(request{Op: "changes", Path: dir, Version: &from, EndVersion: &to, Out: t.TempDir() + "/x.parquet"})
			if err == nil {
				t.Errorf("spark read the changes of versions 7 to 10 across the rename at 9; lakelog refuses them")
			}
			f, err := cdf.Open(ctx, store, "", cdf.Versions(from, to))
			if err == nil {
				for _, err = range f.Records(ctx) {
					if err != nil {
						break
					}
				}
			}
			if !errors.Is(err, cdf.ErrSchemaChange) || !strings.Contains(err.Error(), "column v") {
				t.Errorf("lakelog's feed across the rename: %v, want ErrSchemaChange naming column v", err)
			}
			for _, r := range [][2]int64{{9, 10}, {10, 10}} {
				sameRows(t, fmt.Sprintf("lakelog's changes %d to %d", r[0], r[1]), lakelogChanges(t, store, r[0], r[1]), peerChanges(t, sp, dir, r[0], r[1]))
			}

			// Spark widens id and adds a constraint; lakelog appends.
			for _, stmt := range []string{
				"ALTER TABLE " + table + " SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
				"ALTER TABLE " + table + " ALTER COLUMN id TYPE BIGINT",
				"ALTER TABLE " + table + " ADD CONSTRAINT nonneg CHECK (id >= 0)",
			} {
				sp.call(t, request{Op: "sql", Statements: []string{stmt}})
			}
			snap := open(t, store, "")
			before := snap.Version()
			_, wsc := tableSchema(t, "id long, p string, val string, extra long, note string")
			bad := jsonBatch(t, wsc, `[{"id":-1,"p":"a","val":"bad","extra":0,"note":null}]`)
			defer bad.Release()
			if _, err := writer.Append(ctx, snap, seq(bad), writer.WithCommitOptions(noHooks)); !errors.Is(err, writer.ErrConstraintViolation) || !strings.Contains(err.Error(), "nonneg") {
				t.Fatalf("append of a row violating Spark's constraint: %v", err)
			}
			if v := open(t, store, "").Version(); v != before {
				t.Fatalf("the refused append moved the table to version %d", v)
			}
			good := jsonBatch(t, wsc, `[{"id":5000000000,"p":"a","val":"wide","extra":0,"note":"big"}]`)
			defer good.Release()
			if _, err := writer.Append(ctx, snap, seq(good), writer.WithCommitOptions(noHooks)); err != nil {
				t.Fatal(err)
			}
			want, _ := peerRead(t, sp, request{Path: dir})
			sameRows(t, "lakelog's rows after Spark's widening and constraint", openLines(t, store, ""), want)
			if !strings.Contains(strings.Join(want, "\n"), `"id":5000000000`) {
				t.Fatal("spark does not read lakelog's widened row")
			}
		})
	}
}

// TestSparkReadsLakelogSchemaChanges: lakelog changes a column-mapped
// table's shape in every way issue 22 asks (name mode copy-on-write, id
// mode with deletion vectors): add, rename, drop, widen (ALTER and
// merge-schema), a constraint, merge-schema of a nested field, MERGE
// with schema evolution and overwrite-schema, with appends and DML in
// between; Spark reads every version, by time travel, with lakelog's
// rows and column names.
func TestSparkReadsLakelogSchemaChanges(t *testing.T) {
	sp := requirePeer(t, spark)
	modes := []string{"name"}
	if *interopLong {
		// Mode id (with deletion vectors) costs CI minutes of Spark time
		// travel; TestSparkChangeFeedColumnMapped writes id mode with
		// vectors and Spark reads its feed.
		modes = append(modes, "id")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store, dir := newLocal(t)
			props := map[string]string{"delta.columnMapping.mode": mode, "delta.enableTypeWidening": "true"}
			if mode == "id" {
				props["delta.enableDeletionVectors"] = "true"
			}
			sch, _ := tableSchema(t, "id int, p string, v string, s struct<a:int>")
			createTable(t, store, "", sch, []string{"p"}, props)
			appendJSON := func(ddl, rows string, opts ...writer.Option) {
				t.Helper()
				_, sc := tableSchema(t, ddl)
				rec := jsonBatch(t, sc, rows)
				defer rec.Release()
				if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), append(opts, writer.WithCommitOptions(noHooks))...); err != nil {
					t.Fatal(err)
				}
			}
			must := func(_ any, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			appendJSON("id int, p string, v string, s struct<a:int>", `[{"id":1,"p":"a","v":"one","s":{"a":1}},{"id":2,"p":"b","v":"two","s":{"a":2}}]`)
			must(schema.AddColumns(ctx, open(t, store, ""), []schema.Column{{Path: "n", Type: actions.TypeShort}}))
			appendJSON("id int, p string, v string, s struct<a:int>, n short", `[{"id":3,"p":"a","v":"three","s":{"a":3},"n":3}]`)
			must(schema.RenameColumn(ctx, open(t, store, ""), "v", "val"))
			must(dml.Update(ctx, open(t, store, ""), parse(t, "id = 1"), []*expr.Assignment{assign(t, "val = 'ONE'")}))
			must(schema.ChangeColumnType(ctx, open(t, store, ""), "n", actions.TypeInteger))
			// merge-schema widens id to long and adds s.b.
			appendJSON("id long, p string, val string, s struct<a:int, b:string>, n int", `[{"id":5000000000,"p":"b","val":"big","s":{"a":4,"b":"x"},"n":70000}]`, writer.WithMergeSchema())
			must(schema.AddConstraint(ctx, open(t, store, ""), "pos", "id > 0"))
			must(schema.DropColumns(ctx, open(t, store, ""), []string{"s"}))
			_, ssc := tableSchema(t, "id long, p string, val string, n int, tier string")
			src := jsonBatch(t, ssc, `[{"id":2,"p":"b","val":"TWO","n":2,"tier":"gold"},{"id":6,"p":"c","val":"six","n":6,"tier":"new"}]`)
			defer src.Release()
			must(dml.Merge(ctx, open(t, store, ""), seq(src), parse(t, "target.id = source.id"),
				[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}, dml.WithSchemaEvolution(), dml.WithCommitOptions(noHooks)))
			must(dml.Delete(ctx, open(t, store, ""), parse(t, "id = 3")))
			latest := open(t, store, "").Version()
			for v := range latest + 1 {
				want, _ := peerRead(t, sp, request{Path: dir, Version: &v})
				sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), want)
			}
			// overwrite-schema last (after dropping the constraint on id,
			// which the new schema lacks: lakelog refuses the overwrite
			// otherwise): Spark reads the new table.
			must(schema.DropConstraint(ctx, open(t, store, ""), "pos"))
			_, osc := tableSchema(t, "k string, q long")
			rec := jsonBatch(t, osc, `[{"k":"x","q":1},{"k":"y","q":2}]`)
			defer rec.Release()
			must(writer.Overwrite(ctx, open(t, store, ""), seq(rec), writer.WithOverwriteSchema("k"), writer.WithCommitOptions(noHooks)))
			want, _ := peerRead(t, sp, request{Path: dir})
			sameRows(t, "lakelog after overwrite-schema", openLines(t, store, ""), want)
			if len(want) != 2 {
				t.Fatalf("spark read %d rows after overwrite-schema, want 2", len(want))
			}
		})
	}
}
