package expr

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

func evalText(t *testing.T, text string, row map[string]any) (any, error) {
	t.Helper()
	e, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return EvalRow(e, rowFunc(row))
}

func TestEvalRowThreeValuedLogic(t *testing.T) {
	row := map[string]any{"t": true, "f": false, "u": nil}
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"t AND t", true}, {"t AND f", false}, {"t AND u", nil},
		{"f AND u", false}, {"u AND f", false}, {"u AND u", nil},
		{"t OR u", true}, {"u OR t", true}, {"f OR u", nil}, {"f OR f", false},
		{"NOT u", nil}, {"NOT f", true},
		{"u IS NULL", true}, {"u IS NOT NULL", false}, {"t IS NULL", false},
		{"u = u", nil}, {"u <=> u", true}, {"t <=> u", false}, {"t <=> t", true},
		{"NOT (u AND f)", true},
	} {
		got, err := evalText(t, tc.in, row)
		if err != nil || got != tc.want {
			t.Errorf("%s = %v (%v), want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestEvalRowValues(t *testing.T) {
	row := map[string]any{
		"n": int64(5), "i": int32(-3), "x": 2.5, "nan": math.NaN(), "s": "apple", "e": "",
		"d": actions.Date(20513), "ts": actions.Timestamp(1_772_323_200_000_000),
		"m": dec(150, 2), "b": []byte("ab"), "null": nil, "plain": 7, // int is int64
	}
	for _, tc := range []struct {
		in   string
		want any
	}{
		// Comparisons of every type, with unbound coercion.
		{"n > 3", true}, {"n = 5L", true}, {"i < 0", true}, {"x >= 2.5", true},
		{"s = 'apple'", true}, {"s > 'b'", false}, {"e = ''", true},
		{"s < 'apples'", true}, {"'Z' < 'a'", true},
		{"d = '2026-03-01'", true}, {"d > DATE '2026-02-28'", true},
		{"d < '2026-03-01 00:00:01'", true},
		{"ts = '2026-03-01'", true}, {"ts = '2026-03-01T01:00:00+01:00'", true},
		{"ts > d", false}, {"ts = d", true},
		{"m = 1.5", true}, {"m = '1.50'", true}, {"m > 1", true}, {"m < 1.51", true},
		{"b = X'6162'", true}, {"b < X'62'", true},
		{"plain = 7", true},
		// NaN is equal to itself and above everything.
		{"nan = nan", true}, {"nan > CAST('Infinity' AS double)", true}, {"x < nan", true},
		{"-0.0 = 0.0", true},
		// IN.
		{"n IN (1, 5)", true}, {"n IN (1, 2)", false}, {"n IN (1, NULL)", nil},
		{"n IN (5, NULL)", true}, {"n NOT IN (1, NULL)", nil}, {"n NOT IN (1, 2)", true},
		{"null IN (1)", nil}, {"s IN ('apple')", true},
		// LIKE.
		{"s LIKE 'a%'", true}, {"s LIKE '_pple'", true}, {"s LIKE 'A%'", false},
		{"s NOT LIKE '%x%'", true}, {"'a%b' LIKE 'a\\%b'", true}, {"'axb' LIKE 'a\\%b'", false},
		{"'a%b' LIKE 'a!%b' ESCAPE '!'", true}, {"'a\nb' LIKE 'a_b'", true},
		{"null LIKE 'a'", nil},
		// Arithmetic.
		{"n + 1", int64(6)}, {"i * 2", int32(-6)}, {"n / 2", 2.5}, {"n % 3", int64(2)},
		{"i % 2", int32(-1)}, {"-i", int32(3)}, {"x * 2", 5.0}, {"n - 10", int64(-5)},
		{"m + 1", dec(250, 2)}, {"m * m", dec(22500, 4)}, {"m / 3", dec(5000000000000, 13)},
		{"1 / 3.0", dec(333333, 6)}, {"m % 1", dec(50, 2)}, {"m + x", 4.0},
		{"d + 1", actions.Date(20514)}, {"d - 1", actions.Date(20512)}, {"1 + d", actions.Date(20514)},
		{"null + 1", nil}, {"CAST(n AS string)", "5"}, {"CAST(x AS string)", "2.5"},
		{"CAST('12' AS int)", int32(12)}, {"CAST(m AS int)", int32(1)}, {"CAST(2.5 AS decimal(2,0))", dec(3, 0)},
		{"CAST(-2.5 AS decimal(2,0))", dec(-3, 0)}, {"CAST(ts AS date)", actions.Date(20513)},
		{"CAST(d AS timestamp)", actions.Timestamp(1_772_323_200_000_000)},
		{"CAST(ts AS string)", "2026-03-01 00:00:00"}, {"CAST(1e20 AS string)", "1.0E20"},
		{"CAST(true AS int)", int32(1)}, {"CAST('yes' AS boolean)", true},
		// AND and OR skip what they do not need.
		{"n = 0 AND 1 / (n - 5) > 0", false},
		{"n = 5 OR 1 / (n - 5) > 0", true},
	} {
		got, err := evalText(t, tc.in, row)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !sameValue(got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestEvalRowErrors(t *testing.T) {
	row := map[string]any{"n": int64(math.MaxInt64), "i": int32(math.MinInt32), "z": int64(0), "s": "x", "m": dec(99999999, 2)}
	for _, tc := range []struct {
		in   string
		want string
		is   error
	}{
		{"n + 1", "expr: n + 1: 9223372036854775807 + 1 overflows long: arithmetic overflow", errOverflow},
		{"n * 2", "", errOverflow},
		{"-i", "", errOverflow},
		{"i - 1", "", errOverflow},
		{"1 / z", "expr: 1 / z: division by zero", errDivideByZero},
		{"1 % z", "", errDivideByZero},
		{"1.5 / z", "", errDivideByZero},
		{"CAST(n AS int)", "expr: CAST(n AS integer): 9223372036854775807 out of range for integer: arithmetic overflow", errOverflow},
		{"CAST(s AS int)", "expr: CAST(s AS integer): 'x' is not an integer", nil},
		{"CAST(m * m AS decimal(10,2))", "", errOverflow},
		{"nope = 1", "expr: no value for column nope", nil},
		{"s + 1", "expr: s + 1: 'x' is not a number", nil},
	} {
		_, err := evalText(t, tc.in, row)
		if err == nil {
			t.Errorf("%s: no error", tc.in)
			continue
		}
		if tc.want != "" && err.Error() != tc.want {
			t.Errorf("%s: %q, want %q", tc.in, err, tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.in, err, tc.is)
		}
		if !strings.HasPrefix(err.Error(), "expr: ") {
			t.Errorf("%s: %q lacks the package prefix", tc.in, err)
		}
	}
}

func TestEvalRowBoundConvertsColumnValues(t *testing.T) {
	e, _ := Parse("i + 1 = 4 AND m = 1.5")
	b, err := Bind(e, bindSchema)
	if err != nil {
		t.Fatal(err)
	}
	// A partition parser may hand a wider integer or another scale.
	got, err := EvalRow(b, rowFunc(map[string]any{"i": int64(3), "m": dec(15, 1)}))
	if err != nil || got != true {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := EvalRow(b, rowFunc(map[string]any{"i": "x", "m": nil})); err == nil {
		t.Error("no error for a string in an integer column")
	}
}
