package expr

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

func TestParsePrints(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// The DESIGN.md example.
		{"a = 'x' AND (n > 3 OR d >= '2026-03-01') AND s IN ('a','b') AND x IS NOT NULL",
			"a = 'x' AND (n > 3 OR d >= '2026-03-01') AND s IN ('a', 'b') AND x IS NOT NULL"},
		// Precedence: AND binds tighter than OR, NOT than AND, comparisons
		// than NOT, * than +, unary minus tightest.
		{"a = 1 OR b = 2 AND c = 3", "a = 1 OR b = 2 AND c = 3"},
		{"(a = 1 OR b = 2) AND c = 3", "(a = 1 OR b = 2) AND c = 3"},
		{"NOT a = 1 AND b", "NOT a = 1 AND b"},
		{"NOT (a AND b)", "NOT (a AND b)"},
		{"not not x", "NOT NOT x"},
		{"1 + 2 * 3 - 4 / 5 % 6", "1 + 2 * 3 - 4 / 5 % 6"},
		{"(1 + 2) * 3", "(1 + 2) * 3"},
		{"a - (b - c)", "a - (b - c)"},
		{"(a - b) - c", "a - b - c"},
		{"a / (b * c)", "a / (b * c)"},
		{"a AND (b AND c)", "a AND (b AND c)"},
		{"((a))", "a"},
		{"-x", "-x"},
		{"-(a + b)", "-(a + b)"},
		{"- -5", "-(-5)"},
		{"+5", "5"},
		{"(a = 1) = (b = 2)", "(a = 1) = (b = 2)"},
		{"(a + 1) IS NULL", "a + 1 IS NULL"},
		{"(a = 1) IS NOT NULL", "(a = 1) IS NOT NULL"},
		// Operators and their spellings.
		{"a <> 1 AND b != 2 AND c == 3", "a <> 1 AND b <> 2 AND c = 3"},
		{"a<=1 and b>=2 or c<3 or d>4", "a <= 1 AND b >= 2 OR c < 3 OR d > 4"},
		{"a <=> NULL", "a <=> NULL"},
		{"a NOT IN (1, 2, NULL)", "a NOT IN (1, 2, NULL)"},
		{"a between 1 and 10", "a >= 1 AND a <= 10"},
		{"a NOT BETWEEN 1 AND 10", "NOT (a >= 1 AND a <= 10)"},
		{"s LIKE 'a%'", "s LIKE 'a%'"},
		{"s not like 'a!%' escape '!'", "s NOT LIKE 'a!%' ESCAPE '!'"},
		{"x is null", "x IS NULL"},
		{"CAST(a AS bigint) > 1", "CAST(a AS long) > 1"},
		{"cast(a as DECIMAL(10, 2))", "CAST(a AS decimal(10,2))"},
		{"cast(a as decimal)", "CAST(a AS decimal(10,0))"},
		// Names.
		{"a.b.c = 1", "a.b.c = 1"},
		{"`a.b` = 1", "`a.b` = 1"},
		{"`weird``name` = 1", "`weird``name` = 1"},
		{"`select` = 1 AND `and` = 2", "select = 1 AND `and` = 2"},
		{"date = 1 AND timestamp = 2", "date = 1 AND timestamp = 2"},
		{"_x1 = 1", "_x1 = 1"},
		{"`1x` = 1", "`1x` = 1"},
		{"héllo = 1", "`héllo` = 1"},
		// Literals.
		{"'it''s'", `'it\'s'`},
		{`'tab\there' "and" r'\raw'`, "'tab\thereand\\\\raw'"},
		{"''", "''"},
		{"TRUE OR false", "TRUE OR FALSE"},
		{"null", "NULL"},
		{"X'0aFF'", "X'0AFF'"},
		{"DATE '2026-03-01'", "DATE '2026-03-01'"},
		{"TIMESTAMP '2026-03-01 10:00:00'", "TIMESTAMP '2026-03-01T10:00:00Z'"},
		{"TIMESTAMP '2026-03-01T10:00:00.5+02:00'", "TIMESTAMP '2026-03-01T08:00:00.5Z'"},
		{"timestamp_ntz '2026-03-01 10:00:00.000001'", "TIMESTAMP_NTZ '2026-03-01T10:00:00.000001'"},
		{"1.50", "1.50"},
		{".5", "0.5"},
		{"1e3", "1000.0D"},
		{"2.5E-3", "0.0025D"},
		{"1.5f", "1.5F"},
		{"7d", "7.0D"},
		{"7L", "7"},
		{"7bd", "7"},
		{"-2147483648", "-2147483648"},
		{"CAST('NaN' AS double)", "CAST('NaN' AS double)"},
	} {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		back, err := Parse(e.String())
		if err != nil || back.String() != e.String() {
			t.Errorf("reparse of %q: %v, %v", e.String(), back, err)
		}
	}
}

