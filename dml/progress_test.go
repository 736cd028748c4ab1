package dml_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// DELETE, UPDATE and MERGE report the rows they read, by phase: "find"
// (the rows of the files their predicate may match), then "rewrite" (the
// rows of the files they write again); done grows to the phase's total.
func TestDMLProgress(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, v long", nil)
	for f := range 2 {
		var rows []string
		for i := range 2000 {
			rows = append(rows, fmt.Sprintf(`{"id":%d,"v":%d}`, f*2000+i, i))
		}
		snap = tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
	}
	type call struct {
		phase       string
		done, total int64
	}
	var calls []call
	progress := dml.WithProgress(func(phase string, done, total int64) { calls = append(calls, call{phase, done, total}) })
	if _, err := dml.Delete(ctx, snap, mustParse(t, "id % 10 = 0"), progress, dml.WithoutDeletionVectors()); err != nil {
		t.Fatal(err)
	}
	last := map[string]call{}
	for i, c := range calls {
		if c.total != 4000 || c.done > c.total || i > 0 && calls[i-1].phase == c.phase && c.done < calls[i-1].done {
			t.Errorf("progress %+v (calls %v)", c, calls)
		}
		last[c.phase] = c
	}
	for _, phase := range []string{"find", "rewrite"} {
		if last[phase].done != 4000 {
			t.Errorf("%s ends at %+v, want 4000 of 4000", phase, last[phase])
		}
	}
}
