package expr

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// The kernels: each switches on the operand type once and then loops over
// the typed values. An operand is an array (index i) or a constant (index
// 0): the index mask is -1 or 0, so one loop serves both.

// physical maps a constant to the Go type Arrow stores it as.
func physical(c any) any {
	switch x := c.(type) {
	case actions.Date:
		return arrow.Date32(x)
	case actions.Timestamp:
		return arrow.Timestamp(x)
	case actions.TimestampNTZ:
		return arrow.Timestamp(x)
	}
	return c
}

// fixedOperand returns v's values as a []T and the index mask.
func fixedOperand[T arrow.FixedWidthType](v vec) ([]T, int, error) {
	if v.arr == nil {
		c, ok := physical(v.c).(T)
		if !ok {
			var zero T
			return nil, 0, fmt.Errorf("constant %v of Go type %T where %T is expected", v.c, v.c, zero)
		}
		return []T{c}, 0, nil
	}
	var zero T
	d := v.arr.Data()
	if d.Len() > 0 {
		buf := d.Buffers()[1]
		if buf == nil || buf.Len() < (d.Offset()+d.Len())*int(unsafe.Sizeof(zero)) {
			return nil, 0, fmt.Errorf("array of type %s does not hold %T values", v.arr.DataType(), zero)
		}
	}
	return arrow.GetValues[T](d, 1), -1, nil
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type float interface{ ~float32 | ~float64 }

func setBit(out []byte, i int) { out[i>>3] |= 1 << uint(i&7) }

// opTable gives, for a comparison operator, the outcome for a three-way
// result of -1, 0 and +1.
func opTable(op CompareOp) [3]bool {
	return [3]bool{compareOpResult(op, -1), compareOpResult(op, 0), compareOpResult(op, 1)}
}

// b2i is 1 for true: the compiler turns it into a flag move, so that
// the comparison loops below have no data-dependent branches.
func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func cmpIntegers[T integer](op CompareOp, a []T, am int, b []T, bm int, n int) []byte {
	out := make([]byte, nbytes(n))
	switch op {
	case Eq, NullSafeEq:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] == b[i&bm]) << uint(i&7)
		}
	case Ne:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] != b[i&bm]) << uint(i&7)
		}
	case Lt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] < b[i&bm]) << uint(i&7)
		}
	case Le:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] <= b[i&bm]) << uint(i&7)
		}
	case Gt:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] > b[i&bm]) << uint(i&7)
		}
	case Ge:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2i(a[i&am] >= b[i&bm]) << uint(i&7)
		}
	}
	return out
}

// cmpFloats compares in Spark's order without branches: NaN is the
// greatest value and equals itself (x < y is also true when only y is
// NaN, and x = y when both are), and -0 equals 0.
func cmpFloats[T float](op CompareOp, a []T, am int, b []T, bm int, n int) []byte {
	out := make([]byte, nbytes(n))
	lt := func(x, y T) byte { return b2i(x < y) | b2i(y != y)&b2i(x == x) }
	eq := func(x, y T) byte { return b2i(x == y) | b2i(x != x)&b2i(y != y) }
	switch op {
	case Eq, NullSafeEq:
		for i := 0; i < n; i++ {
			out[i>>3] |= eq(a[i&am], b[i&bm]) << uint(i&7)
		}
	case Ne:
		for i := 0; i < n; i++ {
			out[i>>3] |= (1 ^ eq(a[i&am], b[i&bm])) << uint(i&7)
		}
	case Lt:
		for i := 0; i < n; i++ {
			out[i>>3] |= lt(a[i&am], b[i&bm]) << uint(i&7)
		}
	case Ge:
		for i := 0; i < n; i++ {
			out[i>>3] |= (1 ^ lt(a[i&am], b[i&bm])) << uint(i&7)
		}
	case Gt:
		for i := 0; i < n; i++ {
			out[i>>3] |= lt(b[i&bm], a[i&am]) << uint(i&7)
		}
	case Le:
		for i := 0; i < n; i++ {
			out[i>>3] |= (1 ^ lt(b[i&bm], a[i&am])) << uint(i&7)
		}
	}
	return out
}

