package sharing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/sharing"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestRandomHintsKeepMatchingFiles: hints are best effort, but a file
// holding a row that satisfies them must never be left out. Random
// tables (several files, a partition column, nulls) and random
// predicates, sent as SQL predicateHints and as jsonPredicateHints; every
// file is read and each row evaluated with expr.EvalRow, independently of
// the server's pruning (the reader's stats and partition pruning).
// HINTS_SEED replays a run.
func TestRandomHintsKeepMatchingFiles(t *testing.T) {
	seed := testseed.From(t, "HINTS_SEED")
	rng := rand.New(rand.NewPCG(seed, 38))
	f := newFixture(t)
	dir := t.TempDir()
	_, snap := newTable(t, dir, "r", "n long, i int, s string, d date, x double, b boolean, p string", nil, "p")
	for range 6 {
		var rows []string
		for range 1 + rng.IntN(20) {
			rows = append(rows, randomRow(rng))
		}
		snap = tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
	}
	text := baseConfig(f.dir, "limits:\n  requestsPerSecond: 100000\n  burst: 100000\n")
	text = strings.Replace(text, "- name: share_b", fmt.Sprintf("    - name: r\n      location: %q\n- name: share_b", location(dir, "r")), 1)
	f.start(text)
	rowsOf := fileRows(t, snap)
	pruned, total := 0, 0
	for i := range 150 {
		e := randomPredicate(rng, 3)
		var body string
		if i%2 == 0 {
			b, _ := json.Marshal(map[string]any{"predicateHints": []string{e.sql}})
			body = string(b)
		} else {
			b, _ := json.Marshal(map[string]any{"jsonPredicateHints": e.json})
			body = string(b)
		}
		r := f.do("POST", "/delta-sharing/shares/share_a/schemas/sales/tables/r/query", tokenA, body)
		if r.status != 200 {
			t.Fatalf("query %s: %d %s", body, r.status, r.body)
		}
		got := map[string]bool{}
		for _, fl := range files(t, r, "file") {
			got[fl.ID] = true
		}
		pred, err := expr.Parse(e.sql)
		if err != nil {
			t.Fatalf("%s: %v", e.sql, err)
		}
		for path, rows := range rowsOf {
			total++
			if !got[md5hex(path)] {
				pruned++
			}
			for _, row := range rows {
				v, err := expr.EvalRow(pred, func(col string) (any, bool) { x, ok := row[col]; return x, ok })
				if err != nil {
					t.Fatalf("eval %s: %v", e.sql, err)
				}
				if v == true && !got[md5hex(path)] {
					t.Fatalf("seed %d: %s left out file %s, whose row %v satisfies %s", seed, body, path, row, e.sql)
				}
			}
		}
	}
	t.Logf("%d of %d file answers pruned", pruned, total)
	if pruned == 0 {
		t.Error("no file was ever pruned: the test proves nothing")
	}
}

// fileRows reads every file of snap: its rows as column values.
func fileRows(t *testing.T, snap *deltalog.Snapshot) map[string][]map[string]any {
	t.Helper()
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]any{}
	for f, err := range sc.Files(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range sc.ReadFile(context.Background(), f) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range int(rec.NumRows()) {
				row := map[string]any{}
				for c, field := range rec.Schema().Fields() {
					v, ok := actions.ArrowValue(rec.Column(c), i)
					if !ok {
						t.Fatalf("column %s: unreadable", field.Name)
					}
					row[field.Name] = v
				}
				out[f.Add.Path] = append(out[f.Add.Path], row)
			}
		}
	}
	return out
}

func md5hex(path string) string { return sharingFileID(path) }

