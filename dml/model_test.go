package dml_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

var (
	modelSeed = flag.Uint64("model.seed", 0, "seed of TestModel (0: from the clock)")
	modelOps  = flag.Int("model.ops", 0, "operations per TestModel run (0: 500, 100 under -race)")
)

// mrow is a row of the model table (id long not null, p string, v long,
// s string); nil is NULL.
type mrow struct {
	id int64
	p  *string
	v  *int64
	s  *string
}

func sp(s string) *string { return &s }
func ip(v int64) *int64   { return &v }

func (r mrow) line(extra string) string {
	q := func(s *string) string {
		if s == nil {
			return "null"
		}
		return `"` + *s + `"`
	}
	v := "null"
	if r.v != nil {
		v = fmt.Sprint(*r.v)
	}
	out := fmt.Sprintf(`{"id":%d,"p":%s,"v":%s,"s":%s`, r.id, q(r.p), v, q(r.s))
	if extra != "" {
		out += `,"_change_type":"` + extra + `"`
	}
	return out + "}"
}

// mpred is a predicate as SQL text and as a Go function of a row (TRUE
// only; FALSE and NULL are both false).
type mpred struct {
	text string
	eval func(mrow) bool
}

func randPred(r *rand.Rand, maxID int64) mpred {
	k := r.Int64N(maxID + 1)
	k2 := k + r.Int64N(maxID/4+1)
	x := []string{"a", "b", "c"}[r.IntN(3)]
	n := r.Int64N(100) - 20
	c := string(rune('a' + r.IntN(4)))
	switch r.IntN(11) {
	case 0:
		return mpred{fmt.Sprintf("id < %d", k), func(m mrow) bool { return m.id < k }}
	case 1:
		return mpred{fmt.Sprintf("id BETWEEN %d AND %d", k, k2), func(m mrow) bool { return m.id >= k && m.id <= k2 }}
	case 2:
		return mpred{fmt.Sprintf("v > %d", n), func(m mrow) bool { return m.v != nil && *m.v > n }}
	case 3:
		return mpred{"v IS NULL", func(m mrow) bool { return m.v == nil }}
	case 4:
		return mpred{fmt.Sprintf("p = '%s'", x), func(m mrow) bool { return m.p != nil && *m.p == x }}
	case 5:
		return mpred{"p IS NULL", func(m mrow) bool { return m.p == nil }}
	case 6:
		return mpred{fmt.Sprintf("s LIKE '%s%%'", c), func(m mrow) bool { return m.s != nil && strings.HasPrefix(*m.s, c) }}
	case 7:
		return mpred{fmt.Sprintf("p IN ('a', 'b') AND v < %d", n), func(m mrow) bool {
			return m.p != nil && (*m.p == "a" || *m.p == "b") && m.v != nil && *m.v < n
		}}
	case 8:
		return mpred{fmt.Sprintf("(v < %d OR s = '%s1')", n, c), func(m mrow) bool {
			return m.v != nil && *m.v < n || m.s != nil && *m.s == c+"1"
		}}
	case 9:
		return mpred{fmt.Sprintf("id = %d", k), func(m mrow) bool { return m.id == k }}
	default:
		return mpred{fmt.Sprintf("NOT (id < %d)", k), func(m mrow) bool { return !(m.id < k) }}
	}
}

// massign is an UPDATE assignment as text and as a Go function.
type massign struct {
	text  string
	apply func(*mrow)
}

func randAssign(r *rand.Rand, partitioned bool) massign {
	k := r.Int64N(20) - 5
	c := fmt.Sprintf("%c%d", 'a'+r.IntN(4), r.IntN(5))
	switch r.IntN(5) {
	case 0:
		return massign{fmt.Sprintf("v = v + %d", k), func(m *mrow) {
			if m.v != nil {
				m.v = ip(*m.v + k)
			}
		}}
	case 1:
		return massign{fmt.Sprintf("s = '%s'", c), func(m *mrow) { m.s = sp(c) }}
	case 2:
		return massign{"v = NULL", func(m *mrow) { m.v = nil }}
	case 3:
		x := []string{"a", "b", "c"}[r.IntN(3)]
		return massign{fmt.Sprintf("p = '%s'", x), func(m *mrow) { m.p = sp(x) }}
	default:
		return massign{"s = NULL", func(m *mrow) { m.s = nil }}
	}
}

