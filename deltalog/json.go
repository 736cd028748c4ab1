package deltalog

import (
	"encoding/json"

	"github.com/lakelog/lakelog/actions"
)

// jsonString encodes v as JSON text, as Spark writes structured
// operationParameters (partitionBy, properties) as strings.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

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
