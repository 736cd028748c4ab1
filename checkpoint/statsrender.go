package checkpoint

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/internal/arrowconv"
)

// This file turns a file's typed stats back into what add.stats says:
// JSON text (render) or the decoded form actions.ParseStats gives
// (decode). Both write a value as Delta writers spell it: integers and
// decimals as numbers, floats as numbers or "NaN", "Infinity",
// "-Infinity", dates as "YYYY-MM-DD", timestamps in ISO-8601 (UTC with a
// Z; without a zone for timestamp_ntz). Read back through
// actions.ParseStatValue each gives the value it was parsed from.

type valueKind uint8

const (
	kindNumber valueKind = iota
	kindString
	kindBool
)

// boundText appends row i of arr, a bound of column col, to b, and says
// how JSON holds it.
func boundText(b []byte, col *StatsColumn, arr arrow.Array, i int) ([]byte, valueKind) {
	if out, ok := arrowconv.AppendInteger(b, arr, i); ok {
		return out, kindNumber
	}
	switch a := arr.(type) {
	case *array.Float32:
		return floatText(b, float64(a.Value(i)), 32)
	case *array.Float64:
		return floatText(b, a.Value(i), 64)
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i)), kindBool
	case *array.String:
		return append(b, a.Value(i)...), kindString
	case *array.Binary:
		return append(b, a.Value(i)...), kindString
	case *array.Date32:
		return append(b, actions.Date(a.Value(i)).String()...), kindString
	case *array.Timestamp:
		return timestampText(b, int64(a.Value(i)), col.Type != actions.TypeTimestampNTZ), kindString
	case *array.Decimal128:
		scale := int(a.DataType().(*arrow.Decimal128Type).Scale)
		return append(b, actions.Decimal{Unscaled: a.Value(i).BigInt(), Scale: scale}.String()...), kindNumber
	}
	return b, kindNumber
}

// timestampText appends a timestamp as Spark writes stats: ISO-8601 with
// milliseconds (microseconds when the value has them), and a Z unless
// it is a timestamp_ntz.
func timestampText(b []byte, micros int64, zoned bool) []byte {
	var s string
	if zoned {
		s = actions.Timestamp(micros).String() // ...SS.ffffffZ
		s = s[:len(s)-1]
	} else {
		s = actions.TimestampNTZ(micros).String() // ...SS.ffffff
	}
	if micros%1000 == 0 {
		s = s[:len(s)-3]
	}
	b = append(b, s...)
	if zoned {
		b = append(b, 'Z')
	}
	return b
}

func floatText(b []byte, f float64, bits int) ([]byte, valueKind) {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...), kindString
	case math.IsInf(f, 1):
		return append(b, "Infinity"...), kindString
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...), kindString
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits), kindNumber
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// render appends file i's stats as JSON to b.
func (s *FileStats) render(l *FileLayout, i int, b []byte) []byte {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	if s.numRecords != nil && s.numRecords.IsValid(i) {
		key("numRecords")
		b = strconv.AppendInt(b, s.numRecords.Value(i), 10)
	}
	sections := []struct {
		name   string
		counts bool
		get    func(j int) arrow.Array
	}{
		{"minValues", false, func(j int) arrow.Array { return s.mins[j] }},
		{"maxValues", false, func(j int) arrow.Array { return s.maxs[j] }},
		{"nullCount", true, func(j int) arrow.Array {
			if a := s.nulls[j]; a != nil {
				return a
			}
			return nil
		}},
	}
	for _, sec := range sections {
		if !s.anyIn(l.root, sec.get, i) {
			continue
		}
		key(sec.name)
		b = s.renderNode(b, l, l.root, sec.get, sec.counts, i)
	}
	if s.tightBounds != nil && s.tightBounds.IsValid(i) {
		key("tightBounds")
		b = strconv.AppendBool(b, s.tightBounds.Value(i))
	}
	return append(b, '}')
}

// anyIn reports whether some column under node has a value at row i.
func (s *FileStats) anyIn(l *statsNode, get func(int) arrow.Array, i int) bool {
	for _, child := range l.children {
		if child.col >= 0 {
			if a := get(child.col); a != nil && a.IsValid(i) {
				return true
			}
			continue
		}
		if s.anyIn(child, get, i) {
			return true
		}
	}
	return false
}

// renderNode appends the object of node's columns with a value at row i,
// in schema order.
func (s *FileStats) renderNode(b []byte, l *FileLayout, node *statsNode, get func(int) arrow.Array, counts bool, i int) []byte {
	b = append(b, '{')
	first := true
	for _, name := range node.order {
		child := node.children[name]
		if child.col >= 0 {
			a := get(child.col)
			if a == nil || !a.IsValid(i) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, []byte(name))
			b = append(b, ':')
			if counts {
				b = strconv.AppendInt(b, a.(*array.Int64).Value(i), 10)
				continue
			}
			start := len(b)
			var kind valueKind
			b, kind = boundText(b, l.Stats[child.col], a, i)
			if kind == kindString {
				text := append([]byte(nil), b[start:]...)
				b = appendJSONString(b[:start], text)
			}
			continue
		}
		if !s.anyIn(child, get, i) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, []byte(name))
		b = append(b, ':')
		b = s.renderNode(b, l, child, get, counts, i)
	}
	return append(b, '}')
}

// decode builds file i's stats as actions.ParseStats would decode their
// rendering; paths, when not nil, limits the columns to those.
func (s *FileStats) decode(l *FileLayout, i int, paths [][]string) *actions.Stats {
	st := &actions.Stats{NumRecords: -1}
	if s.numRecords != nil && s.numRecords.IsValid(i) {
		st.NumRecords = s.numRecords.Value(i)
	}
	if s.tightBounds != nil && s.tightBounds.IsValid(i) {
		st.TightBounds = ptrTo(s.tightBounds.Value(i))
	}
	var cols []int
	if paths == nil {
		cols = make([]int, len(l.Stats))
		for j := range cols {
			cols[j] = j
		}
	} else {
		for _, p := range paths {
			if j := l.StatsColumnIndex(p); j >= 0 {
				cols = append(cols, j)
			}
		}
	}
	var buf []byte
	for _, j := range cols {
		col := l.Stats[j]
		if a := s.mins[j]; a != nil && a.IsValid(i) {
			var kind valueKind
			buf, kind = boundText(buf[:0], col, a, i)
			st.MinValues = putStat(st.MinValues, col.Path, jsonValue(buf, kind))
		}
		if a := s.maxs[j]; a != nil && a.IsValid(i) {
			var kind valueKind
			buf, kind = boundText(buf[:0], col, a, i)
			st.MaxValues = putStat(st.MaxValues, col.Path, jsonValue(buf, kind))
		}
		if a := s.nulls[j]; a != nil && a.IsValid(i) {
			st.NullCount = putStat(st.NullCount, col.Path, json.Number(strconv.FormatInt(a.Value(i), 10)))
		}
	}
	return st
}

// jsonValue is the value encoding/json decodes the rendering of text as
// (with UseNumber).
func jsonValue(text []byte, kind valueKind) any {
	switch kind {
	case kindString:
		if utf8.Valid(text) {
			return string(text)
		}
		var s string
		_ = json.Unmarshal(appendJSONString(nil, text), &s)
		return s
	case kindBool:
		return string(text) == "true"
	}
	return json.Number(text)
}

// putStat sets m[path...] = v, making the nested objects on the way.
func putStat(m map[string]any, path []string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
	return m
}
