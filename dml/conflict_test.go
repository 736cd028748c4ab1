package dml_test

import (
	"context"
	"errors"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// MERGE reads only the target files that can hold a match, under the
// source keys' predicate: a concurrent append into another partition
// rebases it, and one that may add a matching row aborts it.
func TestMergeVersusConcurrentAppend(t *testing.T) {
	for _, c := range []struct {
		name      string
		rows      string
		wantAbort bool
	}{
		{"other partition", `[{"id":3,"p":"b","v":0}]`, false},
		{"same partition, outside the source's keys", `[{"id":50,"p":"a","v":0}]`, false},
		{"same partition, a key of the source", `[{"id":5,"p":"a","v":0}]`, true},
	} {
		for _, dv := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: "", true: ", deletion vectors"}[dv], func(t *testing.T) {
				ctx := context.Background()
				st := objstore.NewMem()
				props := map[string]string{"delta.isolationLevel": "Serializable"}
				if dv {
					props["delta.enableDeletionVectors"] = "true"
				}
				tabletest.Create(t, st, "id long, p string, v long", props, "p")
				tabletest.AppendTo(t, st, `[{"id":1,"p":"a","v":1},{"id":2,"p":"a","v":2},{"id":20,"p":"b","v":20}]`)
				read := tabletest.Open(t, st)
				// The winner appends while the MERGE is in flight.
				if _, err := writer.Append(ctx, read, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, read, c.rows))); err != nil {
					t.Fatal(err)
				}
				sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "p", Type: arrow.BinaryTypes.String}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
				src := tabletest.RecordJSON(t, memory.DefaultAllocator, sc, `[{"id":2,"p":"a","v":200},{"id":5,"p":"a","v":500}]`)
				res, err := dml.Merge(ctx, read, tabletest.Batches(t, src), mustParse(t, "target.id = source.id AND target.p = source.p"),
					[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)},
					dml.WithCommitOptions(deltalog.WithIsolation(conflict.Serializable)))
				if c.wantAbort {
					if !errors.Is(err, conflict.ErrConcurrentAppend) {
						t.Fatalf("want ConcurrentAppend, got %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("want a rebase, got %v", err)
				}
				if res.Attempts < 2 {
					t.Errorf("committed in %d attempt(s); the concurrent append should have made it rebase", res.Attempts)
				}
				got := tabletest.ScanLines(t, tabletest.Open(t, st))
				want := tabletest.Sorted(`{"id":1,"p":"a","v":1}`, `{"id":2,"p":"a","v":200}`, `{"id":5,"p":"a","v":500}`, `{"id":20,"p":"b","v":20}`)
				want = append(want, scanLinesOf(t, c.rows)...)
				tabletest.DiffLines(t, "rows", got, tabletest.Sorted(want...))
			})
		}
	}
}

// Two DELETEs of rows of the same file: the loser's file was removed (or
// re-added with another deletion vector) by the winner, so it aborts.
func TestDeleteVersusConcurrentDelete(t *testing.T) {
	for _, dv := range []bool{false, true} {
		ctx := context.Background()
		st := objstore.NewMem()
		props := map[string]string{}
		if dv {
			props["delta.enableDeletionVectors"] = "true"
		}
		tabletest.Create(t, st, "id long, v long", props)
		read := tabletest.AppendTo(t, st, `[{"id":1,"v":1},{"id":2,"v":2},{"id":3,"v":3}]`)
		if _, err := dml.Delete(ctx, read, mustParse(t, "id = 1")); err != nil {
			t.Fatal(err)
		}
		_, err := dml.Delete(ctx, read, mustParse(t, "id = 3"))
		if !errors.Is(err, conflict.ErrConflict) {
			t.Fatalf("deletion vectors %v: want a conflict, got %v", dv, err)
		}
		tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, st)), tabletest.Sorted(`{"id":2,"v":2}`, `{"id":3,"v":3}`))
	}
}

// A commit whose response was lost may have landed: the operation must
// not delete the files it wrote, or the table would reference missing
// files (the concurrent-writers model found this).
func TestLostCommitKeepsItsFiles(t *testing.T) {
	for _, dv := range []bool{false, true} {
		ctx := context.Background()
		mem := objstore.NewMem()
		props := map[string]string{}
		if dv {
			props["delta.enableDeletionVectors"] = "true"
		}
		tabletest.Create(t, mem, "id long, v long", props)
		tabletest.AppendTo(t, mem, `[{"id":1,"v":1},{"id":2,"v":2},{"id":3,"v":3}]`)
		// Every create of the next commit "fails" after it was made.
		st := objstore.Faulty(mem, objstore.Times(20, objstore.LoseResponse(objstore.OpPut, "tbl/_delta_log/*.json")))
		snap, err := deltalog.Open(ctx, st, "tbl")
		if err != nil {
			t.Fatal(err)
		}
		_, err = dml.Update(ctx, snap, mustParse(t, "id = 2"), mustSet(t, "v = 20"))
		t.Logf("deletion vectors %v: update with lost responses: %v", dv, err)
		// Whatever the outcome, every file the table references exists.
		after := tabletest.Open(t, mem)
		for f := range after.Files() {
			if _, err := mem.Head(ctx, after.TablePath(f.Path)); err != nil {
				t.Errorf("deletion vectors %v: version %d references %s: %v", dv, after.Version(), f.Path, err)
			}
		}
		got := tabletest.ScanLines(t, after)
		if len(got) != 3 {
			t.Errorf("deletion vectors %v: rows %v", dv, got)
		}
	}
}
