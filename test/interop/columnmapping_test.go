package interop

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/writer"
)

// interopLong runs the interop tests at their full size.
var interopLong = flag.Bool("interop.long", false, "run the slower interop cases too (Spark column mapping in mode id)")

// TestSparkColumnMapping has Spark create a partitioned, column-mapped
// table (mode name, then mode id), insert rows, rename a top-level column,
// a nested field and the partition column, drop columns (a top-level one
// and a nested one), add a column under a dropped column's old name, and
// insert again; lakelog must read every version, before and after each
// rename and drop, with Spark's rows, and filter on renamed columns as
// Spark does. Then lakelog appends, updates, merges and deletes, and
// Spark reads the rows lakelog reads.
func TestSparkColumnMapping(t *testing.T) {
	sp := requirePeer(t, spark)
	modes := []string{"name"}
	if *interopLong {
		// Mode id costs CI minutes of Spark for what the corpus's id-mode
		// table and reader.TestColumnMappingID already prove.
		modes = append(modes, "id")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			store, dir := newLocal(t)
			table := "delta.`" + dir + "`"
			stmts := []string{
				"CREATE TABLE " + table + " (id INT, name STRING, info STRUCT<a: INT, b: STRING>, " +
					"tags ARRAY<STRUCT<k: STRING>>, m MAP<STRING, STRUCT<v: INT>>, part STRING) USING delta PARTITIONED BY (part) " +
					"TBLPROPERTIES ('delta.columnMapping.mode' = '" + mode + "', 'delta.enableDeletionVectors' = 'false')",
				"INSERT INTO " + table + " VALUES " +
					"(1, 'one', named_struct('a', 10, 'b', 'x'), array(named_struct('k', 'k1')), map('q', named_struct('v', 1)), 'p1'), " +
					"(2, 'two', named_struct('a', 20, 'b', 'y'), array(), map(), 'p2'), " +
					"(3, NULL, NULL, NULL, NULL, NULL)",
				"ALTER TABLE " + table + " RENAME COLUMN name TO title",
				"ALTER TABLE " + table + " RENAME COLUMN info.a TO alpha",
				"INSERT INTO " + table + " VALUES (4, 'four', named_struct('alpha', 40, 'b', 'z'), array(named_struct('k', 'k4')), map('r', named_struct('v', 4)), 'p1')",
				"ALTER TABLE " + table + " DROP COLUMN tags",
				"ALTER TABLE " + table + " DROP COLUMN info.b",
				"ALTER TABLE " + table + " ADD COLUMNS (name STRING)",
				"ALTER TABLE " + table + " RENAME COLUMN part TO region",
				"INSERT INTO " + table + " VALUES (5, 'five', named_struct('alpha', 50), map(), 'p2', 'new name')",
				"DELETE FROM " + table + " WHERE id = 2",
			}
			for _, stmt := range stmts { // one request each: each has the worker's time limit
				sp.call(t, request{Op: "sql", Statements: []string{stmt}})
			}
			latest := sp.call(t, request{Op: "version", Path: dir}).Version
			if latest != int64(len(stmts)-1) {
				t.Fatalf("spark made version %d, want %d", latest, len(stmts)-1)
			}
			snap := open(t, store, "")
			if m := snap.Config().ColumnMappingMode(); m != mode {
				t.Fatalf("lakelog sees column mapping mode %q, want %q", m, mode)
			}
			differ := 0
			for _, f := range snap.Schema().Fields {
				if f.PhysicalName(mode) != f.Name {
					differ++
				}
			}
			if differ == 0 {
				t.Fatal("every physical name equals its logical name: the test would not tell them apart")
			}
			for v := range latest + 1 {
				want, _ := peerRead(t, sp, request{Path: dir, Version: &v})
				if len(want) == 0 && v > 0 {
					t.Fatalf("spark read no rows at version %d", v)
				}
				sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), want)
			}
			for _, tc := range []struct{ spark, lakelog string }{
				{"title = 'four'", "title = 'four'"},
				{"info.alpha >= 20", "info.alpha >= 20"},
				{"region = 'p1'", "region = 'p1'"},
				{"name IS NULL AND id < 5", "name IS NULL AND id < 5"},
			} {
				want, _ := peerRead(t, sp, request{Path: dir, Where: tc.spark})
				if len(want) == 0 {
					t.Fatalf("spark's %s matches no row: it tests nothing", tc.spark)
				}
				sameRows(t, "lakelog --where "+tc.lakelog, filtered(t, snap, tc.lakelog), want)
			}

			// lakelog writes the table Spark renamed and dropped columns
			// of: an append, an UPDATE of a renamed column, a MERGE and a
			// DELETE by the renamed partition column; Spark reads what
			// lakelog reads.
			ctx := context.Background()
			_, sc := tableSchema(t, "id int, title string, info struct<alpha:int>, m map<string,struct<v:int>>, region string, name string")
			rec := jsonBatch(t, sc, `[{"id":6,"title":"six","info":{"alpha":60},"m":[{"key":"s","value":{"v":6}}],"region":"p3","name":"lakelog"}]`)
			defer rec.Release()
			if _, err := writer.Append(ctx, snap, seq(rec), writer.WithCommitOptions(noHooks)); err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Update(ctx, open(t, store, ""), parse(t, "title = 'four' OR region = 'p3'"), []*expr.Assignment{assign(t, "title = 'UPDATED'"), assign(t, "name = 'updated'")}); err != nil {
				t.Fatal(err)
			}
			src := jsonBatch(t, sc, `[{"id":1,"title":"ONE","info":{"alpha":11},"m":null,"region":"p1","name":"merged"},{"id":7,"title":"seven","info":null,"m":null,"region":"p2","name":"inserted"}]`)
			defer src.Release()
			if _, err := dml.Merge(ctx, open(t, store, ""), seq(src), parse(t, "target.id = source.id"), []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}); err != nil {
				t.Fatal(err)
			}
			if _, err := dml.Delete(ctx, open(t, store, ""), parse(t, "region = 'p2' AND id = 5")); err != nil {
				t.Fatal(err)
			}
			after := open(t, store, "")
			want := lakelogLines(t, after)
			got, _ := peerRead(t, sp, request{Path: dir})
			sameRows(t, "spark after lakelog's writes", got, want)
			for _, w := range []string{`"title":"UPDATED"`, `"name":"updated"`, `"name":"merged"`, `"name":"inserted"`} {
				if !strings.Contains(strings.Join(want, "\n"), w) {
					t.Errorf("lakelog's writes left no row with %s: %v", w, want)
				}
			}
		})
	}
}