func TestParseTrees(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Expr
	}{
		{"a.b > 3", &Compare{Op: Gt, Left: Col("a", "b"), Right: &Literal{Value: int32(3), DataType: actions.TypeInteger}}},
		{"x BETWEEN 1 AND 2", &AndExpr{
			Left:  &Compare{Op: Ge, Left: Col("x"), Right: Lit(int32(1))},
			Right: &Compare{Op: Le, Left: Col("x"), Right: Lit(int32(2))}}},
		{"s IN ('a')", &In{X: Col("s"), List: []Expr{Lit("a")}}},
		{"s NOT LIKE 'a_'", &Like{X: Col("s"), Pattern: "a_", Escape: '\\', Not: true}},
		{"NULL", &Literal{}},
		{"-5", Lit(int32(-5))},
		{"- x", &Neg{X: Col("x")}},
		{"2147483648", Lit(int64(2147483648))},
		{"-9223372036854775808", Lit(int64(math.MinInt64))},
		{"9223372036854775808", &Literal{Value: actions.Decimal{Unscaled: new(big.Int).SetUint64(1 << 63)}, DataType: &actions.DecimalType{Precision: 19}}},
		{"1.50", &Literal{Value: actions.NewDecimal(150, 2), DataType: &actions.DecimalType{Precision: 3, Scale: 2}}},
		{"0.05", &Literal{Value: actions.NewDecimal(5, 2), DataType: &actions.DecimalType{Precision: 2, Scale: 2}}},
		{"1e3", Lit(1000.0)},
		{"3Y", Lit(int8(3))},
		{"3S", Lit(int16(3))},
		{"3L", Lit(int64(3))},
		{"2.5F", Lit(float32(2.5))},
		{"5BD", &Literal{Value: actions.NewDecimal(5, 0), DataType: &actions.DecimalType{Precision: 1}}},
		{"X''", Lit([]byte{})},
		{"DATE '1970-01-02'", Lit(actions.Date(1))},
		{"TIMESTAMP '1970-01-01 00:00:01Z'", Lit(actions.Timestamp(1_000_000))},
		{"TIMESTAMP '1970-01-01'", &Literal{Value: actions.Timestamp(0), DataType: actions.TypeTimestamp, text: "1970-01-01"}},
		{"TIMESTAMP_NTZ '1970-01-01 00:00:00.000002'", Lit(actions.TimestampNTZ(2))},
		{"CAST(x AS int)", &Cast{X: Col("x"), To: actions.TypeInteger}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		pos     int
		col     int
		message string
	}{
		{"a = 'x' AND (n > 3 AND s = 1", 28, 29, "expected ')' but found end of input"},
		{"a = 'x' AND (n > 3 AND AND s = 1)", 23, 24, "expected an expression but found 'AND'"},
		{"(a = 1 AND b = 2", 16, 17, "expected ')' but found end of input"},
		{"a IN (1, 2 AND", 14, 15, "expected an expression but found end of input"},
		{"a IN (1 2)", 8, 9, "expected ')' but found '2'"},
		{"a = ", 4, 5, "expected an expression but found end of input"},
		{"", 0, 1, "expected an expression but found end of input"},
		{"a b", 2, 3, "unexpected 'b' after the end of the expression"},
		{"a = 1)", 5, 6, "unexpected ')' after the end of the expression"},
		{"'abc", 0, 1, "unterminated string: missing closing '"},
		{"x = `abc", 4, 5, "unterminated name: missing closing `"},
		{"x = ``", 4, 5, "empty name in backquotes"},
		{"a ; b", 2, 3, "unexpected character ';'"},
		{"a IS 5", 5, 6, "expected NULL but found '5'"},
		{"a NOT 5", 6, 7, "expected IN, BETWEEN, LIKE or RLIKE after NOT but found '5'"},
		{"a BETWEEN 1 OR 2", 12, 13, "expected AND but found 'OR'"},
		{"a LIKE b", 7, 8, "expected a 'pattern' string after LIKE but found 'b'"},
		{"a LIKE 'x' ESCAPE 'ab'", 18, 19, "expected a one-character string after ESCAPE but found string 'ab'"},
		{"a LIKE 'x\\'", 7, 8, "unterminated string: missing closing '"},
		{"a LIKE 'x\\\\'", 12, 13, "LIKE pattern 'x\\\\': the escape character '\\\\' must be followed by %, _ or itself"},
		{"CAST(a AS foo)", 10, 11, "unknown type 'foo'"},
		{"CAST(a AS decimal(40, 2))", 18, 19, "expected a decimal precision or scale (0 to 38) but found '40'"},
		{"CAST(a AS decimal(4, 5))", 21, 22, "decimal scale 5 exceeds precision 4"},
		{"CAST a", 5, 6, "expected '(' but found 'a'"},
		{"1.2.3", 0, 1, `malformed number "1.2.3"`},
		{"x = 3abc", 4, 5, `malformed number "3abc"`},
		{"x = 1e", 4, 5, `malformed number "1e"`},
		{"x = 300Y", 4, 5, `number 300Y out of range for byte`},
		{"x = 1.5L", 4, 5, `malformed number "1.5L"`},
		{"x = 1" + strings.Repeat("0", 40), 4, 5, `number 1` + strings.Repeat("0", 40) + ` out of range for decimal(38)`},
		{"DATE '2026-02-30'", 5, 6, "'2026-02-30' is not a date (want YYYY-MM-DD)"},
		{"TIMESTAMP_NTZ '2026-01-01T00:00:00Z'", 14, 15, "'2026-01-01T00:00:00Z' is not a timestamp_ntz (want YYYY-MM-DD[ HH:MM[:SS[.ffffff]]])"},
		{"a.", 2, 3, "expected a column name but found end of input"},
		{"a.and", 2, 3, "expected a column name but found 'and'"},
		{"AND", 0, 1, "expected an expression but found 'AND'"},
		{"x = 'é' AND (", 14, 14, "expected an expression but found end of input"},
		{"x = 'é' )", 9, 9, "unexpected ')' after the end of the expression"},
		{"a = 1\nAND )", 10, 5, "expected an expression but found ')'"},
	} {
		_, err := Parse(tc.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if se.Pos != tc.pos || se.Column != tc.col || se.Msg != tc.message {
			t.Errorf("Parse(%q): Pos %d Column %d Msg %q; want %d %d %q", tc.in, se.Pos, se.Column, se.Msg, tc.pos, tc.col, tc.message)
		}
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	_, err := Parse("a = 'x' AND (n AND b")
	want := "expr: at column 21: expected ')' but found end of input"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = Parse("(n > 3 AND b AND)")
	want = "expr: at column 17: expected an expression but found ')'"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = Parse("(n > 3 AND b")
	if err == nil || err.Error() != "expr: at column 13: expected ')' but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("(x > 3 AND")
	if err == nil || !strings.HasPrefix(err.Error(), "expr: at column 11: ") {
		t.Errorf("got %v", err)
	}
	_, err = Parse("f(1 AND")
	if err == nil || err.Error() != "expr: at column 8: expected an expression but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("(a = 1 AND")
	if err == nil || err.Error() != "expr: at column 11: expected an expression but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("(n > 3 AND b = 1 AND c = 2")
	if err == nil || err.Error() != "expr: at column 27: expected ')' but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("a IN ('x' AND")
	if err == nil {
		t.Fatal("no error")
	}
	_, err = Parse("(a = 'x' b")
	if err == nil || err.Error() != "expr: at column 10: expected ')' but found 'b'" {
		t.Errorf("got %v", err)
	}
	// The brief's example shape: the token found is quoted as written.
	_, err = Parse("(a = 'x' AND b")
	if err == nil || err.Error() != "expr: at column 15: expected ')' but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("x IN (1, 2 AND 3")
	if err == nil || err.Error() != "expr: at column 17: expected ')' but found end of input" {
		t.Errorf("got %v", err)
	}
	_, err = Parse("CAST(x AS int AND 1)")
	if err == nil || err.Error() != "expr: at column 15: expected ')' but found 'AND'" {
		t.Errorf("got %v", err)
	}
}

func TestParseDepthLimit(t *testing.T) {
	deep := strings.Repeat("(", 10_000) + "1" + strings.Repeat(")", 10_000)
	_, err := Parse(deep)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested too deeply") {
		t.Fatalf("got %v", err)
	}
	if _, err := Parse(strings.Repeat("NOT ", 10_000) + "x"); err == nil {
		t.Fatal("no error for deep NOTs")
	}
	if _, err := Parse(strings.Repeat("-", 10_000) + "x"); err == nil {
		t.Fatal("no error for deep minus signs")
	}
	// Long flat chains are fine.
	long := "x = 1" + strings.Repeat(" OR x = 1", 10_000)
	if _, err := Parse(long); err != nil {
		t.Fatal(err)
	}
}

func TestParseAssignment(t *testing.T) {
	a, err := ParseAssignment("s.amount = amount * 1.1 + 1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Column.Name() != "s.amount" || a.Value.String() != "amount * 1.1 + 1" || a.String() != "s.amount = amount * 1.1 + 1" {
		t.Errorf("got %v", a)
	}
	for _, bad := range []string{"1 = 2", "x", "x == ", "x = 1 2", "x > 1"} {
		if _, err := ParseAssignment(bad); err == nil {
			t.Errorf("ParseAssignment(%q): no error", bad)
		}
	}
}

func TestKeywordsAreCaseInsensitive(t *testing.T) {
	a, err := Parse("x iS nOt NuLl aNd y In (1) Or NoT z LiKe 'a' AnD w bEtWeEn 1 AnD 2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.String(), "x IS NOT NULL AND y IN (1) OR NOT z LIKE 'a' AND (w >= 1 AND w <= 2)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestColumnsConjunctsAnd(t *testing.T) {
	e, err := Parse("a = 1 AND (b > 2 OR s.x IS NULL) AND a < 5 AND `c d` LIKE 'x%'")
	if err != nil {
		t.Fatal(err)
	}
	if got := Columns(e); !reflect.DeepEqual(got, []string{"a", "b", "s.x", "c d"}) {
		t.Errorf("Columns = %q", got)
	}
	cs := Conjuncts(e)
	var strs []string
	for _, c := range cs {
		strs = append(strs, c.String())
	}
	if want := []string{"a = 1", "b > 2 OR s.x IS NULL", "a < 5", "`c d` LIKE 'x%'"}; !reflect.DeepEqual(strs, want) {
		t.Errorf("Conjuncts = %q", strs)
	}
	if got := And(cs...).String(); got != e.String() {
		t.Errorf("And(Conjuncts) = %s, want %s", got, e)
	}
	if got := And().String(); got != "TRUE" {
		t.Errorf("And() = %s", got)
	}
	if got := Or().String(); got != "FALSE" {
		t.Errorf("Or() = %s", got)
	}
	if got := And(nil, Col("a"), nil).String(); got != "a" {
		t.Errorf("And(nil, a, nil) = %s", got)
	}
	if got := Or(Col("a"), Col("b"), Col("c")).String(); got != "a OR b OR c" {
		t.Errorf("Or = %s", got)
	}
	if got := Not(Or(Col("a"), Col("b"))).String(); got != "NOT (a OR b)" {
		t.Errorf("Not = %s", got)
	}
	if Conjuncts(nil) != nil {
		t.Error("Conjuncts(nil) != nil")
	}
	if IsPartitionOnly(e, []string{"A", "b", "s", "c d"}) {
		t.Error("s.x is not a partition column")
	}
	p, _ := Parse("Year = 2026 AND month IN (1, 2)")
	if !IsPartitionOnly(p, []string{"year", "month"}) {
		t.Error("IsPartitionOnly: want true")
	}
	if IsPartitionOnly(p, []string{"year"}) {
		t.Error("IsPartitionOnly: want false")
	}
	if !IsPartitionOnly(Lit(true), nil) {
		t.Error("a constant is partition-only")
	}
}

// ParsePrefix reads the expression at a position of a longer text and
// says where it ends; errors count from the start of the text.
func TestParsePrefix(t *testing.T) {
	for _, c := range []struct {
		text  string
		start int
		want  string
		rest  string
	}{
		{"DELETE FROM t WHERE a = 1 AND b <> 'x;y'; SELECT 1", 20, "a = 1 AND b <> 'x;y'", "; SELECT 1"},
		{"ON t.id = s.id WHEN MATCHED THEN", 3, "t.id = s.id", "WHEN MATCHED THEN"},
		{"SET a = a + 1, b = 'x' WHERE c", 8, "a + 1", ", b = 'x' WHERE c"},
		{"(x IN (1, 2)) ORDER BY x", 0, "x IN (1, 2)", "ORDER BY x"},
		{"SELECT amount * 2 AS twice", 7, "amount * 2", "AS twice"},
	} {
		e, end, err := ParsePrefix(c.text, c.start)
		if err != nil {
			t.Errorf("%q at %d: %v", c.text, c.start, err)
			continue
		}
		if got := e.String(); got != c.want || strings.TrimSpace(c.text[end:]) != c.rest {
			t.Errorf("%q at %d: %s, rest %q; want %s, rest %q", c.text, c.start, got, c.text[end:], c.want, c.rest)
		}
	}
	if e, _, err := ParsePrefix("WHERE s = \"q\"", 6); err != nil || e.String() != "s = 'q'" {
		t.Errorf("a double-quoted string: %v, %v", e, err)
	}
	_, _, err := ParsePrefix("UPDATE t SET a = (1 +", 17)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pos != 21 {
		t.Errorf("error %v, want a SyntaxError at byte 21", err)
	}
}
