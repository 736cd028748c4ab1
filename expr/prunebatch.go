package expr

import (
	"cmp"
	"encoding/binary"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// FileBatch is a batch of data files' partition values and statistics
// held as Arrow columns, which Pruner.PruneBatch evaluates all at once.
// checkpoint.FileColumns is one.
type FileBatch interface {
	// NumFiles is the number of files.
	NumFiles() int
	// PartitionColumn returns the values of partition key (keyed as
	// add.partitionValues is) as a dictionary of strings, null where a
	// value is null; nil when the batch has no such column.
	PartitionColumn(key string) *array.Dictionary
	// HasStats reports whether file i has stats.
	HasStats(i int) bool
	// NumRecordsColumn is the numRecords of the files, nil when none has
	// one.
	NumRecordsColumn() *array.Int64
	// MinColumn and MaxColumn are the bounds of the stats column at a
	// physical path, in the Arrow form of its type (actions.ArrowType);
	// NullCountColumn its null counts. Each is nil when no file has one.
	MinColumn(path []string) arrow.Array
	MaxColumn(path []string) arrow.Array
	NullCountColumn(path []string) *array.Int64
	// Irregular lists the files whose partition values or stats the
	// columns do not hold; PruneBatch evaluates them one at a time from
	// FileValues.
	Irregular() []int
	// FileValues returns file i's partition values and stats (nil
	// without), as MayMatch takes them; paths, when not nil, names the
	// stats columns the caller reads.
	FileValues(i int, paths [][]string) (map[string]*string, *actions.Stats)
}

// PruneBatch decides for every file of b what planning decides for one
// file with MayMatch: partitions[i] is MayMatch(its partition values,
// nil), and stats[i] is MayMatch(its partition values, its stats) (or
// true when it has none). Both slices have b.NumFiles() entries.
//
// It evaluates the predicate over the columns: a subexpression of
// partition columns once per distinct combination of their values, and
// comparisons, IN lists and IS NULL tests of a data column with
// literals over the typed bound and null count columns, by the same
// rules as MayMatch; other expressions, and the files Irregular lists,
// one file at a time.
func (p *Pruner) PruneBatch(b FileBatch, partitions, stats []bool) {
	n := b.NumFiles()
	if n == 0 {
		return
	}
	paths := p.statsPaths()
	if !p.vectorisable(p.expr) {
		for i := 0; i < n; i++ {
			p.pruneOne(b, i, paths, partitions, stats)
		}
		return
	}
	ev := &batchEval{p: p, b: b, n: n, memo: map[string]outcomes{}}
	part := ev.eval(p.expr, false)
	copy(partitions, part.t)
	st := ev.eval(p.expr, true)
	for i := 0; i < n; i++ {
		stats[i] = !b.HasStats(i) || st.t[i]
	}
	for _, i := range b.Irregular() {
		p.pruneOne(b, i, paths, partitions, stats)
	}
}

// pruneOne is PruneBatch for file i alone.
func (p *Pruner) pruneOne(b FileBatch, i int, paths [][]string, partitions, stats []bool) {
	pv, st := b.FileValues(i, paths)
	partitions[i] = p.MayMatch(pv, nil)
	stats[i] = st == nil || p.MayMatch(pv, st)
}

// statsPaths are the physical paths of the data columns the predicate
// reads.
func (p *Pruner) statsPaths() [][]string {
	var out [][]string
	for _, pc := range p.cols {
		if !pc.partition {
			out = append(out, pc.statsPath)
		}
	}
	return out
}

// vectorisable reports whether PruneBatch can evaluate e over columns.
func (p *Pruner) vectorisable(e Expr) bool {
	f := &fileView{p: p}
	if f.onlyPartitions(e) {
		return true
	}
	switch n := e.(type) {
	case *AndExpr:
		return p.vectorisable(n.Left) && p.vectorisable(n.Right)
	case *OrExpr:
		return p.vectorisable(n.Left) && p.vectorisable(n.Right)
	case *NotExpr:
		return p.vectorisable(n.X)
	case *Compare:
		_, _, _, ok := p.columnLiteral(n.Left, n.Right)
		return ok && n.Op != NullSafeEq
	case *In:
		if len(n.List) == 0 {
			return false
		}
		for _, el := range n.List {
			if _, _, _, ok := p.columnLiteral(n.X, el); !ok {
				return false
			}
		}
		return true
	case *IsNull:
		c, ok := n.X.(*Column)
		return ok && p.cols[c.Name()] != nil && !p.cols[c.Name()].partition
	}
	return false
}

// columnLiteral matches a data column compared with a non-null literal
// of its own type, one the typed path handles: colLeft says which side
// the column is on.
func (p *Pruner) columnLiteral(l, r Expr) (*prunedColumn, any, bool, bool) {
	colLeft := true
	c, ok := l.(*Column)
	lit, ok2 := r.(*Literal)
	if !ok || !ok2 {
		colLeft = false
		c, ok = r.(*Column)
		lit, ok2 = l.(*Literal)
	}
	if !ok || !ok2 || lit.Value == nil {
		return nil, nil, false, false
	}
	pc := p.cols[c.Name()]
	if pc == nil || pc.partition {
		return nil, nil, false, false
	}
	if !literalFits(pc.t, lit.Value) {
		return nil, nil, false, false
	}
	return pc, lit.Value, colLeft, true
}

// literalFits reports whether v is a value of type t that the typed path
// compares.
func literalFits(t actions.DataType, v any) bool {
	switch t {
	case actions.TypeByte:
		_, ok := v.(int8)
		return ok
	case actions.TypeShort:
		_, ok := v.(int16)
		return ok
	case actions.TypeInteger:
		_, ok := v.(int32)
		return ok
	case actions.TypeLong:
		_, ok := v.(int64)
		return ok
	case actions.TypeFloat:
		_, ok := v.(float32)
		return ok
	case actions.TypeDouble:
		_, ok := v.(float64)
		return ok
	case actions.TypeString:
		_, ok := v.(string)
		return ok
	case actions.TypeDate:
		_, ok := v.(actions.Date)
		return ok
	case actions.TypeTimestamp:
		_, ok := v.(actions.Timestamp)
		return ok
	case actions.TypeTimestampNTZ:
		_, ok := v.(actions.TimestampNTZ)
		return ok
	}
	return false
}

// tri is the outcomes of an expression for each file of a batch.
type tri struct{ t, f, n []bool }

func newTri(n int) tri { return tri{make([]bool, n), make([]bool, n), make([]bool, n)} }

func (o tri) set(i int, x outcomes) { o.t[i], o.f[i], o.n[i] = x.t, x.f, x.n }

func (o tri) get(i int) outcomes { return outcomes{o.t[i], o.f[i], o.n[i]} }

// batchEval evaluates a vectorisable predicate over a batch.
type batchEval struct {
	p    *Pruner
	b    FileBatch
	n    int
	memo map[string]outcomes // partition subexpressions by expression and values
}

func (ev *batchEval) eval(e Expr, withStats bool) tri {
	out := newTri(ev.n)
	f := &fileView{p: ev.p}
	if f.onlyPartitions(e) {
		ev.partitions(e, out)
		return out
	}
	switch n := e.(type) {
	case *AndExpr:
		l, r := ev.eval(n.Left, withStats), ev.eval(n.Right, withStats)
		for i := range out.t {
			out.set(i, and(l.get(i), r.get(i)))
		}
	case *OrExpr:
		l, r := ev.eval(n.Left, withStats), ev.eval(n.Right, withStats)
		for i := range out.t {
			out.set(i, or(l.get(i), r.get(i)))
		}
	case *NotExpr:
		x := ev.eval(n.X, withStats)
		out.t, out.f, out.n = x.f, x.t, x.n
	case *Compare:
		pc, lit, colLeft, _ := ev.p.columnLiteral(n.Left, n.Right)
		ev.compare(pc, n.Op, lit, colLeft, withStats, out)
	case *In:
		for k, el := range n.List {
			pc, lit, colLeft, _ := ev.p.columnLiteral(n.X, el)
			if k == 0 {
				ev.compare(pc, Eq, lit, colLeft, withStats, out)
				continue
			}
			o := newTri(ev.n)
			ev.compare(pc, Eq, lit, colLeft, withStats, o)
			for i := range out.t {
				a, b := out.get(i), o.get(i)
				out.set(i, outcomes{t: a.t || b.t, f: a.f && b.f, n: a.n && (b.f || b.n) || b.n && (a.f || a.n)})
			}
		}
		if n.Not {
			out.t, out.f = out.f, out.t
		}
	case *IsNull:
		ev.isNull(ev.p.cols[n.X.(*Column).Name()], n.Not, withStats, out)
	}
	return out
}

func and(l, r outcomes) outcomes {
	return outcomes{t: l.t && r.t, f: l.f || r.f, n: l.n && (r.t || r.n) || r.n && (l.t || l.n)}
}

func or(l, r outcomes) outcomes {
	return outcomes{t: l.t || r.t, f: l.f && r.f, n: l.n && (r.f || r.n) || r.n && (l.f || l.n)}
}

// partitions evaluates a predicate of partition columns only, once per
// distinct combination of the values its columns have in the batch.
func (ev *batchEval) partitions(e Expr, out tri) {
	var names []string
	var dicts []*array.Dictionary
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Column); ok {
			name := c.Name()
			for _, have := range names {
				if have == name {
					return true
				}
			}
			names = append(names, name)
			pc := ev.p.cols[name]
			dicts = append(dicts, ev.b.PartitionColumn(pc.keys[0]))
		}
		return true
	})
	prefix := e.String() + "\x00"
	key := make([]byte, 0, len(prefix)+4*len(dicts))
	for i := 0; i < ev.n; i++ {
		key = append(key[:0], prefix...)
		for _, d := range dicts {
			code := int32(-2) // the batch lacks the column
			if d != nil {
				code = -1
				if d.IsValid(i) {
					code = int32(d.GetValueIndex(i))
				}
			}
			key = binary.LittleEndian.AppendUint32(key, uint32(code))
		}
		o, ok := ev.memo[string(key)]
		if !ok {
			pv := map[string]*string{}
			for k, d := range dicts {
				if d == nil {
					continue
				}
				pk := ev.p.cols[names[k]].keys[0]
				if !d.IsValid(i) {
					pv[pk] = nil
					continue
				}
				v := strings.Clone(d.Dictionary().(*array.String).Value(d.GetValueIndex(i)))
				pv[pk] = &v
			}
			o = (&fileView{p: ev.p, pv: pv}).eval(e)
			ev.memo[string(key)] = o
		}
		out.set(i, o)
	}
}

