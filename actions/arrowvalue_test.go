package actions_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

func TestAppendArrowValue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dec := func(unscaled int64, scale int) actions.Decimal {
		return actions.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
	}
	for _, c := range []struct {
		typ  string // Delta type
		v    any
		want string // the appended element (a decimal's unscaled value), or the error's text
	}{
		{"boolean", true, "true"},
		{"byte", int8(-3), "-3"},
		{"short", int16(300), "300"},
		{"integer", int32(7), "7"},
		{"long", int64(1) << 40, "1099511627776"},
		{"float", float32(1.5), "1.5"},
		{"double", 2.25, "2.25"},
		{"string", "héllo", "héllo"},
		{"binary", []byte{1, 2}, "AQI="},
		{"binary", "ab", "YWI="},
		{"date", actions.Date(19000), "2022-01-08"},
		{"timestamp", actions.Timestamp(1_000_000), "1970-01-01T00:00:01Z"},
		{"timestamp_ntz", actions.TimestampNTZ(1_000_000), "1970-01-01T00:00:01"},
		{"decimal(5,2)", dec(123, 1), "1230"},                     // rescaled up
		{"decimal(5,2)", dec(12300, 3), "1230"},                   // rescaled down, no digits lost
		{"decimal(5,2)", actions.Decimal{Scale: 2}, "0"},          // nil unscaled is zero
		{"decimal(5,2)", dec(12345, 3), "more than 2 fractional"}, // digits would be lost
		{"long", nil, "(null)"},
		{"long", int32(1), "actions: cannot append int32 to int64"},
		{"string", []byte("x"), "actions: cannot append []uint8 to utf8"},
		{"date", actions.Timestamp(0), "actions: cannot append actions.Timestamp to date32"},
	} {
		st, err := actions.ParseDDL("c " + c.typ)
		if err != nil {
			t.Fatal(err)
		}
		at, err := actions.ArrowType(st.Fields[0].Type)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewBuilder(mem, at)
		err = actions.AppendArrowValue(b, c.v)
		arr := b.NewArray()
		b.Release()
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %#v: error %q, want it to say %q", c.typ, c.v, err, c.want)
			}
			if arr.Len() != 0 {
				t.Errorf("%s %#v: failed append left %d elements", c.typ, c.v, arr.Len())
			}
		case arr.Len() != 1:
			t.Errorf("%s %#v: %d elements, want 1", c.typ, c.v, arr.Len())
		default:
			got := arr.ValueStr(0)
			if d, ok := arr.(*array.Decimal128); ok && d.IsValid(0) {
				got = d.Value(0).BigInt().String()
			}
			if got != c.want {
				t.Errorf("%s %#v: appended %s, want %s", c.typ, c.v, got, c.want)
			}
		}
		arr.Release()
	}
}
