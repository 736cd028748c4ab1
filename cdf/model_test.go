package cdf_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

var (
	modelSeed  = flag.Uint64("model.seed", 0, "replay TestModelHistories with this seed")
	modelLong  = flag.Bool("model.long", false, "run TestModelHistories with more and longer histories")
	modelDebug = flag.Bool("model.debug", false, "print each history's commits")
)

// mrow is one row of the model table: id long, part string (the
// partition column), v string, and extra long once the column is added.
type mrow struct {
	id    int64
	part  string
	v     string
	extra *int64
}

// physFile is a live data file as written, and its deletion vector.
type physFile struct {
	rows    []mrow // every row of the file, by row index
	deleted *roaring64.Bitmap
	add     *actions.Add
}

// mchange is one change row the model expects.
type mchange struct {
	row     mrow
	kind    string
	version int64
}

// modelTable writes a random history into a store and keeps the change
// rows each version must yield.
type modelTable struct {
	t       *testing.T
	rng     *rand.Rand
	st      objstore.Store
	version int64
	files   map[string][]mrow // live files -> their live rows
	parts   map[string]string // live file -> partition
	phys    map[string]*physFile
	hasExtr bool // the extra column exists
	nextID  int64
	nfile   int
	changes []mchange
	// extraAt is the version that added the extra column (-1: none).
	extraAt int64
	// ict, when set, gives each commit an inCommitTimestamp: its version
	// in seconds after it.
	ict *time.Time
	// props are added to the table's configuration.
	props map[string]string
}

func (m *modelTable) schema() *actions.StructType {
	s := &actions.StructType{Fields: []*actions.StructField{
		{Name: "id", Type: actions.TypeLong, Nullable: true},
		{Name: "part", Type: actions.TypeString, Nullable: true},
		{Name: "v", Type: actions.TypeString, Nullable: true},
	}}
	if m.hasExtr {
		s.Fields = append(s.Fields, &actions.StructField{Name: "extra", Type: actions.TypeLong, Nullable: true})
	}
	return s
}

func (m *modelTable) metadata() *actions.Action {
	b, err := m.schema().MarshalJSON()
	if err != nil {
		m.t.Fatal(err)
	}
	return &actions.Action{Metadata: &actions.Metadata{
		ID: "model", Format: actions.Format{Provider: "parquet", Options: map[string]string{}}, SchemaString: string(b),
		PartitionColumns: []string{"part"}, Configuration: m.config(),
	}}
}

func (m *modelTable) config() map[string]string {
	c := map[string]string{"delta.enableChangeDataFeed": "true"}
	if m.ict != nil {
		c["delta.enableInCommitTimestamps"] = "true"
	}
	for k, v := range m.props {
		c[k] = v
	}
	return c
}