// isNull evaluates col IS [NOT] NULL as fileView does.
func (ev *batchEval) isNull(pc *prunedColumn, not, withStats bool, out tri) {
	nulls, numRecs := ev.counts(pc, withStats)
	for i := 0; i < ev.n; i++ {
		mayNull, allNull := ev.nullness(i, nulls, numRecs, withStats)
		o := outcomes{t: mayNull, f: !allNull}
		if not {
			o = outcomes{t: o.f, f: o.t}
		}
		out.set(i, o)
	}
}

// counts returns the null count and numRecords columns of pc.
func (ev *batchEval) counts(pc *prunedColumn, withStats bool) (*array.Int64, *array.Int64) {
	if !withStats {
		return nil, nil
	}
	return ev.b.NullCountColumn(pc.statsPath), ev.b.NumRecordsColumn()
}

// nullness is statsRange's reading of a file's null count.
func (ev *batchEval) nullness(i int, nulls, numRecs *array.Int64, withStats bool) (mayNull, allNull bool) {
	if !withStats || !ev.b.HasStats(i) || nulls == nil || !nulls.IsValid(i) {
		return true, false
	}
	nc := nulls.Value(i)
	switch {
	case nc == 0:
		return false, false
	case numRecs != nil && numRecs.IsValid(i) && numRecs.Value(i) > 0 && nc >= numRecs.Value(i):
		return true, true
	}
	return true, false
}

