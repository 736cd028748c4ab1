package expr

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// Randomized model tests: random expressions over random rows, checking
// that batch evaluation agrees with row evaluation and that pruning never
// drops a file holding a matching row. The seed is printed on failure.

type exprGen struct {
	r *rand.Rand
}

func (g *exprGen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g *exprGen) boolExpr(depth int) string {
	if depth <= 0 {
		return g.leaf()
	}
	switch g.r.IntN(6) {
	case 0:
		return "NOT (" + g.boolExpr(depth-1) + ")"
	case 1:
		return "(" + g.boolExpr(depth-1) + ") OR (" + g.boolExpr(depth-1) + ")"
	case 2:
		return "(" + g.boolExpr(depth-1) + ") AND (" + g.boolExpr(depth-1) + ")"
	}
	return g.leaf()
}

func (g *exprGen) cmpOp() string { return g.pick("=", "<>", "<", "<=", ">", ">=", "<=>") }

func (g *exprGen) leaf() string {
	switch g.r.IntN(16) {
	case 0:
		return g.numeric(1) + " " + g.cmpOp() + " " + g.numeric(1)
	case 1:
		return g.pick("s", "a") + " " + g.cmpOp() + " " + g.stringLit()
	case 2:
		return "d " + g.cmpOp() + " " + g.dateLit()
	case 3:
		return "ts " + g.cmpOp() + " " + g.pick("'2026-02-28 23:59:59.999'", "'2026-03-01'", "TIMESTAMP '2026-03-01 00:00:00.0005'", "d", "'2026-03-01T01:00:00+01:00'")
	case 4:
		return g.pick("n", "i", "x", "f", "m") + " IN (" + g.numLit() + ", " + g.numLit() + ", " + g.pick(g.numLit(), "NULL") + ")"
	case 5:
		return g.pick("s", "a") + g.pick(" IN ", " NOT IN ") + "(" + g.stringLit() + ", " + g.pick(g.stringLit(), "NULL") + ")"
	case 6:
		return g.pick("s", "a", "n", "x", "d", "ts", "m", "flag", "b") + g.pick(" IS NULL", " IS NOT NULL")
	case 7:
		return g.pick("s", "a") + g.pick(" LIKE ", " NOT LIKE ") + g.pick("'a%'", "'ab%'", "'b_'", "'%a'", "'abc'", "'Å%'", "''")
	case 8:
		return g.pick("flag", "NOT flag", "flag = TRUE", "flag <> (n > 0)")
	case 9:
		return g.pick("n", "i", "x", "f", "m") + g.pick(" BETWEEN ", " NOT BETWEEN ") + g.numLit() + " AND " + g.numLit()
	case 10:
		return g.pick("x", "f") + " " + g.cmpOp() + " " + g.pick("CAST('NaN' AS double)", "CAST('Infinity' AS double)", "'NaN'", "0", "-0.0", "1.5")
	case 11:
		return "d + " + g.pick("1", "-1", "n") + " " + g.cmpOp() + " " + g.dateLit()
	case 12:
		return "b " + g.cmpOp() + " " + g.pick("X'0001'", "X''", "X'FF'", "'apple'")
	case 13:
		return "a " + g.cmpOp() + " s"
	}
	return g.pick("n", "i", "m", "x") + " " + g.cmpOp() + " " + g.numLit()
}

func (g *exprGen) numeric(depth int) string {
	if depth <= 0 || g.r.IntN(3) == 0 {
		return g.pick("n", "i", "x", "f", "m", g.numLit())
	}
	switch g.r.IntN(4) {
	case 0:
		return "-(" + g.numeric(depth-1) + ")"
	case 1:
		return "CAST(" + g.numeric(depth-1) + " AS " + g.pick("int", "long", "double", "decimal(12,3)", "short") + ")"
	}
	return "(" + g.numeric(depth-1) + " " + g.pick("+", "-", "*", "/", "%") + " " + g.numeric(depth-1) + ")"
}

func (g *exprGen) numLit() string {
	return g.pick("0", "1", "-1", "3", "2.5", "1.50", "-7", "1e0", "9223372036854775807", "'3'", "0.005", "2147483648", "999999.99")
}

