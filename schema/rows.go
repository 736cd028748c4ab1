package schema

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// rowText renders the first row of rec's values of the columns at paths:
// "a = 1, s.b = 'x'" (NULL where the value or a struct around it is
// null).
func rowText(rec arrow.RecordBatch, paths [][]string) string {
	parts := make([]string, 0, len(paths))
	for _, p := range paths {
		v := "?"
		if x, ok := valueAt(rec, p, 0); ok {
			v = expr.Lit(x).String()
		}
		parts = append(parts, quotePath(p)+" = "+v)
	}
	return strings.Join(parts, ", ")
}

// valueAt is row i's value of a (nested) column of rec, found by name
// ignoring case: nil when it or a struct around it is null; ok is false
// when the column is not found.
func valueAt(rec arrow.RecordBatch, path []string, i int) (any, bool) {
	k := -1
	for j, f := range rec.Schema().Fields() {
		if strings.EqualFold(f.Name, path[0]) {
			k = j
			break
		}
	}
	if k < 0 {
		return nil, false
	}
	a := rec.Column(k)
	for _, name := range path[1:] {
		st, ok := a.(*array.Struct)
		if !ok {
			return nil, false
		}
		if st.IsNull(i) {
			return nil, true
		}
		idx := -1
		for j, f := range st.DataType().(*arrow.StructType).Fields() {
			if strings.EqualFold(f.Name, name) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return nil, false
		}
		a = st.Field(idx)
	}
	return actions.ArrowValue(a, i)
}