// compare evaluates pc op lit (or lit op pc) over the typed bounds.
func (ev *batchEval) compare(pc *prunedColumn, op CompareOp, lit any, colLeft, withStats bool, out tri) {
	nulls, numRecs := ev.counts(pc, withStats)
	var mins, maxs arrow.Array
	if withStats {
		mins, maxs = ev.b.MinColumn(pc.statsPath), ev.b.MaxColumn(pc.statsPath)
	}
	c := cmpCall{ev: ev, op: op, colLeft: colLeft, nulls: nulls, numRecs: numRecs, withStats: withStats, out: out}
	switch v := lit.(type) {
	case int8:
		a, _ := mins.(*array.Int8)
		b, _ := maxs.(*array.Int8)
		runCompare(c, v, valuesOf(a), valuesOf(b), ordered[int8]())
	case int16:
		a, _ := mins.(*array.Int16)
		b, _ := maxs.(*array.Int16)
		runCompare(c, v, valuesOf(a), valuesOf(b), ordered[int16]())
	case int32:
		a, _ := mins.(*array.Int32)
		b, _ := maxs.(*array.Int32)
		runCompare(c, v, valuesOf(a), valuesOf(b), ordered[int32]())
	case int64:
		a, _ := mins.(*array.Int64)
		b, _ := maxs.(*array.Int64)
		runCompare(c, v, valuesOf(a), valuesOf(b), ordered[int64]())
	case float32:
		a, _ := mins.(*array.Float32)
		b, _ := maxs.(*array.Float32)
		runCompare(c, v, valuesOf(a), valuesOf(b), floats[float32]())
	case float64:
		a, _ := mins.(*array.Float64)
		b, _ := maxs.(*array.Float64)
		runCompare(c, v, valuesOf(a), valuesOf(b), floats[float64]())
	case string:
		a, _ := mins.(*array.String)
		b, _ := maxs.(*array.String)
		runCompare(c, v, valuesOf(a), valuesOf(b), stringOrder())
	case actions.Date:
		a, _ := mins.(*array.Date32)
		b, _ := maxs.(*array.Date32)
		runCompare(c, v, convert(valuesOf(a), func(x arrow.Date32) actions.Date { return actions.Date(x) }),
			convert(valuesOf(b), func(x arrow.Date32) actions.Date { return actions.Date(x) }), ordered[actions.Date]())
	case actions.Timestamp:
		a, _ := mins.(*array.Timestamp)
		b, _ := maxs.(*array.Timestamp)
		o := ordered[actions.Timestamp]()
		o.upper = func(x actions.Timestamp) (actions.Timestamp, bool) {
			return actions.Timestamp(satAdd(int64(x), 999)), true
		}
		runCompare(c, v, convert(valuesOf(a), func(x arrow.Timestamp) actions.Timestamp { return actions.Timestamp(x) }),
			convert(valuesOf(b), func(x arrow.Timestamp) actions.Timestamp { return actions.Timestamp(x) }), o)
	case actions.TimestampNTZ:
		a, _ := mins.(*array.Timestamp)
		b, _ := maxs.(*array.Timestamp)
		o := ordered[actions.TimestampNTZ]()
		o.upper = func(x actions.TimestampNTZ) (actions.TimestampNTZ, bool) {
			return actions.TimestampNTZ(satAdd(int64(x), 999)), true
		}
		runCompare(c, v, convert(valuesOf(a), func(x arrow.Timestamp) actions.TimestampNTZ { return actions.TimestampNTZ(x) }),
			convert(valuesOf(b), func(x arrow.Timestamp) actions.TimestampNTZ { return actions.TimestampNTZ(x) }), o)
	}
}

