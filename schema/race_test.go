package schema_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// TestSchemaChangeRaces runs each schema change against each kind of
// concurrent write, in both orders, on name- and id-mode tables (rename
// and drop need mapping), both transactions starting from one snapshot:
//
//   - the change commits first: the write, whose files follow the old
//     metadata, aborts with conflict.ErrMetadataChanged and commits
//     nothing (a writer that started before a rename or drop never
//     commits files under the old layout);
//   - the write commits first: a change that reads no rows (every one but
//     ADD CONSTRAINT) rebases over a plain write, as Spark's ALTER does,
//     and the table reads the written rows under the new schema; ADD
//     CONSTRAINT, which read the rows it validated, aborts; any change
//     aborts over a write that changed the metadata itself (merge-schema).
func TestSchemaChangeRaces(t *testing.T) {
	ctx := context.Background()
	const ddl = "id long, v string, n int"
	changes := []struct {
		name   string
		change func(snap *deltalog.Snapshot) error
		reads  bool     // validates the rows: aborts after a concurrent write
		want   []string // rows after "write first" (base row 1, written row 2)
	}{
		{"rename", func(s *deltalog.Snapshot) error { _, err := schema.RenameColumn(ctx, s, "v", "w"); return err }, false,
			[]string{`{"id":1,"w":"a","n":1}`, `{"id":2,"w":"b","n":2}`}},
		{"drop", func(s *deltalog.Snapshot) error { _, err := schema.DropColumns(ctx, s, []string{"v"}); return err }, false,
			[]string{`{"id":1,"n":1}`, `{"id":2,"n":2}`}},
		{"add column", func(s *deltalog.Snapshot) error {
			_, err := schema.AddColumns(ctx, s, []schema.Column{{Path: "x", Type: actions.TypeString}})
			return err
		}, false, []string{`{"id":1,"v":"a","n":1,"x":null}`, `{"id":2,"v":"b","n":2,"x":null}`}},
		{"change type", func(s *deltalog.Snapshot) error {
			_, err := schema.ChangeColumnType(ctx, s, "n", actions.TypeLong)
			return err
		}, false, []string{`{"id":1,"v":"a","n":1}`, `{"id":2,"v":"b","n":2}`}},
		{"add constraint", func(s *deltalog.Snapshot) error { _, err := schema.AddConstraint(ctx, s, "pos", "id > 0"); return err }, true, nil},
		{"set nullable", func(s *deltalog.Snapshot) error { _, err := schema.DropNotNull(ctx, s, "id"); return err }, false,
			[]string{`{"id":1,"v":"a","n":1}`, `{"id":2,"v":"b","n":2}`}},
	}
	writes := []struct {
		name  string
		write func(snap *deltalog.Snapshot) error
		// metadata: the write changes the metadata itself.
		metadata bool
	}{
		{"append", func(s *deltalog.Snapshot) error {
			_, err := writer.Append(ctx, s, one(batch(t, ddl, `[{"id":2,"v":"b","n":2}]`)))
			return err
		}, false},
		{"update", func(s *deltalog.Snapshot) error {
			_, err := dml.Update(ctx, s, mustParse(t, "id = 1"), []*expr.Assignment{{Column: expr.Col("id"), Value: expr.Lit(int64(2))}, {Column: expr.Col("v"), Value: expr.Lit("b")}, {Column: expr.Col("n"), Value: expr.Lit(int32(2))}})
			return err
		}, false},
		{"merge-schema append", func(s *deltalog.Snapshot) error {
			_, err := writer.Append(ctx, s, one(batch(t, ddl+", extra string", `[{"id":2,"v":"b","n":2,"extra":"e"}]`)), writer.WithMergeSchema())
			return err
		}, true},
	}
	for _, mode := range []string{"name", "id"} {
		for _, c := range changes {
			for _, w := range writes {
				for _, changeFirst := range []bool{true, false} {
					name := fmt.Sprintf("%s/%s/%s/changeFirst=%v", mode, c.name, w.name, changeFirst)
					t.Run(name, func(t *testing.T) {
						store := objstore.NewMem()
						createTable(t, store, ddl, map[string]string{actions.PropColumnMappingMode: mode, actions.PropEnableTypeWidening: "true"})
						appendRows(t, store, ddl, `[{"id":1,"v":"a","n":1}]`)
						base := open(t, store)
						first, second := func() error { return c.change(base) }, func() error { return w.write(base) }
						if !changeFirst {
							first, second = second, first
						}
						if err := first(); err != nil {
							t.Fatalf("first: %v", err)
						}
						after := open(t, store)
						err := second()
						aborts := changeFirst || c.reads || w.metadata
						if aborts {
							if !errors.Is(err, conflict.ErrConflict) {
								t.Fatalf("second: %v, want a conflict", err)
							}
							// A change that adds a table feature is a protocol
							// change first (Spark checks that first too).
							if changeFirst && !errors.Is(err, conflict.ErrMetadataChanged) && !errors.Is(err, conflict.ErrProtocolChanged) {
								t.Errorf("second: %v, want ErrMetadataChanged", err)
							}
							if v := open(t, store).Version(); v != after.Version() {
								t.Errorf("the aborted transaction moved the table to version %d", v)
							}
							return
						}
						if err != nil {
							t.Fatalf("second: %v, want it to rebase", err)
						}
						snap := open(t, store)
						if snap.Version() != base.Version()+2 {
							t.Fatalf("version %d, want %d", snap.Version(), base.Version()+2)
						}
						want := c.want
						if w.name == "update" { // the update replaced row 1 by row 2
							want = want[1:]
						}
						sameLines(t, "rows", lines(t, snap), want...)
					})
				}
			}
		}
	}
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