func randRow(r *rand.Rand, id int64) mrow {
	m := mrow{id: id}
	if r.IntN(8) > 0 {
		m.p = sp([]string{"a", "b", "c"}[r.IntN(3)])
	}
	if r.IntN(6) > 0 {
		m.v = ip(r.Int64N(100) - 20)
	}
	if r.IntN(6) > 0 {
		m.s = sp(fmt.Sprintf("%c%d", 'a'+r.IntN(4), r.IntN(5)))
	}
	return m
}

var modelArrow = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func batchOf(rows []mrow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, modelArrow)
	defer b.Release()
	for _, m := range rows {
		b.Field(0).(*array.Int64Builder).Append(m.id)
		if m.p == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*m.p)
		}
		if m.v == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(*m.v)
		}
		if m.s == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(*m.s)
		}
	}
	return b.NewRecordBatch()
}

func seqOf(rec arrow.RecordBatch) func(func(arrow.RecordBatch, error) bool) {
	return func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
}

// TestModel runs random DELETE, UPDATE, MERGE and appends against a table
// and an in-memory model of it, and compares after every operation the
// table's rows, the operation's row counts and (with the change data feed
// on) the change rows the commit wrote.
func TestModel(t *testing.T) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	ops := *modelOps
	if ops == 0 {
		ops = 500
		if raceEnabled {
			ops = 100
		}
	}
	t.Logf("seed %d (rerun with -model.seed=%d), %d operations", seed, seed, ops)
	for _, mode := range modelModes {
		t.Run(mode.name, func(t *testing.T) {
			runModel(t, seed, ops, mode)
		})
	}
}

type modelMode struct {
	name        string
	partitioned bool
	dv          bool
	cdf         bool
	mapping     string // delta.columnMapping.mode, when set
	rowTracking bool   // delta.enableRowTracking: row IDs checked after every operation
}

