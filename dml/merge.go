package dml

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowconv"
	"github.com/lakelog/lakelog/reader"
)

// ClauseKind is what a MERGE clause does.
type ClauseKind uint8

// The kinds of MERGE clauses.
const (
	MatchedUpdate ClauseKind = iota + 1
	MatchedDelete
	NotMatchedInsert
	NotMatchedBySourceUpdate
	NotMatchedBySourceDelete
)

// Clause is one WHEN clause of a MERGE. Build it with the When...
// functions.
type Clause struct {
	Kind ClauseKind
	// Condition is the clause's AND condition; nil for none.
	Condition expr.Expr
	// Set are UPDATE's assignments, or INSERT's column values; with All
	// (UPDATE SET *, INSERT *) every target column takes the source column
	// of the same name.
	Set []*expr.Assignment
	All bool
}

// WhenMatchedUpdate is WHEN MATCHED [AND cond] THEN UPDATE SET set...
func WhenMatchedUpdate(cond expr.Expr, set ...*expr.Assignment) Clause {
	return Clause{Kind: MatchedUpdate, Condition: cond, Set: set}
}

// WhenMatchedUpdateAll is WHEN MATCHED [AND cond] THEN UPDATE SET *.
func WhenMatchedUpdateAll(cond expr.Expr) Clause {
	return Clause{Kind: MatchedUpdate, Condition: cond, All: true}
}

// WhenMatchedDelete is WHEN MATCHED [AND cond] THEN DELETE.
func WhenMatchedDelete(cond expr.Expr) Clause { return Clause{Kind: MatchedDelete, Condition: cond} }

// WhenNotMatchedInsert is WHEN NOT MATCHED [AND cond] THEN INSERT, with a
// value for some target columns (the others are NULL).
func WhenNotMatchedInsert(cond expr.Expr, values ...*expr.Assignment) Clause {
	return Clause{Kind: NotMatchedInsert, Condition: cond, Set: values}
}

// WhenNotMatchedInsertAll is WHEN NOT MATCHED [AND cond] THEN INSERT *.
func WhenNotMatchedInsertAll(cond expr.Expr) Clause {
	return Clause{Kind: NotMatchedInsert, Condition: cond, All: true}
}

// WhenNotMatchedBySourceUpdate is WHEN NOT MATCHED BY SOURCE [AND cond]
// THEN UPDATE SET set...
func WhenNotMatchedBySourceUpdate(cond expr.Expr, set ...*expr.Assignment) Clause {
	return Clause{Kind: NotMatchedBySourceUpdate, Condition: cond, Set: set}
}

// WhenNotMatchedBySourceDelete is WHEN NOT MATCHED BY SOURCE [AND cond]
// THEN DELETE.
func WhenNotMatchedBySourceDelete(cond expr.Expr) Clause {
	return Clause{Kind: NotMatchedBySourceDelete, Condition: cond}
}

// ErrDuplicateMatch is returned (wrapped) by Merge when a target row is
// matched by more than one source row and a WHEN MATCHED clause could
// change it: which source row should win is undefined, so Spark refuses
// the MERGE, and so does lakelog. Nothing is committed.
var ErrDuplicateMatch = errors.New("a target row matched more than one source row")

// WithAliases names the target and the source in MERGE's expressions
// (default "target" and "source"). A column name without a qualifier is
// looked up in both and must be in exactly one.
func WithAliases(target, source string) Option {
	return func(c *config) { c.targetAlias, c.sourceAlias = target, source }
}

// boundClause is a clause bound to the joined schema.
type boundClause struct {
	Clause
	cond   expr.Expr   // nil: always
	values []expr.Expr // per target column; nil keeps (update) or NULL (insert)
}

// mergeRows are MERGE's decisions for one target file's updated rows:
// which clause and which source row (-1 for none) each row index takes.
type mergeRows struct {
	row map[int64]mergeRow
}

type mergeRow struct {
	clause int
	source int32
}

// merge is one MERGE in progress.
type merge struct {
	*job
	src        arrow.RecordBatch // the whole source
	srcSchema  *actions.StructType
	joined     *actions.StructType // {target: ..., source: ...}
	tAlias     string
	sAlias     string
	keys       []mergeKey
	residual   expr.Expr // the rest of ON, bound; nil when none
	clauses    []*boundClause
	hasMatched bool
	hasNMBS    bool
	// the source's key index: the first source row of each key and the
	// next row of the same key.
	first   map[string]int32
	firstI  map[int64]int32
	next    []int32
	matched []bool // source rows that matched a target row
	mmu     sync.Mutex
}

// mergeKey is one equality of ON: a top-level target column and a source
// expression.
type mergeKey struct {
	target  *actions.StructField
	tIndex  int // in the table's schema
	source  expr.Expr
	arrowDT arrow.DataType
}

