package arrowbatch

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestConcat(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	batch := func(from, n int) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := from; i < from+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%3 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
			}
		}
		return b.NewRecordBatch()
	}
	parts := []arrow.RecordBatch{batch(0, 3), batch(3, 0), batch(3, 5)}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	out, err := Concat(parts, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NumRows() != 8 || !out.Schema().Equal(schema) {
		t.Fatalf("%d rows, schema %s", out.NumRows(), out.Schema())
	}
	for i := range 8 {
		if got := out.Column(0).(*array.Int64).Value(i); got != int64(i) {
			t.Errorf("row %d: a = %d", i, got)
		}
		if out.Column(1).IsNull(i) != (i%3 == 0) {
			t.Errorf("row %d: null %v", i, out.Column(1).IsNull(i))
		}
	}
	one, err := Concat(parts[:1], mem)
	if err != nil || one != parts[0] {
		t.Fatalf("one batch: %v, %v", one, err)
	}
	one.Release()
	if _, err := Concat(nil, mem); err == nil {
		t.Error("no batch concatenates")
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	ints := array.NewInt32Builder(mem)
	ints.AppendValues([]int32{1, 2, 3}, nil)
	col := ints.NewArray()
	ints.Release()
	defer col.Release()
	odd := array.NewRecordBatch(other, []arrow.Array{col}, 3)
	defer odd.Release()
	if _, err := Concat([]arrow.RecordBatch{parts[0], odd}, mem); err == nil {
		t.Error("batches of two schemas concatenate")
	}
}
