package checkpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A checkpoint written with delta.checkpoint.writeStatsAsJson=false has no
// add.stats column, only add.stats_parsed. Read then renders the typed
// stats back as the JSON that add.stats would have held, so that callers
// see one form. Values are written as Delta writers write stats: dates as
// "YYYY-MM-DD", timestamps as ISO-8601 in UTC ("…T10:00:00.123Z"; with
// microseconds when they are not whole milliseconds), decimals as numbers.
// Values JSON cannot hold (NaN, infinities, binary) are left out.

// statsJSONCol reads stats_parsed into JSON text, or nil when c is absent.
func statsJSONCol(c col) func(i int) (string, bool) {
	if c.arr == nil {
		return nil
	}
	if _, ok := c.arr.(*array.Struct); !ok {
		return nil
	}
	return func(i int) (string, bool) {
		if !c.valid(i) {
			return "", false
		}
		var buf bytes.Buffer
		if !appendJSONValue(&buf, c.arr, i) {
			return "", false
		}
		return buf.String(), true
	}
}

// appendJSONValue writes row i of arr as JSON and reports whether it
// wrote anything (a null or unrepresentable value writes nothing).
func appendJSONValue(buf *bytes.Buffer, arr arrow.Array, i int) bool {
	if !arr.IsValid(i) {
		return false
	}
	switch a := arr.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		buf.WriteByte('{')
		n := 0
		for j, f := range st.Fields() {
			mark := buf.Len()
			if n > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(f.Name)
			buf.Write(key)
			buf.WriteByte(':')
			if appendJSONValue(buf, a.Field(j), i) {
				n++
			} else {
				buf.Truncate(mark)
			}
		}
		buf.WriteByte('}')
		return true
	case *array.Int64:
		buf.WriteString(strconv.FormatInt(a.Value(i), 10))
	case *array.Int32:
		buf.WriteString(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int16:
		buf.WriteString(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int8:
		buf.WriteString(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Float64:
		return appendFloat(buf, a.Value(i), 64)
	case *array.Float32:
		return appendFloat(buf, float64(a.Value(i)), 32)
	case *array.Boolean:
		buf.WriteString(strconv.FormatBool(a.Value(i)))
	case *array.String:
		s, _ := json.Marshal(a.Value(i))
		buf.Write(s)
	case *array.LargeString:
		s, _ := json.Marshal(a.Value(i))
		buf.Write(s)
	case *array.Date32:
		buf.WriteByte('"')
		buf.WriteString(time.Unix(int64(a.Value(i))*86400, 0).UTC().Format("2006-01-02"))
		buf.WriteByte('"')
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		micros := int64(a.Value(i))
		switch unit {
		case arrow.Second:
			micros *= 1e6
		case arrow.Millisecond:
			micros *= 1e3
		case arrow.Nanosecond:
			micros /= 1e3
		}
		t := time.UnixMicro(micros).UTC()
		layout := "2006-01-02T15:04:05.000"
		if micros%1000 != 0 {
			layout = "2006-01-02T15:04:05.000000"
		}
		if a.DataType().(*arrow.TimestampType).TimeZone != "" {
			layout += "Z07:00"
		}
		buf.WriteByte('"')
		buf.WriteString(t.Format(layout))
		buf.WriteByte('"')
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		buf.WriteString(a.Value(i).ToString(scale))
	default:
		return false
	}
	return true
}

func appendFloat(buf *bytes.Buffer, f float64, bits int) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	buf.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	return true
}
