package writer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestEmptyStringsWithoutValueBytes: arrow-go's own kernels (Filter as a
// DML keeps rows, Take as a dictionary is decoded) give a string array
// whose values are all "" no value buffer at all, which arrow-go's
// Parquet statistics took for no values. Written in one row group after a
// batch of other values, the empty strings were left out of the file's
// min (min "y"), and a scan for s = ” skipped the file: the row was
// lost. Found by TestFooterStatsDifferential with small batches.
func TestEmptyStringsWithoutValueBytes(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	// Filter: rows 0 and 2 ("" and ""); the kept values have no bytes.
	all := tabletest.RecordJSON(t, mem, sc, `[{"id":1,"s":""},{"id":2,"s":"zz"},{"id":3,"s":""}]`)
	defer all.Release()
	mb := array.NewBooleanBuilder(mem)
	mb.AppendValues([]bool{true, false, true}, nil)
	mask := mb.NewArray()
	mb.Release()
	defer mask.Release()
	kept, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), all, mask, compute.DefaultFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Release()
	if b := kept.Column(1).Data().Buffers()[2]; b != nil && b.Bytes() != nil {
		t.Fatalf("arrow-go's Filter now gives the empty strings a value buffer: this test no longer tests the case")
	}
	// Take: a dictionary {"", "a"} whose rows all reference "".
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	_ = db.AppendString("")
	_ = db.AppendString("a")
	dict := db.NewArray().(*array.Dictionary)
	db.Release()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{0, 0}, nil)
	idx := ib.NewArray()
	ib.Release()
	defer idx.Release()
	onlyEmpty := array.NewDictionaryArray(dict.DataType(), idx, dict.Dictionary())
	defer onlyEmpty.Release()
	ids := array.NewInt64Builder(mem)
	ids.AppendValues([]int64{4, 5}, nil)
	idArr := ids.NewArray()
	ids.Release()
	defer idArr.Release()
	dsc := arrow.NewSchema([]arrow.Field{sc.Field(0), {Name: "s", Type: onlyEmpty.DataType(), Nullable: true}}, nil)
	taken := array.NewRecordBatch(dsc, []arrow.Array{idArr, onlyEmpty}, 2)
	defer taken.Release()
	other := tabletest.RecordJSON(t, mem, sc, `[{"id":6,"s":"y"}]`)
	defer other.Release()

	for _, c := range []struct {
		name  string
		first arrow.RecordBatch
	}{{"filtered", kept}, {"decoded dictionary", taken}} {
		first := c.first
		t.Run(c.name, func(t *testing.T) {
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, "id long, s string", nil)
			first.Retain() // Batches releases what it yields
			other.Retain()
			if _, err := writer.Append(ctx, snap, tabletest.Batches(t, first, other)); err != nil {
				t.Fatal(err)
			}
			snap = tabletest.Open(t, store)
			for f := range snap.Files() {
				if !strings.Contains(f.Stats, `"minValues":{"id":1,"s":""}`) && !strings.Contains(f.Stats, `"minValues":{"id":4,"s":""}`) {
					t.Errorf("file stats %s: the min of s is not \"\"", f.Stats)
				}
			}
			all := tabletest.ScanLines(t, snap)
			p, err := expr.Parse("s = ''")
			if err != nil {
				t.Fatal(err)
			}
			got := tabletest.ScanLines(t, snap, reader.WithFilter(p))
			var want []string
			for _, l := range all {
				if strings.Contains(l, `"s":""`) {
					want = append(want, l)
				}
			}
			if len(want) != int(first.NumRows()) || !slices.Equal(got, want) {
				t.Fatalf("s = '': %v, want %v (table %v)", got, want, all)
			}
		})
	}
}
