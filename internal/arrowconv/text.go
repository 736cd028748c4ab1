package arrowconv

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendInteger appends the decimal text of row i of an integer array
// (signed or unsigned, any width) to dst; ok is false, and dst as it
// was, for any other array. The checkpoint's stats and the reader's
// canonical rows both write integers so.
func AppendInteger(dst []byte, arr arrow.Array, i int) (out []byte, ok bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10), true
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10), true
	}
	return dst, false
}
