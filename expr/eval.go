package expr

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// EvalPredicate evaluates the predicate e on every row of rec and returns
// a boolean array of rec.NumRows() values: true, false or null (SQL's
// unknown; a filter keeps only the true rows). The caller releases it.
//
// Columns are found in rec's schema by name (exactly, else ignoring case),
// struct fields by path (s.x); a row whose struct is null has a null
// field. If e is not bound (see Bind) it is bound against a schema derived
// from rec's Arrow schema; a bound e keeps its types, and columns that
// arrive in another Arrow encoding of the same Delta type (large or view
// strings, dictionaries, timestamps in other units, other integer widths)
// are converted. Evaluation is vectorised: each operator runs one loop
// over a column's typed values.
//
// AND and OR evaluate their right side only where the left does not
// decide the row, so errors (overflow, division by zero, a cast that does
// not fit) are reported only for rows that need the value, as Spark's
// ANSI mode would. All allocation goes through mem.
func EvalPredicate(e Expr, rec arrow.RecordBatch, mem memory.Allocator) (*array.Boolean, error) {
	ev, e, err := newEvaluator(e, rec, mem)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	if err := checkPredicate(e); err != nil {
		return nil, err
	}
	b, err := ev.evalPred(e, nil)
	if err != nil {
		return nil, err
	}
	return ev.boolArray(b), nil
}

// EvalScalar evaluates e on every row of rec and returns its values, one
// per row, in the Arrow form of e's type: Int64 for long, Decimal128 for
// decimals, Timestamp(µs, "UTC") for timestamp, and so on (a reference to
// a string column returns the column as it is, which may be a large or
// view string array). A constant is repeated for every row; an untyped
// NULL gives a Null array. The caller releases the result. See
// EvalPredicate for binding, column lookup and errors.
func EvalScalar(e Expr, rec arrow.RecordBatch, mem memory.Allocator) (arrow.Array, error) {
	ev, e, err := newEvaluator(e, rec, mem)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	v, err := ev.evalVec(e, nil)
	if err != nil {
		return nil, err
	}
	if v.arr != nil {
		return v.arr, nil
	}
	return ev.broadcast(v)
}

// evaluator evaluates bound expressions over one record batch.
type evaluator struct {
	rec   arrow.RecordBatch
	mem   memory.Allocator
	n     int
	cols  map[string]arrow.Array // loaded columns by Column.Name
	konst map[Expr]bool
}

