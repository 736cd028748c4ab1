// Package arrowconv converts Arrow arrays to a table's logical Arrow types:
// the one conversion the reader applies to decoded Parquet columns and the
// writer applies to input batches. It imports no other lakelog package.
package arrowconv

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Conform converts a column into target, a table's logical Arrow type
// (actions.ArrowType). The reader uses it on columns as Parquet decoding
// gives them, since a file may store a column differently from what the
// table schema says (INT96 or millisecond timestamps, unannotated byte
// arrays for strings, dictionary-encoded strings, large offsets, a struct
// lacking fields added later by schema evolution, lists and maps with
// other element names, a type widened since). Struct fields match by name,
// exactly or else ignoring case; fields the target lacks are dropped and
// fields the column lacks become nulls. Values change only by widening
// (int32 to int64, float to double, coarser timestamp units to
// microseconds) and by truncating nanosecond timestamps to microseconds;
// any other conversion that would lose values is an error. The writer
// uses it, after checking that the types are compatible, to bring input
// batches to the table's types. The result has arr's length; the caller
// releases it.
func Conform(ctx context.Context, mem memory.Allocator, arr arrow.Array, target arrow.DataType) (arrow.Array, error) {
	d, err := conformData(ctx, mem, arr.Data(), target)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// conformData is conformArray on ArrayData. The result describes the same
// logical elements as d (index i of the result is index i of d), so that a
// parent's offsets into d stay valid for the result.
func conformData(ctx context.Context, mem memory.Allocator, d arrow.ArrayData, target arrow.DataType) (arrow.ArrayData, error) {
	src := d.DataType()
	if arrow.TypeEqual(src, target) {
		d.Retain()
		return d, nil
	}
	if src.ID() == arrow.NULL {
		a := array.MakeArrayOfNull(mem, target, d.Len())
		defer a.Release()
		out := a.Data()
		out.Retain()
		return out, nil
	}
	if src.ID() == arrow.DICTIONARY {
		dense, err := decodeDictionary(ctx, mem, d)
		if err != nil {
			return nil, err
		}
		defer dense.Release()
		return conformData(ctx, mem, dense, target)
	}
	switch t := target.(type) {
	case *arrow.StructType:
		return conformStruct(ctx, mem, d, t)
	case *arrow.ListType:
		return conformList(ctx, mem, d, t)
	case *arrow.MapType:
		return conformMap(ctx, mem, d, t)
	case *arrow.StringType:
		switch src.ID() {
		case arrow.BINARY:
			return relabel(d, target), nil
		case arrow.LARGE_BINARY:
			tmp := relabel(d, arrow.BinaryTypes.LargeString)
			defer tmp.Release()
			return castData(ctx, mem, tmp, target, false)
		}
	case *arrow.BinaryType:
		switch src.ID() {
		case arrow.STRING:
			return relabel(d, target), nil
		case arrow.FIXED_SIZE_BINARY, arrow.LARGE_STRING:
			return castData(ctx, mem, d, target, false)
		}
	case *arrow.TimestampType:
		st, ok := src.(*arrow.TimestampType)
		if !ok {
			break
		}
		if st.Unit == t.Unit {
			return relabel(d, target), nil
		}
		// Change the unit (truncating nanoseconds toward zero is what
		// Spark does with INT96), then label with the target's zone.
		tmp, err := castData(ctx, mem, d, &arrow.TimestampType{Unit: t.Unit, TimeZone: st.TimeZone}, true)
		if err != nil {
			return nil, err
		}
		defer tmp.Release()
		return relabel(tmp, target), nil
	case *arrow.Decimal128Type:
		if st, ok := src.(*arrow.Decimal128Type); ok && st.Scale == t.Scale && st.Precision <= t.Precision {
			return relabel(d, target), nil
		}
	}
	return castData(ctx, mem, d, target, false)
}

// relabel gives d's buffers a new, layout-compatible type.
func relabel(d arrow.ArrayData, target arrow.DataType) arrow.ArrayData {
	return array.NewData(target, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
}

// castData converts primitive values with Arrow's cast kernels.
func castData(ctx context.Context, mem memory.Allocator, d arrow.ArrayData, target arrow.DataType, truncateTime bool) (arrow.ArrayData, error) {
	a := array.MakeFromData(d)
	defer a.Release()
	opts := compute.SafeCastOptions(target)
	opts.AllowTimeTruncate = truncateTime
	out, err := compute.CastArray(compute.WithAllocator(ctx, mem), a, opts)
	if err != nil {
		return nil, fmt.Errorf("convert %s to %s: %w", d.DataType(), target, err)
	}
	defer out.Release()
	od := out.Data()
	od.Retain()
	return od, nil
}

func decodeDictionary(ctx context.Context, mem memory.Allocator, d arrow.ArrayData) (arrow.ArrayData, error) {
	a := array.MakeFromData(d).(*array.Dictionary)
	defer a.Release()
	out, err := compute.TakeArray(compute.WithAllocator(ctx, mem), a.Dictionary(), a.Indices())
	if err != nil {
		return nil, fmt.Errorf("decode dictionary: %w", err)
	}
	defer out.Release()
	od := out.Data()
	od.Retain()
	return od, nil
}

// conformStruct matches the target's fields by name (exactly, else ignoring
// case); fields missing from the data become nulls, extra ones are dropped.
func conformStruct(ctx context.Context, mem memory.Allocator, d arrow.ArrayData, t *arrow.StructType) (arrow.ArrayData, error) {
	st, ok := d.DataType().(*arrow.StructType)
	if !ok {
		return nil, fmt.Errorf("column is %s in the data file, want %s", d.DataType(), t)
	}
	childLen := d.Offset() + d.Len()
	children := make([]arrow.ArrayData, t.NumFields())
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, tf := range t.Fields() {
		j := structFieldIndex(st, tf.Name)
		if j < 0 {
			a := array.MakeArrayOfNull(mem, tf.Type, childLen)
			children[i] = a.Data()
			children[i].Retain()
			a.Release()
			continue
		}
		c, err := conformData(ctx, mem, d.Children()[j], tf.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", tf.Name, err)
		}
		children[i] = c
	}
	return array.NewData(t, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset()), nil
}

func structFieldIndex(st *arrow.StructType, name string) int {
	if i, ok := st.FieldIdx(name); ok {
		return i
	}
	for i, f := range st.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// conformList converts a list (or large list) of any element name.
func conformList(ctx context.Context, mem memory.Allocator, d arrow.ArrayData, t *arrow.ListType) (arrow.ArrayData, error) {
	switch d.DataType().ID() {
	case arrow.LIST:
		child, err := conformData(ctx, mem, d.Children()[0], t.Elem())
		if err != nil {
			return nil, fmt.Errorf("element: %w", err)
		}
		defer child.Release()
		return array.NewData(t, d.Len(), d.Buffers()[:2], []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	case arrow.LARGE_LIST:
		offsets, err := narrowOffsets(mem, d)
		if err != nil {
			return nil, err
		}
		defer offsets.Release()
		child, err := conformData(ctx, mem, d.Children()[0], t.Elem())
		if err != nil {
			return nil, fmt.Errorf("element: %w", err)
		}
		defer child.Release()
		return array.NewData(t, d.Len(), []*memory.Buffer{d.Buffers()[0], offsets}, []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	}
	return nil, fmt.Errorf("column is %s in the data file, want %s", d.DataType(), t)
}

// narrowOffsets copies a large list's int64 offsets as int32.
func narrowOffsets(mem memory.Allocator, d arrow.ArrayData) (*memory.Buffer, error) {
	n := d.Offset() + d.Len() + 1
	src := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[:n]
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(arrow.Int32Traits.BytesRequired(n))
	dst := arrow.Int32Traits.CastFromBytes(buf.Bytes())
	for i, v := range src {
		if v > math.MaxInt32 {
			buf.Release()
			return nil, fmt.Errorf("list offsets exceed 2^31")
		}
		dst[i] = int32(v)
	}
	return buf, nil
}

// conformMap converts a map whose entries are any struct of (key, value),
// matched by position: files name them key/value, key_value or map.
func conformMap(ctx context.Context, mem memory.Allocator, d arrow.ArrayData, t *arrow.MapType) (arrow.ArrayData, error) {
	if id := d.DataType().ID(); id != arrow.MAP && id != arrow.LIST {
		return nil, fmt.Errorf("column is %s in the data file, want %s", d.DataType(), t)
	}
	entries := d.Children()[0]
	if entries.DataType().ID() != arrow.STRUCT || len(entries.Children()) != 2 {
		return nil, fmt.Errorf("map entries are %s in the data file, want a key and a value", entries.DataType())
	}
	et := t.Elem().(*arrow.StructType)
	key, err := conformData(ctx, mem, entries.Children()[0], t.KeyType())
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	defer key.Release()
	val, err := conformData(ctx, mem, entries.Children()[1], t.ItemType())
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	defer val.Release()
	ed := array.NewData(et, entries.Len(), entries.Buffers()[:1], []arrow.ArrayData{key, val}, entries.NullN(), entries.Offset())
	defer ed.Release()
	return array.NewData(t, d.Len(), d.Buffers()[:2], []arrow.ArrayData{ed}, d.NullN(), d.Offset()), nil
}