func (g *exprGen) stringLit() string {
	return g.pick("''", "'a'", "'ab'", "'abc'", "'apple'", "'b'", "'banana'", "'Åland'", "'zz'", "'a%b_c'", "'x'")
}

func (g *exprGen) dateLit() string {
	return g.pick("'2026-02-16'", "DATE '2026-02-17'", "'2026-03-01'", "'1970-01-01'", "'2026-02-16 12:00:00'", "DATE '1969-12-31'")
}

// randomRow draws a row for fuzzSchema.
func randomRow(r *rand.Rand) map[string]any {
	null := func() bool { return r.IntN(6) == 0 }
	row := map[string]any{}
	strs := []string{"", "a", "ab", "abc", "abd", "apple", "b", "ba", "banana", "Åland", "zz", "a%b_c", "x", "y"}
	set := func(name string, v func() any) {
		if null() {
			row[name] = nil
		} else {
			row[name] = v()
		}
	}
	set("a", func() any { return strs[r.IntN(len(strs))] })
	set("s", func() any { return strs[r.IntN(len(strs))] })
	set("n", func() any {
		if r.IntN(10) == 0 {
			return []int64{math.MaxInt64, math.MinInt64, 1 << 40}[r.IntN(3)]
		}
		return int64(r.IntN(11) - 5)
	})
	set("i", func() any { return int32(r.IntN(11) - 5) })
	set("x", func() any {
		return []float64{-1.5, 0, math.Copysign(0, -1), 1.5, 2, 2.5, 3, math.NaN(), math.Inf(1), math.Inf(-1), -7}[r.IntN(11)]
	})
	set("f", func() any {
		return []float32{-1.5, 0, 1.5, 2.5, 3, float32(math.NaN()), float32(math.Inf(1))}[r.IntN(7)]
	})
	set("d", func() any { return actions.Date(20490 + r.IntN(30)) })
	set("ts", func() any {
		return actions.Timestamp(1_772_323_200_000_000 + int64(r.IntN(7)-3)*1_800_000_000 + int64(r.IntN(3)-1)*500)
	})
	set("b", func() any { return [][]byte{{}, {0}, {0, 1}, {0xff}, []byte("apple")}[r.IntN(5)] })
	set("flag", func() any { return r.IntN(2) == 0 })
	set("m", func() any { return dec(int64(r.IntN(2001)-1000), 2) })
	return row
}

// seedFlag replays a failing run: go test -run Random -expr.seed=N.
var seedFlag = flag.Uint64("expr.seed", 0, "seed for the randomized tests (0: the fixed default)")

func testSeed(def uint64) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	return def
}

// iterations scales a randomized test down under -short.
func iterations(n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

func TestRandomBatchMatchesRows(t *testing.T) {
	seed := testSeed(20260301)
	r := rand.New(rand.NewPCG(seed, 1))
	g := &exprGen{r: r}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows()
	for range 200 {
		rows = append(rows, randomRow(r))
	}
	rec := buildBatch(t, mem, fuzzSchema, rows)
	defer rec.Release()
	// A slice with an offset exercises offset handling in every kernel.
	sliced := rec.NewSlice(3, int64(len(rows))-2)
	defer sliced.Release()
	checked, failed := 0, 0
	n := iterations(1200)
	for range n {
		src := g.boolExpr(3)
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("seed %d: generated %q does not parse: %v", seed, src, err)
		}
		b, err := BindPredicate(e, fuzzSchema)
		if err != nil {
			continue
		}
		for _, tc := range []struct {
			batch arrow.RecordBatch
			rows  []map[string]any
		}{{rec, rows}, {sliced, rows[3 : len(rows)-2]}} {
			got, err := EvalPredicate(b, tc.batch, mem)
			var rowErr error
			for _, row := range tc.rows {
				if _, err := EvalRow(b, rowFunc(row)); err != nil {
					rowErr = err
					break
				}
			}
			if err != nil {
				if rowErr == nil && !strings.Contains(src, " IN ") {
					t.Errorf("seed %d: %s: batch fails (%v), no row does", seed, b, err)
				}
				failed++
				continue
			}
			if rowErr != nil {
				t.Errorf("seed %d: %s: a row fails (%v), the batch does not", seed, b, rowErr)
				got.Release()
				continue
			}
			for i, row := range tc.rows {
				want, _ := EvalRow(b, rowFunc(row))
				var have any
				if got.IsValid(i) {
					have = got.Value(i)
				}
				if have != want {
					t.Errorf("seed %d: %s on row %v: batch %v, row %v", seed, b, row, have, want)
					break
				}
			}
			got.Release()
			checked++
		}
	}
	if checked < n/3 {
		t.Errorf("only %d expressions checked (%d failed)", checked, failed)
	}
}

