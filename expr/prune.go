package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// Pruner decides, from a data file's partition values and statistics
// alone, whether the file may hold a row that satisfies a predicate. It
// is safe for concurrent use.
type Pruner struct {
	expr          Expr
	cols          map[string]*prunedColumn // by Column.Name
	partitionOnly bool
	mayFail       bool // evaluation may fail on some row: see AllMatch
}

// prunedColumn is where a column's values are found for a file.
type prunedColumn struct {
	t         actions.DataType
	partition bool
	keys      []string // partitionValues keys to try: the physical name
	statsPath []string // physical path into minValues, maxValues, nullCount
}

// NewPruner prepares the predicate e for pruning the files of the table
// whose configuration is table: e names columns by their logical names
// (it is bound with BindPredicate to the table's schema; errors are those
// of Bind), while partitionValues and stats name them as the table's
// configuration says (physical names under column mapping), so that a
// column renamed, or dropped and added again under its old name, is
// found by what the data files call it. A partition column generated
// from another column (delta.generationExpression CAST(c AS DATE))
// prunes by the predicates on c, as Spark's generated partition columns
// do.
func NewPruner(e Expr, table *actions.TableConfig) (*Pruner, error) {
	schema := table.Schema()
	b, err := BindPredicate(e, schema)
	if err != nil {
		return nil, err
	}
	if derived := generatedPartitionFilters(b, schema, table.PartitionColumns()); len(derived) > 0 {
		// Implied by b for every row: they only let partition values
		// prune through a generated partition column.
		if withDerived, err := BindPredicate(And(append([]Expr{b}, derived...)...), schema); err == nil {
			b = withDerived
		}
	}
	p := &Pruner{expr: b, cols: map[string]*prunedColumn{}, partitionOnly: true, mayFail: mayFail(b)}
	for _, c := range columnsOf(b) {
		_, physical, err := table.PhysicalPath(c.Path)
		if err != nil {
			return nil, &UnknownColumnError{Column: c.Name()}
		}
		pc := &prunedColumn{t: c.DataType, statsPath: physical}
		if len(c.Path) == 1 && indexFold(table.PartitionColumns(), c.Path[0]) >= 0 {
			pc.partition = true
			// Under column mapping only the physical name is a key: a
			// reader must not fall back to the logical one, which may be
			// another column's physical name.
			pc.keys = []string{physical[0]}
		} else {
			p.partitionOnly = false
		}
		p.cols[c.Name()] = pc
	}
	return p, nil
}

// columnsOf lists the distinct column references of e.
func columnsOf(e Expr) []*Column {
	var out []*Column
	seen := map[string]bool{}
	Walk(e, func(n Expr) bool {
		if c, ok := n.(*Column); ok && !seen[c.Name()] {
			seen[c.Name()] = true
			out = append(out, c)
		}
		return true
	})
	return out
}

// Expr is the bound predicate.
func (p *Pruner) Expr() Expr { return p.expr }

// PartitionOnly reports whether the predicate references partition
// columns only, so that MayMatch decides it exactly: true then means
// every row of the file satisfies it.
func (p *Pruner) PartitionOnly() bool { return p.partitionOnly }

// MayMatch reports whether a file with these partition values (keyed as
// add.partitionValues is) and stats (nil when the file has none) may hold
// a row for which the predicate is TRUE. It returns false only when no
// row can be: it evaluates the predicate over what each operand may be
// (TRUE, FALSE or NULL) with SQL's three-valued logic, so NOT, OR and
// NULL are handled soundly. Whatever it cannot use (missing stats or
// column stats, values that do not parse as the column's type, operators
// it cannot bound) counts as "any value", which keeps the file.
//
// Stats are read with the caveats of PROTOCOL.md: a string max may be a
// truncated prefix, a timestamp max is truncated to milliseconds, wide
// bounds (tightBounds false) still bound the values but their null count
// says something only when it is 0 or numRecords, and a float max need
// not count NaN (which Spark orders above every number).
func (p *Pruner) MayMatch(partitionValues map[string]*string, stats *actions.Stats) bool {
	f := &fileView{p: p, pv: partitionValues, stats: stats}
	return f.eval(p.expr).t
}