func randomRow(rng *rand.Rand) string {
	v := func(s string) string {
		if rng.IntN(8) == 0 {
			return "null"
		}
		return s
	}
	return fmt.Sprintf(`{"n":%s,"i":%s,"s":%s,"d":%s,"x":%s,"b":%s,"p":%s}`,
		v(fmt.Sprint(rng.IntN(200)-100)), v(fmt.Sprint(rng.IntN(50))), v(fmt.Sprintf("%q", []string{"a", "b", "c", "ab", ""}[rng.IntN(5)])),
		v(fmt.Sprint(19000+rng.IntN(30))), v(fmt.Sprintf("%.2f", rng.Float64()*10-5)), v([]string{"true", "false"}[rng.IntN(2)]),
		v(fmt.Sprintf("%q", []string{"x", "y", "z"}[rng.IntN(3)])))
}

// hint is one predicate in both forms.
type hint struct {
	sql  string
	json string
}

type jop struct {
	Op        string `json:"op"`
	Children  []jop  `json:"children,omitempty"`
	Name      string `json:"name,omitempty"`
	Value     string `json:"value,omitempty"`
	ValueType string `json:"valueType,omitempty"`
}

func randomPredicate(rng *rand.Rand, depth int) hint {
	j := randomJSON(rng, depth)
	b, _ := json.Marshal(j)
	return hint{sql: sqlOf(j), json: string(b)}
}

func randomJSON(rng *rand.Rand, depth int) jop {
	if depth > 0 && rng.IntN(3) == 0 {
		switch rng.IntN(3) {
		case 0:
			return jop{Op: "and", Children: []jop{randomJSON(rng, depth-1), randomJSON(rng, depth-1)}}
		case 1:
			return jop{Op: "or", Children: []jop{randomJSON(rng, depth-1), randomJSON(rng, depth-1)}}
		default:
			return jop{Op: "not", Children: []jop{randomJSON(rng, depth-1)}}
		}
	}
	cols := []struct{ name, typ string }{{"n", "long"}, {"i", "int"}, {"s", "string"}, {"d", "date"}, {"x", "double"}, {"p", "string"}}
	c := cols[rng.IntN(len(cols))]
	col := jop{Op: "column", Name: c.name, ValueType: c.typ}
	if rng.IntN(6) == 0 {
		return jop{Op: "isNull", Children: []jop{col}}
	}
	var lit string
	switch c.typ {
	case "long":
		lit = fmt.Sprint(rng.IntN(220) - 110)
	case "int":
		lit = fmt.Sprint(rng.IntN(60) - 5)
	case "string":
		lit = []string{"a", "b", "c", "ab", "", "x", "y", "z", "zz"}[rng.IntN(9)]
	case "date":
		lit = fmt.Sprintf("2022-01-%02d", 20+rng.IntN(12)) // days 19000.. are 2022-01-08 on
	case "double":
		lit = fmt.Sprintf("%.2f", rng.Float64()*12-6)
	}
	op := []string{"equal", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"}[rng.IntN(5)]
	kids := []jop{col, {Op: "literal", Value: lit, ValueType: c.typ}}
	if rng.IntN(4) == 0 {
		kids[0], kids[1] = kids[1], kids[0]
	}
	return jop{Op: op, Children: kids}
}

// sqlOf writes a JSON predicate as SQL text.
func sqlOf(j jop) string {
	switch j.Op {
	case "and", "or":
		return "(" + sqlOf(j.Children[0]) + " " + strings.ToUpper(j.Op) + " " + sqlOf(j.Children[1]) + ")"
	case "not":
		return "(NOT " + sqlOf(j.Children[0]) + ")"
	case "isNull":
		return "(" + j.Children[0].Name + " IS NULL)"
	case "column":
		return j.Name
	case "literal":
		switch j.ValueType {
		case "string":
			return "'" + j.Value + "'"
		case "date":
			return "DATE '" + j.Value + "'"
		}
		return j.Value
	}
	ops := map[string]string{"equal": "=", "lessThan": "<", "lessThanOrEqual": "<=", "greaterThan": ">", "greaterThanOrEqual": ">="}
	return "(" + sqlOf(j.Children[0]) + " " + ops[j.Op] + " " + sqlOf(j.Children[1]) + ")"
}

func sharingFileID(path string) string { return sharing.FileIDOf(path) }