// fileStats computes add.stats for rows as a NaN-excluding writer would,
// with string stats truncated to prefixLen characters and timestamps
// truncated to milliseconds, as PROTOCOL.md allows.
func fileStats(rows []map[string]any, cols []string, prefixLen int) string {
	minV, maxV, nulls := map[string]any{}, map[string]any{}, map[string]any{}
	for _, c := range cols {
		var lo, hi any
		nc := 0
		for _, row := range rows {
			v := row[c]
			if v == nil {
				nc++
				continue
			}
			if isNaN(v) {
				continue
			}
			if lo == nil {
				lo, hi = v, v
				continue
			}
			if x, _ := compareScalar(v, lo); x < 0 {
				lo = v
			}
			if x, _ := compareScalar(v, hi); x > 0 {
				hi = v
			}
		}
		nulls[c] = nc
		if lo == nil {
			continue
		}
		minV[c], maxV[c] = statJSON(lo, prefixLen), statJSON(hi, prefixLen)
	}
	return mustJSON(map[string]any{"numRecords": len(rows), "minValues": minV, "maxValues": maxV, "nullCount": nulls})
}

func statJSON(v any, prefixLen int) any {
	switch x := v.(type) {
	case string:
		if rs := []rune(x); len(rs) > prefixLen {
			return string(rs[:prefixLen])
		}
		return x
	case actions.Date:
		return x.String()
	case actions.Timestamp:
		return actions.Timestamp(floorDiv(int64(x), 1000) * 1000).String()
	case actions.Decimal:
		return json.Number(x.String())
	case float32:
		if math.IsInf(float64(x), 0) {
			return javaFloatString(float64(x), 32)
		}
		return json.Number(fmt.Sprint(x))
	case float64:
		if math.IsInf(x, 0) {
			return javaFloatString(x, 64)
		}
		return json.Number(fmt.Sprint(x))
	case int64, int32:
		return x
	}
	return nil
}