func cmpDecimals(op CompareOp, a []decimal128.Num, am int, b []decimal128.Num, bm int, n int) []byte {
	out := make([]byte, nbytes(n))
	tbl := opTable(op)
	for i := 0; i < n; i++ {
		if tbl[a[i&am].Cmp(b[i&bm])+1] {
			setBit(out, i)
		}
	}
	return out
}

// strOperand reads strings or binaries of any Arrow layout without
// copying.
type strOperand struct {
	off32 []int32
	off64 []int64
	data  []byte
	view  func(int) string
	c     string
	konst bool
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func newStrOperand(v vec) (*strOperand, error) {
	if v.arr == nil {
		switch c := v.c.(type) {
		case string:
			return &strOperand{c: c, konst: true}, nil
		case []byte:
			return &strOperand{c: string(c), konst: true}, nil
		}
		return nil, fmt.Errorf("constant %v of Go type %T where a string is expected", v.c, v.c)
	}
	data := func() []byte {
		if b := v.arr.Data().Buffers()[2]; b != nil {
			return b.Bytes()
		}
		return nil
	}
	switch a := v.arr.(type) {
	case *array.String:
		return &strOperand{off32: a.ValueOffsets(), data: data()}, nil
	case *array.Binary:
		return &strOperand{off32: a.ValueOffsets(), data: data()}, nil
	case *array.LargeString:
		return &strOperand{off64: a.ValueOffsets(), data: data()}, nil
	case *array.LargeBinary:
		return &strOperand{off64: a.ValueOffsets(), data: data()}, nil
	case *array.StringView:
		return &strOperand{view: a.Value}, nil
	case *array.BinaryView:
		return &strOperand{view: a.ValueString}, nil
	}
	return nil, fmt.Errorf("array of type %s does not hold strings", v.arr.DataType())
}

func (s *strOperand) at(i int) string {
	switch {
	case s.konst:
		return s.c
	case s.off32 != nil:
		return unsafeString(s.data[s.off32[i]:s.off32[i+1]])
	case s.off64 != nil:
		return unsafeString(s.data[s.off64[i]:s.off64[i+1]])
	}
	return s.view(i)
}

func cmpStrings(op CompareOp, a, b *strOperand, n int) []byte {
	out := make([]byte, nbytes(n))
	// The common case, a string column against a constant, in one loop.
	if a.off32 != nil && b.konst && (op == Eq || op == Ne || op == NullSafeEq) {
		want := op != Ne
		for i := 0; i < n; i++ {
			if (unsafeString(a.data[a.off32[i]:a.off32[i+1]]) == b.c) == want {
				setBit(out, i)
			}
		}
		return out
	}
	tbl := opTable(op)
	for i := 0; i < n; i++ {
		if tbl[strings.Compare(a.at(i), b.at(i))+1] {
			setBit(out, i)
		}
	}
	return out
}

// boolOperand returns a boolean operand's values as a bitmap.
func boolOperand(v vec, n int) ([]byte, error) {
	if v.arr == nil {
		c, ok := v.c.(bool)
		if !ok {
			return nil, fmt.Errorf("constant %v of Go type %T where a boolean is expected", v.c, v.c)
		}
		out := make([]byte, nbytes(n))
		if c {
			fill(out, 0xFF)
		}
		return out, nil
	}
	a, ok := v.arr.(*array.Boolean)
	if !ok {
		return nil, fmt.Errorf("array of type %s does not hold booleans", v.arr.DataType())
	}
	return boolBits(a).val, nil
}

func cmpBools(op CompareOp, a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range out {
		x, y := a[i], b[i]
		switch op {
		case Eq, NullSafeEq:
			out[i] = ^(x ^ y)
		case Ne:
			out[i] = x ^ y
		case Lt:
			out[i] = ^x & y
		case Le:
			out[i] = ^x | y
		case Gt:
			out[i] = x &^ y
		case Ge:
			out[i] = x | ^y
		}
	}
	return out
}

// compare evaluates l op r. Bind gave both sides one type (decimals may
// differ in precision only).
func (ev *evaluator) compare(op CompareOp, l, r vec) (bits, error) {
	n := ev.n
	if l.isNullConst() || r.isNullConst() {
		if op != NullSafeEq {
			return nullBits(n), nil
		}
		// x <=> NULL is x IS NULL.
		other := l
		if l.isNullConst() {
			other = r
		}
		out := bits{val: make([]byte, nbytes(n))}
		if v := other.valid(n); v != nil {
			for i := range out.val {
				out.val[i] = ^v[i]
			}
		}
		return out, nil
	}
	t := l.t
	if t == nil {
		t = r.t
	}
	val, err := compareKernel(op, l, r, t, n)
	if err != nil {
		return bits{}, err
	}
	lv, rv := l.valid(n), r.valid(n)
	if op != NullSafeEq {
		return bits{val: val, valid: andValid(lv, rv)}, nil
	}
	if lv == nil && rv == nil {
		return bits{val: val}, nil
	}
	if lv == nil {
		lv = ones(n)
	}
	if rv == nil {
		rv = ones(n)
	}
	for i := range val {
		val[i] = val[i]&lv[i]&rv[i] | ^lv[i]&^rv[i]
	}
	return bits{val: val}, nil
}

func compareKernel(op CompareOp, l, r vec, t actions.DataType, n int) ([]byte, error) {
	switch t {
	case actions.TypeByte:
		return cmpFixed(op, l, r, n, cmpIntegers[int8])
	case actions.TypeShort:
		return cmpFixed(op, l, r, n, cmpIntegers[int16])
	case actions.TypeInteger:
		return cmpFixed(op, l, r, n, cmpIntegers[int32])
	case actions.TypeLong:
		return cmpFixed(op, l, r, n, cmpIntegers[int64])
	case actions.TypeDate:
		return cmpFixed(op, l, r, n, cmpIntegers[arrow.Date32])
	case actions.TypeTimestamp, actions.TypeTimestampNTZ:
		return cmpFixed(op, l, r, n, cmpIntegers[arrow.Timestamp])
	case actions.TypeFloat:
		return cmpFixed(op, l, r, n, cmpFloats[float32])
	case actions.TypeDouble:
		return cmpFixed(op, l, r, n, cmpFloats[float64])
	case actions.TypeString, actions.TypeBinary:
		a, err := newStrOperand(l)
		if err != nil {
			return nil, err
		}
		b, err := newStrOperand(r)
		if err != nil {
			return nil, err
		}
		return cmpStrings(op, a, b, n), nil
	case actions.TypeBoolean:
		a, err := boolOperand(l, n)
		if err != nil {
			return nil, err
		}
		b, err := boolOperand(r, n)
		if err != nil {
			return nil, err
		}
		return cmpBools(op, a, b), nil
	}
	if _, ok := t.(*actions.DecimalType); ok {
		a, am, b, bm, err := decimalOperands(l, r)
		if err != nil {
			return nil, err
		}
		return cmpDecimals(op, a, am, b, bm, n), nil
	}
	return nil, fmt.Errorf("cannot compare values of type %s", t)
}

func cmpFixed[T arrow.FixedWidthType](op CompareOp, l, r vec, n int, kernel func(CompareOp, []T, int, []T, int, int) []byte) ([]byte, error) {
	a, am, err := fixedOperand[T](l)
	if err != nil {
		return nil, err
	}
	b, bm, err := fixedOperand[T](r)
	if err != nil {
		return nil, err
	}
	return kernel(op, a, am, b, bm, n), nil
}

// arrayScale is the scale of a decimal array.
func arrayScale(a arrow.Array) int {
	if d, ok := a.DataType().(*arrow.Decimal128Type); ok {
		return int(d.Scale)
	}
	return 0
}

// decimalOperand returns a decimal operand's values at the given scale
// (a constant is rescaled; an array must have that scale).
func decimalOperand(v vec, scale int) ([]decimal128.Num, int, error) {
	if v.arr == nil {
		d, ok := v.c.(actions.Decimal)
		if !ok {
			return nil, 0, fmt.Errorf("constant %v of Go type %T where a decimal is expected", v.c, v.c)
		}
		num, err := decimalToNum(d, scale)
		if err != nil {
			return nil, 0, err
		}
		return []decimal128.Num{num}, 0, nil
	}
	if s := arrayScale(v.arr); s != scale {
		return nil, 0, fmt.Errorf("decimal scales differ (%d and %d)", s, scale)
	}
	return fixedOperand[decimal128.Num](v)
}

// decimalOperands returns two decimal operands at one scale: an array's,
// or the larger constant scale.
func decimalOperands(l, r vec) ([]decimal128.Num, int, []decimal128.Num, int, error) {
	scale := 0
	switch {
	case l.arr != nil:
		scale = arrayScale(l.arr)
	case r.arr != nil:
		scale = arrayScale(r.arr)
	}
	a, am, err := decimalOperand(l, scale)
	if err != nil {
		return nil, 0, nil, 0, err
	}
	b, bm, err := decimalOperand(r, scale)
	if err != nil {
		return nil, 0, nil, 0, err
	}
	return a, am, b, bm, nil
}

// in evaluates X IN (list): OR of equalities under three-valued logic,
// with a hash set for long lists of constants.
func (ev *evaluator) in(n *In, mask []byte) (bits, error) {
	x, err := ev.evalVec(n.X, mask)
	if err != nil {
		return bits{}, err
	}
	defer x.release()
	elems := make([]vec, 0, len(n.List))
	defer func() {
		for _, e := range elems {
			e.release()
		}
	}()
	allConst := true
	for _, e := range n.List {
		v, err := ev.evalVec(e, mask)
		if err != nil {
			return bits{}, err
		}
		elems = append(elems, v)
		allConst = allConst && v.arr == nil
	}
	var out bits
	done := false
	if allConst && len(elems) > 8 && x.arr != nil {
		out, done, err = ev.inSet(x, elems)
		if err != nil {
			return bits{}, fmt.Errorf("expr: %s: %w", n, err)
		}
	}
	if !done {
		out = bits{val: make([]byte, nbytes(ev.n))}
		for _, e := range elems {
			b, err := ev.compare(Eq, x, e)
			if err != nil {
				return bits{}, fmt.Errorf("expr: %s: %w", n, err)
			}
			out = kleeneOr(out, b, ev.n)
		}
	}
	if n.Not {
		out = kleeneNot(out)
	}
	return out, nil
}

// inSet is IN against a set of constants, for the types with an exact Go
// key; done is false for the others.
func (ev *evaluator) inSet(x vec, elems []vec) (bits, bool, error) {
	n := ev.n
	hasNull := false
	var member func(i int) bool
	switch t := x.t; {
	case isIntegral(t) || t == actions.TypeDate || isTimestamp(t):
		set := map[int64]struct{}{}
		for _, e := range elems {
			if e.c == nil {
				hasNull = true
				continue
			}
			k, ok := constInt64(e.c)
			if !ok {
				return bits{}, false, fmt.Errorf("constant %v of Go type %T in a list of %s", e.c, e.c, t)
			}
			set[k] = struct{}{}
		}
		vals, err := int64s(x)
		if err != nil {
			return bits{}, false, err
		}
		member = func(i int) bool { _, ok := set[vals(i)]; return ok }
	case t == actions.TypeString || t == actions.TypeBinary:
		set := map[string]struct{}{}
		for _, e := range elems {
			switch c := e.c.(type) {
			case nil:
				hasNull = true
			case string:
				set[c] = struct{}{}
			case []byte:
				set[string(c)] = struct{}{}
			default:
				return bits{}, false, fmt.Errorf("constant %v of Go type %T in a list of %s", e.c, e.c, t)
			}
		}
		s, err := newStrOperand(x)
		if err != nil {
			return bits{}, false, err
		}
		member = func(i int) bool { _, ok := set[s.at(i)]; return ok }
	case isDecimal(t):
		scale := arrayScale(x.arr)
		set := map[decimal128.Num]struct{}{}
		for _, e := range elems {
			if e.c == nil {
				hasNull = true
				continue
			}
			num, _, err := decimalOperand(e, scale)
			if err != nil {
				return bits{}, false, err
			}
			set[num[0]] = struct{}{}
		}
		vals, _, err := fixedOperand[decimal128.Num](x)
		if err != nil {
			return bits{}, false, err
		}
		member = func(i int) bool { _, ok := set[vals[i]]; return ok }
	default:
		return bits{}, false, nil
	}
	out := bits{val: make([]byte, nbytes(n)), valid: x.valid(n)}
	var unknown []byte
	if hasNull {
		unknown = make([]byte, nbytes(n))
	}
	for i := 0; i < n; i++ {
		if member(i) {
			setBit(out.val, i)
		} else if hasNull {
			setBit(unknown, i)
		}
	}
	if hasNull {
		// A row that matches nothing is unknown when the list has a NULL.
		if out.valid == nil {
			out.valid = ones(n)
		}
		for i := range out.valid {
			out.valid[i] &^= unknown[i]
		}
	}
	return out, true, nil
}

func constInt64(c any) (int64, bool) {
	switch x := c.(type) {
	case actions.Date:
		return int64(x), true
	case actions.Timestamp:
		return int64(x), true
	case actions.TimestampNTZ:
		return int64(x), true
	}
	return asInt64(c)
}

// int64s returns an accessor for an integral, date or timestamp operand
// as int64.
func int64s(v vec) (func(int) int64, error) {
	if v.arr == nil {
		c, ok := constInt64(v.c)
		if !ok {
			return nil, fmt.Errorf("constant %v of Go type %T where an integer is expected", v.c, v.c)
		}
		return func(int) int64 { return c }, nil
	}
	switch a := v.arr.(type) {
	case *array.Int8:
		s := a.Int8Values()
		return func(i int) int64 { return int64(s[i]) }, nil
	case *array.Int16:
		s := a.Int16Values()
		return func(i int) int64 { return int64(s[i]) }, nil
	case *array.Int32:
		s := a.Int32Values()
		return func(i int) int64 { return int64(s[i]) }, nil
	case *array.Int64:
		s := a.Int64Values()
		return func(i int) int64 { return s[i] }, nil
	case *array.Date32:
		s := a.Date32Values()
		return func(i int) int64 { return int64(s[i]) }, nil
	case *array.Timestamp:
		s := a.TimestampValues()
		return func(i int) int64 { return int64(s[i]) }, nil
	}
	return nil, fmt.Errorf("array of type %s does not hold integers", v.arr.DataType())
}

func (ev *evaluator) like(l *Like, v vec) (bits, error) {
	n := ev.n
	if v.isNullConst() {
		return nullBits(n), nil
	}
	m, err := compileLike(l.Pattern, l.Escape)
	if err != nil {
		return bits{}, err
	}
	s, err := newStrOperand(v)
	if err != nil {
		return bits{}, err
	}
	out := bits{val: make([]byte, nbytes(n)), valid: v.valid(n)}
	want := !l.Not
	for i := 0; i < n; i++ {
		if m.match(s.at(i)) == want {
			setBit(out.val, i)
		}
	}
	return out, nil
}

// cast converts an operand to type to.
func (ev *evaluator) cast(v vec, to actions.DataType, mask []byte) (vec, error) {
	if v.arr == nil {
		c, err := castValue(v.c, to)
		return vec{c: c, t: to}, err
	}
	from := v.t
	if sameType(from, to) {
		v.arr.Retain()
		return vec{arr: v.arr, t: to}, nil
	}
	at, err := arrowTypeOf(to)
	if err != nil {
		return vec{}, err
	}
	n := ev.n
	valid := v.valid(n)
	var out arrow.Array
	switch {
	case isIntegral(from) && isIntegral(to):
		lo, hi := intRange(to)
		src, err2 := int64s(v)
		if err2 != nil {
			return vec{}, err2
		}
		check := func(i int) (int64, error) {
			x := src(i)
			if (x < lo || x > hi) && active(mask, valid, i) {
				return 0, fmt.Errorf("%d out of range for %s: %w", x, to, errOverflow)
			}
			return x, nil
		}
		switch to {
		case actions.TypeByte:
			out, err = buildFixed(ev.mem, at, n, valid, func(o []int8) error { return castInts(o, check) })
		case actions.TypeShort:
			out, err = buildFixed(ev.mem, at, n, valid, func(o []int16) error { return castInts(o, check) })
		case actions.TypeInteger:
			out, err = buildFixed(ev.mem, at, n, valid, func(o []int32) error { return castInts(o, check) })
		default:
			out, err = buildFixed(ev.mem, at, n, valid, func(o []int64) error { return castInts(o, check) })
		}
	case isIntegral(from) && isFloating(to):
		src, err2 := int64s(v)
		if err2 != nil {
			return vec{}, err2
		}
		if to == actions.TypeFloat {
			out, err = buildFixed(ev.mem, at, n, valid, func(o []float32) error {
				for i := range o {
					o[i] = float32(src(i))
				}
				return nil
			})
		} else {
			out, err = buildFixed(ev.mem, at, n, valid, func(o []float64) error {
				for i := range o {
					o[i] = float64(src(i))
				}
				return nil
			})
		}
	case from == actions.TypeFloat && to == actions.TypeDouble:
		src, _, err2 := fixedOperand[float32](v)
		if err2 != nil {
			return vec{}, err2
		}
		out, err = buildFixed(ev.mem, at, n, valid, func(o []float64) error {
			for i, x := range src {
				o[i] = float64(x)
			}
			return nil
		})
	case from == actions.TypeDate && isTimestamp(to):
		src, _, err2 := fixedOperand[arrow.Date32](v)
		if err2 != nil {
			return vec{}, err2
		}
		out, err = buildFixed(ev.mem, at, n, valid, func(o []arrow.Timestamp) error {
			for i, d := range src {
				o[i] = arrow.Timestamp(int64(d) * microsPerDay)
			}
			return nil
		})
	case isTimestamp(from) && isTimestamp(to):
		// The same microseconds under the other label.
		d := v.arr.Data()
		nd := array.NewData(at, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		out = array.MakeFromData(nd)
		nd.Release()
	default:
		out, err = ev.castByValue(v.arr, to, at, mask, valid)
	}
	if err != nil {
		return vec{}, err
	}
	return vec{arr: out, t: to}, nil
}

func castInts[T integer](o []T, src func(int) (int64, error)) error {
	for i := range o {
		x, err := src(i)
		if err != nil {
			return err
		}
		o[i] = T(x)
	}
	return nil
}

// castByValue is the general cast: value by value through castValue.
// Rows that do not matter (outside mask) become null.
func (ev *evaluator) castByValue(arr arrow.Array, to actions.DataType, at arrow.DataType, mask, valid []byte) (arrow.Array, error) {
	b := array.NewBuilder(ev.mem, at)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := 0; i < arr.Len(); i++ {
		if !active(mask, valid, i) {
			b.AppendNull()
			continue
		}
		c, err := castValue(valueAt(arr, i), to)
		if err != nil {
			return nil, err
		}
		if err := appendValue(b, c); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// arith evaluates l op r with result type rt.
func (ev *evaluator) arith(op ArithOp, l, r vec, rt actions.DataType, mask []byte) (vec, error) {
	if l.isNullConst() || r.isNullConst() {
		return vec{t: rt}, nil
	}
	if rt == nil {
		return vec{}, fmt.Errorf("result type unknown")
	}
	at, err := arrowTypeOf(rt)
	if err != nil {
		return vec{}, err
	}
	n := ev.n
	valid := andValid(l.valid(n), r.valid(n))
	var out arrow.Array
	switch rt {
	case actions.TypeByte:
		out, err = arithFixed[int8](ev, op, l, r, at, valid, mask, arithIntegers[int8])
	case actions.TypeShort:
		out, err = arithFixed[int16](ev, op, l, r, at, valid, mask, arithIntegers[int16])
	case actions.TypeInteger:
		out, err = arithFixed[int32](ev, op, l, r, at, valid, mask, arithIntegers[int32])
	case actions.TypeLong:
		out, err = arithFixed[int64](ev, op, l, r, at, valid, mask, arithIntegers[int64])
	case actions.TypeFloat:
		out, err = arithFixed[float32](ev, op, l, r, at, valid, mask, arithFloats[float32])
	case actions.TypeDouble:
		out, err = arithFixed[float64](ev, op, l, r, at, valid, mask, arithFloats[float64])
	case actions.TypeDate:
		out, err = ev.dateArith(op, l, r, at, valid, mask)
	default:
		dt, ok := rt.(*actions.DecimalType)
		if !ok {
			return vec{}, fmt.Errorf("no arithmetic on %s", rt)
		}
		out, err = ev.decimalArith(op, l, r, dt, at, valid, mask)
	}
	if err != nil {
		return vec{}, err
	}
	return vec{arr: out, t: rt}, nil
}

func arithFixed[T arrow.FixedWidthType](ev *evaluator, op ArithOp, l, r vec, at arrow.DataType, valid, mask []byte,
	kernel func(ArithOp, []T, int, []T, int, []T, []byte, []byte) error) (arrow.Array, error) {
	a, am, err := fixedOperand[T](l)
	if err != nil {
		return nil, err
	}
	b, bm, err := fixedOperand[T](r)
	if err != nil {
		return nil, err
	}
	return buildFixed(ev.mem, at, ev.n, valid, func(out []T) error {
		return kernel(op, a, am, b, bm, out, valid, mask)
	})
}

// arithIntegers computes in int64 and checks the range of T, reporting
// overflow and division by zero only for rows that matter.
func arithIntegers[T ~int8 | ~int16 | ~int32 | ~int64](op ArithOp, a []T, am int, b []T, bm int, out []T, valid, mask []byte) error {
	var lo, hi int64
	switch any(out).(type) {
	case []int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case []int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case []int32:
		lo, hi = math.MinInt32, math.MaxInt32
	default:
		lo, hi = math.MinInt64, math.MaxInt64
	}
	for i := range out {
		x, y := int64(a[i&am]), int64(b[i&bm])
		var r int64
		bad := false
		switch op {
		case Plus:
			r = x + y
			bad = (x^r)&(y^r) < 0
		case Minus:
			r = x - y
			bad = (x^y)&(x^r) < 0
		case Times:
			r = x * y
			bad = x != 0 && (r/x != y || x == -1 && y == math.MinInt64)
		case Modulo:
			switch y {
			case 0:
				if active(mask, valid, i) {
					return errDivideByZero
				}
			case -1:
				r = 0
			default:
				r = x % y
			}
		default:
			return fmt.Errorf("operator %s is not an integer operation", op)
		}
		if (bad || r < lo || r > hi) && active(mask, valid, i) {
			return fmt.Errorf("%d %s %d overflows: %w", x, op, y, errOverflow)
		}
		out[i] = T(r)
	}
	return nil
}

func arithFloats[T ~float32 | ~float64](op ArithOp, a []T, am int, b []T, bm int, out []T, valid, mask []byte) error {
	switch op {
	case Plus:
		for i := range out {
			out[i] = a[i&am] + b[i&bm]
		}
	case Minus:
		for i := range out {
			out[i] = a[i&am] - b[i&bm]
		}
	case Times:
		for i := range out {
			out[i] = a[i&am] * b[i&bm]
		}
	case Divide, Modulo:
		for i := range out {
			x, y := a[i&am], b[i&bm]
			if y == 0 {
				if active(mask, valid, i) {
					return errDivideByZero
				}
				continue
			}
			if op == Divide {
				out[i] = x / y
			} else {
				out[i] = T(math.Mod(float64(x), float64(y)))
			}
		}
	}
	return nil
}

func (ev *evaluator) dateArith(op ArithOp, l, r vec, at arrow.DataType, valid, mask []byte) (arrow.Array, error) {
	date, days := l, r
	if r.t == actions.TypeDate {
		date, days = r, l
	}
	d, dm, err := fixedOperand[arrow.Date32](date)
	if err != nil {
		return nil, err
	}
	k, err := int64s(days)
	if err != nil {
		return nil, err
	}
	return buildFixed(ev.mem, at, ev.n, valid, func(out []arrow.Date32) error {
		for i := range out {
			delta := k(i)
			if op == Minus {
				delta = -delta
			}
			v := int64(d[i&dm]) + delta
			if (v < math.MinInt32 || v > math.MaxInt32) && active(mask, valid, i) {
				return fmt.Errorf("date out of range: %w", errOverflow)
			}
			out[i] = arrow.Date32(v)
		}
		return nil
	})
}

// decimalScaleOf is the scale of a decimal operand: its array's or its
// constant's.
func decimalScaleOf(v vec) int {
	if v.arr != nil {
		return arrayScale(v.arr)
	}
	if d, ok := v.c.(actions.Decimal); ok {
		return d.Scale
	}
	return 0
}

func (ev *evaluator) decimalArith(op ArithOp, l, r vec, rt *actions.DecimalType, at arrow.DataType, valid, mask []byte) (arrow.Array, error) {
	ls, rs := decimalScaleOf(l), decimalScaleOf(r)
	lp, rp := 38, 38
	if d, ok := l.t.(*actions.DecimalType); ok {
		lp = d.Precision
	}
	if d, ok := r.t.(*actions.DecimalType); ok {
		rp = d.Precision
	}
	// + and - of operands at the result's scale, small enough that the
	// 128-bit sum cannot wrap: no rescaling, no big integers.
	if (op == Plus || op == Minus) && ls == rt.Scale && rs == rt.Scale && lp <= 37 && rp <= 37 {
		a, am, b, bm, err := decimalOperands(l, r)
		if err != nil {
			return nil, err
		}
		p := int32(rt.Precision)
		return buildFixed(ev.mem, at, ev.n, valid, func(out []decimal128.Num) error {
			for i := range out {
				var v decimal128.Num
				if op == Plus {
					v = a[i&am].Add(b[i&bm])
				} else {
					v = a[i&am].Sub(b[i&bm])
				}
				if !v.FitsInPrecision(p) && active(mask, valid, i) {
					return fmt.Errorf("result does not fit %s: %w", rt, errOverflow)
				}
				out[i] = v
			}
			return nil
		})
	}
	get := func(v vec, scale int) (func(int) actions.Decimal, error) {
		if v.arr == nil {
			d, ok := v.c.(actions.Decimal)
			if !ok {
				return nil, fmt.Errorf("constant %v of Go type %T where a decimal is expected", v.c, v.c)
			}
			return func(int) actions.Decimal { return d }, nil
		}
		vals, _, err := fixedOperand[decimal128.Num](v)
		if err != nil {
			return nil, err
		}
		return func(i int) actions.Decimal { return actions.Decimal{Unscaled: vals[i].BigInt(), Scale: scale} }, nil
	}
	a, err := get(l, ls)
	if err != nil {
		return nil, err
	}
	b, err := get(r, rs)
	if err != nil {
		return nil, err
	}
	return buildFixed(ev.mem, at, ev.n, valid, func(out []decimal128.Num) error {
		for i := range out {
			if !active(mask, valid, i) {
				continue
			}
			v, err := decimalArith(op, a(i), b(i), rt)
			if err != nil {
				return err
			}
			out[i] = decimal128.FromBigInt(v.(actions.Decimal).Unscaled)
		}
		return nil
	})
}

// neg evaluates -v.
func (ev *evaluator) neg(v vec, mask []byte) (vec, error) {
	if v.arr == nil {
		c, err := negValue(v.c)
		return vec{c: c, t: v.t}, err
	}
	at, err := arrowTypeOf(v.t)
	if err != nil {
		return vec{}, err
	}
	n := ev.n
	valid := v.valid(n)
	zero := vec{c: nil}
	var out arrow.Array
	switch v.t {
	case actions.TypeByte:
		zero.c = int8(0)
		out, err = arithFixed[int8](ev, Minus, zero, v, at, valid, mask, arithIntegers[int8])
	case actions.TypeShort:
		zero.c = int16(0)
		out, err = arithFixed[int16](ev, Minus, zero, v, at, valid, mask, arithIntegers[int16])
	case actions.TypeInteger:
		zero.c = int32(0)
		out, err = arithFixed[int32](ev, Minus, zero, v, at, valid, mask, arithIntegers[int32])
	case actions.TypeLong:
		zero.c = int64(0)
		out, err = arithFixed[int64](ev, Minus, zero, v, at, valid, mask, arithIntegers[int64])
	case actions.TypeFloat:
		src, _, err2 := fixedOperand[float32](v)
		if err2 != nil {
			return vec{}, err2
		}
		out, err = buildFixed(ev.mem, at, n, valid, func(o []float32) error {
			for i, x := range src {
				o[i] = -x
			}
			return nil
		})
	case actions.TypeDouble:
		src, _, err2 := fixedOperand[float64](v)
		if err2 != nil {
			return vec{}, err2
		}
		out, err = buildFixed(ev.mem, at, n, valid, func(o []float64) error {
			for i, x := range src {
				o[i] = -x
			}
			return nil
		})
	default:
		if !isDecimal(v.t) {
			return vec{}, fmt.Errorf("cannot negate %s", v.t)
		}
		src, _, err2 := fixedOperand[decimal128.Num](v)
		if err2 != nil {
			return vec{}, err2
		}
		out, err = buildFixed(ev.mem, at, n, valid, func(o []decimal128.Num) error {
			for i, x := range src {
				o[i] = x.Negate()
			}
			return nil
		})
	}
	if err != nil {
		return vec{}, err
	}
	return vec{arr: out, t: v.t}, nil
}