// cmpCall is one comparison's setting.
type cmpCall struct {
	ev             *batchEval
	op             CompareOp
	colLeft        bool
	nulls, numRecs *array.Int64
	withStats      bool
	out            tri
}

// typedArray is an Arrow array of T values.
type typedArray[T any] interface {
	IsValid(i int) bool
	Value(i int) T
}

// valuesOf reads a typed array, or nothing when it is nil.
func valuesOf[T any, A typedArray[T]](a A) func(i int) (T, bool) {
	var zero T
	if any(a) == nil || isNilPointer(a) {
		return func(int) (T, bool) { return zero, false }
	}
	return func(i int) (T, bool) {
		if !a.IsValid(i) {
			return zero, false
		}
		return a.Value(i), true
	}
}

// isNilPointer reports whether a holds a nil pointer (a failed type
// assertion of a nil array).
func isNilPointer(a any) bool {
	switch x := a.(type) {
	case *array.Int8:
		return x == nil
	case *array.Int16:
		return x == nil
	case *array.Int32:
		return x == nil
	case *array.Int64:
		return x == nil
	case *array.Float32:
		return x == nil
	case *array.Float64:
		return x == nil
	case *array.String:
		return x == nil
	case *array.Date32:
		return x == nil
	case *array.Timestamp:
		return x == nil
	}
	return false
}