// AllMatch reports whether every row of a file with these partition
// values and stats satisfies the predicate (is TRUE for it), so that, for
// example, a DELETE can drop the whole file without reading it. Like
// MayMatch it is conservative: it returns true only when the partition
// values and stats prove it.
//
// A predicate whose evaluation may fail on some row (arithmetic, which
// can overflow or divide by zero, and casts that can be out of range) is
// never reported to match all rows of a file with data columns: reading
// the rows would report the error.
func (p *Pruner) AllMatch(partitionValues map[string]*string, stats *actions.Stats) bool {
	if p.mayFail && !p.partitionOnly {
		return false
	}
	f := &fileView{p: p, pv: partitionValues, stats: stats}
	o := f.eval(p.expr)
	return o.t && !o.f && !o.n
}

// mayFail reports whether evaluating e may fail on some value.
func mayFail(e Expr) bool {
	fails := false
	Walk(e, func(n Expr) bool {
		switch n := n.(type) {
		case *Arith, *Neg:
			fails = true
		case *Cast:
			if !safeCast(n.X.Type(), n.To) {
				fails = true
			}
		}
		return !fails
	})
	return fails
}

// safeCast reports whether every value of type from converts to type to
// without error.
func safeCast(from, to actions.DataType) bool {
	switch {
	case from == nil || sameType(from, to):
		return true
	case isIntegral(from) && isIntegral(to):
		return intRank(to) >= intRank(from)
	case isIntegral(from) && isFloating(to):
		return true
	case from == actions.TypeFloat && to == actions.TypeDouble:
		return true
	case isIntegral(from) && isDecimal(to):
		d := to.(*actions.DecimalType)
		return d.Precision-d.Scale >= integralAsDecimal(from).Precision
	case isDecimal(from) && isDecimal(to):
		f, t := from.(*actions.DecimalType), to.(*actions.DecimalType)
		return t.Scale >= f.Scale && t.Precision-t.Scale >= f.Precision-f.Scale
	case isDecimal(from) && isFloating(to):
		return true
	case from == actions.TypeDate && isTimestamp(to), isTimestamp(from) && isTimestamp(to):
		return true
	case to == actions.TypeString:
		return true
	}
	return false
}

// outcomes is the set of values a boolean expression may take over a
// file's rows.
type outcomes struct{ t, f, n bool }

var anyOutcome = outcomes{true, true, true}

type fileView struct {
	p      *Pruner
	pv     map[string]*string
	stats  *actions.Stats
	parsed map[string]any        // partition values parsed, by column name
	ranges map[string]valueRange // data column ranges read from stats
}

func (f *fileView) partitionValue(c *prunedColumn, name string) (any, bool) {
	if v, ok := f.parsed[name]; ok {
		return v, true
	}
	var raw *string
	found := false
	for _, k := range c.keys {
		if raw, found = f.pv[k]; found {
			break
		}
	}
	if !found {
		return nil, false
	}
	v, err := actions.ParsePartitionValue(c.t, raw)
	if err != nil {
		return nil, false
	}
	if f.parsed == nil {
		f.parsed = map[string]any{}
	}
	f.parsed[name] = v
	return v, true
}

// onlyPartitions reports whether every column of e is a partition column.
func (f *fileView) onlyPartitions(e Expr) bool {
	only := true
	Walk(e, func(n Expr) bool {
		if c, ok := n.(*Column); ok {
			if pc := f.p.cols[c.Name()]; pc == nil || !pc.partition {
				only = false
			}
		}
		return only
	})
	return only
}

