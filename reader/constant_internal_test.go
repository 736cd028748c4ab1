package reader

import (
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// TestConstantArray checks the partition constants built by filling
// buffers against the same values appended one by one.
func TestConstantArray(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		typ string
		v   any
	}{
		{"string", "p7"}, {"string", ""}, {"binary", []byte{0, 1, 2}},
		{"boolean", true}, {"boolean", false},
		{"byte", int8(-1)}, {"short", int16(2)}, {"integer", int32(3)}, {"long", int64(-4)},
		{"float", float32(1.5)}, {"double", 2.5},
		{"date", actions.Date(19000)}, {"timestamp", actions.Timestamp(-5)}, {"timestamp_ntz", actions.TimestampNTZ(6)},
		{"decimal(10,2)", actions.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}},
		{"long", nil},
	} {
		st, err := actions.ParseDDL("c " + c.typ)
		if err != nil {
			t.Fatal(err)
		}
		dt, err := actions.ArrowType(st.Fields[0].Type)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 7, 1000} {
			got, err := constantArray(mem, dt, c.v, n)
			if err != nil {
				t.Fatalf("%s %v: %v", c.typ, c.v, err)
			}
			b := array.NewBuilder(mem, dt)
			for range n {
				if err := actions.AppendArrowValue(b, c.v); err != nil {
					t.Fatal(err)
				}
			}
			want := b.NewArray()
			b.Release()
			if !arrow.TypeEqual(got.DataType(), dt) || !array.Equal(got, want) {
				t.Errorf("%s %v ×%d: got %v, want %v", c.typ, c.v, n, got, want)
			}
			got.Release()
			want.Release()
		}
	}
}
