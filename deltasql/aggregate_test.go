package deltasql

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/testseed"
)

// runSQL runs statements and returns the last one's rows as canonical
// JSON lines.
func runSQL(t *testing.T, sess *Session, text string) []string {
	t.Helper()
	stmts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range stmts {
		res, err := sess.Run(context.Background(), st)
		if err != nil {
			t.Fatalf("%s: %v", st.SQL(), err)
		}
		out = nil
		for rec, err := range res.Rows() {
			if err != nil {
				t.Fatal(err)
			}
			for i := range int(rec.NumRows()) {
				b, err := reader.AppendCanonicalRow(nil, rec, i)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
			}
		}
	}
	return out
}

// GROUP BY with every aggregate, against the same sums computed in Go
// from the rows inserted: random groups (null among them), nulls in the
// values, several commits so several files.
func TestRandomGroupBy(t *testing.T) {
	seed := testseed.From(t, "DELTASQL_SEED")
	rng := rand.New(rand.NewPCG(seed, 7))
	table := filepath.Join(t.TempDir(), "t")
	sess := New()
	defer sess.Close()
	tt := "delta.`" + table + "`"
	runSQL(t, sess, "CREATE TABLE "+tt+" (k STRING, v BIGINT, s STRING) USING DELTA")
	type acc struct {
		n, nv, sum int64
		min, max   *int64
		mins       *string
	}
	want := map[string]*acc{}
	for range 4 { // four commits: four files
		var rows []string
		for range 20 + rng.IntN(60) {
			k := "NULL"
			key := "null"
			if rng.IntN(8) > 0 {
				key = fmt.Sprintf("g%d", rng.IntN(5))
				k = "'" + key + "'"
			}
			a := want[key]
			if a == nil {
				a = &acc{}
				want[key] = a
			}
			a.n++
			v, s := "NULL", "NULL"
			if rng.IntN(5) > 0 {
				x := rng.Int64N(2000) - 1000
				v = fmt.Sprint(x)
				a.nv++
				a.sum += x
				if a.min == nil || x < *a.min {
					a.min = &x
				}
				if a.max == nil || x > *a.max {
					a.max = &x
				}
			}
			if rng.IntN(4) > 0 {
				str := fmt.Sprintf("s%03d", rng.IntN(1000))
				s = "'" + str + "'"
				if a.mins == nil || str < *a.mins {
					a.mins = &str
				}
			}
			rows = append(rows, fmt.Sprintf("(%s, %s, %s)", k, v, s))
		}
		runSQL(t, sess, "INSERT INTO "+tt+" VALUES "+strings.Join(rows, ", "))
	}
	got := runSQL(t, sess, "SELECT k, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS total, MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS mean, MIN(s) AS first FROM "+tt+" GROUP BY k ORDER BY k")
	var wantLines []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch { // NULLS FIRST, as Spark sorts ascending
		case a == "null":
			return -1
		case b == "null":
			return 1
		}
		return strings.Compare(a, b)
	})
	num := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	for _, k := range keys {
		a := want[k]
		row := map[string]any{"n": a.n, "nv": a.nv, "total": nil, "lo": num(a.min), "hi": num(a.max), "mean": nil, "first": nil}
		if k != "null" {
			row["k"] = k
		} else {
			row["k"] = nil
		}
		if a.nv > 0 {
			row["total"] = a.sum
			row["mean"] = float64(a.sum) / float64(a.nv)
		}
		if a.mins != nil {
			row["first"] = *a.mins
		}
		wantLines = append(wantLines, canonical(t, row, []string{"k", "n", "nv", "total", "lo", "hi", "mean", "first"}))
	}
	if !slices.Equal(got, wantLines) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
}

// canonical writes a row as the canonical encoding does: keys in order.
func canonical(t *testing.T, row map[string]any, keys []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(row[k])
		if err != nil {
			t.Fatal(err)
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}