func (f *fileView) eval(e Expr) outcomes {
	if f.onlyPartitions(e) {
		// Every row has the same value: evaluate it exactly.
		v, err := EvalRow(e, func(name string) (any, bool) {
			pc := f.p.cols[name]
			if pc == nil {
				return nil, false
			}
			return f.partitionValue(pc, name)
		})
		if err != nil {
			return anyOutcome
		}
		switch v {
		case true:
			return outcomes{t: true}
		case false:
			return outcomes{f: true}
		case nil:
			return outcomes{n: true}
		}
		return anyOutcome
	}
	switch n := e.(type) {
	case *AndExpr:
		l, r := f.eval(n.Left), f.eval(n.Right)
		return outcomes{
			t: l.t && r.t,
			f: l.f || r.f,
			n: l.n && (r.t || r.n) || r.n && (l.t || l.n),
		}
	case *OrExpr:
		l, r := f.eval(n.Left), f.eval(n.Right)
		return outcomes{
			t: l.t || r.t,
			f: l.f && r.f,
			n: l.n && (r.f || r.n) || r.n && (l.f || l.n),
		}
	case *NotExpr:
		x := f.eval(n.X)
		return outcomes{t: x.f, f: x.t, n: x.n}
	case *Compare:
		return f.compare(n.Op, n.Left, n.Right)
	case *In:
		out := outcomes{f: true}
		if len(n.List) == 0 {
			return anyOutcome
		}
		for i, el := range n.List {
			o := f.compare(Eq, n.X, el)
			if i == 0 {
				out = o
				continue
			}
			out = outcomes{t: out.t || o.t, f: out.f && o.f, n: out.n && (o.f || o.n) || o.n && (out.f || out.n)}
		}
		if n.Not {
			out = outcomes{t: out.f, f: out.t, n: out.n}
		}
		return out
	case *IsNull:
		r, ok := f.rangeOf(n.X)
		if !ok {
			return outcomes{t: true, f: true}
		}
		isNull := outcomes{t: r.mayNull, f: !r.allNull}
		if n.Not {
			return outcomes{t: isNull.f, f: isNull.t}
		}
		return isNull
	case *Like:
		return f.like(n)
	case *Column:
		if n.DataType == actions.TypeBoolean {
			return f.compare(Eq, n, &Literal{Value: true, DataType: actions.TypeBoolean})
		}
	}
	return anyOutcome
}

// valueRange is what a scalar operand may be over a file's rows: its
// non-null values lie in [lo, hi] (nil: unbounded), plus NaN when nan is
// set; mayNull says some row may be NULL, allNull that every row is.
type valueRange struct {
	lo, hi           any
	bounded          bool // lo and hi are known (each may still be nil: unbounded)
	nan              bool
	mayNull, allNull bool
}

// rangeOf bounds a literal, a column (exactly for a partition column,
// from stats for a data column) or a cast of one; ok is false for other
// expressions.
func (f *fileView) rangeOf(e Expr) (valueRange, bool) {
	switch n := e.(type) {
	case *Literal:
		if n.Value == nil {
			return valueRange{mayNull: true, allNull: true}, true
		}
		return valueRange{lo: n.Value, hi: n.Value, bounded: true}, true
	case *Column:
		pc := f.p.cols[n.Name()]
		if pc == nil {
			return valueRange{}, false
		}
		if pc.partition {
			v, ok := f.partitionValue(pc, n.Name())
			if !ok {
				return valueRange{}, false
			}
			if v == nil {
				return valueRange{mayNull: true, allNull: true}, true
			}
			return valueRange{lo: v, hi: v, bounded: true}, true
		}
		if r, ok := f.ranges[n.Name()]; ok {
			return r, true
		}
		r := f.statsRange(pc)
		if f.ranges == nil {
			f.ranges = map[string]valueRange{}
		}
		f.ranges[n.Name()] = r
		return r, true
	case *Cast:
		r, ok := f.rangeOf(n.X)
		if !ok || !monotoneCast(n.X.Type(), n.To) || r.nan && !isFloating(n.To) {
			return valueRange{}, false
		}
		out := valueRange{bounded: r.bounded, mayNull: r.mayNull, allNull: r.allNull, nan: r.nan && isFloating(n.To)}
		for _, b := range []struct{ in, out *any }{{&r.lo, &out.lo}, {&r.hi, &out.hi}} {
			if *b.in == nil {
				continue
			}
			v, err := castValue(*b.in, n.To)
			if err != nil {
				out.bounded = false
				break
			}
			*b.out = v
		}
		return out, true
	}
	return valueRange{}, false
}

// monotoneCast reports whether a cast from one type to another keeps the
// order of values (a ≤ b implies cast(a) ≤ cast(b)), so that it maps
// bounds to bounds.
func monotoneCast(from, to actions.DataType) bool {
	switch {
	case isNumeric(from) && isNumeric(to):
		return true
	case from == actions.TypeDate && isTimestamp(to):
		return true
	case isTimestamp(from) && isTimestamp(to):
		return true
	}
	return false
}