func TestRandomPruningIsSound(t *testing.T) {
	seed := testSeed(77)
	r := rand.New(rand.NewPCG(seed, 2))
	g := &exprGen{r: r}
	partitions := []string{"a", "d"}
	statCols := []string{"s", "n", "i", "x", "f", "ts", "m"}
	type file struct {
		rows  []map[string]any
		pv    map[string]*string
		stats *actions.Stats
	}
	var files []file
	for range 60 {
		k := 1 + r.IntN(6)
		base := randomRow(r)
		if base["a"] == "" {
			// An empty partition value is null (PROTOCOL.md).
			base["a"] = nil
		}
		var rows []map[string]any
		for range k {
			row := randomRow(r)
			row["a"], row["d"] = base["a"], base["d"]
			rows = append(rows, row)
		}
		pv := map[string]*string{}
		for _, p := range partitions {
			if v := base[p]; v != nil {
				s := castToString(v)
				pv[p] = &s
			} else {
				pv[p] = nil
			}
		}
		var st *actions.Stats
		if r.IntN(8) != 0 {
			var err error
			if st, err = actions.ParseStats(fileStats(rows, statCols[:2+r.IntN(len(statCols)-1)], 1+r.IntN(4))); err != nil {
				t.Fatal(err)
			}
			if r.IntN(4) == 0 {
				wide := false
				st.TightBounds = &wide
			}
		}
		files = append(files, file{rows, pv, st})
	}
	pruned, total, allMatched := 0, 0, 0
	for range iterations(2000) {
		src := g.boolExpr(3)
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("seed %d: %q: %v", seed, src, err)
		}
		p, err := NewPruner(e, tableOf(fuzzSchema, partitions, "none"))
		if err != nil {
			continue
		}
		for fi, f := range files {
			matches := false
			for _, row := range f.rows {
				if v, err := EvalRow(p.Expr(), rowFunc(row)); err == nil && v == true {
					matches = true
					break
				}
			}
			all := true
			for _, row := range f.rows {
				if v, err := EvalRow(p.Expr(), rowFunc(row)); err != nil || v != true {
					all = false
					break
				}
			}
			if p.AllMatch(f.pv, f.stats) {
				allMatched++
				if !all {
					t.Errorf("seed %d: %s: AllMatch for file %d (stats %s, partitions %v) with a row that does not match",
						seed, p.Expr(), fi, statsString(f.stats), pvString(f.pv))
				}
			}
			may := p.MayMatch(f.pv, f.stats)
			total++
			if !may {
				pruned++
			}
			if matches && !may {
				t.Errorf("seed %d: %s pruned file %d (stats %s, partitions %v) that has a matching row",
					seed, p.Expr(), fi, statsString(f.stats), pvString(f.pv))
			}
		}
	}
	if pruned < total/10 {
		t.Errorf("pruned only %d of %d files", pruned, total)
	}
	if allMatched < total/50 {
		t.Errorf("AllMatch held for only %d of %d files", allMatched, total)
	}
	t.Logf("pruned %d of %d, all rows matched in %d", pruned, total, allMatched)
}

func statsString(st *actions.Stats) string {
	if st == nil {
		return "none"
	}
	return mustJSON(st)
}

func pvString(pv map[string]*string) string {
	var parts []string
	for k, v := range pv {
		if v == nil {
			parts = append(parts, k+"=null")
		} else {
			parts = append(parts, k+"="+*v)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// TestRandomRewriteColumns: RewriteColumns copies random expressions with
// every column renamed, and leaves the input as it was: the copy prints as
// the input's text with the names replaced, and the input prints as
// before.
func TestRandomRewriteColumns(t *testing.T) {
	seed := testSeed(20261204)
	r := rand.New(rand.NewPCG(seed, 3))
	g := &exprGen{r: r}
	for i := range iterations(2000) {
		text := g.boolExpr(4)
		e, err := Parse(text)
		if err != nil {
			t.Fatalf("seed %d, %d: %q: %v", seed, i, text, err)
		}
		before := e.String()
		copied, err := RewriteColumns(e, func(c *Column) (Expr, error) {
			return &Column{Path: append([]string{"t"}, c.Path...)}, nil
		})
		if err != nil {
			t.Fatalf("seed %d, %d: %q: %v", seed, i, text, err)
		}
		if e.String() != before {
			t.Fatalf("seed %d, %d: the input changed: %s, then %s", seed, i, before, e.String())
		}
		// The same rename done on the text: every column is a bare
		// identifier in the generator's output.
		want := before
		for _, name := range Columns(e) {
			want = renameColumn(want, name, "t."+name)
		}
		if copied.String() != want {
			t.Fatalf("seed %d, %d: copy %s, want %s", seed, i, copied.String(), want)
		}
	}
	if _, err := RewriteColumns(Col("a"), func(*Column) (Expr, error) { return nil, fmt.Errorf("no") }); err == nil {
		t.Error("an error of fn is not returned")
	}
}

// renameColumn replaces whole-word occurrences of name outside quotes.
func renameColumn(s, name, to string) string {
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' {
			inQuote = !inQuote
		}
		isWord := func(c byte) bool {
			return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.'
		}
		if !inQuote && strings.HasPrefix(s[i:], name) && (i == 0 || !isWord(s[i-1])) && (i+len(name) == len(s) || !isWord(s[i+len(name)])) {
			b.WriteString(to)
			i += len(name)
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}
