package deltalog

import (
	"github.com/lakelog/lakelog/actions"
)

func usesType(t actions.DataType, want actions.PrimitiveType) bool {
	switch t := t.(type) {
	case actions.PrimitiveType:
		return t == want
	case *actions.StructType:
		for _, f := range t.Fields {
			if usesType(f.Type, want) {
				return true
			}
		}
	case *actions.ArrayType:
		return usesType(t.ElementType, want)
	case *actions.MapType:
		return usesType(t.KeyType, want) || usesType(t.ValueType, want)
	}
	return false
}