// statsRange reads a data column's range from the file's stats.
func (f *fileView) statsRange(pc *prunedColumn) valueRange {
	r := valueRange{mayNull: true}
	st := f.stats
	if st == nil {
		return r
	}
	if nc, ok := statInt(lookupStat(st.NullCount, pc.statsPath)); ok {
		switch {
		case nc == 0:
			r.mayNull = false
		case st.NumRecords > 0 && nc >= st.NumRecords:
			// Every (valid) row is null; min and max carry nothing.
			r.allNull = true
			return r
		}
	}
	rawMin, okMin := lookupStatValue(st.MinValues, pc.statsPath)
	rawMax, okMax := lookupStatValue(st.MaxValues, pc.statsPath)
	if !okMin || !okMax {
		return r
	}
	lo, err1 := actions.ParseStatValue(pc.t, rawMin)
	hi, err2 := actions.ParseStatValue(pc.t, rawMax)
	if err1 != nil || err2 != nil || lo == nil || hi == nil {
		return r
	}
	switch pc.t {
	case actions.TypeString:
		hi = prefixUpperBound(hi.(string))
	case actions.TypeBinary:
		if s := prefixUpperBound(string(hi.([]byte))); s != nil {
			hi = []byte(s.(string))
		} else {
			hi = nil
		}
	case actions.TypeTimestamp:
		// Spark truncates timestamp stats to milliseconds.
		hi = actions.Timestamp(satAdd(int64(hi.(actions.Timestamp)), 999))
	case actions.TypeTimestampNTZ:
		hi = actions.TimestampNTZ(satAdd(int64(hi.(actions.TimestampNTZ)), 999))
	case actions.TypeFloat, actions.TypeDouble:
		// Writers that follow Parquet leave NaN out of min and max.
		r.nan = true
	}
	r.lo, r.hi, r.bounded = lo, hi, true
	return r
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// prefixUpperBound is an upper bound of every string that starts with
// max, for a string max stat that may be a truncated prefix: the
// smallest string above all of them (max with its last byte raised), or
// nil (unbounded) when there is none. Tie-breaker characters that some
// writers append to a truncated max are dropped first.
func prefixUpperBound(max string) any {
	for {
		r, size := utf8.DecodeLastRuneInString(max)
		if size == 0 || (r != '\uFFFF' && r != utf8.MaxRune) {
			break
		}
		max = max[:len(max)-size]
	}
	b := []byte(max)
	for len(b) > 0 && b[len(b)-1] == 0xFF {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return nil
	}
	b[len(b)-1]++
	return string(b)
}

// lookupStat walks a nested stats object by path.
func lookupStat(m map[string]any, path []string) any {
	var cur any = m
	for _, p := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = obj[p]; !ok {
			return nil
		}
	}
	return cur
}

// lookupStatValue is lookupStat for a min or max: present, not null and
// not a nested object.
func lookupStatValue(m map[string]any, path []string) (any, bool) {
	v := lookupStat(m, path)
	if v == nil {
		return nil, false
	}
	if _, nested := v.(map[string]any); nested {
		return nil, false
	}
	return v, true
}

func statInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && x >= 0 && x < 1<<53 {
			return int64(x), true
		}
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// compare is the outcomes of l op r over the file.
func (f *fileView) compare(op CompareOp, le, re Expr) outcomes {
	l, okl := f.rangeOf(le)
	r, okr := f.rangeOf(re)
	if op == NullSafeEq {
		switch {
		case okl && okr && l.allNull && r.allNull:
			return outcomes{t: true}
		case okl && l.allNull && okr:
			return outcomes{t: r.mayNull, f: !r.allNull}
		case okr && r.allNull && okl:
			return outcomes{t: l.mayNull, f: !l.allNull}
		}
		eq := f.compareValues(Eq, l, r, okl && okr)
		mayNullL, mayNullR := !okl || l.mayNull, !okr || r.mayNull
		return outcomes{t: eq.t || mayNullL && mayNullR, f: eq.f || mayNullL || mayNullR}
	}
	if okl && l.allNull || okr && r.allNull {
		return outcomes{n: true}
	}
	out := f.compareValues(op, l, r, okl && okr)
	out.n = !okl || !okr || l.mayNull || r.mayNull
	return out
}

// compareValues bounds l op r over the non-null values (t and f only).
func (f *fileView) compareValues(op CompareOp, l, r valueRange, ok bool) outcomes {
	if !ok || !l.bounded || !r.bounded {
		return outcomes{t: true, f: true}
	}
	t, err1 := mayHold(op, l, r)
	fl, err2 := mayHold(negate(op), l, r)
	if err1 != nil || err2 != nil {
		return outcomes{t: true, f: true}
	}
	return outcomes{t: t, f: fl}
}

