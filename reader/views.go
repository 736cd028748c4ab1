package reader

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// String and binary views (WithStringViews). pageColumn decodes flat
// string and binary columns straight into views; the other decoders
// (arrow-go's, byteArrayColumn, partition constants) make plain arrays,
// which toView turns into views that reference their data, and the
// filter (arrow-go's kernels take no views) goes through filterRecord.

// plainOf is the plain type of a view type, and any other type itself.
func plainOf(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.STRING_VIEW:
		return arrow.BinaryTypes.String
	case arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary
	}
	return dt
}

// toView returns arr, a String or Binary array, as an array of the view
// type dt: values of up to 12 bytes inlined, longer ones referencing
// arr's data buffer (not copied). arr is not released.
func toView(mem memory.Allocator, arr arrow.Array, dt arrow.DataType) arrow.Array {
	d := arr.Data()
	n := d.Len()
	var offs []int32
	var data *memory.Buffer
	var values []byte
	if bufs := d.Buffers(); len(bufs) > 2 && bufs[1] != nil && bufs[1].Len() > 0 {
		offs = arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[d.Offset() : d.Offset()+n+1]
		if data = bufs[2]; data != nil {
			values = data.Bytes()
		}
	}
	viewBytes := allocUninit(mem, n*arrow.ViewHeaderSizeBytes)
	views := arrow.ViewHeaderTraits.CastFromBytes(viewBytes)
	long := false
	for i := range views {
		v := &views[i]
		*v = arrow.ViewHeader{}
		if arr.IsNull(i) || offs == nil {
			continue
		}
		v.SetBytes(values[offs[i]:offs[i+1]])
		if !v.IsInline() {
			v.SetIndexOffset(0, offs[i])
			long = true
		}
	}
	bufs := []*memory.Buffer{validityOf(mem, d), memory.NewBufferWithAllocator(viewBytes, mem)}
	if long {
		data.Retain()
		bufs = append(bufs, data)
	}
	out := array.NewData(dt, n, bufs, nil, arr.NullN(), 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer out.Release()
	return array.MakeFromData(out)
}

// validityOf is d's validity bitmap from its offset on, retained for the
// caller (nil when d has no nulls).
func validityOf(mem memory.Allocator, d arrow.ArrayData) *memory.Buffer {
	if d.NullN() == 0 || d.Buffers()[0] == nil {
		return nil
	}
	if d.Offset() == 0 {
		d.Buffers()[0].Retain()
		return d.Buffers()[0]
	}
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
	bitutil.CopyBitmap(d.Buffers()[0].Bytes(), d.Offset(), d.Len(), b.Bytes(), 0)
	return b
}

// filterRecord keeps the rows of rec where mask is true (not false, not
// null), as compute.FilterRecordBatch does; view columns, which arrow-go's
// filter kernel does not take, are gathered here, sharing their data
// buffers. rec is not released.
func filterRecord(ctx context.Context, rec arrow.RecordBatch, mask arrow.Array, mem memory.Allocator) (arrow.RecordBatch, error) {
	hasViews := false
	for _, c := range rec.Columns() {
		hasViews = hasViews || isView(c.DataType())
	}
	ctx = compute.WithAllocator(ctx, mem)
	if !hasViews {
		return compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
	}
	m := mask.(*array.Boolean)
	var keep []int
	for i := range m.Len() {
		if m.IsValid(i) && m.Value(i) {
			keep = append(keep, i)
		}
	}
	// The other columns through arrow-go's kernel, as one batch.
	var plainFields []arrow.Field
	var plainCols []arrow.Array
	for i, c := range rec.Columns() {
		if !isView(c.DataType()) {
			plainFields = append(plainFields, rec.Schema().Field(i))
			plainCols = append(plainCols, c)
		}
	}
	plain := array.NewRecordBatch(arrow.NewSchema(plainFields, nil), plainCols, rec.NumRows())
	defer plain.Release()
	kept, err := compute.FilterRecordBatch(ctx, plain, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, err
	}
	defer kept.Release()
	cols := make([]arrow.Array, rec.NumCols())
	k := 0
	for i, c := range rec.Columns() {
		if isView(c.DataType()) {
			cols[i] = gatherViews(mem, c, keep)
			defer cols[i].Release()
			continue
		}
		cols[i] = kept.Column(k)
		k++
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(keep))), nil
}

// gatherViews is the rows keep (ascending) of the view array arr, whose
// data buffers it shares.
func gatherViews(mem memory.Allocator, arr arrow.Array, keep []int) arrow.Array {
	d := arr.Data()
	src := arrow.ViewHeaderTraits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset():]
	viewBytes := allocUninit(mem, len(keep)*arrow.ViewHeaderSizeBytes)
	views := arrow.ViewHeaderTraits.CastFromBytes(viewBytes)
	for k, i := range keep {
		views[k] = src[i]
	}
	var valid *memory.Buffer
	nulls := 0
	if arr.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(len(keep)))))
		bits := valid.Bytes()
		for k, i := range keep {
			if arr.IsValid(i) {
				bitutil.SetBit(bits, k)
			} else {
				bitutil.ClearBit(bits, k)
				nulls++
			}
		}
	}
	bufs := []*memory.Buffer{valid, memory.NewBufferWithAllocator(viewBytes, mem)}
	for _, b := range d.Buffers()[2:] {
		b.Retain()
		bufs = append(bufs, b)
	}
	out := array.NewData(arr.DataType(), len(keep), bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer out.Release()
	return array.MakeFromData(out)
}
