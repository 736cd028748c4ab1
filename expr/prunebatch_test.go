package expr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
)

// PruneBatch, over files held as columns, decides exactly what MayMatch
// decides for each file from its add action (partition values and
// add.stats parsed from JSON): random predicates over random files,
// among them files whose partition values or stats the columns cannot
// hold (odd keys, unknown stats keys, bad JSON), and stats without
// numRecords or null counts, with NaN, truncated strings, wide bounds.
func TestRandomPruneBatchMatchesMayMatch(t *testing.T) {
	seed := testSeed(4242)
	r := rand.New(rand.NewPCG(seed, 3))
	g := &exprGen{r: r}
	partitions := []string{"a", "d"}
	statCols := []string{"s", "n", "i", "x", "f", "ts", "m", "flag", "b"}
	layout, err := checkpoint.NewFileLayout(tableOf(fuzzSchema, partitions, "none"))
	if err != nil {
		t.Fatal(err)
	}
	for batch := range 4 {
		var adds []*actions.Add
		for range 50 + r.IntN(100) {
			adds = append(adds, randomAdd(t, r, partitions, statCols))
		}
		b := checkpoint.NewFilesBuilder(layout, len(adds), true)
		for _, a := range adds {
			b.AppendAdd(a)
		}
		cols := b.Finish()
		irregular := len(cols.Irregular())
		vectorised, checked := 0, 0
		for range iterations(300) {
			src := g.boolExpr(3)
			e, err := Parse(src)
			if err != nil {
				t.Fatalf("seed %d: %q: %v", seed, src, err)
			}
			p, err := NewPruner(e, tableOf(fuzzSchema, partitions, "none"))
			if err != nil {
				continue
			}
			checked++
			if p.vectorisable(p.expr) {
				vectorised++
			}
			parts := make([]bool, len(adds))
			stats := make([]bool, len(adds))
			p.PruneBatch(cols, parts, stats)
			for i, a := range adds {
				st, err := actions.ParseStats(a.Stats)
				if err != nil {
					st = nil
				}
				wantPart := p.MayMatch(a.PartitionValues, nil)
				wantStats := st == nil || p.MayMatch(a.PartitionValues, st)
				if parts[i] != wantPart || stats[i] != wantStats {
					t.Fatalf("seed %d batch %d: %s on file %d (partitions %s, stats %s): PruneBatch says %v/%v, MayMatch %v/%v",
						seed, batch, p.Expr(), i, pvString(a.PartitionValues), a.Stats, parts[i], stats[i], wantPart, wantStats)
				}
			}
		}
		t.Logf("batch %d: %d files, %d irregular; %d of %d predicates evaluated over the columns", batch, len(adds), irregular, vectorised, checked)
		if vectorised < checked/4 {
			t.Errorf("only %d of %d predicates were evaluated over the columns", vectorised, checked)
		}
	}
}

// randomAdd draws a file of a few random rows, with stats as writers
// write them (or not quite).
func randomAdd(t *testing.T, r *rand.Rand, partitions, statCols []string) *actions.Add {
	base := randomRow(r)
	if base["a"] == "" {
		base["a"] = nil
	}
	var rows []map[string]any
	for range 1 + r.IntN(6) {
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
	switch r.IntN(20) {
	case 0:
		delete(pv, "d") // a key missing
	case 1:
		x := "1"
		pv["extra"] = &x
	case 2:
		e := ""
		pv["a"] = &e // an empty string: null, but not nil
	}
	cols := append([]string(nil), statCols...)
	r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	stats := fileStats(rows, cols[:r.IntN(len(cols)+1)], 1+r.IntN(4))
	switch r.IntN(14) {
	case 0:
		stats = ""
	case 1:
		stats = `{"numRecords":3,"minValues":{"zz":1}}` // a column the schema lacks
	case 2:
		stats = `{"numRecords":` // not JSON
	case 3:
		stats = stats[:len(stats)-1] + `,"tightBounds":false}`
	case 4:
		stats = fmt.Sprintf(`{"minValues":{"n":%d},"maxValues":{"n":%d}}`, r.IntN(5)-2, r.IntN(5)) // no numRecords, no null counts
	case 5:
		stats = `{"numRecords":2,"nullCount":{"n":2,"s":1}}`
	}
	return &actions.Add{Path: fmt.Sprintf("f%d.parquet", r.Uint64()), PartitionValues: pv, Size: 1, Stats: stats}
}