func negate(op CompareOp) CompareOp {
	switch op {
	case Eq:
		return Ne
	case Ne:
		return Eq
	case Lt:
		return Ge
	case Le:
		return Gt
	case Gt:
		return Le
	case Ge:
		return Lt
	}
	return op
}

// bound compares two bounds where nil is -∞ (lower) or +∞ (upper).
type bound struct {
	v     any
	upper bool
}

func cmpBound(a, b bound) (int, error) {
	switch {
	case a.v == nil && b.v == nil:
		switch {
		case a.upper == b.upper:
			return 0, nil
		case a.upper:
			return 1, nil
		}
		return -1, nil
	case a.v == nil:
		if a.upper {
			return 1, nil
		}
		return -1, nil
	case b.v == nil:
		if b.upper {
			return -1, nil
		}
		return 1, nil
	}
	return compareScalar(a.v, b.v)
}

// nanValue is a NaN of the float type of v.
func nanValue(v any) any {
	if _, ok := v.(float32); ok {
		return float32(math.NaN())
	}
	return math.NaN()
}

// maxOf is the largest value a range may take: NaN when it may hold NaN
// (NaN is the greatest float).
func maxOf(r valueRange) bound {
	if r.nan {
		if r.hi != nil {
			return bound{v: nanValue(r.hi), upper: true}
		}
		if r.lo != nil {
			return bound{v: nanValue(r.lo), upper: true}
		}
	}
	return bound{v: r.hi, upper: true}
}

func minOf(r valueRange) bound { return bound{v: r.lo} }

// single reports whether a range holds exactly one value.
func single(r valueRange) (any, bool) {
	if r.lo == nil || r.hi == nil || r.nan {
		return nil, false
	}
	c, err := compareScalar(r.lo, r.hi)
	if err != nil || c != 0 {
		return nil, false
	}
	return r.lo, true
}

// mayHold reports whether x op y may hold for some x in l and y in r.
func mayHold(op CompareOp, l, r valueRange) (bool, error) {
	switch op {
	case Lt, Le:
		c, err := cmpBound(minOf(l), maxOf(r))
		if err != nil {
			return true, err
		}
		return c < 0 || op == Le && c == 0, nil
	case Gt, Ge:
		c, err := cmpBound(maxOf(l), minOf(r))
		if err != nil {
			return true, err
		}
		return c > 0 || op == Ge && c == 0, nil
	case Eq:
		// The intervals overlap, or both may be NaN.
		c1, err := cmpBound(minOf(l), bound{v: r.hi, upper: true})
		if err != nil {
			return true, err
		}
		c2, err := cmpBound(minOf(r), bound{v: l.hi, upper: true})
		if err != nil {
			return true, err
		}
		if c1 <= 0 && c2 <= 0 {
			return true, nil
		}
		lNaN := l.nan || isNaN(l.hi)
		rNaN := r.nan || isNaN(r.hi)
		return lNaN && rNaN, nil
	case Ne:
		a, ok1 := single(l)
		b, ok2 := single(r)
		if !ok1 || !ok2 {
			return true, nil
		}
		c, err := compareScalar(a, b)
		if err != nil {
			return true, err
		}
		return c != 0, nil
	}
	return true, fmt.Errorf("unexpected operator %s", op)
}

func isNaN(v any) bool {
	switch x := v.(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

// like bounds x LIKE 'prefix%' (or an exact pattern) by the range of
// strings with that prefix; other patterns may be anything.
func (f *fileView) like(n *Like) outcomes {
	r, ok := f.rangeOf(n.X)
	if !ok {
		return anyOutcome
	}
	if r.allNull {
		return outcomes{n: true}
	}
	out := outcomes{t: true, f: true, n: r.mayNull}
	m, err := compileLike(n.Pattern, n.Escape)
	if err != nil || m.prefix == "" || !r.bounded {
		return out
	}
	// Every match lies in [prefix, prefixUpperBound(prefix)).
	pr := valueRange{lo: m.prefix, hi: prefixUpperBound(m.prefix), bounded: true}
	if t, err := mayHold(Eq, r, pr); err == nil && !t {
		out.t = false
	}
	if n.Not {
		out.t, out.f = out.f, out.t
	}
	return out
}
