package expr

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

var fuzzSeeds = []string{
	"a = 'x' AND (n > 3 OR d >= '2026-03-01') AND s IN ('a','b') AND x IS NOT NULL",
	"n BETWEEN 1 AND 10 OR NOT (s LIKE 'a%' ESCAPE '!')",
	"CAST(f AS decimal(10,2)) * -1.5 + n % 3 / 2e0 <> `weird``name`",
	"ts < TIMESTAMP '2026-01-01 10:00:00+02:00' AND d = DATE '2026-01-01'",
	"x <=> NULL OR b = X'00ff' OR s.a.b != 1L",
	"- -5 * (a - (b - c))",
	"'it''s' = s AND TRUE OR FALSE",
	"n NOT IN (1, 2, NULL) AND f > CAST('NaN' AS double)",
	"((((a))))",
	"1.5F + 7Y + 3S + 2BD + 1e-3",
}

// FuzzParse checks that Parse never panics, that its errors are
// *SyntaxError with a position inside the input, and that String prints
// what Parse reads back to the same String.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): error %v is not a *SyntaxError", s, err)
			}
			if se.Pos < 0 || se.Pos > len(s) || se.Column < 1 {
				t.Fatalf("Parse(%q): position %d/%d out of range", s, se.Pos, se.Column)
			}
			return
		}
		printed := e.String()
		back, err := Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", s, printed, err)
		}
		if again := back.String(); again != printed {
			t.Fatalf("round trip of %q: %q then %q", s, printed, again)
		}
	})
}

// fuzzSchema is a table with a column of every primitive type.
var fuzzSchema = &actions.StructType{Fields: []*actions.StructField{
	{Name: "a", Type: actions.TypeString, Nullable: true},
	{Name: "s", Type: actions.TypeString, Nullable: true},
	{Name: "n", Type: actions.TypeLong, Nullable: true},
	{Name: "i", Type: actions.TypeInteger, Nullable: true},
	{Name: "x", Type: actions.TypeDouble, Nullable: true},
	{Name: "f", Type: actions.TypeFloat, Nullable: true},
	{Name: "d", Type: actions.TypeDate, Nullable: true},
	{Name: "ts", Type: actions.TypeTimestamp, Nullable: true},
	{Name: "b", Type: actions.TypeBinary, Nullable: true},
	{Name: "flag", Type: actions.TypeBoolean, Nullable: true},
	{Name: "m", Type: &actions.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
}}

// FuzzEval checks that binding and evaluating any parsed expression,
// row by row, on a batch, and for pruning, never panics, and that the
// batch and row evaluations agree.
func FuzzEval(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("n + i * 2 > x - 1 AND m < 3.5 OR d + 1 = DATE '2026-01-02'")
	f.Add("s || 1")
	rows := sampleRows()
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		b, err := Bind(e, fuzzSchema)
		if err != nil {
			return
		}
		for _, row := range rows {
			_, _ = EvalRow(b, rowFunc(row))
		}
		if b.Type() == actions.TypeBoolean {
			if p, err := NewPruner(b, tableOf(fuzzSchema, []string{"a", "d"}, "none")); err == nil {
				p.MayMatch(map[string]*string{"a": strp("x"), "d": nil}, sampleStats())
				p.MayMatch(nil, nil)
			}
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		rec := buildBatch(t, mem, fuzzSchema, rows)
		defer rec.Release()
		out, err := EvalScalar(b, rec, mem)
		if err != nil {
			return
		}
		defer out.Release()
		for i, row := range rows {
			want, err := EvalRow(b, rowFunc(row))
			if err != nil {
				// Batch and row evaluation skip the same right-hand
				// sides of AND and OR, so a row that fails alone fails
				// the batch too.
				t.Fatalf("%s: row %d fails (%v) but the batch does not", b, i, err)
			}
			if got := valueAt(out, i); !sameValue(got, want) {
				t.Fatalf("%s on row %d: batch %v, row %v", b, i, got, want)
			}
		}
	})
}
