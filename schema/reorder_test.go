package schema_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
)

// TestMoveColumn: ALTER COLUMN FIRST and AFTER reorder a column or a
// struct's field without rewriting files, with or without column
// mapping; the rows read back in the new order.
func TestMoveColumn(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"", "name"} {
		store := objstore.NewMem()
		ddl := "id long, v string, s struct<a:int,b:string>"
		props := map[string]string{}
		if mode != "" {
			props["delta.columnMapping.mode"] = mode
		}
		createTable(t, store, ddl, props)
		appendRows(t, store, ddl, `[{"id":1,"v":"x","s":{"a":1,"b":"q"}}]`)
		if _, err := schema.MoveColumn(ctx, open(t, store), "s", "", true); err != nil {
			t.Fatal(err)
		}
		if ci := commitInfo(t, store); ci.Operation != "CHANGE COLUMN" || ci.OperationParameters["position"] != "FIRST" {
			t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
		}
		if _, err := schema.MoveColumn(ctx, open(t, store), "S.A", "b", false); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.MoveColumn(ctx, open(t, store), "id", "V", false); err != nil {
			t.Fatal(err)
		}
		if ci := commitInfo(t, store); ci.OperationParameters["position"] != "AFTER v" {
			t.Errorf("commitInfo %v", ci.OperationParameters)
		}
		snap := open(t, store)
		if got := snap.Schema().String(); got != "struct<s:struct<b:string,a:integer>,v:string,id:long>" {
			t.Errorf("mode %q: schema %s", mode, got)
		}
		sameLines(t, "moved", lines(t, snap), `{"s":{"b":"q","a":1},"v":"x","id":1}`)
		for _, tc := range []struct {
			col, after string
			first      bool
			want       string
		}{
			{"id", "id", false, "cannot go after itself"},
			{"id", "zz", false, "AFTER zz: no such column"},
			{"s.a", "v", false, "AFTER v: no such column in s (it holds b, a)"},
			{"zz", "", true, "zz does not exist"},
			{"id", "v", true, "say FIRST or AFTER"},
		} {
			_, err := schema.MoveColumn(ctx, snap, tc.col, tc.after, tc.first)
			refused(t, store, snap.Version(), "move "+tc.col, err, tc.want)
		}
	}
}

// TestReplaceColumns: REPLACE COLUMNS reorders, adds nullable columns,
// relaxes NOT NULL and sets comments; it drops left-out columns only
// with column mapping, and refuses type changes, tightening, partition
// columns and columns a constraint reads.
func TestReplaceColumns(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	ddl := "id long not null, p string, v string, w int"
	createTable(t, store, ddl, map[string]string{"delta.columnMapping.mode": "name"}, "p")
	appendRows(t, store, ddl, `[{"id":1,"p":"x","v":"vv","w":7}]`)
	cols := []schema.Column{mustColumn(t, "p string"), mustColumn(t, "ID long COMMENT 'the key'"), mustColumn(t, "n double"), mustColumn(t, "v string")}
	_, err := schema.ReplaceColumns(ctx, open(t, store), cols)
	refused(t, store, 1, "add n and drop w", err, "ambiguous")
	if _, err := schema.ReplaceColumns(ctx, open(t, store), []schema.Column{mustColumn(t, "p string"), mustColumn(t, "id long not null"), mustColumn(t, "v string")}); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.ReplaceColumns(ctx, open(t, store), cols); err != nil {
		t.Fatal(err)
	}
	if ci := commitInfo(t, store); ci.Operation != "REPLACE COLUMNS" {
		t.Errorf("commitInfo %s", ci.Operation)
	}
	snap := open(t, store)
	if got := snap.Schema().String(); got != "struct<p:string,ID:long,n:double,v:string>" {
		t.Errorf("schema %s", got)
	}
	if f := snap.Schema().Fields[1]; !f.Nullable || f.Metadata["comment"] != "the key" || f.Metadata["delta.columnMapping.id"] == nil {
		t.Errorf("ID field %+v", f)
	}
	sameLines(t, "replaced", lines(t, snap), `{"p":"x","ID":1,"n":null,"v":"vv"}`)
	if err := addConstraint(ctx, snap, "short", "length(v) < 10"); err != nil {
		t.Fatal(err)
	}
	snap = open(t, store)
	for _, tc := range []struct {
		cols []string
		want string
	}{
		{[]string{"p string", "ID int", "n double", "v string"}, "would change its type from long to integer"},
		{[]string{"p string", "ID long", "n double not null", "v string"}, "would make a nullable column NOT NULL"},
		{[]string{"ID long", "n double", "v string"}, "leaves out a partition column"},
		{[]string{"p string", "ID long", "n double"}, "CHECK constraint short"},
		{[]string{"p string", "ID long", "n double", "w int"}, "ambiguous"},
		{[]string{"p string", "ID long", "id long", "v string"}, "named twice"},
		{[]string{"p string", "ID long", "n double", "v string", "q int FIRST"}, "top-level columns in their new order"},
		{nil, "no columns given"},
	} {
		var cols []schema.Column
		for _, c := range tc.cols {
			cols = append(cols, mustColumn(t, c))
		}
		_, err := schema.ReplaceColumns(ctx, snap, cols)
		refused(t, store, snap.Version(), "replace with "+joinCols(tc.cols), err, tc.want)
	}
	plain := objstore.NewMem()
	createTable(t, plain, "id long, v long", nil)
	_, err = schema.ReplaceColumns(ctx, open(t, plain), []schema.Column{mustColumn(t, "id long")})
	refused(t, plain, 0, "drop without mapping", err, "delta.columnMapping.mode=name")
}

func joinCols(cols []string) string {
	out := ""
	for i, c := range cols {
		if i > 0 {
			out += ", "
		}
		out += c
	}
	return out
}
