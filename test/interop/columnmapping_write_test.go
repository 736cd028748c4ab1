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
	"github.com/lakelog/lakelog/writer"
)

// TestPeersReadLakelogColumnMapping has lakelog create a partitioned,
// column-mapped table with nested columns (mode name copy-on-write, mode
// id with deletion vectors), append, DELETE, UPDATE, MERGE, OPTIMIZE,
// append with merge-schema (a new top-level and a new nested column) and
// replaceWhere; Spark reads every version (by time travel) with lakelog's
// rows and column names, and delta-rs the latest where it reads column
// mapping.
func TestPeersReadLakelogColumnMapping(t *testing.T) {
	sp := requirePeer(t, spark)
	rs := requirePeer(t, deltaRS)
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store, dir := newLocal(t)
			props := map[string]string{"delta.columnMapping.mode": mode}
			if mode == "id" {
				props["delta.enableDeletionVectors"] = "true"
			}
			schema, sc := tableSchema(t, "id long not null, p string, v long, s struct<a:long, b:string>, tags array<string>")
			createTable(t, store, "", schema, []string{"p"}, props)
			for b := range 3 {
				var rows []string
				for i := b * 50; i < (b+1)*50; i++ {
					rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%c","v":%d,"s":{"a":%d,"b":"b%d"},"tags":["t%d"]}`, i, 'a'+i%3, i*7%100, i, i%4, i%5))
				}
				rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
				if _, err := writer.Append(ctx, open(t, store, ""), seq(rec), writer.WithTargetFileSize(4<<10), writer.WithCommitOptions(noHooks)); err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			steps := []struct {
				name string
				run  func(snap *deltalog.Snapshot) error
			}{
				{"DELETE", func(snap *deltalog.Snapshot) error {
					_, err := dml.Delete(ctx, snap, parse(t, "v < 10 OR s.a = 77"))
					return err
				}},
				{"UPDATE", func(snap *deltalog.Snapshot) error {
					_, err := dml.Update(ctx, snap, parse(t, "p = 'a' AND id < 100"), []*expr.Assignment{assign(t, "v = v + 1000"), assign(t, "tags = NULL")})
					return err
				}},
				{"MERGE", func(snap *deltalog.Snapshot) error {
					var rows []string
					for i := 90; i < 170; i += 2 {
						rows = append(rows, fmt.Sprintf(`{"id":%d,"p":"%c","v":%d,"s":{"a":-1,"b":"merged"},"tags":[]}`, i, 'a'+i%3, i))
					}
					rec := jsonBatch(t, sc, "["+strings.Join(rows, ",")+"]")
					defer rec.Release()
					_, err := dml.Merge(ctx, snap, seq(rec), parse(t, "target.id = source.id"), []dml.Clause{
						dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)})
					return err
				}},
				{"OPTIMIZE", func(snap *deltalog.Snapshot) error {
					_, err := maintenance.Optimize(ctx, snap, maintenance.OptimizeCommitOptions(noHooks))
					return err
				}},
				{"append --merge-schema", func(snap *deltalog.Snapshot) error {
					_, wide := tableSchema(t, "id long not null, p string, v long, s struct<a:long, b:string, c:double>, tags array<string>, extra string")
					rec := jsonBatch(t, wide, `[{"id":500,"p":"d","v":5,"s":{"a":5,"b":"w","c":1.5},"tags":null,"extra":"new"}]`)
					defer rec.Release()
					_, err := writer.Append(ctx, snap, seq(rec), writer.WithMergeSchema(), writer.WithCommitOptions(noHooks))
					return err
				}},
				{"replaceWhere", func(snap *deltalog.Snapshot) error {
					_, wide := tableSchema(t, "id long not null, p string, v long")
					rec := jsonBatch(t, wide, `[{"id":600,"p":"b","v":6}]`)
					defer rec.Release()
					_, err := dml.ReplaceWhere(ctx, snap, parse(t, "p = 'b'"), seq(rec), dml.WithCommitOptions(noHooks))
					return err
				}},
			}
			for _, st := range steps {
				if err := st.run(open(t, store, "")); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
			}
			snap := open(t, store, "")
			for _, f := range snap.Schema().Fields {
				if f.PhysicalName(mode) == f.Name || !strings.HasPrefix(f.PhysicalName(mode), "col-") {
					t.Fatalf("column %s has physical name %q: the test would not tell names apart", f.Name, f.PhysicalName(mode))
				}
			}
			for v := int64(0); v <= snap.Version(); v++ {
				want := lakelogLines(t, open(t, store, "", deltalog.AtVersion(v)))
				got, _ := peerRead(t, sp, request{Path: dir, Version: &v})
				sameRows(t, fmt.Sprintf("spark at version %d", v), got, want)
			}
			want := lakelogLines(t, snap)
			if len(want) < 50 {
				t.Fatalf("%d rows at the end: the history tested little", len(want))
			}
			for _, q := range []string{"extra = 'new'", "s.c > 1", "p = 'a' AND v > 1000"} {
				got, _ := peerRead(t, sp, request{Path: dir, Where: q})
				sameRows(t, "spark where "+q, got, filtered(t, snap, q))
			}
			if mode == "name" {
				// delta-rs reads name mode through its DataFusion scan.
				got, _ := peerRead(t, rs, request{Path: dir, Reader: "datafusion"})
				sameRows(t, "delta-rs (datafusion)", got, want)
			}
		})
	}
}