func runModel(t *testing.T, seed uint64, ops int, mode modelMode) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, uint64(len(mode.name))))
	store := objstore.NewMem()
	props := map[string]string{}
	if mode.cdf {
		props["delta.enableChangeDataFeed"] = "true"
	}
	if mode.dv {
		props["delta.enableDeletionVectors"] = "true"
	}
	if mode.mapping != "" {
		props["delta.columnMapping.mode"] = mode.mapping
	}
	if mode.rowTracking {
		props["delta.enableRowTracking"] = "true"
	}
	rows := newRowIDModel()
	var parts []string
	if mode.partitioned {
		parts = []string{"p"}
	}
	tabletest.Create(t, store, "id long not null, p string, v long, s string", props, parts...)
	var model []mrow
	var nextID int64
	wopts := []writer.Option{writer.WithTargetFileSize(2 << 10)}
	appendN := func(n int) {
		var rows []mrow
		for range n {
			rows = append(rows, randRow(r, nextID))
			nextID++
		}
		rec := batchOf(rows)
		defer rec.Release()
		if _, err := writer.Append(ctx, tabletest.Open(t, store), seqOf(rec), wopts...); err != nil {
			t.Fatal(err)
		}
		model = append(model, rows...)
	}
	for range 4 {
		appendN(20 + r.IntN(40))
	}
	dopts := []dml.Option{dml.WithWriterOptions(wopts...), dml.WithParallelism(1 + r.IntN(3))}
	var vectors int64 // deletion vectors written
	defer func() {
		if t.Failed() {
			return
		}
		if mode.dv && vectors == 0 {
			t.Errorf("no operation wrote a deletion vector")
		}
		if !mode.dv && vectors > 0 {
			t.Errorf("%d deletion vectors written on a table without them", vectors)
		}
	}()
	for op := range ops {
		snap := tabletest.Open(t, store)
		var what string
		var changes []string
		var res *dml.Result
		var err error
		wantCounts := map[string]int64{}
		switch k := r.IntN(10); {
		case k == 0:
			appendN(1 + r.IntN(30))
			what = "append"
			continue
		case k <= 3:
			p := randPred(r, nextID)
			what = "DELETE WHERE " + p.text
			var kept []mrow
			for _, m := range model {
				if p.eval(m) {
					changes = append(changes, m.line("delete"))
				} else {
					kept = append(kept, m)
				}
			}
			wantCounts["numDeletedRows"] = int64(len(model) - len(kept))
			model = kept
			res, err = dml.Delete(ctx, snap, mustParse(t, p.text), dopts...)
		case k <= 6:
			p := randPred(r, nextID)
			as := []massign{randAssign(r, mode.partitioned)}
			if r.IntN(2) == 0 {
				b := randAssign(r, mode.partitioned)
				if strings.Split(b.text, " ")[0] != strings.Split(as[0].text, " ")[0] {
					as = append(as, b)
				}
			}
			var texts []string
			for _, a := range as {
				texts = append(texts, a.text)
			}
			what = "UPDATE SET " + strings.Join(texts, ", ") + " WHERE " + p.text
			var n int64
			for i, m := range model {
				if !p.eval(m) {
					continue
				}
				n++
				changes = append(changes, m.line("update_preimage"))
				for _, a := range as {
					a.apply(&model[i])
				}
				changes = append(changes, model[i].line("update_postimage"))
			}
			wantCounts["numUpdatedRows"] = n
			res, err = dml.Update(ctx, snap, mustParse(t, p.text), mustSet(t, texts...), dopts...)
		default:
			what, changes, res, err = modelMerge(t, r, snap, &model, &nextID, wantCounts, dopts)
		}
		if err != nil {
			t.Fatalf("op %d: %s: %v", op, what, err)
		}
		for _, k := range []string{"numDeletionVectorsAdded", "numDeletionVectorsUpdated", "numTargetDeletionVectorsAdded", "numTargetDeletionVectorsUpdated"} {
			vectors += res.Metrics[k]
		}
		for k, v := range wantCounts {
			if res.Metrics[k] != v {
				t.Errorf("op %d: %s: metric %s = %d, want %d (metrics %v)", op, what, k, res.Metrics[k], v, res.Metrics)
			}
		}
		want := make([]string, len(model))
		for i, m := range model {
			want[i] = m.line("")
		}
		slices.Sort(want)
		after := tabletest.Open(t, store)
		if mode.rowTracking && res.CommitResult != nil {
			rows.check(t, fmt.Sprintf("op %d: %s", op, what), after, model, res.Version)
		}
		got := tabletest.ScanLines(t, after)
		if !slices.Equal(got, want) {
			tabletest.DiffLines(t, fmt.Sprintf("op %d: %s: table rows", op, what), got, want)
			t.FailNow()
		}
		if mode.cdf && res.CommitResult != nil && !res.AlreadyApplied {
			slices.Sort(changes)
			gotc := changeLines(t, store, res.Version)
			if !slices.Equal(gotc, changes) {
				tabletest.DiffLines(t, fmt.Sprintf("op %d: %s: change rows", op, what), gotc, changes)
				t.FailNow()
			}
		}
		if res.CommitResult == nil && len(changes) > 0 {
			t.Fatalf("op %d: %s: nothing committed but the model changed %d rows", op, what, len(changes))
		}
	}
}

