package writer_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// replaceWhere reads the table under its predicate, as Spark does: under
// Serializable a concurrent append into another partition rebases, and one
// into the replaced partition aborts it.
func TestReplaceWhereVersusConcurrentAppend(t *testing.T) {
	for _, c := range []struct {
		name      string
		appendTo  string
		wantAbort bool
	}{
		{"other partition", "b", false},
		{"same partition", "a", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			st := objstore.NewMem()
			snap := tabletest.Create(t, st, "id long, p string", map[string]string{"delta.isolationLevel": "Serializable"}, "p")
			if _, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, mem, snap, `[{"id":1,"p":"a"},{"id":2,"p":"b"}]`)), writer.WithAllocator(mem)); err != nil {
				t.Fatal(err)
			}
			read := tabletest.Open(t, st)
			// The winner appends while the replaceWhere is in flight.
			if _, err := writer.Append(ctx, read, tabletest.Batches(t, tabletest.Batch(t, mem, read, `[{"id":3,"p":"`+c.appendTo+`"}]`)), writer.WithAllocator(mem)); err != nil {
				t.Fatal(err)
			}
			pred, err := expr.Parse("p = 'a'")
			if err != nil {
				t.Fatal(err)
			}
			_, err = dml.ReplaceWhere(ctx, read, pred, tabletest.Batches(t, tabletest.Batch(t, mem, read, `[{"id":10,"p":"a"}]`)), dml.WithWriterOptions(writer.WithAllocator(mem)), dml.WithCommitOptions(deltalog.WithIsolation(conflict.Serializable)))
			if c.wantAbort {
				if !errors.Is(err, conflict.ErrConcurrentAppend) {
					t.Fatalf("want ConcurrentAppend, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want rebase, got %v", err)
			}
			got := tabletest.ScanLines(t, tabletest.Open(t, st))
			tabletest.DiffLines(t, "rows", got, tabletest.Sorted(`{"id":10,"p":"a"}`, `{"id":2,"p":"b"}`, `{"id":3,"p":"b"}`))
		})
	}
}
