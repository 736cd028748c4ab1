package schema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

func parse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAddConstraint: existing rows are checked (FALSE and NULL violate,
// as in Spark), the refusal names the constraint, the count and one
// row; a valid constraint is stored under its lower-case name with
// Spark's operation and adds the checkConstraints feature; DROP
// CONSTRAINT removes it.
func TestAddConstraint(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	ddl := "id long, v long, s struct<a:string>"
	createTable(t, store, ddl, nil)
	appendRows(t, store, ddl, `[{"id":1,"v":10,"s":{"a":"x"}},{"id":2,"v":null,"s":null},{"id":3,"v":-5,"s":{"a":"y"}}]`)
	snap := open(t, store)
	for _, tc := range []struct{ name, expr, want string }{
		{"pos", "v > 0", "2 existing rows violate the new CHECK constraint (v > 0), for one the row with v = "},
		{"notnull", "s.a IS NOT NULL", "1 existing rows violate the new CHECK constraint (s.a IS NOT NULL), for one the row with s.a = NULL"},
		{"bad", "v >", "expr: at column 4"},
		{"unknown", "w > 0", "unknown column w"},
		{"notbool", "v + 1", "a predicate must be boolean"},
		{"", "v > 0", "the constraint has no name"},
		{"__char_varchar_string_length_check__", "v > 0", "reserved"},
	} {
		_, err := schema.AddConstraint(ctx, snap, tc.name, tc.expr)
		refused(t, store, snap.Version(), "ADD CONSTRAINT "+tc.name, err, tc.want)
	}
	if _, err := schema.AddConstraint(ctx, snap, "IdPositive", "id > 0"); err != nil {
		t.Fatal(err)
	}
	after := open(t, store)
	if got := after.Metadata().Configuration["delta.constraints.idpositive"]; got != "id > 0" {
		t.Errorf("property %q", got)
	}
	if !after.Protocol().HasWriterFeature("checkConstraints") {
		t.Errorf("protocol %+v lacks checkConstraints", after.Protocol())
	}
	if ci := commitInfo(t, store); ci.Operation != "ADD CONSTRAINT" || ci.OperationParameters["name"] != "IdPositive" || ci.OperationParameters["expr"] != "id > 0" {
		t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	_, err := schema.AddConstraint(ctx, after, "idPOSITIVE", "id > 1")
	refused(t, store, after.Version(), "a second constraint of the name", err, "a CHECK constraint idpositive already exists (id > 0)")
	_, err = schema.DropConstraint(ctx, after, "nope")
	refused(t, store, after.Version(), "DROP CONSTRAINT nope", err, "the table has no CHECK constraint nope (it has idpositive)")
	// IF EXISTS of a constraint the table lacks changes nothing and
	// commits nothing.
	if res, err := schema.DropConstraint(ctx, after, "nope", schema.IfExists()); err != nil || res != nil {
		t.Fatalf("DROP CONSTRAINT IF EXISTS nope: %v, %v; want no commit and no error", res, err)
	}
	if v := open(t, store).Version(); v != after.Version() {
		t.Fatalf("DROP CONSTRAINT IF EXISTS nope committed version %d", v)
	}
	if _, err := schema.DropConstraint(ctx, open(t, store), "IDPOSITIVE"); err != nil {
		t.Fatal(err)
	}
	if ci := commitInfo(t, store); ci.OperationParameters["expr"] != "id > 0" || ci.OperationParameters["existed"] != "true" {
		t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	if _, ok := open(t, store).Metadata().Configuration["delta.constraints.idpositive"]; ok {
		t.Error("the constraint is still there")
	}
}

// TestConstraintsOnEveryWrite: append, overwrite, replaceWhere, UPDATE
// and MERGE (copy-on-write and with deletion vectors) check every new
// row and fail with the constraint's name, committing nothing; rows that
// meet it go in; OPTIMIZE is not held up.
func TestConstraintsOnEveryWrite(t *testing.T) {
	for _, dv := range []bool{false, true} {
		t.Run(map[bool]string{false: "copy-on-write", true: "deletion vectors"}[dv], func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			ddl := "id long, p string, v long"
			props := map[string]string{}
			if dv {
				props["delta.enableDeletionVectors"] = "true"
			}
			createTable(t, store, ddl, props, "p")
			appendRows(t, store, ddl, `[{"id":1,"p":"a","v":10},{"id":2,"p":"b","v":20}]`)
			if err := addConstraint(ctx, open(t, store), "v_range", "v BETWEEN 0 AND 100 AND id IS NOT NULL"); err != nil {
				t.Fatal(err)
			}
			good := func(js string) func(func(arrow.RecordBatch, error) bool) { return one(batch(t, ddl, js)) }
			ops := []struct {
				name string
				run  func(snap *deltalog.Snapshot, rows string) error
				bad  string
			}{
				{"append", func(snap *deltalog.Snapshot, rows string) error {
					_, err := writer.Append(ctx, snap, good(rows))
					return err
				}, `[{"id":5,"p":"a","v":50},{"id":6,"p":"a","v":500}]`},
				{"overwrite", func(snap *deltalog.Snapshot, rows string) error {
					_, err := writer.Overwrite(ctx, snap, good(rows))
					return err
				}, `[{"id":null,"p":"a","v":5}]`},
				{"replaceWhere", func(snap *deltalog.Snapshot, rows string) error {
					_, err := dml.ReplaceWhere(ctx, snap, parse(t, "p = 'a'"), good(rows))
					return err
				}, `[{"id":7,"p":"a","v":-1}]`},
				{"UPDATE", func(snap *deltalog.Snapshot, rows string) error {
					_, err := dml.Update(ctx, snap, parse(t, "id = 2"), []*expr.Assignment{mustAssign(t, "v = v * 100")})
					return err
				}, ""},
				{"MERGE", func(snap *deltalog.Snapshot, rows string) error {
					_, err := dml.Merge(ctx, snap, good(rows), parse(t, "target.id = source.id"), []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)})
					return err
				}, `[{"id":1,"p":"a","v":11},{"id":9,"p":"c","v":101}]`},
			}
			for _, op := range ops {
				snap := open(t, store)
				err := op.run(snap, op.bad)
				var ce *writer.ConstraintError
				if !errors.As(err, &ce) || !errors.Is(err, writer.ErrConstraintViolation) || ce.Name != "v_range" || !strings.Contains(err.Error(), "CHECK constraint v_range (v BETWEEN 0 AND 100 AND id IS NOT NULL) violated by row") {
					t.Errorf("%s: %v; want a violation of v_range", op.name, err)
				}
				if v := open(t, store).Version(); v != snap.Version() {
					t.Errorf("%s: the refused write moved the table to version %d", op.name, v)
				}
			}
			if err := ops[0].run(open(t, store), `[{"id":3,"p":"c","v":30}]`); err != nil {
				t.Fatal(err)
			}
			if err := ops[4].run(open(t, store), `[{"id":1,"p":"a","v":11},{"id":4,"p":"c","v":40}]`); err != nil {
				t.Fatal(err)
			}
			sameLines(t, "rows", lines(t, open(t, store)),
				`{"id":1,"p":"a","v":11}`, `{"id":2,"p":"b","v":20}`, `{"id":3,"p":"c","v":30}`, `{"id":4,"p":"c","v":40}`)
			// The message names the offending values.
			err := ops[0].run(open(t, store), `[{"id":8,"p":"a","v":1},{"id":null,"p":"a","v":1000}]`)
			if err == nil || !strings.Contains(err.Error(), "violated by row 2 with values: v = 1000, id = NULL") {
				t.Errorf("message %v", err)
			}
		})
	}
}

func mustAssign(t *testing.T, s string) *expr.Assignment {
	t.Helper()
	a, err := expr.ParseAssignment(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
