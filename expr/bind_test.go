package expr

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

var bindSchema = &actions.StructType{Fields: []*actions.StructField{
	{Name: "Name", Type: actions.TypeString, Nullable: true},
	{Name: "n", Type: actions.TypeLong, Nullable: true},
	{Name: "i", Type: actions.TypeInteger, Nullable: true},
	{Name: "sh", Type: actions.TypeShort, Nullable: true},
	{Name: "by", Type: actions.TypeByte, Nullable: true},
	{Name: "x", Type: actions.TypeDouble, Nullable: true},
	{Name: "f", Type: actions.TypeFloat, Nullable: true},
	{Name: "d", Type: actions.TypeDate, Nullable: true},
	{Name: "ts", Type: actions.TypeTimestamp, Nullable: true},
	{Name: "ntz", Type: actions.TypeTimestampNTZ, Nullable: true},
	{Name: "m", Type: &actions.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "m4", Type: &actions.DecimalType{Precision: 12, Scale: 4}, Nullable: true},
	{Name: "flag", Type: actions.TypeBoolean, Nullable: true},
	{Name: "bin", Type: actions.TypeBinary, Nullable: true},
	{Name: "s", Type: &actions.StructType{Fields: []*actions.StructField{
		{Name: "X", Type: actions.TypeInteger, Nullable: true},
		{Name: "inner", Type: &actions.StructType{Fields: []*actions.StructField{
			{Name: "z", Type: actions.TypeString, Nullable: true},
		}}},
	}}, Nullable: true},
	{Name: "tags", Type: &actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true}, Nullable: true},
}}