// modelMerge runs one random MERGE on the table and the model.
func modelMerge(t *testing.T, r *rand.Rand, snap *deltalog.Snapshot, model *[]mrow, nextID *int64, counts map[string]int64, dopts []dml.Option) (string, []string, *dml.Result, error) {
	t.Helper()
	ctx := context.Background()
	// The source: some existing ids and some new ones, each at most once.
	byID := map[int64]int{}
	for i, m := range *model {
		byID[m.id] = i
	}
	var src []mrow
	used := map[int64]bool{}
	for range r.IntN(30) {
		var id int64
		if len(*model) > 0 && r.IntN(3) > 0 {
			id = (*model)[r.IntN(len(*model))].id
		} else {
			id = *nextID
			*nextID++
		}
		if used[id] {
			continue
		}
		used[id] = true
		src = append(src, randRow(r, id))
	}
	delBelow := int64(-1000)
	if r.IntN(2) == 0 {
		delBelow = r.Int64N(40) - 20
	}
	updateAll := r.IntN(2) == 0
	insertAbove := int64(-1000)
	if r.IntN(3) == 0 {
		insertAbove = r.Int64N(60) - 20
	}
	nmbs := r.IntN(5) == 0
	nmbsAbove := r.Int64N(100) - 20

	clauses := []dml.Clause{}
	text := []string{}
	if delBelow > -1000 {
		clauses = append(clauses, dml.WhenMatchedDelete(mustParse(t, fmt.Sprintf("source.v < %d", delBelow))))
		text = append(text, fmt.Sprintf("WHEN MATCHED AND source.v < %d THEN DELETE", delBelow))
	}
	if updateAll {
		clauses = append(clauses, dml.WhenMatchedUpdateAll(nil))
		text = append(text, "WHEN MATCHED THEN UPDATE SET *")
	} else {
		clauses = append(clauses, dml.WhenMatchedUpdate(nil, mustSet(t, "v = source.v", "s = target.s")...))
		text = append(text, "WHEN MATCHED THEN UPDATE SET v = source.v, s = target.s")
	}
	if insertAbove > -1000 {
		clauses = append(clauses, dml.WhenNotMatchedInsertAll(mustParse(t, fmt.Sprintf("source.v > %d", insertAbove))))
		text = append(text, fmt.Sprintf("WHEN NOT MATCHED AND source.v > %d THEN INSERT *", insertAbove))
	} else {
		clauses = append(clauses, dml.WhenNotMatchedInsertAll(nil))
		text = append(text, "WHEN NOT MATCHED THEN INSERT *")
	}
	if nmbs {
		clauses = append(clauses, dml.WhenNotMatchedBySourceDelete(mustParse(t, fmt.Sprintf("target.v > %d", nmbsAbove))))
		text = append(text, fmt.Sprintf("WHEN NOT MATCHED BY SOURCE AND target.v > %d THEN DELETE", nmbsAbove))
	}
	what := fmt.Sprintf("MERGE (%d source rows) ON target.id = source.id %s", len(src), strings.Join(text, " "))

	var changes []string
	var next []mrow
	var deleted, updated, inserted int64
	srcByID := map[int64]mrow{}
	for _, s := range src {
		srcByID[s.id] = s
	}
	for _, m := range *model {
		s, ok := srcByID[m.id]
		switch {
		case ok && delBelow > -1000 && s.v != nil && *s.v < delBelow:
			changes = append(changes, m.line("delete"))
			deleted++
		case ok:
			n := m
			if updateAll {
				n = s
			} else {
				n.v = s.v
			}
			changes = append(changes, m.line("update_preimage"), n.line("update_postimage"))
			next = append(next, n)
			updated++
		case nmbs && m.v != nil && *m.v > nmbsAbove:
			changes = append(changes, m.line("delete"))
			deleted++
		default:
			next = append(next, m)
		}
	}
	for _, s := range src {
		if _, ok := byID[s.id]; ok {
			continue
		}
		if insertAbove > -1000 && !(s.v != nil && *s.v > insertAbove) {
			continue
		}
		changes = append(changes, s.line("insert"))
		next = append(next, s)
		inserted++
	}
	*model = next
	counts["numTargetRowsDeleted"] = deleted
	counts["numTargetRowsUpdated"] = updated
	counts["numTargetRowsInserted"] = inserted
	counts["numSourceRows"] = int64(len(src))
	rec := batchOf(src)
	defer rec.Release()
	res, err := dml.Merge(ctx, snap, seqOf(rec), mustParse(t, "target.id = source.id"), clauses, dopts...)
	return what, changes, res, err
}

