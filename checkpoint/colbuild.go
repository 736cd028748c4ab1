package checkpoint

import (
	"bytes"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// This file builds the Arrow arrays of FileColumns. Arrow's own builders
// grow their buffers to powers of two and copy them when an array is
// made; these append into Go slices sized for the batch and hand the
// slices to Arrow as they are, so that a column of a million files costs
// its bytes and no more. Columns most files lack (deletion vectors, row
// tracking, stats of a column no file has) are made only when a value
// comes, and padded with nulls before it.

// validity is a column's null bitmap under construction; nil while every
// value so far is valid.
type validity struct {
	bits  []byte
	nulls int
}

// set records row i's validity; n is the column's capacity in rows.
func (v *validity) set(i int, ok bool, n int) {
	if ok {
		if v.bits != nil {
			bitutil.SetBit(v.bits, i)
		}
		return
	}
	if v.bits == nil {
		v.bits = make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.SetBitsTo(v.bits, 0, int64(i), true)
	}
	if i >= len(v.bits)*8 {
		v.grow(i + 1)
	}
	v.nulls++
}

func (v *validity) grow(rows int) {
	if v.bits == nil {
		return
	}
	need := int(bitutil.BytesForBits(int64(rows)))
	if need > len(v.bits) {
		v.bits = append(v.bits, make([]byte, need-len(v.bits))...)
	}
}

func (v *validity) buffer() *memory.Buffer {
	if v.bits == nil {
		return nil
	}
	return memory.NewBufferBytes(v.bits)
}

// fixedCol is a column of fixed-width values. While every value is
// valid and equal to the first it only counts them (null counts of 0,
// the same row count in every file: common), and its array shares a
// buffer of that value; its own buffer is made at the first other value.
type fixedCol[T any] struct {
	vals     []T
	capacity int
	same     int // values so far, all equal to first; 0 once vals holds them
	first    T
	valid    validity
}

func newFixedCol[T any](capacity int) *fixedCol[T] {
	return &fixedCol[T]{capacity: capacity}
}

func (c *fixedCol[T]) append(v T, ok bool) {
	if c.vals == nil && ok && (c.same == 0 || sameBits(&v, &c.first)) {
		if c.same == 0 {
			c.first = v
		}
		c.same++
		return
	}
	if c.vals == nil {
		c.vals = make([]T, c.same, max(c.capacity, c.same+1))
		for i := range c.vals {
			c.vals[i] = c.first
		}
		c.same = 0
	}
	i := len(c.vals)
	c.vals = append(c.vals, v)
	if !ok || c.valid.bits != nil {
		c.valid.grow(i + 1)
		c.valid.set(i, ok, cap(c.vals))
	}
}

// sameBits reports whether a and b are the same bytes (not ==: -0 and 0
// are different values to keep, and NaN is one).
func sameBits[T any](a, b *T) bool {
	n := int(unsafe.Sizeof(*a))
	return string(unsafe.Slice((*byte)(unsafe.Pointer(a)), n)) == string(unsafe.Slice((*byte)(unsafe.Pointer(b)), n))
}

// pad appends nulls up to row n.
func (c *fixedCol[T]) pad(n int) {
	var zero T
	for c.len() < n {
		c.append(zero, false)
	}
}

func (c *fixedCol[T]) len() int {
	if c.vals == nil {
		return c.same
	}
	return len(c.vals)
}

func (c *fixedCol[T]) array(dt arrow.DataType, width int) arrow.Array {
	n := c.len()
	var raw []byte
	switch {
	case c.vals == nil && n > 0:
		// One value, shared: a buffer of it that no one writes.
		one := unsafe.Slice((*byte)(unsafe.Pointer(&c.first)), width)
		if raw = sharedConstant(one, n*width); raw == nil {
			vals := make([]T, n)
			for i := range vals {
				vals[i] = c.first
			}
			raw = unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), n*width)
		}
	case n > 0:
		raw = unsafe.Slice((*byte)(unsafe.Pointer(&c.vals[0])), n*width)
	}
	data := array.NewData(dt, n, []*memory.Buffer{c.valid.buffer(), memory.NewBufferBytes(raw)}, nil, c.valid.nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// bitCol is a column of booleans.
type bitCol struct {
	bits  []byte
	n     int
	valid validity
}

func newBitCol(capacity int) *bitCol {
	return &bitCol{bits: make([]byte, 0, bitutil.BytesForBits(int64(capacity)))}
}

func (c *bitCol) append(v, ok bool) {
	i := c.n
	c.n++
	if need := int(bitutil.BytesForBits(int64(c.n))); need > len(c.bits) {
		c.bits = append(c.bits, 0)
	}
	if v && ok {
		bitutil.SetBit(c.bits, i)
	}
	if !ok || c.valid.bits != nil {
		c.valid.grow(c.n)
		c.valid.set(i, ok, max(cap(c.bits)*8, c.n))
	}
}

func (c *bitCol) pad(n int) {
	for c.n < n {
		c.append(false, false)
	}
}

func (c *bitCol) array() *array.Boolean {
	data := array.NewData(arrow.FixedWidthTypes.Boolean, c.n, []*memory.Buffer{c.valid.buffer(), memory.NewBufferBytes(c.bits)}, nil, c.valid.nulls, 0)
	defer data.Release()
	return array.NewBooleanData(data)
}

// textCol is a column of strings or binaries.
type textCol struct {
	offs  []int32
	data  []byte
	valid validity
}

func newTextCol(capacity, bytes int) *textCol {
	offs := make([]int32, 1, capacity+1)
	return &textCol{offs: offs, data: make([]byte, 0, bytes)}
}

func (c *textCol) rows() int { return len(c.offs) - 1 }

func (c *textCol) appendBytes(b []byte, ok bool) {
	c.grow(len(b))
	c.data = append(c.data, b...)
	c.end(ok)
}

func (c *textCol) appendString(s string, ok bool) {
	c.grow(len(s))
	c.data = append(c.data, s...)
	c.end(ok)
}

// grow makes room for a value of n bytes: when the data is full, room
// for as many more values of this size as the column has rows to come
// (a better guess than doubling for columns of similar values).
func (c *textCol) grow(n int) {
	if cap(c.data)-len(c.data) >= n {
		return
	}
	rows := c.rows()
	left := max(cap(c.offs)-1-rows, 1)
	c.reserve(max(n*left+n/16*left, len(c.data)/4, n))
}

func (c *textCol) end(ok bool) {
	i := c.rows()
	c.offs = append(c.offs, int32(len(c.data)))
	if !ok || c.valid.bits != nil {
		c.valid.grow(i + 1)
		c.valid.set(i, ok, cap(c.offs)-1)
	}
}

func (c *textCol) pad(n int) {
	for c.rows() < n {
		c.end(false)
	}
}

// reserve makes room for about bytes more bytes of values.
func (c *textCol) reserve(bytes int) {
	if free := cap(c.data) - len(c.data); bytes > free {
		c.data = append(make([]byte, 0, len(c.data)+bytes), c.data...)
	}
}

func (c *textCol) array(dt arrow.DataType) arrow.Array {
	n := c.rows()
	if cap(c.data)-len(c.data) > len(c.data)/4+4096 {
		// A guess of the values' size that was too large: keep only
		// what is used.
		c.data = append([]byte(nil), c.data...)
	}
	data := array.NewData(dt, n, []*memory.Buffer{c.valid.buffer(), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offs)), memory.NewBufferBytes(c.data)}, nil, c.valid.nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// boundCol builds the typed min or max column of one stats column.
type boundCol struct {
	dt  arrow.DataType
	i8  *fixedCol[int8]
	i16 *fixedCol[int16]
	i32 *fixedCol[int32]
	i64 *fixedCol[int64]
	f32 *fixedCol[float32]
	f64 *fixedCol[float64]
	dec *fixedCol[decimal128.Num]
	b   *bitCol
	s   *textCol
}

func newBoundCol(dt arrow.DataType, capacity int) *boundCol {
	c := &boundCol{dt: dt}
	switch dt.ID() {
	case arrow.INT8:
		c.i8 = newFixedCol[int8](capacity)
	case arrow.INT16:
		c.i16 = newFixedCol[int16](capacity)
	case arrow.INT32, arrow.DATE32:
		c.i32 = newFixedCol[int32](capacity)
	case arrow.INT64, arrow.TIMESTAMP:
		c.i64 = newFixedCol[int64](capacity)
	case arrow.FLOAT32:
		c.f32 = newFixedCol[float32](capacity)
	case arrow.FLOAT64:
		c.f64 = newFixedCol[float64](capacity)
	case arrow.DECIMAL128:
		c.dec = newFixedCol[decimal128.Num](capacity)
	case arrow.BOOL:
		c.b = newBitCol(capacity)
	default: // STRING, BINARY
		c.s = newTextCol(capacity, 0)
	}
	return c
}

func (c *boundCol) len() int {
	switch {
	case c.i8 != nil:
		return c.i8.len()
	case c.i16 != nil:
		return c.i16.len()
	case c.i32 != nil:
		return c.i32.len()
	case c.i64 != nil:
		return c.i64.len()
	case c.f32 != nil:
		return c.f32.len()
	case c.f64 != nil:
		return c.f64.len()
	case c.dec != nil:
		return c.dec.len()
	case c.b != nil:
		return c.b.n
	}
	return c.s.rows()
}

// appendCell appends a parsed bound (or a null when cell is nil or null).
func (c *boundCol) appendCell(cell *statCell) {
	ok := cell != nil && cell.set && !cell.null
	var z statCell
	if !ok {
		cell = &z
	}
	switch {
	case c.i8 != nil:
		c.i8.append(int8(cell.i), ok)
	case c.i16 != nil:
		c.i16.append(int16(cell.i), ok)
	case c.i32 != nil:
		c.i32.append(int32(cell.i), ok)
	case c.i64 != nil:
		c.i64.append(cell.i, ok)
	case c.f32 != nil:
		c.f32.append(float32(cell.f), ok)
	case c.f64 != nil:
		c.f64.append(cell.f, ok)
	case c.dec != nil:
		c.dec.append(cell.d, ok)
	case c.b != nil:
		c.b.append(cell.b, ok)
	default:
		c.s.appendBytes(cell.s, ok)
	}
}

// appendArrow appends row i of arr, an array of c's type.
func (c *boundCol) appendArrow(arr arrow.Array, i int) {
	ok := arr.IsValid(i)
	switch a := arr.(type) {
	case *array.Int8:
		c.i8.append(a.Value(i), ok)
	case *array.Int16:
		c.i16.append(a.Value(i), ok)
	case *array.Int32:
		c.i32.append(a.Value(i), ok)
	case *array.Date32:
		c.i32.append(int32(a.Value(i)), ok)
	case *array.Int64:
		c.i64.append(a.Value(i), ok)
	case *array.Timestamp:
		c.i64.append(int64(a.Value(i)), ok)
	case *array.Float32:
		c.f32.append(a.Value(i), ok)
	case *array.Float64:
		c.f64.append(a.Value(i), ok)
	case *array.Decimal128:
		c.dec.append(a.Value(i), ok)
	case *array.Boolean:
		c.b.append(a.Value(i), ok)
	case *array.String:
		c.s.appendString(a.Value(i), ok)
	case *array.Binary:
		c.s.appendBytes(a.Value(i), ok)
	default:
		c.appendCell(nil)
	}
}

func (c *boundCol) pad(n int) {
	for c.len() < n {
		c.appendCell(nil)
	}
}

func (c *boundCol) array() arrow.Array {
	switch {
	case c.i8 != nil:
		return c.i8.array(c.dt, 1)
	case c.i16 != nil:
		return c.i16.array(c.dt, 2)
	case c.i32 != nil:
		return c.i32.array(c.dt, 4)
	case c.i64 != nil:
		return c.i64.array(c.dt, 8)
	case c.f32 != nil:
		return c.f32.array(c.dt, 4)
	case c.f64 != nil:
		return c.f64.array(c.dt, 8)
	case c.dec != nil:
		return c.dec.array(c.dt, 16)
	case c.b != nil:
		return c.b.array()
	}
	return c.s.array(c.dt)
}

// constants are the buffers that columns of one value share: each
// holds one value repeated, at least as often as the longest column
// that asked. A few values only: past maxConstants a column keeps its
// own buffer.
var constants struct {
	sync.Mutex
	bufs map[string][]byte
}

const maxConstants = 32

// sharedConstant returns n bytes of value repeated, never written; nil
// when too many values are shared already.
func sharedConstant(value []byte, n int) []byte {
	constants.Lock()
	defer constants.Unlock()
	b, ok := constants.bufs[string(value)]
	if !ok && len(constants.bufs) >= maxConstants {
		return nil
	}
	if len(b) < n {
		b = bytes.Repeat(value, max(n, 1<<18)/len(value))
		if constants.bufs == nil {
			constants.bufs = map[string][]byte{}
		}
		constants.bufs[string(value)] = b
	}
	return b[:n:n]
}