func convert[A, B any](get func(int) (A, bool), f func(A) B) func(int) (B, bool) {
	return func(i int) (B, bool) {
		v, ok := get(i)
		return f(v), ok
	}
}

// order is how the typed path orders values of T as CompareValues does.
type order[T any] struct {
	cmp   func(a, b T) int
	isNaN func(T) bool
	nan   T    // a NaN of T, for floats
	float bool // a max does not bound NaN
	// upper turns a max stat into an upper bound of the values: false
	// when there is none (a string max that may be a truncated prefix).
	upper func(T) (T, bool)
}

func ordered[T cmp.Ordered]() order[T] {
	return order[T]{cmp: cmp.Compare[T], isNaN: func(T) bool { return false }, upper: func(x T) (T, bool) { return x, true }}
}

func floats[T float32 | float64]() order[T] {
	return order[T]{
		cmp: func(a, b T) int {
			return actions.CompareFloat(float64(a), float64(b))
		},
		isNaN: func(x T) bool { return x != x },
		nan:   T(math.NaN()),
		float: true,
		upper: func(x T) (T, bool) { return x, true },
	}
}

func stringOrder() order[string] {
	return order[string]{
		cmp:   strings.Compare,
		isNaN: func(string) bool { return false },
		upper: func(x string) (string, bool) {
			u := prefixUpperBound(x)
			if u == nil {
				return "", false
			}
			return u.(string), true
		},
	}
}

// span is valueRange for a typed value: [lo, hi], hi unbounded when
// inf, NaN possible when nan.
type span[T any] struct {
	lo, hi T
	inf    bool
	nan    bool
}

// runCompare evaluates one comparison over the batch.
func runCompare[T any](c cmpCall, lit T, mins, maxs func(int) (T, bool), o order[T]) {
	litSpan := span[T]{lo: lit, hi: lit}
	for i := 0; i < c.ev.n; i++ {
		mayNull, allNull := c.ev.nullness(i, c.nulls, c.numRecs, c.withStats)
		if allNull {
			c.out.set(i, outcomes{n: true})
			continue
		}
		lo, ok1 := mins(i)
		hi, ok2 := maxs(i)
		if !c.withStats || !c.ev.b.HasStats(i) || !ok1 || !ok2 {
			c.out.set(i, outcomes{t: true, f: true, n: mayNull})
			continue
		}
		col := span[T]{lo: lo, nan: o.float}
		col.hi, ok2 = o.upper(hi)
		col.inf = !ok2
		l, r := col, litSpan
		if !c.colLeft {
			l, r = litSpan, col
		}
		c.out.set(i, outcomes{t: mayHoldSpan(o, c.op, l, r), f: mayHoldSpan(o, negate(c.op), l, r), n: mayNull})
	}
}

// maxBound is maxOf: the largest value a span may take (NaN when it may
// hold NaN); inf when unbounded.
func maxBound[T any](o order[T], s span[T]) (T, bool) {
	if s.nan {
		return o.nan, false
	}
	return s.hi, s.inf
}

// cmpUpper compares a with an upper bound (v, inf).
func cmpUpper[T any](o order[T], a T, v T, inf bool) int {
	if inf {
		return -1
	}
	return o.cmp(a, v)
}

// mayHoldSpan is mayHold for typed spans.
func mayHoldSpan[T any](o order[T], op CompareOp, l, r span[T]) bool {
	switch op {
	case Lt, Le:
		v, inf := maxBound(o, r)
		c := cmpUpper(o, l.lo, v, inf)
		return c < 0 || op == Le && c == 0
	case Gt, Ge:
		v, inf := maxBound(o, l)
		c := -cmpUpper(o, r.lo, v, inf)
		return c > 0 || op == Ge && c == 0
	case Eq:
		if cmpUpper(o, l.lo, r.hi, r.inf) <= 0 && cmpUpper(o, r.lo, l.hi, l.inf) <= 0 {
			return true
		}
		lNaN := l.nan || !l.inf && o.isNaN(l.hi)
		rNaN := r.nan || !r.inf && o.isNaN(r.hi)
		return lNaN && rNaN
	case Ne:
		single := func(s span[T]) bool { return !s.inf && !s.nan && o.cmp(s.lo, s.hi) == 0 }
		if !single(l) || !single(r) {
			return true
		}
		return o.cmp(l.lo, r.lo) != 0
	}
	return true
}