var modelModes = []modelMode{
	{name: "copy-on-write", cdf: true},
	{name: "copy-on-write partitioned", partitioned: true},
	{name: "deletion vectors", dv: true},
	{name: "deletion vectors partitioned", partitioned: true, dv: true, cdf: true},
	{name: "row tracking copy-on-write", rowTracking: true, cdf: true},
	{name: "row tracking deletion vectors partitioned", rowTracking: true, dv: true, partitioned: true},
	{name: "column mapping name partitioned", partitioned: true, mapping: "name"},
	{name: "column mapping id deletion vectors", dv: true, mapping: "id"},
}

// rowIDModel follows the row IDs of a row-tracking table through the
// model's operations: a row keeps its ID for life, no ID is ever given to
// two rows, and a row's commit version changes only to the version of an
// operation that changed it.
type rowIDModel struct {
	byID    map[int64]rowIDSeen // model id -> last seen
	ownerOf map[int64]int64     // row ID -> the model id that had it
}

type rowIDSeen struct {
	rowID, version int64
	line           string
}

func newRowIDModel() *rowIDModel {
	return &rowIDModel{byID: map[int64]rowIDSeen{}, ownerOf: map[int64]int64{}}
}

func (m *rowIDModel) check(t *testing.T, what string, snap *deltalog.Snapshot, model []mrow, version int64) {
	t.Helper()
	lines := tabletest.ScanLines(t, snap, reader.WithRowTracking())
	type row struct {
		ID      int64  `json:"id"`
		RowID   *int64 `json:"_row_id"`
		Version *int64 `json:"_row_commit_version"`
	}
	content := map[int64]string{}
	for _, r := range model {
		content[r.id] = r.line("")
	}
	seen := map[int64]bool{}
	for _, l := range lines {
		var r row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %s: %v", what, l, err)
		}
		if r.RowID == nil || r.Version == nil {
			t.Fatalf("%s: row %d without a row ID or version: %s", what, r.ID, l)
		}
		if seen[*r.RowID] {
			t.Fatalf("%s: row ID %d given to two live rows", what, *r.RowID)
		}
		seen[*r.RowID] = true
		if owner, ok := m.ownerOf[*r.RowID]; ok && owner != r.ID {
			t.Fatalf("%s: row ID %d of row %d was row %d's", what, *r.RowID, r.ID, owner)
		}
		prev, known := m.byID[r.ID]
		switch {
		case known && prev.rowID != *r.RowID:
			t.Fatalf("%s: row %d changed row ID %d -> %d", what, r.ID, prev.rowID, *r.RowID)
		case !known && *r.Version != version && *r.Version > version:
			t.Fatalf("%s: new row %d has commit version %d after %d", what, r.ID, *r.Version, version)
		case known && prev.line != content[r.ID] && *r.Version != version:
			t.Fatalf("%s: row %d changed but its commit version is %d, not %d", what, r.ID, *r.Version, version)
		case known && *r.Version != prev.version && *r.Version != version:
			t.Fatalf("%s: row %d's commit version moved %d -> %d", what, r.ID, prev.version, *r.Version)
		}
		m.ownerOf[*r.RowID] = r.ID
		m.byID[r.ID] = rowIDSeen{rowID: *r.RowID, version: *r.Version, line: content[r.ID]}
	}
	if len(lines) != len(model) {
		t.Fatalf("%s: %d rows with IDs, model has %d", what, len(lines), len(model))
	}
}