func newEvaluator(e Expr, rec arrow.RecordBatch, mem memory.Allocator) (*evaluator, Expr, error) {
	if e == nil {
		return nil, nil, errors.New("expr: nil expression")
	}
	if rec == nil {
		return nil, nil, errors.New("expr: nil record batch")
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if !IsBound(e) {
		b, err := Bind(e, deltaSchemaOf(rec.Schema()))
		if err != nil {
			return nil, nil, err
		}
		e = b
	}
	return &evaluator{rec: rec, mem: mem, n: int(rec.NumRows()), cols: map[string]arrow.Array{}, konst: map[Expr]bool{}}, e, nil
}

// IsBound reports whether every column e references has a type, as Bind
// leaves them.
func IsBound(e Expr) bool {
	bound := true
	Walk(e, func(n Expr) bool {
		if c, ok := n.(*Column); ok && c.DataType == nil {
			bound = false
		}
		return bound
	})
	return bound
}

func (ev *evaluator) close() {
	for _, a := range ev.cols {
		a.Release()
	}
	ev.cols = nil
}

// vec is an evaluated scalar operand: an array (owned, to be released) or
// a constant of type t.
type vec struct {
	arr arrow.Array
	c   any
	t   actions.DataType
}

func (v vec) release() {
	if v.arr != nil {
		v.arr.Release()
	}
}

func (v vec) isNullConst() bool { return v.arr == nil && v.c == nil }

// valid is the validity bitmap of v's rows (nil: all valid).
func (v vec) valid(n int) []byte {
	if v.arr == nil {
		if v.c == nil {
			return make([]byte, nbytes(n))
		}
		return nil
	}
	return validOf(v.arr)
}

func noColumns(string) (any, bool) { return nil, false }

func (ev *evaluator) isConst(e Expr) bool {
	if c, ok := ev.konst[e]; ok {
		return c
	}
	c := true
	switch x := e.(type) {
	case *Column:
		c = false
	case *Call:
		if f := registry[x.Name]; f == nil || f.nondeterministic {
			c = false
		}
	}
	for _, ch := range children(e) {
		if !ev.isConst(ch) {
			c = false
		}
	}
	ev.konst[e] = c
	return c
}

// evalPred evaluates a boolean expression. mask holds the rows whose
// value matters (nil: all); errors are reported only for those.
func (ev *evaluator) evalPred(e Expr, mask []byte) (bits, error) {
	n := ev.n
	if ev.isConst(e) {
		v, err := evalRow(e, noColumns)
		if err != nil {
			return bits{}, err
		}
		switch v := v.(type) {
		case nil:
			return nullBits(n), nil
		case bool:
			b := bits{val: make([]byte, nbytes(n))}
			if v {
				fill(b.val, 0xFF)
			}
			return b, nil
		}
		return bits{}, fmt.Errorf("expr: %s is not boolean", e)
	}
	switch x := e.(type) {
	case *AndExpr, *OrExpr:
		var l, r Expr
		or := false
		if a, ok := x.(*AndExpr); ok {
			l, r = a.Left, a.Right
		} else {
			o := x.(*OrExpr)
			l, r, or = o.Left, o.Right, true
		}
		lb, err := ev.evalPred(l, mask)
		if err != nil {
			return bits{}, err
		}
		rb, err := ev.evalPred(r, undecided(mask, lb, or, n))
		if err != nil {
			return bits{}, err
		}
		if or {
			return kleeneOr(lb, rb, n), nil
		}
		return kleeneAnd(lb, rb, n), nil
	case *NotExpr:
		b, err := ev.evalPred(x.X, mask)
		if err != nil {
			return bits{}, err
		}
		return kleeneNot(b), nil
	case *Compare:
		l, r, err := ev.evalPair(x.Left, x.Right, mask)
		if err != nil {
			return bits{}, err
		}
		defer l.release()
		defer r.release()
		b, err := ev.compare(x.Op, l, r)
		if err != nil {
			return bits{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return b, nil
	case *In:
		return ev.in(x, mask)
	case *IsNull:
		var valid []byte
		if isBoolNode(x.X) {
			b, err := ev.evalPred(x.X, mask)
			if err != nil {
				return bits{}, err
			}
			valid = b.valid
		} else {
			v, err := ev.evalVec(x.X, mask)
			if err != nil {
				return bits{}, err
			}
			valid = v.valid(n)
			v.release()
		}
		out := bits{val: make([]byte, nbytes(n))}
		switch {
		case valid == nil:
			if x.Not {
				fill(out.val, 0xFF)
			}
		case x.Not:
			copy(out.val, valid)
		default:
			for i := range out.val {
				out.val[i] = ^valid[i]
			}
		}
		return out, nil
	case *Like:
		v, err := ev.evalVec(x.X, mask)
		if err != nil {
			return bits{}, err
		}
		defer v.release()
		b, err := ev.like(x, v)
		if err != nil {
			return bits{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return b, nil
	}
	// A boolean column, cast or other boolean-valued operand.
	v, err := ev.evalVec(e, mask)
	if err != nil {
		return bits{}, err
	}
	defer v.release()
	a, ok := v.arr.(*array.Boolean)
	if !ok {
		return bits{}, fmt.Errorf("expr: %s is not boolean", e)
	}
	return boolBits(a), nil
}

// isBoolNode reports whether e is a node evalPred computes itself.
func isBoolNode(e Expr) bool {
	switch e.(type) {
	case *AndExpr, *OrExpr, *NotExpr, *Compare, *In, *IsNull, *Like:
		return true
	}
	return false
}

func (ev *evaluator) evalPair(l, r Expr, mask []byte) (vec, vec, error) {
	lv, err := ev.evalVec(l, mask)
	if err != nil {
		return vec{}, vec{}, err
	}
	rv, err := ev.evalVec(r, mask)
	if err != nil {
		lv.release()
		return vec{}, vec{}, err
	}
	return lv, rv, nil
}

// evalVec evaluates a scalar expression.
func (ev *evaluator) evalVec(e Expr, mask []byte) (vec, error) {
	if ev.isConst(e) {
		v, err := evalRow(e, noColumns)
		if err != nil {
			return vec{}, err
		}
		return vec{c: v, t: e.Type()}, nil
	}
	switch x := e.(type) {
	case *Column:
		if x.DataType == nil {
			return vec{}, fmt.Errorf("expr: column %s is not bound", x)
		}
		a, err := ev.column(x)
		if err != nil {
			return vec{}, err
		}
		a.Retain()
		return vec{arr: a, t: x.DataType}, nil
	case *Cast:
		if needsRowCast(x) {
			return ev.byRow(x, mask)
		}
		v, err := ev.evalVec(x.X, mask)
		if err != nil {
			return vec{}, err
		}
		defer v.release()
		out, err := ev.cast(v, x.To, mask)
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	case *Arith:
		if isIntervalArith(x) {
			return ev.byRow(x, mask)
		}
		l, r, err := ev.evalPair(x.Left, x.Right, mask)
		if err != nil {
			return vec{}, err
		}
		defer l.release()
		defer r.release()
		out, err := ev.arith(x.Op, l, r, x.Type(), mask)
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	case *Neg:
		v, err := ev.evalVec(x.X, mask)
		if err != nil {
			return vec{}, err
		}
		defer v.release()
		out, err := ev.neg(v, mask)
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	}
	switch x := e.(type) {
	case *Call:
		return ev.call(x, mask)
	case *Case:
		return ev.caseWhen(x, mask)
	case *Subscript, *FieldOf:
		return ev.byRow(e, mask)
	}
	if !isBoolNode(e) {
		return vec{}, fmt.Errorf("expr: cannot evaluate %T", e)
	}
	b, err := ev.evalPred(e, mask)
	if err != nil {
		return vec{}, err
	}
	return vec{arr: ev.boolArray(b), t: actions.TypeBoolean}, nil
}

// column loads a column of the batch in the Arrow form of its Delta type.
func (ev *evaluator) column(c *Column) (arrow.Array, error) {
	name := c.Name()
	if a, ok := ev.cols[name]; ok {
		return a, nil
	}
	schema := ev.rec.Schema()
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	k := indexFold(names, c.Path[0])
	if k < 0 {
		return nil, fmt.Errorf("expr: column %s is not in the batch (columns: %v)", quoteIdent(c.Path[0]), names)
	}
	arr := ev.rec.Column(k)
	arr.Retain()
	for depth, field := range c.Path[1:] {
		st, ok := arr.(*array.Struct)
		if !ok {
			arr.Release()
			return nil, fmt.Errorf("expr: column %s: %s is not a struct in the batch", c, joinPath(c.Path[:depth+1]))
		}
		fields := st.DataType().(*arrow.StructType).Fields()
		fnames := make([]string, len(fields))
		for i, f := range fields {
			fnames[i] = f.Name
		}
		j := indexFold(fnames, field)
		if j < 0 || j >= st.NumField() {
			arr.Release()
			return nil, fmt.Errorf("expr: column %s is not in the batch (%s has fields %v)", c, joinPath(c.Path[:depth+1]), fnames)
		}
		child := withParentNulls(st.Field(j), st, ev.mem)
		arr.Release()
		arr = child
	}
	norm, err := normalize(arr, c.DataType, ev.mem)
	arr.Release()
	if err != nil {
		return nil, fmt.Errorf("expr: column %s: %w", c, err)
	}
	if norm.Len() != ev.n {
		norm.Release()
		return nil, fmt.Errorf("expr: column %s has %d rows, the batch %d", c, norm.Len(), ev.n)
	}
	ev.cols[name] = norm
	return norm, nil
}

func joinPath(p []string) string { return (&Column{Path: p}).String() }

// withParentNulls returns child (retained) with the nulls of its parent
// struct added: a field of a null struct is null.
func withParentNulls(child arrow.Array, parent arrow.Array, mem memory.Allocator) arrow.Array {
	if parent.NullN() == 0 {
		child.Retain()
		return child
	}
	n := child.Len()
	valid := validOf(parent)
	if cv := validOf(child); cv != nil {
		for i := range valid {
			valid[i] &= cv[i]
		}
	}
	d := child.Data()
	off := d.Offset()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	bitutil.CopyBitmap(valid, 0, n, buf.Bytes(), off)
	nulls := n - bitutil.CountSetBits(buf.Bytes(), off, n)
	buffers := append([]*memory.Buffer{buf}, d.Buffers()[1:]...)
	var nd *array.Data
	if d.DataType().ID() == arrow.DICTIONARY {
		nd = array.NewDataWithDictionary(d.DataType(), n, buffers, nulls, off, d.Dictionary().(*array.Data))
	} else {
		nd = array.NewData(d.DataType(), n, buffers, d.Children(), nulls, off)
	}
	buf.Release()
	defer nd.Release()
	return array.MakeFromData(nd)
}

// broadcast repeats a constant for every row.
func (ev *evaluator) broadcast(v vec) (arrow.Array, error) {
	if v.t == nil {
		return array.NewNull(ev.n), nil
	}
	at, err := arrowTypeOf(v.t)
	if err != nil {
		return nil, err
	}
	if v.c == nil {
		return array.MakeArrayOfNull(ev.mem, at, ev.n), nil
	}
	b := array.NewBuilder(ev.mem, at)
	defer b.Release()
	b.Reserve(ev.n)
	for i := 0; i < ev.n; i++ {
		if err := appendValue(b, v.c); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// bits is a boolean vector over the batch's rows: val holds the values
// and valid the validity, bit i for row i; valid nil means all valid.
// Bits of null rows in val are unspecified.
type bits struct {
	val, valid []byte
}

func nbytes(n int) int { return (n + 7) / 8 }

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

func nullBits(n int) bits {
	return bits{val: make([]byte, nbytes(n)), valid: make([]byte, nbytes(n))}
}

func ones(n int) []byte {
	b := make([]byte, nbytes(n))
	fill(b, 0xFF)
	return b
}

// validOf copies an array's validity bitmap to offset 0; nil when the
// array has no nulls.
func validOf(a arrow.Array) []byte {
	if a.NullN() == 0 {
		return nil
	}
	n := a.Len()
	out := make([]byte, nbytes(n))
	if bm := a.NullBitmapBytes(); len(bm) > 0 {
		bitutil.CopyBitmap(bm, a.Data().Offset(), n, out, 0)
	}
	return out
}

// andValid intersects validity bitmaps (nil: all valid).
func andValid(a, b []byte) []byte {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := make([]byte, len(a))
	for i := range out {
		out[i] = a[i] & b[i]
	}
	return out
}

func boolBits(a *array.Boolean) bits {
	n := a.Len()
	out := bits{val: make([]byte, nbytes(n)), valid: validOf(a)}
	if vb := a.Data().Buffers()[1]; vb != nil && n > 0 {
		bitutil.CopyBitmap(vb.Bytes(), a.Data().Offset(), n, out.val, 0)
	}
	return out
}

// undecided narrows mask to the rows where the left side of an AND (or
// OR, when or is set) leaves the result open: not false (not true).
func undecided(mask []byte, l bits, or bool, n int) []byte {
	out := make([]byte, nbytes(n))
	for i := range out {
		decided := l.val[i]
		if !or {
			decided = ^decided
		}
		if l.valid != nil {
			decided &= l.valid[i]
		}
		m := byte(0xFF)
		if mask != nil {
			m = mask[i]
		}
		out[i] = m &^ decided
	}
	return out
}

func kleeneAnd(l, r bits, n int) bits {
	out := bits{val: make([]byte, nbytes(n))}
	if l.valid == nil && r.valid == nil {
		for i := range out.val {
			out.val[i] = l.val[i] & r.val[i]
		}
		return out
	}
	lv, rv := l.valid, r.valid
	if lv == nil {
		lv = ones(n)
	}
	if rv == nil {
		rv = ones(n)
	}
	out.valid = make([]byte, nbytes(n))
	for i := range out.val {
		lf := lv[i] &^ l.val[i]
		rf := rv[i] &^ r.val[i]
		out.valid[i] = lv[i]&rv[i] | lf | rf
		out.val[i] = l.val[i] & r.val[i] & lv[i] & rv[i]
	}
	return out
}

func kleeneOr(l, r bits, n int) bits {
	out := bits{val: make([]byte, nbytes(n))}
	if l.valid == nil && r.valid == nil {
		for i := range out.val {
			out.val[i] = l.val[i] | r.val[i]
		}
		return out
	}
	lv, rv := l.valid, r.valid
	if lv == nil {
		lv = ones(n)
	}
	if rv == nil {
		rv = ones(n)
	}
	out.valid = make([]byte, nbytes(n))
	for i := range out.val {
		lt := lv[i] & l.val[i]
		rt := rv[i] & r.val[i]
		out.valid[i] = lv[i]&rv[i] | lt | rt
		out.val[i] = lt | rt
	}
	return out
}

func kleeneNot(b bits) bits {
	out := bits{val: make([]byte, len(b.val)), valid: b.valid}
	for i := range out.val {
		out.val[i] = ^b.val[i]
	}
	return out
}

// boolArray copies a bits vector into a Boolean array allocated from mem.
func (ev *evaluator) boolArray(b bits) *array.Boolean {
	n := ev.n
	vals := memory.NewResizableBuffer(ev.mem)
	vals.Resize(nbytes(n))
	copy(vals.Bytes(), b.val)
	defer vals.Release()
	var vbuf *memory.Buffer
	nulls := 0
	if b.valid != nil {
		nulls = n - bitutil.CountSetBits(b.valid, 0, n)
	}
	if nulls > 0 {
		vbuf = memory.NewResizableBuffer(ev.mem)
		vbuf.Resize(nbytes(n))
		copy(vbuf.Bytes(), b.valid)
		defer vbuf.Release()
		// Keep null slots false, so that a reader that ignores validity
		// does not take them as matches.
		vb := vals.Bytes()
		for i := range vb {
			vb[i] &= b.valid[i]
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{vbuf, vals}, nil, nulls, 0)
	defer data.Release()
	return array.NewBooleanData(data)
}

// buildFixed allocates a fixed-width array of n values of type dt from
// mem, lets fill write the values, and attaches the validity bitmap
// valid (nil: all valid).
func buildFixed[T arrow.FixedWidthType](mem memory.Allocator, dt arrow.DataType, n int, valid []byte, fill func(out []T) error) (arrow.Array, error) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	var out []T
	if n > 0 {
		out = arrow.GetData[T](buf.Bytes())[:n]
	}
	if err := fill(out); err != nil {
		return nil, err
	}
	var vbuf *memory.Buffer
	nulls := 0
	if valid != nil {
		nulls = n - bitutil.CountSetBits(valid, 0, n)
	}
	if nulls > 0 {
		vbuf = memory.NewResizableBuffer(mem)
		vbuf.Resize(nbytes(n))
		copy(vbuf.Bytes(), valid)
		defer vbuf.Release()
	}
	data := array.NewData(dt, n, []*memory.Buffer{vbuf, buf}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// active reports whether row i matters: it is in mask (nil: all rows)
// and valid (nil: all valid).
func active(mask, valid []byte, i int) bool {
	return (mask == nil || mask[i>>3]&(1<<(i&7)) != 0) && (valid == nil || valid[i>>3]&(1<<(i&7)) != 0)
}