// parquet encodes rows as a data file (without the partition column),
// with a _change_type column when kinds is given.
func (m *modelTable) parquet(rows []mrow, kinds []string) []byte {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
	if m.hasExtr {
		fields = append(fields, arrow.Field{Name: "extra", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	if kinds != nil {
		fields = append(fields, arrow.Field{Name: "_change_type", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.StringBuilder).Append(r.v)
		c := 2
		if m.hasExtr {
			if r.extra != nil {
				b.Field(2).(*array.Int64Builder).Append(*r.extra)
			} else {
				b.Field(2).AppendNull()
			}
			c++
		}
		if kinds != nil {
			b.Field(c).(*array.StringBuilder).Append(kinds[i])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		m.t.Fatal(err)
	}
	// Small row groups, so that files are read in several batches.
	for start := int64(0); start < rec.NumRows(); start += 7 {
		sl := rec.NewSlice(start, min(start+7, rec.NumRows()))
		err := w.Write(sl)
		sl.Release()
		if err != nil {
			m.t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		m.t.Fatal(err)
	}
	return buf.Bytes()
}

func (m *modelTable) put(key string, b []byte) {
	if err := m.st.Put(context.Background(), key, bytes.NewReader(b), objstore.PutOptions{IfAbsent: true}); err != nil {
		m.t.Fatal(err)
	}
}

func stats(rows []mrow) string {
	if len(rows) == 0 {
		return `{"numRecords":0}`
	}
	lo, hi := rows[0].id, rows[0].id
	for _, r := range rows {
		lo, hi = min(lo, r.id), max(hi, r.id)
	}
	return fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, len(rows), lo, hi)
}

// newFile writes rows of one partition as a data file and returns its add.
func (m *modelTable) newFile(part string, rows []mrow, dataChange bool) *actions.Add {
	m.nfile++
	path := fmt.Sprintf("part=%s/f-%05d.parquet", part, m.nfile)
	b := m.parquet(rows, nil)
	m.put(path, b)
	m.files[path], m.parts[path] = rows, part
	p := part
	add := &actions.Add{Path: path, PartitionValues: map[string]*string{"part": &p}, Size: int64(len(b)), ModificationTime: 1, DataChange: dataChange, Stats: stats(rows)}
	m.phys[path] = &physFile{rows: rows, deleted: roaring64.New(), add: add}
	return add
}

func (m *modelTable) remove(path string, dataChange bool) *actions.Remove {
	part, pf := m.parts[path], m.phys[path]
	delete(m.files, path)
	delete(m.parts, path)
	delete(m.phys, path)
	size := pf.add.Size
	ts := int64(1)
	return &actions.Remove{Path: path, DeletionTimestamp: &ts, DataChange: dataChange, PartitionValues: map[string]*string{"part": &part}, Size: &size, Stats: pf.add.Stats, DeletionVector: pf.add.DeletionVector}
}

// changeDV gives a live file a new deletion vector (nil: none), as a
// remove and an add of the same path, and records the rows whose bit
// changed: newly deleted ones as deletes, restored ones as inserts.
func (m *modelTable) changeDV(path string, deleted *roaring64.Bitmap) []*actions.Action {
	pf := m.phys[path]
	r := m.remove(path, true)
	var dv *actions.DeletionVector
	if !deleted.IsEmpty() {
		// Inline or in a .bin file, at random.
		w := deletionvector.NewWriter(m.st, "", deletionvector.WithInlineLimit(m.rng.IntN(2)*1000))
		var err error
		if dv, err = w.Add(deleted); err != nil {
			m.t.Fatal(err)
		}
		if err := w.Flush(context.Background()); err != nil {
			m.t.Fatal(err)
		}
	}
	var live []mrow
	for i, row := range pf.rows {
		was, is := pf.deleted.Contains(uint64(i)), deleted.Contains(uint64(i))
		switch {
		case !was && is:
			m.changes = append(m.changes, mchange{row, actions.ChangeDelete, m.version})
		case was && !is:
			m.changes = append(m.changes, mchange{row, actions.ChangeInsert, m.version})
		}
		if !is {
			live = append(live, row)
		}
	}
	add := *pf.add
	add.DeletionVector, add.DataChange = dv, true
	m.files[path], m.parts[path] = live, *add.PartitionValues["part"]
	m.phys[path] = &physFile{rows: pf.rows, deleted: deleted, add: &add}
	return []*actions.Action{{Remove: r}, {Add: &add}}
}

func (m *modelTable) randomRows(n int) []mrow {
	rows := make([]mrow, n)
	for i := range rows {
		m.nextID++
		rows[i] = mrow{id: m.nextID, v: fmt.Sprintf("v%d", m.rng.IntN(1000))}
		if m.hasExtr && m.rng.IntN(3) > 0 {
			x := m.rng.Int64N(100)
			rows[i].extra = &x
		}
	}
	return rows
}

func (m *modelTable) livePaths() []string {
	var ps []string
	for p := range m.files {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

func (m *modelTable) commit(as []*actions.Action, what string) {
	ci := &actions.CommitInfo{Operation: what}
	if m.ict != nil {
		ts := m.ict.Add(time.Duration(m.version) * time.Second).UnixMilli()
		ci.InCommitTimestamp = &ts
	}
	all := []actions.Action{{CommitInfo: ci}}
	for _, a := range as {
		all = append(all, *a)
	}
	b, err := actions.MarshalCommit(all)
	if err != nil {
		m.t.Fatal(err)
	}
	m.put(deltalog.LogDir+deltalog.CommitName(m.version), b)
	if *modelDebug {
		m.t.Logf("version %d: %s", m.version, what)
	}
	m.version++
}

// step commits one random operation and records its changes.
func (m *modelTable) step() {
	v := m.version
	var as []*actions.Action
	live := m.livePaths()
	switch op := m.rng.IntN(12); {
	case op < 3 || len(live) == 0: // append
		for range 1 + m.rng.IntN(3) {
			part := []string{"a", "b", "c"}[m.rng.IntN(3)]
			rows := m.randomRows(m.rng.IntN(20))
			for i := range rows {
				rows[i].part = part
				m.changes = append(m.changes, mchange{rows[i], actions.ChangeInsert, v})
			}
			as = append(as, &actions.Action{Add: m.newFile(part, rows, true)})
		}
		m.commit(as, "WRITE")
	case op < 5: // delete whole files, no change data files
		for _, p := range live[:1+m.rng.IntN(min(2, len(live)))] {
			for _, r := range m.files[p] {
				m.changes = append(m.changes, mchange{r, actions.ChangeDelete, v})
			}
			as = append(as, &actions.Action{Remove: m.remove(p, true)})
		}
		m.commit(as, "DELETE")
	case op < 8: // update or delete some rows of a file, with a change data file
		p := live[m.rng.IntN(len(live))]
		part := m.parts[p]
		var kept, cdcRows []mrow
		var kinds []string
		for _, r := range m.files[p] {
			switch m.rng.IntN(4) {
			case 0:
				cdcRows, kinds = append(cdcRows, r), append(kinds, actions.ChangeDelete)
			case 1:
				nr := r
				nr.v = r.v + "u"
				cdcRows, kinds = append(cdcRows, r, nr), append(kinds, actions.ChangeUpdatePreimage, actions.ChangeUpdatePostimage)
				kept = append(kept, nr)
			default:
				kept = append(kept, r)
			}
		}
		for i, r := range cdcRows {
			m.changes = append(m.changes, mchange{r, kinds[i], v})
		}
		as = append(as, &actions.Action{Remove: m.remove(p, true)})
		if len(kept) > 0 {
			as = append(as, &actions.Action{Add: m.newFile(part, kept, true)})
		}
		m.nfile++
		cdcPath := fmt.Sprintf("_change_data/part=%s/cdc-%05d.parquet", part, m.nfile)
		b := m.parquet(cdcRows, kinds)
		m.put(cdcPath, b)
		pp := part
		as = append(as, &actions.Action{CDC: &actions.AddCDCFile{Path: cdcPath, PartitionValues: map[string]*string{"part": &pp}, Size: int64(len(b))}})
		m.commit(as, "UPDATE")
	case op < 10: // delete or restore rows by deletion vectors
		p := live[m.rng.IntN(len(live))]
		pf := m.phys[p]
		deleted := pf.deleted.Clone()
		for i := range pf.rows {
			switch {
			case m.rng.IntN(3) == 0 && !deleted.Contains(uint64(i)):
				deleted.Add(uint64(i))
			case m.rng.IntN(3) == 0:
				deleted.Remove(uint64(i))
			}
		}
		as = append(as, m.changeDV(p, deleted)...)
		m.commit(as, "DELETE")
	case op < 11: // optimize a partition: no changes
		part := m.parts[live[0]]
		var rows []mrow
		for _, p := range live {
			if m.parts[p] == part {
				rows = append(rows, m.files[p]...)
				as = append(as, &actions.Action{Remove: m.remove(p, false)})
			}
		}
		as = append(as, &actions.Action{Add: m.newFile(part, rows, false)})
		m.commit(as, "OPTIMIZE")
	default: // add the extra column, once; else a commit with no data
		if !m.hasExtr {
			m.hasExtr = true
			m.extraAt = v
			m.commit([]*actions.Action{m.metadata()}, "ADD COLUMNS")
		} else {
			m.commit([]*actions.Action{{Txn: &actions.Txn{AppID: "app", Version: v}}}, "SET TRANSACTION")
		}
	}
}

// newModel creates a model table (version 0) in a fresh store.
func newModel(t *testing.T, rng *rand.Rand, ict *time.Time) *modelTable {
	m := &modelTable{t: t, rng: rng, st: objstore.NewMem(), files: map[string][]mrow{}, parts: map[string]string{}, phys: map[string]*physFile{}, extraAt: -1, ict: ict}
	proto := &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "changeDataFeed"}}
	if ict != nil {
		proto.WriterFeatures = append(proto.WriterFeatures, "inCommitTimestamp")
	}
	m.commit([]*actions.Action{{Protocol: proto}, m.metadata()}, "CREATE TABLE")
	return m
}

// line renders a change in the canonical row encoding, under the end
// version's schema (with the extra column when it exists by then),
// projected onto cols.
func (c mchange) line(withExtra bool, cols []string) string {
	var parts []string
	for _, col := range cols {
		var val string
		switch col {
		case "id":
			val = fmt.Sprint(c.row.id)
		case "part":
			val = fmt.Sprintf("%q", c.row.part)
		case "v":
			val = fmt.Sprintf("%q", c.row.v)
		case "extra":
			if !withExtra {
				continue
			}
			val = "null"
			if c.row.extra != nil {
				val = fmt.Sprint(*c.row.extra)
			}
		}
		parts = append(parts, fmt.Sprintf("%q:%s", col, val))
	}
	parts = append(parts, fmt.Sprintf(`"_change_type":%q`, c.kind), fmt.Sprintf(`"_commit_version":%d`, c.version))
	return "{" + strings.Join(parts, ",") + "}"
}

// TestModelHistories: random histories of appends, deletes, updates and
// deletes with change data files, rows deleted and restored by deletion
// vectors (inline and in files), optimizes and a column addition; every
// random range, filter, projection, batch size and parallelism yields
// exactly the model's change rows.
func TestModelHistories(t *testing.T) {
	histories, versions, queries := 6, 25, 15
	if *modelLong {
		histories, versions, queries = 40, 80, 40
	}
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./cdf -run TestModelHistories -model.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	ctx := context.Background()
	for h := range histories {
		m := newModel(t, rng, nil)
		for range versions {
			m.step()
		}
		latest := m.version - 1
		for q := range queries {
			from := rng.Int64N(latest + 1)
			to := from + rng.Int64N(latest-from+1)
			var opts []cdf.Option
			var want []string
			withExtra := m.extraAt >= 0 && m.extraAt <= to
			cols := []string{"id", "part", "v", "extra"}
			desc := fmt.Sprintf("history %d query %d: versions %d to %d", h, q, from, to)
			if rng.IntN(3) == 0 {
				cols = []string{"v", "id"}
				opts = append(opts, cdf.WithColumns(cols...))
				desc += ", columns v,id"
			}
			keep := func(mchange) bool { return true }
			switch rng.IntN(5) {
			case 0:
				bound := rng.Int64N(m.nextID + 1)
				opts = append(opts, cdf.WithFilter(cmp(expr.Gt, expr.Col("id"), expr.Lit(bound))))
				keep = func(c mchange) bool { return c.row.id > bound }
				desc += fmt.Sprintf(", id > %d", bound)
			case 1:
				opts = append(opts, cdf.WithFilter(cmp(expr.Eq, expr.Col("part"), expr.Lit("b"))))
				keep = func(c mchange) bool { return c.row.part == "b" }
				desc += ", part = 'b'"
			case 2:
				kind := []string{actions.ChangeInsert, actions.ChangeDelete, actions.ChangeUpdatePreimage}[rng.IntN(3)]
				bound := rng.Int64N(m.nextID + 1)
				opts = append(opts, cdf.WithFilter(expr.Or(cmp(expr.Eq, expr.Col("_change_type"), expr.Lit(kind)), cmp(expr.Lt, expr.Col("id"), expr.Lit(bound)))))
				keep = func(c mchange) bool { return c.kind == kind || c.row.id < bound }
				desc += fmt.Sprintf(", _change_type = %q OR id < %d", kind, bound)
			}
			if rng.IntN(2) == 0 {
				opts = append(opts, cdf.WithBatchSize(1+rng.IntN(10)))
			}
			opts = append(opts, cdf.WithParallelism(1+rng.IntN(4)))
			for _, c := range m.changes {
				if c.version >= from && c.version <= to && keep(c) {
					want = append(want, c.line(withExtra, cols))
				}
			}
			slices.Sort(want)
			f, err := cdf.Open(ctx, m.st, "", cdf.Versions(from, to), opts...)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, desc, err)
			}
			got := feedLines(t, f, cdf.CommitTimestampColumn)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %s:\ngot %d rows:\n%s\nwant %d rows:\n%s", seed, desc, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
		}
	}
}

func cmp(op expr.CompareOp, l, r expr.Expr) expr.Expr {
	return &expr.Compare{Op: op, Left: l, Right: r}
}