func TestBindCoercions(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Names resolve case-insensitively to the schema's spelling.
		{"name = 'x'", "Name = 'x'"},
		{"S.x > 1 AND s.INNER.z = 'q'", "s.X > 1 AND s.inner.z = 'q'"},
		// String literals become values of the column's type.
		{"d >= '2026-03-01'", "d >= DATE '2026-03-01'"},
		{"'2026-03-01' <= d", "DATE '2026-03-01' <= d"},
		{"d < '2026-03-01 12:00:00'", "CAST(d AS timestamp) < TIMESTAMP '2026-03-01T12:00:00Z'"},
		{"ts >= '2026-03-01'", "ts >= TIMESTAMP '2026-03-01T00:00:00Z'"},
		{"ts >= '2026-03-01 10:00:00'", "ts >= TIMESTAMP '2026-03-01T10:00:00Z'"},
		{"ts >= '2026-03-01T10:00:00+02:00'", "ts >= TIMESTAMP '2026-03-01T08:00:00Z'"},
		{"ntz = '2026-03-01 10:00:00.123'", "ntz = TIMESTAMP_NTZ '2026-03-01T10:00:00.123'"},
		{"m = '1.5'", "m = 1.50"},
		{"m > '1.555'", "CAST(m AS decimal(11,3)) > 1.555"},
		{"n > '3'", "n > 3"},
		{"n > ' 3 '", "n > 3"},
		{"x = 'NaN'", "x = CAST('NaN' AS double)"},
		{"f = '1.5'", "f = 1.5F"},
		{"flag = 'true'", "flag = TRUE"},
		{"bin = 'ab'", "bin = X'6162'"},
		{"n IN ('1', '2')", "n IN (1, 2)"},
		{"d IN ('2026-01-01', NULL)", "d IN (DATE '2026-01-01', NULL)"},
		// Number literals take the column's type when they fit exactly.
		{"n > 3", "n > 3"},
		{"by = 3", "by = 3"},
		{"i = 3000000000", "CAST(i AS long) = 3000000000"},
		{"i > 3.5", "CAST(i AS decimal(11,1)) > 3.5"},
		{"i > 3.0", "i > 3"},
		{"m = 3", "m = 3.00"},
		{"m = 1.5", "m = 1.50"},
		{"m4 = m", "m4 = CAST(m AS decimal(12,4))"},
		{"x > 1", "x > 1.0D"},
		{"f = 1.1", "f = 1.1F"},
		{"x = m", "x = CAST(m AS double)"},
		{"i = n", "CAST(i AS long) = n"},
		{"n = 1.5D", "CAST(n AS double) = 1.5D"},
		{"ts = d", "ts = CAST(d AS timestamp)"},
		{"ts = ntz", "ts = CAST(ntz AS timestamp)"},
		{"ntz = TIMESTAMP '2026-01-01 00:00:00'", "ntz = TIMESTAMP_NTZ '2026-01-01T00:00:00'"},
		{"d = DATE '2026-01-01'", "d = DATE '2026-01-01'"},
		{"i IN (1, 2.5)", "CAST(i AS decimal(11,1)) IN (1.0, 2.5)"},
		{"n IN (1, 2)", "n IN (1, 2)"},
		// NULL takes the type of what it meets.
		{"n = NULL", "n = NULL"},
		{"NULL AND flag", "NULL AND flag"},
		// Arithmetic.
		{"n + 1 > i", "n + 1 > CAST(i AS long)"},
		{"i + 1", "i + 1"},
		{"i / 2", "CAST(i AS double) / 2.0D"},
		{"i % 2", "i % 2"},
		{"m * 2", "m * 2"},
		{"m + i", "m + CAST(i AS decimal(10,0))"},
		{"m + x", "CAST(m AS double) + x"},
		{"d + 1", "d + 1"},
		{"d - n", "d - n"},
		{"-n", "-n"},
		{"-'5'", "-5"},
		{"n + '5'", "n + 5"},
		{"f + x", "CAST(f AS double) + x"},
		{"sh + by", "sh + CAST(by AS short)"},
		// Constants fold.
		{"1 + 2", "3"},
		{"CAST('2026-01-01' AS date)", "DATE '2026-01-01'"},
		{"CAST(n AS long)", "n"},
		{"-(5)", "-5"},
		// LIKE, IS NULL on anything.
		{"name LIKE 'a%'", "Name LIKE 'a%'"},
		{"tags IS NULL AND s IS NOT NULL", "tags IS NULL AND s IS NOT NULL"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		b, err := Bind(e, bindSchema)
		if err != nil {
			t.Errorf("Bind(%q): %v", tc.in, err)
			continue
		}
		if got := b.String(); got != tc.want {
			t.Errorf("Bind(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := Bind(b, bindSchema)
		if err != nil || again.String() != b.String() {
			t.Errorf("Bind is not idempotent on %q: %v, %v", tc.in, again, err)
		}
		if !IsBound(b) {
			t.Errorf("%s: not bound", b)
		}
	}
}

func TestBindTypes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want actions.DataType
	}{
		{"n > 1", actions.TypeBoolean},
		{"i + 1", actions.TypeInteger},
		{"sh * by", actions.TypeShort},
		{"n + i", actions.TypeLong},
		{"i / 2", actions.TypeDouble},
		{"f + f", actions.TypeFloat},
		{"f / f", actions.TypeDouble},
		{"m + m", &actions.DecimalType{Precision: 11, Scale: 2}},
		{"m * m", &actions.DecimalType{Precision: 21, Scale: 4}},
		{"m / m", &actions.DecimalType{Precision: 23, Scale: 13}},
		{"m % 3", &actions.DecimalType{Precision: 3, Scale: 2}},
		{"m + n", &actions.DecimalType{Precision: 23, Scale: 2}},
		{"m + 1", &actions.DecimalType{Precision: 11, Scale: 2}},
		{"m * x", actions.TypeDouble},
		{"CAST(m AS decimal(38,10)) * CAST(m AS decimal(38,10))", &actions.DecimalType{Precision: 38, Scale: 6}},
		{"d + 1", actions.TypeDate},
		{"1 + d", actions.TypeDate},
		{"-m", &actions.DecimalType{Precision: 10, Scale: 2}},
		{"CAST(n AS string)", actions.TypeString},
		{"s.x", actions.TypeInteger},
		{"NULL", nil},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Bind(e, bindSchema)
		if err != nil {
			t.Errorf("Bind(%q): %v", tc.in, err)
			continue
		}
		if got := b.Type(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("type of %q = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestBindErrors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		unknown string // the unknown column, or "" for a type error
		msg     string
	}{
		{"nope = 1", "nope", "expr: unknown column nope (columns: Name, n, i, sh, by, x, f, d, ts, ntz, m, m4, flag, bin, s, tags)"},
		{"s.nope = 1", "s.nope", "expr: unknown column s.nope (columns: X, inner)"},
		{"n.x = 1", "", "expr: n is long, not a struct in n.x"},
		{"n > 'abc'", "", "expr: 'abc' is not a long in n > 'abc'"},
		{"d >= '2026-13-01'", "", "expr: '2026-13-01' is not a date (want YYYY-MM-DD) in d >= '2026-13-01'"},
		{"ts < 'tomorrow'", "", "expr: 'tomorrow' is not a timestamp (want YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][Z|+HH:MM]) in ts < 'tomorrow'"},
		{"flag = 'maybe'", "", "expr: 'maybe' is not a boolean in flag = 'maybe'"},
		{"name = 1", "", "expr: cannot compare Name (string) with 1 (integer) in Name = 1"},
		{"d = n", "", "expr: cannot compare d (date) with n (long) in d = n"},
		{"n AND flag", "", "expr: AND needs booleans, but n is long in n AND flag"},
		{"NOT name", "", "expr: NOT needs booleans, but Name is string in NOT Name"},
		{"name + 1", "", "expr: operator + needs numbers, but Name is string in Name + 1"},
		{"n + 'x'", "", "expr: 'x' is not a number in n + 'x'"},
		{"-name", "", "expr: unary - needs a number, but Name is string in -Name"},
		{"n LIKE 'a%'", "", "expr: LIKE needs a string, but n is long in n LIKE 'a%'"},
		{"s = s", "", "expr: values of type struct<X:integer,inner:struct<z:string>> cannot be compared in s = s"},
		{"tags IN ('a')", "", "expr: 'a' cannot be compared with a value of type array<string> in tags IN ('a')"},
		{"CAST(d AS int)", "", "expr: cannot cast date to integer in CAST(d AS integer)"},
		{"CAST('x' AS int) = 1", "", "expr: 'x' is not an integer in CAST('x' AS integer)"},
		{"CAST(300 AS byte) = 1", "", "expr: 300 out of range for byte: arithmetic overflow in CAST(300 AS byte)"},
		{"n IN (1, 'a')", "", "expr: 'a' is not a long in n IN (1, 'a')"},
		{"d IN (1)", "", "expr: cannot compare d (date) with 1 (integer) in d IN (1)"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		_, err = Bind(e, bindSchema)
		if err == nil {
			t.Errorf("Bind(%q): no error", tc.in)
			continue
		}
		var uc *UnknownColumnError
		var te *TypeError
		switch {
		case tc.unknown != "":
			if !errors.As(err, &uc) || uc.Column != tc.unknown {
				t.Errorf("Bind(%q) = %v, want unknown column %s", tc.in, err, tc.unknown)
			}
		case !errors.As(err, &te):
			t.Errorf("Bind(%q) = %T %v, want a *TypeError", tc.in, err, err)
		}
		if err.Error() != tc.msg {
			t.Errorf("Bind(%q) = %q, want %q", tc.in, err, tc.msg)
		}
	}
}

func TestBindPredicateNeedsBoolean(t *testing.T) {
	e, _ := Parse("n + 1")
	if _, err := BindPredicate(e, bindSchema); err == nil || !strings.Contains(err.Error(), "a predicate must be boolean, not long") {
		t.Errorf("got %v", err)
	}
	e, _ = Parse("flag")
	if _, err := BindPredicate(e, bindSchema); err != nil {
		t.Error(err)
	}
}

func TestBindAssignment(t *testing.T) {
	for _, tc := range []struct {
		in     string
		target actions.DataType
		want   string
		err    string
	}{
		{"n + 1", actions.TypeLong, "n + 1", ""},
		{"i + 1", actions.TypeLong, "CAST(i + 1 AS long)", ""},
		{"m * 1.1", &actions.DecimalType{Precision: 10, Scale: 2}, "CAST(m * 1.1 AS decimal(10,2))", ""},
		{"5", actions.TypeByte, "5", ""},
		{"'5'", actions.TypeLong, "5", ""},
		{"'2026-01-01'", actions.TypeDate, "DATE '2026-01-01'", ""},
		{"NULL", actions.TypeString, "NULL", ""},
		{"d", actions.TypeTimestamp, "CAST(d AS timestamp)", ""},
		{"'x'", actions.TypeString, "'x'", ""},
		{"300", actions.TypeByte, "", "expr: 300 out of range for byte: arithmetic overflow in 300"},
		{"name", actions.TypeLong, "", "expr: cannot assign a value of type string to a column of type long in Name"},
		{"n", actions.TypeString, "CAST(n AS string)", ""},
		{"42", actions.TypeString, "'42'", ""},
		{"n", actions.TypeDate, "", "expr: cannot assign a value of type long to a column of type date in n"},
		{"'abc'", actions.TypeLong, "", "expr: 'abc' is not an integer in 'abc'"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := BindAssignment(e, bindSchema, tc.target)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("BindAssignment(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("BindAssignment(%q): %v", tc.in, err)
			continue
		}
		if b.String() != tc.want || !reflect.DeepEqual(b.Type(), tc.target) {
			t.Errorf("BindAssignment(%q) = %s (%v), want %s (%v)", tc.in, b, b.Type(), tc.want, tc.target)
		}
	}
}

func TestBindDoesNotModifyInput(t *testing.T) {
	e, _ := Parse("name = 'x' AND d >= '2026-03-01' AND n IN (1, 2)")
	before := e.String()
	if _, err := Bind(e, bindSchema); err != nil {
		t.Fatal(err)
	}
	if e.String() != before || IsBound(e) {
		t.Errorf("Bind modified its input: %s", e)
	}
}

func TestBuiltExpressions(t *testing.T) {
	// Trees built in code rather than parsed: literal values of a
	// narrower Go type, ints, and a Like without an escape character.
	e := And(
		&Compare{Op: Ge, Left: Col("n"), Right: &Literal{Value: int32(3), DataType: actions.TypeLong}},
		&Compare{Op: Lt, Left: Col("m"), Right: Lit(7)},
		&Like{X: Col("name"), Pattern: `a\%%`},
		&In{X: Col("d"), List: []Expr{Lit(actions.Date(20513)), &Literal{}}},
	)
	b, err := Bind(e, bindSchema)
	if err != nil {
		t.Fatal(err)
	}
	want := `n >= 3 AND m < 7.00 AND Name LIKE 'a\\%%' AND d IN (DATE '2026-03-01', NULL)`
	if b.String() != want {
		t.Errorf("got %s, want %s", b, want)
	}
	got, err := EvalRow(b, rowFunc(map[string]any{"n": int64(3), "m": dec(699, 2), "Name": "a%x", "d": actions.Date(20513)}))
	if err != nil || got != true {
		t.Errorf("EvalRow = %v, %v", got, err)
	}
	if _, err := Bind(&Literal{Value: "x", DataType: actions.TypeLong}, bindSchema); err == nil {
		t.Error("no error for a literal whose value does not fit its type")
	}
	if _, err := Bind(&Literal{Value: struct{}{}}, bindSchema); err == nil {
		t.Error("no error for a literal of an unsupported Go type")
	}
}

// A literal that is not of its column's type says so with the right
// article ("is not a integer" once).
func TestLiteralTypeErrorArticle(t *testing.T) {
	schema, err := actions.ParseDDL("age int, n long, x double")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"age = 'abc'": "expr: 'abc' is not an integer in age = 'abc'",
		"n = 'abc'":   "expr: 'abc' is not a long in n = 'abc'",
		"x = 'abc'":   "expr: 'abc' is not a double in x = 'abc'",
	} {
		e, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := BindPredicate(e, schema); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", text, err, want)
		}
	}
}
