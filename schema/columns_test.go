package schema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
)

func mustColumn(t *testing.T, text string) schema.Column {
	t.Helper()
	c, err := schema.ParseColumn(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseColumn(t *testing.T) {
	for _, tc := range []struct {
		text string
		want schema.Column
	}{
		{"c long", schema.Column{Path: "c", Type: actions.TypeLong}},
		{"s.`a b` string NOT NULL COMMENT 'hi there' FIRST", schema.Column{Path: "s.`a b`", Type: actions.TypeString, NotNull: true, Comment: "hi there", First: true}},
		{"x decimal(10,2) after `y z`", schema.Column{Path: "x", Type: &actions.DecimalType{Precision: 10, Scale: 2}, After: "y z"}},
		{"t struct<a:int, b:string> comment 'first'", schema.Column{Path: "t", Type: &actions.StructType{Fields: []*actions.StructField{
			{Name: "a", Type: actions.TypeInteger, Nullable: true}, {Name: "b", Type: actions.TypeString, Nullable: true}}}, Comment: "first"}},
	} {
		got, err := schema.ParseColumn(tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		if got.Path != tc.want.Path || got.Type.String() != tc.want.Type.String() || got.NotNull != tc.want.NotNull || got.Comment != tc.want.Comment || got.First != tc.want.First || got.After != tc.want.After {
			t.Errorf("%s: %+v, want %+v", tc.text, got, tc.want)
		}
	}
	for _, bad := range []string{"", "c", "c lung", "c long, d int", "`c long", "a..b int"} {
		if _, err := schema.ParseColumn(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestAddColumns: top-level and nested columns, FIRST and AFTER, in one
// commit with Spark's operation and parameters; old rows read the new
// columns as null; a column-mapped table gives them the next ids.
func TestAddColumns(t *testing.T) {
	for _, mode := range []string{"none", "name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			props := map[string]string{}
			if mode != "none" {
				props["delta.columnMapping.mode"] = mode
			}
			snap := createTable(t, store, "id long, s struct<a:int>, arr array<struct<x:int>>", props)
			appendRows(t, store, "id long, s struct<a:int>, arr array<struct<x:int>>", `[{"id":1,"s":{"a":1},"arr":[{"x":1}]}]`)
			snap = open(t, store)
			res, err := schema.AddColumns(ctx, snap, []schema.Column{
				mustColumn(t, "n string COMMENT 'new'"),
				mustColumn(t, "f int FIRST"),
				mustColumn(t, "s.b string AFTER a"),
				mustColumn(t, "s.z string first"),
				mustColumn(t, "arr.element.y long"),
			})
			if err != nil {
				t.Fatal(err)
			}
			after := open(t, store)
			if res.Version != snap.Version()+1 || after.NumFiles() != snap.NumFiles() {
				t.Fatalf("version %d, files %d", res.Version, after.NumFiles())
			}
			if got := actions.FormatDDL(after.Schema()); got != "f integer, id long, s struct<z:string,a:integer,b:string>, arr array<struct<x:integer,y:long>>, n string comment 'new'" {
				t.Errorf("schema %s", got)
			}
			ci := commitInfo(t, store)
			if ci.Operation != "ADD COLUMNS" || !strings.Contains(ci.OperationParameters["columns"].(string), `{"column":{"name":"s.b","type":"string","nullable":true,"metadata":{}},"position":"AFTER a"}`) {
				t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
			}
			sameLines(t, "old rows", lines(t, after), `{"f":null,"id":1,"s":{"z":null,"a":1,"b":null},"arr":[{"x":1,"y":null}],"n":null}`)
			appendRows(t, store, "id long, n string, s struct<b:string>", `[{"id":2,"n":"x","s":{"b":"q"}}]`)
			sameLines(t, "new rows", lines(t, open(t, store)),
				`{"f":null,"id":1,"s":{"z":null,"a":1,"b":null},"arr":[{"x":1,"y":null}],"n":null}`,
				`{"f":null,"id":2,"s":{"z":null,"a":null,"b":"q"},"arr":null,"n":"x"}`)
			if mode != "none" {
				st := after.Schema()
				if after.Properties().ColumnMappingMaxColumnID != 10 {
					t.Errorf("maxColumnId %d, want 10", after.Properties().ColumnMappingMaxColumnID)
				}
				if id, _ := st.Field("n").FieldID(); id < 6 || !strings.HasPrefix(st.Field("n").PhysicalName(mode), "col-") {
					t.Errorf("n: id %d physical %s", id, st.Field("n").PhysicalName(mode))
				}
			}
		})
	}
}

// TestAddColumnsRefusals: each refused with its message, nothing
// committed.
func TestAddColumnsRefusals(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	createTable(t, store, "id long, s struct<a:int>, m map<string,int>", nil)
	appendRows(t, store, "id long", `[{"id":1}]`)
	snap := open(t, store)
	for _, tc := range []struct {
		col  string
		want string
	}{
		{"ID int", "a column id already exists"},
		{"s.A int", "a column s.a already exists"},
		{"m.x int", "m is a map<string,integer>, not a struct"},
		{"q.x int", "column q does not exist"},
		{"n int NOT NULL", "a NOT NULL column can only be added to a table without rows"},
		{"t struct<a:int not null>", "a NOT NULL column can only be added to a table without rows"},
		{"n int AFTER nope", "AFTER nope: no such column in the table"},
		{"`a b` int", "the name holds one of the characters"},
	} {
		_, err := schema.AddColumns(ctx, snap, []schema.Column{mustColumn(t, tc.col)})
		refused(t, store, snap.Version(), tc.col, err, tc.want)
		if err != nil && !errors.Is(err, schema.ErrRefused) {
			t.Errorf("%s: %v is not ErrRefused", tc.col, err)
		}
	}
	// NOT NULL on an empty table is allowed.
	empty := objstore.NewMem()
	createTable(t, empty, "id long", nil)
	if _, err := schema.AddColumns(ctx, open(t, empty), []schema.Column{mustColumn(t, "n int NOT NULL")}); err != nil {
		t.Fatal(err)
	}
	if f := open(t, empty).Schema().Field("n"); f.Nullable {
		t.Error("n is nullable")
	}
}

// TestRenameColumn: a column-mapped table renames top-level, nested and
// partition columns without touching data; rows read under the new
// names, time travel under the old ones. Refusals name the way out.
func TestRenameColumn(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	ddl := "id long, p string, s struct<a:int,b:string>"
	createTable(t, store, ddl, nil, "p")
	appendRows(t, store, ddl, `[{"id":1,"p":"x","s":{"a":1,"b":"q"}}]`)
	snap := open(t, store)
	_, err := schema.RenameColumn(ctx, snap, "id", "ident")
	refused(t, store, snap.Version(), "rename without column mapping", err, "needs column mapping, which the table does not use")
	if err == nil || !strings.Contains(err.Error(), "delta.columnMapping.mode=name") {
		t.Errorf("the refusal does not name the property: %v", err)
	}
	setProps(t, store, map[string]string{"delta.columnMapping.mode": "name", "delta.dataSkippingStatsColumns": "id,s.a"})
	for _, rn := range [][2]string{{"id", "ident"}, {"s.a", "alpha"}, {"p", "part"}} {
		if _, err := schema.RenameColumn(ctx, open(t, store), rn[0], rn[1]); err != nil {
			t.Fatalf("rename %s: %v", rn[0], err)
		}
	}
	after := open(t, store)
	if ci := commitInfo(t, store); ci.Operation != "RENAME COLUMN" || ci.OperationParameters["oldColumnPath"] != "p" || ci.OperationParameters["newColumnPath"] != "part" {
		t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	if pc := after.PartitionColumns(); len(pc) != 1 || pc[0] != "part" {
		t.Errorf("partition columns %v", pc)
	}
	if got := after.Metadata().Configuration["delta.dataSkippingStatsColumns"]; got != "ident,s.alpha" {
		t.Errorf("stats columns %q", got)
	}
	sameLines(t, "after renames", lines(t, after), `{"ident":1,"part":"x","s":{"alpha":1,"b":"q"}}`)
	sameLines(t, "before them", lines(t, open(t, store, deltalog.AtVersion(1))), `{"id":1,"p":"x","s":{"a":1,"b":"q"}}`)
	appendRows(t, store, "ident long, part string, s struct<alpha:int>", `[{"ident":2,"part":"y","s":{"alpha":2}}]`)
	sameLines(t, "an append after", lines(t, open(t, store)), `{"ident":1,"part":"x","s":{"alpha":1,"b":"q"}}`, `{"ident":2,"part":"y","s":{"alpha":2,"b":null}}`)
	if err := addConstraint(ctx, open(t, store), "pos", "ident > 0"); err != nil {
		t.Fatal(err)
	}
	snap = open(t, store)
	for _, tc := range []struct{ col, to, want string }{
		{"ident", "PART", "a column part already exists"},
		{"s.alpha", "B", "a column s.b already exists"},
		{"nope", "x", "column nope does not exist"},
		{"s.alpha.x", "y", "s.alpha is a integer, which has no fields"},
		{"ident", "other", "CHECK constraint pos (ident > 0)"},
		{"ident", "", "the new name is empty"},
	} {
		_, err := schema.RenameColumn(ctx, snap, tc.col, tc.to)
		refused(t, store, snap.Version(), "rename "+tc.col, err, tc.want)
	}
}

// TestDropColumns: drops in a column-mapped table, time travel still
// reads the dropped column; the refusals.
func TestDropColumns(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	ddl := "id long, p string, v string, s struct<a:int,b:string>, one struct<x:int>"
	createTable(t, store, ddl, map[string]string{"delta.columnMapping.mode": "id"}, "p")
	appendRows(t, store, ddl, `[{"id":1,"p":"x","v":"vv","s":{"a":1,"b":"q"},"one":{"x":1}}]`)
	snap := open(t, store)
	if _, err := schema.DropColumns(ctx, snap, []string{"v", "s.b"}); err != nil {
		t.Fatal(err)
	}
	if ci := commitInfo(t, store); ci.Operation != "DROP COLUMNS" || ci.OperationParameters["columns"] != `["v","s.b"]` {
		t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	sameLines(t, "after the drop", lines(t, open(t, store)), `{"id":1,"p":"x","s":{"a":1},"one":{"x":1}}`)
	sameLines(t, "before it", lines(t, snap), `{"id":1,"p":"x","v":"vv","s":{"a":1,"b":"q"},"one":{"x":1}}`)
	// A column re-added under a dropped name is a new column: old rows
	// hold null in it.
	if _, err := schema.AddColumns(ctx, open(t, store), []schema.Column{mustColumn(t, "v string")}); err != nil {
		t.Fatal(err)
	}
	sameLines(t, "re-added v", lines(t, open(t, store)), `{"id":1,"p":"x","s":{"a":1},"one":{"x":1},"v":null}`)
	if err := addConstraint(ctx, open(t, store), "small", "s.a < 100"); err != nil {
		t.Fatal(err)
	}
	snap = open(t, store)
	for _, tc := range []struct {
		cols []string
		want string
	}{
		{[]string{"p"}, "a partition column cannot be dropped"},
		{[]string{"one.x"}, "it is the only field of struct one"},
		{[]string{"s"}, "CHECK constraint small (s.a < 100)"},
		{[]string{"s.a"}, "it is the only field of struct s"},
		{[]string{"id", "ID"}, "the column is named twice"},
		{[]string{"id", "s", "one", "v"}, "CHECK constraint small"},
		{[]string{"zz"}, "column zz does not exist"},
		{nil, "no column to drop"},
	} {
		_, err := schema.DropColumns(ctx, snap, tc.cols)
		refused(t, store, snap.Version(), "drop "+strings.Join(tc.cols, ","), err, tc.want)
	}
	// The last data column cannot go.
	small := objstore.NewMem()
	createTable(t, small, "id long, p string", map[string]string{"delta.columnMapping.mode": "name"}, "p")
	_, err := schema.DropColumns(ctx, open(t, small), []string{"id"})
	refused(t, small, 0, "drop the last data column", err, "at least one column that is not a partition column")
	plain := objstore.NewMem()
	createTable(t, plain, "id long, v long", nil)
	_, err = schema.DropColumns(ctx, open(t, plain), []string{"v"})
	refused(t, plain, 0, "drop without mapping", err, "delta.columnMapping.mode=name")
}

// TestChangeColumnType: widenings with delta.enableTypeWidening; the
// change is recorded in delta.typeChanges, the typeWidening feature
// added, old files read widened; the refusals.
func TestChangeColumnType(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	ddl := "i int, f float, d date, dec decimal(5,2), arr array<int>, m map<string,short>, p byte"
	createTable(t, store, ddl, nil, "p")
	appendRows(t, store, ddl, `[{"i":2147483647,"f":1.5,"d":"2020-01-02","dec":"123.45","arr":[1,2],"m":[{"key":"k","value":7}],"p":3}]`)
	snap := open(t, store)
	_, err := schema.ChangeColumnType(ctx, snap, "i", actions.TypeLong)
	refused(t, store, snap.Version(), "without the property", err, "set delta.enableTypeWidening=true first")
	setProps(t, store, map[string]string{"delta.enableTypeWidening": "true"})
	if p := open(t, store).Protocol(); !p.HasReaderFeature("typeWidening") || !p.HasWriterFeature("typeWidening") {
		t.Fatalf("protocol %+v lacks typeWidening", p)
	}
	// A date widened to timestamp_ntz needs timestampNtz, which Spark adds
	// only when asked for (it is not enabled by a property).
	snap = open(t, store)
	_, err = schema.ChangeColumnType(ctx, snap, "d", actions.TypeTimestampNTZ)
	refused(t, store, snap.Version(), "d to timestamp_ntz without the feature", err, "delta.feature.timestampNtz=supported")
	setProps(t, store, map[string]string{"delta.feature.timestampNtz": "supported"})
	for _, ch := range []struct {
		col string
		to  actions.DataType
	}{
		{"i", actions.TypeLong}, {"f", actions.TypeDouble}, {"d", actions.TypeTimestampNTZ},
		{"dec", &actions.DecimalType{Precision: 10, Scale: 4}}, {"arr.element", actions.TypeLong},
		{"m.value", actions.TypeInteger}, {"p", actions.TypeLong},
	} {
		if _, err := schema.ChangeColumnType(ctx, open(t, store), ch.col, ch.to); err != nil {
			t.Fatalf("%s to %s: %v", ch.col, ch.to, err)
		}
	}
	after := open(t, store)
	if got := actions.FormatDDL(after.Schema()); got != "i long, f double, d timestamp_ntz, dec decimal(10,4), arr array<long>, m map<string,integer>, p long" {
		t.Errorf("schema %s", got)
	}
	raw, _ := actions.MarshalField(after.Schema().Field("arr"))
	if !strings.Contains(string(raw), `"delta.typeChanges":[{"fieldPath":"element","fromType":"integer","toType":"long"}]`) {
		t.Errorf("arr's metadata %s", raw)
	}
	if !after.Protocol().HasReaderFeature("timestampNtz") {
		t.Errorf("protocol %+v lacks timestampNtz for the widened date", after.Protocol())
	}
	sameLines(t, "old file read widened", lines(t, after),
		`{"i":2147483647,"f":1.5,"d":"2020-01-02T00:00:00.000000","dec":"123.4500","arr":[1,2],"m":[["k",7]],"p":3}`)
	appendRows(t, store, "i long, p long", `[{"i":9000000000,"p":300}]`)
	if n := len(lines(t, open(t, store))); n != 2 {
		t.Errorf("%d rows after an append of the wide type", n)
	}
	snap = open(t, store)
	for _, tc := range []struct {
		col  string
		to   actions.DataType
		want string
	}{
		{"i", actions.TypeInteger, "cannot change type long to integer"},
		{"i", actions.TypeLong, "already of type long"},
		{"f", actions.TypeString, "cannot change type double to string"},
		{"dec", &actions.DecimalType{Precision: 10, Scale: 2}, "cannot change type decimal(10,4) to decimal(10,2)"},
		{"arr", &actions.ArrayType{ElementType: actions.TypeDouble, ContainsNull: true}, "cannot change type array<long> to array<double>"},
		{"zz", actions.TypeLong, "column zz does not exist"},
	} {
		_, err := schema.ChangeColumnType(ctx, snap, tc.col, tc.to)
		refused(t, store, snap.Version(), "change "+tc.col, err, tc.want)
	}
	dp := objstore.NewMem()
	createTable(t, dp, "v long, d date", map[string]string{"delta.enableTypeWidening": "true"}, "d")
	_, err = schema.ChangeColumnType(ctx, open(t, dp), "d", actions.TypeTimestampNTZ)
	refused(t, dp, 0, "date partition column", err, "partition column of type date")
}

// TestNullableAndComment: DROP NOT NULL and COMMENT as CHANGE COLUMN.
func TestNullableAndComment(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	createTable(t, store, "id long not null, s struct<a:int not null>", nil)
	if _, err := schema.DropNotNull(ctx, open(t, store), "s.a"); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.SetComment(ctx, open(t, store), "id", "the key"); err != nil {
		t.Fatal(err)
	}
	ci := commitInfo(t, store)
	if ci.Operation != "CHANGE COLUMN" || ci.OperationParameters["column"] != `{"name":"id","type":"long","nullable":false,"metadata":{"comment":"the key"}}` {
		t.Errorf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	if got := actions.FormatDDL(open(t, store).Schema()); got != "id long not null comment 'the key', s struct<a:integer>" {
		t.Errorf("schema %s", got)
	}
	appendRows(t, store, "id long, s struct<a:int>", `[{"id":1,"s":{"a":null}}]`)
	snap := open(t, store)
	_, err := schema.SetComment(ctx, snap, "nope", "x")
	refused(t, store, snap.Version(), "comment on a missing column", err, "column nope does not exist")
	_, err = schema.DropNotNull(ctx, snap, "s.zz")
	refused(t, store, snap.Version(), "nullable of a missing field", err, "column s.zz does not exist")
}

// ADD COLUMNS cannot add an identity column (as Spark), rather than
// dropping the clause silently.
func TestParseColumnRefusesIdentity(t *testing.T) {
	_, err := schema.ParseColumn("seq long generated always as identity")
	if err == nil || !strings.Contains(err.Error(), "identity column cannot be added") {
		t.Fatalf("ParseColumn of an identity column: %v", err)
	}
}

// TestParseColumnPathNamesTheCharacter: a path that needs backquotes is
// refused naming the character where it goes wrong and its position in
// characters, not a byte of a multi-byte character.
func TestParseColumnPathNamesTheCharacter(t *testing.T) {
	_, err := schema.ParseColumnPath("day2 é-x")
	if err == nil || !strings.Contains(err.Error(), `unexpected 'é' at 6`) {
		t.Fatalf("ParseColumnPath(day2 é-x): %v, want unexpected 'é' at 6", err)
	}
	if p, err := schema.ParseColumnPath("`day2 é-x`.a"); err != nil || len(p) != 2 || p[0] != "day2 é-x" {
		t.Fatalf("backquoted: %v %v", p, err)
	}
}