// Merge applies source to the table: Spark's MERGE INTO target USING
// source ON on WHEN ... . Source rows are joined to target rows on the ON
// condition, which must hold at least one equality between a target
// column and a source expression (the hash join keys; the rest of ON is
// checked on each candidate pair). Clauses are tried in order within each
// kind and the first whose condition holds acts, as in SQL:
//
//   - WHEN MATCHED: a target row matched by a source row is updated or
//     deleted. A target row matched by two source rows is an error, as in
//     Spark, and nothing is committed.
//   - WHEN NOT MATCHED: a source row that matched no target row is
//     inserted.
//   - WHEN NOT MATCHED BY SOURCE: a target row no source row matched is
//     updated or deleted.
//
// Only target files that can hold a match are read: without NOT MATCHED
// BY SOURCE clauses, files are pruned by partition values and stats under
// the source's join keys (their values when few, else their range), and
// that predicate and those files are the transaction's read set, so a
// MERGE into one partition rebases over appends to others. Touched files
// are rewritten, or (deletion vectors enabled) their changed rows marked
// deleted and the new versions written; change data is written when the
// table asks for it.
func Merge(ctx context.Context, snap *deltalog.Snapshot, source iter.Seq2[arrow.RecordBatch, error], on expr.Expr, clauses []Clause, opts ...Option) (*Result, error) {
	if err := snap.Supports(deltalog.OpMerge); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	if on == nil {
		return nil, fmt.Errorf("dml: MERGE needs an ON condition")
	}
	if len(clauses) == 0 {
		return nil, fmt.Errorf("dml: MERGE needs at least one WHEN clause")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if res, done := cfg.writer.AlreadyApplied(snap); done {
		return &Result{CommitResult: res}, nil
	}
	m := &merge{job: newJob(ctx, snap, cfg, opMerge), tAlias: cfg.targetAlias, sAlias: cfg.sourceAlias}
	if m.tAlias == "" {
		m.tAlias = "target"
	}
	if m.sAlias == "" {
		m.sAlias = "source"
	}
	if strings.EqualFold(m.tAlias, m.sAlias) {
		return nil, fmt.Errorf("dml: MERGE: the target and the source have the same alias %q", m.tAlias)
	}
	if err := m.readSource(source); err != nil {
		return nil, err
	}
	defer m.src.Release()
	if err := m.bind(on, clauses); err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	if err := m.indexSource(); err != nil {
		return nil, err
	}
	targets, err := m.planTargets()
	if err != nil {
		return nil, err
	}
	m.update = m.updateRows
	m.inserts = m.insertRows
	return m.rewrite(targets, m.params(on))
}

// readSource reads the whole source into one batch.
func (m *merge) readSource(source iter.Seq2[arrow.RecordBatch, error]) error {
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var schema *arrow.Schema
	for rec, err := range source {
		if err != nil {
			return fmt.Errorf("dml: MERGE: source: %w", err)
		}
		if schema == nil {
			schema = rec.Schema()
		} else if !schema.Equal(rec.Schema()) {
			return fmt.Errorf("dml: MERGE: source batches have different schemas: %s and %s", schema, rec.Schema())
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	if schema == nil {
		return fmt.Errorf("dml: MERGE: the source yielded no batch (and so no schema)")
	}
	src, err := concatBatches(recs, m.mem)
	if err != nil {
		return fmt.Errorf("dml: MERGE: source: %w", err)
	}
	m.src = src
	n := src.NumRows()
	if n > math.MaxInt32 {
		return fmt.Errorf("dml: MERGE: the source has %d rows; at most %d are supported", n, math.MaxInt32)
	}
	ss, err := actions.FromArrowSchema(schema)
	if err != nil {
		return fmt.Errorf("dml: MERGE: source: %w", err)
	}
	m.srcSchema = ss
	m.count("sourceRows", n)
	return nil
}

// bind resolves ON and the clauses against {target, source}.
func (m *merge) bind(on expr.Expr, clauses []Clause) error {
	table := m.snap.Schema()
	m.joined = &actions.StructType{Fields: []*actions.StructField{
		{Name: m.tAlias, Type: table, Nullable: true},
		{Name: m.sAlias, Type: m.srcSchema, Nullable: true},
	}}
	on, err := m.qualify(on)
	if err != nil {
		return fmt.Errorf("ON: %w", err)
	}
	if _, err := expr.BindPredicate(on, m.joined); err != nil {
		return fmt.Errorf("ON: %w", err)
	}
	var rest []expr.Expr
	for _, c := range expr.Conjuncts(on) {
		if k, ok := m.joinKey(c); ok {
			m.keys = append(m.keys, k)
			continue
		}
		rest = append(rest, c)
	}
	if len(m.keys) == 0 {
		return fmt.Errorf("ON %s: needs an equality between a target column and a source expression (target.k = source.k)", on)
	}
	if len(rest) > 0 {
		if m.residual, err = expr.BindPredicate(expr.And(rest...), m.joined); err != nil {
			return fmt.Errorf("ON: %w", err)
		}
	}
	for i, c := range clauses {
		bc := &boundClause{Clause: c}
		if c.Condition != nil {
			cond, err := m.qualify(c.Condition)
			if err == nil {
				err = m.checkSides(c.Kind, cond)
			}
			if err == nil {
				bc.cond, err = expr.BindPredicate(cond, m.joined)
			}
			if err != nil {
				return fmt.Errorf("clause %d (%s) condition: %w", i+1, c.Kind, err)
			}
		}
		if err := m.bindValues(bc); err != nil {
			return fmt.Errorf("clause %d (%s): %w", i+1, c.Kind, err)
		}
		switch c.Kind {
		case MatchedUpdate, MatchedDelete:
			m.hasMatched = true
		case NotMatchedBySourceUpdate, NotMatchedBySourceDelete:
			m.hasNMBS = true
		case NotMatchedInsert:
		default:
			return fmt.Errorf("clause %d: unknown kind %d", i+1, c.Kind)
		}
		m.clauses = append(m.clauses, bc)
	}
	return nil
}

func (k ClauseKind) String() string {
	switch k {
	case MatchedUpdate:
		return "WHEN MATCHED THEN UPDATE"
	case MatchedDelete:
		return "WHEN MATCHED THEN DELETE"
	case NotMatchedInsert:
		return "WHEN NOT MATCHED THEN INSERT"
	case NotMatchedBySourceUpdate:
		return "WHEN NOT MATCHED BY SOURCE THEN UPDATE"
	case NotMatchedBySourceDelete:
		return "WHEN NOT MATCHED BY SOURCE THEN DELETE"
	}
	return fmt.Sprintf("clause kind %d", uint8(k))
}

// bindValues binds a clause's assignments, one per target column.
func (m *merge) bindValues(bc *boundClause) error {
	if bc.Kind == MatchedDelete || bc.Kind == NotMatchedBySourceDelete {
		if len(bc.Set) > 0 || bc.All {
			return fmt.Errorf("a DELETE clause takes no assignments")
		}
		return nil
	}
	table := m.snap.Schema()
	bc.values = make([]expr.Expr, len(table.Fields))
	if bc.All {
		if bc.Kind == NotMatchedBySourceUpdate {
			return fmt.Errorf("UPDATE SET * needs a source row; NOT MATCHED BY SOURCE has none")
		}
		for i, f := range table.Fields {
			si := fieldIndex(m.srcSchema, f.Name)
			if si < 0 {
				return fmt.Errorf("the source has no column %q for %s * (source columns: %s)", f.Name, map[bool]string{true: "INSERT", false: "UPDATE SET"}[bc.Kind == NotMatchedInsert], strings.Join(m.srcSchema.Names(), ", "))
			}
			v, err := expr.BindAssignment(expr.Col(m.sAlias, m.srcSchema.Fields[si].Name), m.joined, f.Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
			bc.values[i] = v
		}
		return nil
	}
	if len(bc.Set) == 0 {
		return fmt.Errorf("no assignments")
	}
	for _, a := range bc.Set {
		p := a.Column.Path
		if len(p) == 2 && strings.EqualFold(p[0], m.tAlias) {
			p = p[1:]
		}
		if len(p) != 1 {
			return fmt.Errorf("SET %s: only top-level target columns can be assigned", a.Column)
		}
		i := fieldIndex(table, p[0])
		if i < 0 {
			return fmt.Errorf("SET %s: %w", a.Column, &expr.UnknownColumnError{Column: p[0], Known: table.Names()})
		}
		if bc.values[i] != nil {
			return fmt.Errorf("column %s is assigned twice", table.Fields[i].Name)
		}
		val, err := m.qualify(a.Value)
		if err == nil {
			err = m.checkSides(bc.Kind, val)
		}
		if err != nil {
			return fmt.Errorf("SET %s: %w", table.Fields[i].Name, err)
		}
		v, err := expr.BindAssignment(val, m.joined, table.Fields[i].Type)
		if err != nil {
			return fmt.Errorf("SET %s: %w", table.Fields[i].Name, err)
		}
		bc.values[i] = v
	}
	return nil
}

// checkSides refuses references to the side a clause kind has no row of.
func (m *merge) checkSides(kind ClauseKind, e expr.Expr) error {
	var bad string
	expr.Walk(e, func(n expr.Expr) bool {
		c, ok := n.(*expr.Column)
		if !ok {
			return true
		}
		switch {
		case kind == NotMatchedInsert && strings.EqualFold(c.Path[0], m.tAlias):
			bad = fmt.Sprintf("%s refers to the target, which has no row for a source row that matched none", c)
		case (kind == NotMatchedBySourceUpdate || kind == NotMatchedBySourceDelete) && strings.EqualFold(c.Path[0], m.sAlias):
			bad = fmt.Sprintf("%s refers to the source, which has no row for a target row that matched none", c)
		}
		return bad == ""
	})
	if bad != "" {
		return fmt.Errorf("%s", bad)
	}
	return nil
}

// qualify returns a copy of e whose column references all start with the
// target's or the source's alias.
func (m *merge) qualify(e expr.Expr) (expr.Expr, error) {
	c, err := expr.Parse(e.String()) // a deep copy
	if err != nil {
		return nil, err
	}
	table := m.snap.Schema()
	var ferr error
	expr.Walk(c, func(n expr.Expr) bool {
		col, ok := n.(*expr.Column)
		if !ok || ferr != nil {
			return ferr == nil
		}
		head := col.Path[0]
		if len(col.Path) > 1 && (strings.EqualFold(head, m.tAlias) || strings.EqualFold(head, m.sAlias)) {
			return true
		}
		inT := fieldIndex(table, head) >= 0
		inS := fieldIndex(m.srcSchema, head) >= 0
		switch {
		case inT && inS:
			ferr = fmt.Errorf("column %s is ambiguous: both the target and the source have it; write %s.%s or %s.%s", col, m.tAlias, head, m.sAlias, head)
		case inT:
			col.Path = append([]string{m.tAlias}, col.Path...)
		case inS:
			col.Path = append([]string{m.sAlias}, col.Path...)
		default:
			ferr = &expr.UnknownColumnError{Column: col.Name(), Known: append(prefixed(m.tAlias, table.Names()), prefixed(m.sAlias, m.srcSchema.Names())...)}
		}
		return ferr == nil
	})
	return c, ferr
}

func prefixed(alias string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = alias + "." + n
	}
	return out
}

// joinKey recognizes target.col = <source expression> (either way round).
func (m *merge) joinKey(c expr.Expr) (mergeKey, bool) {
	cmp, ok := c.(*expr.Compare)
	if !ok || cmp.Op != expr.Eq {
		return mergeKey{}, false
	}
	for _, pair := range [][2]expr.Expr{{cmp.Left, cmp.Right}, {cmp.Right, cmp.Left}} {
		col, ok := pair[0].(*expr.Column)
		if !ok || len(col.Path) != 2 || !strings.EqualFold(col.Path[0], m.tAlias) || !m.onlySide(pair[1], m.sAlias) {
			continue
		}
		table := m.snap.Schema()
		i := fieldIndex(table, col.Path[1])
		if i < 0 {
			continue
		}
		f := table.Fields[i]
		if !keyType(f.Type) {
			continue
		}
		src, err := expr.BindAssignment(pair[1], m.joined, f.Type)
		if err != nil {
			continue
		}
		dt, err := actions.ArrowType(f.Type)
		if err != nil {
			continue
		}
		return mergeKey{target: f, tIndex: i, source: src, arrowDT: dt}, true
	}
	return mergeKey{}, false
}

// keyType reports whether a column of type t can be a hash join key.
func keyType(t actions.DataType) bool {
	switch t.(type) {
	case *actions.StructType, *actions.ArrayType, *actions.MapType:
		return false
	}
	return t != actions.TypeFloat && t != actions.TypeDouble
}

// onlySide reports whether every column e references is on side alias.
func (m *merge) onlySide(e expr.Expr, alias string) bool {
	ok, any := true, false
	expr.Walk(e, func(n expr.Expr) bool {
		if c, isCol := n.(*expr.Column); isCol {
			any = true
			if !strings.EqualFold(c.Path[0], alias) {
				ok = false
			}
		}
		return ok
	})
	return ok && any
}

// indexSource builds the hash index of the source's join keys.
func (m *merge) indexSource() error {
	n := int(m.src.NumRows())
	keys, err := m.sourceKeys()
	if err != nil {
		return err
	}
	defer releaseAll(keys)
	m.next = make([]int32, n)
	m.matched = make([]bool, n)
	if ints := intKeys(keys); ints != nil {
		m.firstI = make(map[int64]int32, n)
		for i := n - 1; i >= 0; i-- {
			if keys[0].IsNull(i) {
				m.next[i] = -2
				continue
			}
			v := ints(i)
			if f, ok := m.firstI[v]; ok {
				m.next[i] = f
			} else {
				m.next[i] = -1
			}
			m.firstI[v] = int32(i)
		}
		return nil
	}
	m.first = make(map[string]int32, n)
	var buf []byte
	for i := n - 1; i >= 0; i-- {
		var ok bool
		buf, ok = appendKey(buf[:0], keys, i)
		if !ok {
			m.next[i] = -2
			continue
		}
		if f, ok := m.first[string(buf)]; ok {
			m.next[i] = f
		} else {
			m.next[i] = -1
		}
		m.first[string(buf)] = int32(i)
	}
	return nil
}

// sourceKeys evaluates the join keys' source expressions over the source,
// in the target columns' types.
func (m *merge) sourceKeys() ([]arrow.Array, error) {
	j, err := m.joinedBatch(nil, nil, m.src, nil, int(m.src.NumRows()))
	if err != nil {
		return nil, err
	}
	defer j.Release()
	out := make([]arrow.Array, len(m.keys))
	for i, k := range m.keys {
		v, err := expr.EvalScalar(k.source, j, m.mem)
		if err == nil {
			out[i], err = arrowconv.Conform(m.ctx, m.mem, v, k.arrowDT)
			v.Release()
		}
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("dml: MERGE: source key %s: %w", k.source, err)
		}
	}
	return out, nil
}

// intKeys returns a row's key as an int64 when there is one key of an
// integer, date or timestamp type; else nil.
func intKeys(keys []arrow.Array) func(i int) int64 {
	if len(keys) != 1 {
		return nil
	}
	switch a := keys[0].(type) {
	case *array.Int64:
		return func(i int) int64 { return a.Value(i) }
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Date32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Timestamp:
		return func(i int) int64 { return int64(a.Value(i)) }
	}
	return nil
}

// appendKey appends row i's key to dst; false when a key is NULL (which
// equals nothing).
func appendKey(dst []byte, keys []arrow.Array, i int) ([]byte, bool) {
	for _, k := range keys {
		if k.IsNull(i) {
			return dst, false
		}
		switch a := k.(type) {
		case *array.String:
			dst = binary.AppendUvarint(dst, uint64(len(a.Value(i))))
			dst = append(dst, a.Value(i)...)
		case *array.Binary:
			dst = binary.AppendUvarint(dst, uint64(len(a.Value(i))))
			dst = append(dst, a.Value(i)...)
		default:
			v, _ := actions.ArrowValue(k, i)
			s := fmt.Sprint(v)
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst, true
}

// planTargets plans the target files that can hold a match and finds,
// reading only the columns ON and the clause conditions need, what
// happens to each of their rows.
func (m *merge) planTargets() ([]*target, error) {
	table := m.snap.Schema()
	need := map[string]bool{}
	for _, k := range m.keys {
		need[k.target.Name] = true
	}
	collect := func(e expr.Expr) {
		if e == nil {
			return
		}
		expr.Walk(e, func(n expr.Expr) bool {
			if c, ok := n.(*expr.Column); ok && len(c.Path) > 1 && strings.EqualFold(c.Path[0], m.tAlias) {
				need[c.Path[1]] = true
			}
			return true
		})
	}
	collect(m.residual)
	for _, c := range m.clauses {
		collect(c.cond)
	}
	var cols []string
	for _, f := range table.Fields {
		if need[f.Name] {
			cols = append(cols, f.Name)
		}
	}
	opts := []reader.Option{reader.WithColumns(cols...), reader.WithRowIndex(), reader.WithAllocator(m.mem), reader.RecordReads(m.tx)}
	if !m.hasNMBS {
		f, err := m.pruneFilter()
		if err != nil {
			return nil, err
		}
		opts = append(opts, reader.WithFilter(f))
	}
	scan, err := reader.NewScan(m.snap, opts...)
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	var targets []*target
	for f, err := range scan.Files(m.ctx) {
		if err != nil {
			return nil, fmt.Errorf("dml: MERGE: %w", err)
		}
		targets = append(targets, newTarget(f))
	}
	// The filter only prunes files: every row of a planned file is joined.
	all, err := reader.NewScan(m.snap, reader.WithColumns(cols...), reader.WithRowIndex(), reader.WithAllocator(m.mem))
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	t0 := time.Now()
	err = m.forEachFile(targets, func(t *target) error {
		for rec, err := range all.ReadFile(m.ctx, t.file) {
			if err != nil {
				return err
			}
			if err := m.joinBatch(t, rec); err != nil {
				return err
			}
		}
		return nil
	})
	m.scanMs += time.Since(t0).Milliseconds()
	if err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	return targets, nil
}

// pruneFilter is a predicate on the target's key columns that every
// target row matching a source row satisfies: the keys' values when there
// are few, else their range. FALSE when no source row has a key.
func (m *merge) pruneFilter() (expr.Expr, error) {
	keys, err := m.sourceKeys()
	if err != nil {
		return nil, err
	}
	defer releaseAll(keys)
	var conj []expr.Expr
	for i, k := range m.keys {
		arr := keys[i]
		distinct := map[any]bool{}
		var lo, hi any
		for r := 0; r < arr.Len(); r++ {
			v, ok := actions.ArrowValue(arr, r)
			if !ok || v == nil {
				continue
			}
			if len(distinct) <= maxInList {
				distinct[fmt.Sprint(v)] = true
			}
			if lo == nil {
				lo, hi = v, v
				continue
			}
			if c, err := actions.CompareValues(v, lo); err == nil && c < 0 {
				lo = v
			}
			if c, err := actions.CompareValues(v, hi); err == nil && c > 0 {
				hi = v
			}
		}
		col := expr.Col(k.target.Name)
		switch {
		case lo == nil:
			return expr.Lit(false), nil
		case len(distinct) <= maxInList:
			seen := map[string]bool{}
			var list []expr.Expr
			for r := 0; r < arr.Len(); r++ {
				v, ok := actions.ArrowValue(arr, r)
				if !ok || v == nil || seen[fmt.Sprint(v)] {
					continue
				}
				seen[fmt.Sprint(v)] = true
				list = append(list, literalOf(v, k.target.Type))
			}
			conj = append(conj, &expr.In{X: col, List: list})
		default:
			conj = append(conj, &expr.Compare{Op: expr.Ge, Left: col, Right: literalOf(lo, k.target.Type)},
				&expr.Compare{Op: expr.Le, Left: col, Right: literalOf(hi, k.target.Type)})
		}
	}
	return expr.And(conj...), nil
}

// maxInList is the most distinct source keys pruned by value (an IN list);
// with more, by their range.
const maxInList = 64

func literalOf(v any, t actions.DataType) expr.Expr {
	return &expr.Literal{Value: v, DataType: t}
}

// joinBatch joins one batch of a target file (the needed columns and the
// row index) with the source and records what happens to each row.
func (m *merge) joinBatch(t *target, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	idx := rec.Column(int(rec.NumCols()) - 1).(*array.Int64).Int64Values()
	tkeys := make([]arrow.Array, len(m.keys))
	for i, k := range m.keys {
		c := rec.Column(rec.Schema().FieldIndices(k.target.Name)[0])
		var err error
		if tkeys[i], err = arrowconv.Conform(m.ctx, m.mem, c, k.arrowDT); err != nil {
			releaseAll(tkeys)
			return err
		}
	}
	defer releaseAll(tkeys)
	// Candidate pairs (target row, source row) by key.
	var tRows, sRows []int32
	ints := intKeys(tkeys)
	var buf []byte
	for i := range n {
		var s int32 = -1
		if ints != nil {
			if !tkeys[0].IsNull(i) {
				if f, ok := m.firstI[ints(i)]; ok {
					s = f
				}
			}
		} else {
			var ok bool
			if buf, ok = appendKey(buf[:0], tkeys, i); ok {
				if f, found := m.first[string(buf)]; found {
					s = f
				}
			}
		}
		for ; s >= 0; s = m.next[s] {
			tRows = append(tRows, int32(i))
			sRows = append(sRows, s)
		}
	}
	if m.residual != nil && len(tRows) > 0 {
		j, err := m.joinedBatch(rec, tRows, m.src, sRows, len(tRows))
		if err != nil {
			return err
		}
		mask, err := expr.EvalPredicate(m.residual, j, m.mem)
		j.Release()
		if err != nil {
			return fmt.Errorf("ON: %w", err)
		}
		k := 0
		for i := range tRows {
			if mask.IsValid(i) && mask.Value(i) {
				tRows[k], sRows[k] = tRows[i], sRows[i]
				k++
			}
		}
		mask.Release()
		tRows, sRows = tRows[:k], sRows[:k]
	}
	matchedTarget := make([]bool, n)
	firstSource := map[int32]int32{}
	for i, tr := range tRows {
		if matchedTarget[tr] && m.hasMatched {
			return fmt.Errorf("%w: %s: the row at index %d is matched by source rows %d and %d (counting from 1); deduplicate the source on the join keys", ErrDuplicateMatch, t.file.Add.Path, idx[tr], firstSource[tr]+1, sRows[i]+1)
		}
		matchedTarget[tr] = true
		firstSource[tr] = sRows[i]
	}
	if len(sRows) > 0 {
		m.mmu.Lock()
		for _, s := range sRows {
			m.matched[s] = true
		}
		m.mmu.Unlock()
	}
	if m.hasMatched && len(tRows) > 0 {
		if err := m.decide(t, rec, tRows, sRows, idx, true); err != nil {
			return err
		}
	}
	if m.hasNMBS {
		var rest []int32
		for i := range n {
			if !matchedTarget[i] {
				rest = append(rest, int32(i))
			}
		}
		if len(rest) > 0 {
			if err := m.decide(t, rec, rest, nil, idx, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// decide runs the matched (or not-matched-by-source) clauses in order on
// the given target rows (with their source rows, or none) and records the
// first clause that acts on each.
func (m *merge) decide(t *target, rec arrow.RecordBatch, tRows, sRows []int32, idx []int64, matched bool) error {
	j, err := m.joinedBatch(rec, tRows, m.src, sRows, len(tRows))
	if err != nil {
		return err
	}
	defer j.Release()
	open := make([]bool, len(tRows))
	for i := range open {
		open[i] = true
	}
	for ci, c := range m.clauses {
		isMatched := c.Kind == MatchedUpdate || c.Kind == MatchedDelete
		isNMBS := c.Kind == NotMatchedBySourceUpdate || c.Kind == NotMatchedBySourceDelete
		if matched && !isMatched || !matched && !isNMBS {
			continue
		}
		var mask *array.Boolean
		if c.cond != nil {
			if mask, err = expr.EvalPredicate(c.cond, j, m.mem); err != nil {
				return fmt.Errorf("clause %d condition: %w", ci+1, err)
			}
		}
		for i := range open {
			if !open[i] || mask != nil && !(mask.IsValid(i) && mask.Value(i)) {
				continue
			}
			open[i] = false
			ri := idx[tRows[i]]
			switch c.Kind {
			case MatchedDelete, NotMatchedBySourceDelete:
				t.deleted.Add(uint64(ri))
				if matched {
					m.count("matchedDeleted", 1)
				}
			default:
				var s int32 = -1
				if sRows != nil {
					s = sRows[i]
				}
				t.updated.Add(uint64(ri))
				if t.merge == nil {
					t.merge = &mergeRows{row: map[int64]mergeRow{}}
				}
				t.merge.row[ri] = mergeRow{clause: ci, source: s}
				if matched {
					m.count("matchedUpdated", 1)
				}
			}
		}
		if mask != nil {
			mask.Release()
		}
	}
	return nil
}

// joinedBatch is a batch of two struct columns, the target's (rows tRows
// of tRec; all NULL when tRec is nil) and the source's (rows sRows of
// sRec; all NULL when sRows is nil and tRec is not), n rows.
func (m *merge) joinedBatch(tRec arrow.RecordBatch, tRows []int32, sRec arrow.RecordBatch, sRows []int32, n int) (arrow.RecordBatch, error) {
	side := func(rec arrow.RecordBatch, rows []int32, schema *actions.StructType, useAll bool) (arrow.Array, error) {
		if rec == nil || (rows == nil && !useAll) {
			dt, err := actions.ArrowType(schema)
			if err != nil {
				return nil, err
			}
			return array.MakeArrayOfNull(m.mem, dt, n), nil
		}
		fields := rec.Schema().Fields()
		cols := make([]arrow.Array, 0, len(fields))
		names := make([]string, 0, len(fields))
		defer releaseAll(cols)
		var ind arrow.Array
		if rows != nil {
			b := array.NewInt32Builder(m.mem)
			b.AppendValues(rows, nil)
			ind = b.NewArray()
			b.Release()
			defer ind.Release()
		}
		for i, f := range fields {
			if f.Name == reader.RowIndexColumn {
				continue
			}
			c := rec.Column(i)
			if ind != nil {
				taken, err := compute.TakeArray(m.ctx, c, ind)
				if err != nil {
					return nil, err
				}
				cols = append(cols, taken)
			} else {
				c.Retain()
				cols = append(cols, c)
			}
			names = append(names, f.Name)
		}
		return array.NewStructArray(cols, names)
	}
	t, err := side(tRec, tRows, m.snap.Schema(), false)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	s, err := side(sRec, sRows, m.srcSchema, tRec == nil)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: m.tAlias, Type: t.DataType(), Nullable: true}, {Name: m.sAlias, Type: s.DataType(), Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{t, s}, int64(n)), nil
}

// updateRows computes the new versions of a target file's updated rows
// (the table's columns and the row index).
func (m *merge) updateRows(t *target, rows arrow.RecordBatch) (arrow.RecordBatch, error) {
	idx := rows.Column(int(rows.NumCols()) - 1).(*array.Int64).Int64Values()
	byClause := map[int][]int{}
	for i, ri := range idx {
		r, ok := t.merge.row[ri]
		if !ok {
			return nil, fmt.Errorf("dml: MERGE: %s: no decision for row %d", t.file.Add.Path, ri)
		}
		byClause[r.clause] = append(byClause[r.clause], i)
	}
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, ci := range slices.Sorted(maps.Keys(byClause)) {
		pos := byClause[ci]
		tRows := make([]int32, len(pos))
		var sRows []int32
		for k, p := range pos {
			tRows[k] = int32(p)
			if s := t.merge.row[idx[p]].source; s >= 0 {
				sRows = append(sRows, s)
			}
		}
		if len(sRows) != len(pos) {
			sRows = nil
		}
		j, err := m.joinedBatch(rows, tRows, m.src, sRows, len(pos))
		if err != nil {
			return nil, err
		}
		tcol := j.Column(0).(*array.Struct)
		out, err := m.evalValues(m.clauses[ci], j, tcol)
		j.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, out)
	}
	return concatBatches(parts, m.mem)
}

// evalValues evaluates a clause's values over a joined batch; a column
// without a value keeps the target's (keep non-nil) or is NULL.
func (m *merge) evalValues(c *boundClause, j arrow.RecordBatch, keep *array.Struct) (arrow.RecordBatch, error) {
	table := m.snap.Schema()
	sc, err := actions.ToArrowSchema(table, false, "")
	if err != nil {
		return nil, err
	}
	n := int(j.NumRows())
	cols := make([]arrow.Array, len(table.Fields))
	defer releaseAll(cols)
	for i, f := range table.Fields {
		dt := sc.Field(i).Type
		var v arrow.Array
		switch {
		case c.values[i] != nil:
			if v, err = expr.EvalScalar(c.values[i], j, m.mem); err != nil {
				return nil, fmt.Errorf("dml: MERGE: %s: column %s: %w", c.Kind, f.Name, err)
			}
		case keep != nil:
			v = keep.Field(i)
			v.Retain()
		default:
			v = array.MakeArrayOfNull(m.mem, dt, n)
		}
		if v.DataType().ID() == arrow.NULL {
			v.Release()
			v = array.MakeArrayOfNull(m.mem, dt, n)
		}
		cols[i], err = arrowconv.Conform(m.ctx, m.mem, v, dt)
		v.Release()
		if err != nil {
			return nil, fmt.Errorf("dml: MERGE: %s: column %s: %w", c.Kind, f.Name, err)
		}
	}
	return array.NewRecordBatch(sc, cols, int64(n)), nil
}

// insertRows yields the rows the NOT MATCHED clauses insert.
func (m *merge) insertRows(yield func(arrow.RecordBatch, error) bool) {
	var open []int32
	for i, hit := range m.matched {
		if !hit {
			open = append(open, int32(i))
		}
	}
	for ci, c := range m.clauses {
		if c.Kind != NotMatchedInsert || len(open) == 0 {
			continue
		}
		j, err := m.joinedBatch(nil, nil, m.src, open, len(open))
		if err != nil {
			yield(nil, err)
			return
		}
		var take []int32
		rest := open[:0:0]
		if c.cond != nil {
			mask, err := expr.EvalPredicate(c.cond, j, m.mem)
			if err != nil {
				j.Release()
				yield(nil, fmt.Errorf("dml: MERGE: clause %d condition: %w", ci+1, err))
				return
			}
			for i, s := range open {
				if mask.IsValid(i) && mask.Value(i) {
					take = append(take, s)
				} else {
					rest = append(rest, s)
				}
			}
			mask.Release()
		} else {
			take = open
		}
		j.Release()
		open = rest
		if len(take) == 0 {
			continue
		}
		j, err = m.joinedBatch(nil, nil, m.src, take, len(take))
		if err != nil {
			yield(nil, err)
			return
		}
		out, err := m.evalValues(c, j, nil)
		j.Release()
		if err != nil {
			yield(nil, err)
			return
		}
		ok := yield(out, nil)
		out.Release()
		if !ok {
			return
		}
	}
}

// params are MERGE's operationParameters, as Spark records them.
func (m *merge) params(on expr.Expr) map[string]any {
	type pred struct {
		Predicate  string `json:"predicate,omitempty"`
		ActionType string `json:"actionType"`
	}
	var matched, notMatched, nmbs []pred
	for _, c := range m.clauses {
		p := pred{}
		if c.Condition != nil {
			p.Predicate = c.Condition.String()
		}
		switch c.Kind {
		case MatchedUpdate:
			p.ActionType = "update"
			matched = append(matched, p)
		case MatchedDelete:
			p.ActionType = "delete"
			matched = append(matched, p)
		case NotMatchedInsert:
			p.ActionType = "insert"
			notMatched = append(notMatched, p)
		case NotMatchedBySourceUpdate:
			p.ActionType = "update"
			nmbs = append(nmbs, p)
		case NotMatchedBySourceDelete:
			p.ActionType = "delete"
			nmbs = append(nmbs, p)
		}
	}
	orEmpty := func(p []pred) string {
		if p == nil {
			return "[]"
		}
		return jsonText(p)
	}
	return map[string]any{
		"predicate":                    jsonText(on.String()),
		"matchedPredicates":            orEmpty(matched),
		"notMatchedPredicates":         orEmpty(notMatched),
		"notMatchedBySourcePredicates": orEmpty(nmbs),
	}
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// concatBatches concatenates batches of one schema into one.
func concatBatches(parts []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	sc := parts[0].Schema()
	cols := make([]arrow.Array, sc.NumFields())
	defer releaseAll(cols)
	var n int64
	for _, p := range parts {
		n += p.NumRows()
	}
	for i := range cols {
		arrs := make([]arrow.Array, len(parts))
		for k, p := range parts {
			arrs[k] = p.Column(i)
		}
		var err error
		if cols[i], err = array.Concatenate(arrs, mem); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(sc, cols, n), nil
}
