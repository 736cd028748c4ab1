package actions

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The rendering of min and max values in add.stats, as Spark's
// StatisticsCollection writes them, shared by every writer of stats (the
// data writer and CONVERT TO DELTA, which reads them from Parquet
// footers).

// StatsStringPrefix is Spark's default
// spark.databricks.delta.stats.truncateStringLength: string bounds keep
// this many characters.
const StatsStringPrefix = 32

// statsTieBreaker is what Spark appends to a truncated max string.
const statsTieBreaker = '\ufffd'

// TruncateStatsMin keeps the first StatsStringPrefix characters of a
// string minimum: a prefix is never greater than the string.
func TruncateStatsMin(s string) string {
	if utf8.RuneCountInString(s) <= StatsStringPrefix {
		return s
	}
	return s[:prefixBytes(s)]
}

// TruncateStatsMax is Spark's truncateMaxStringAgg in code points: keep
// the first StatsStringPrefix characters, then every following character
// up to the first one below U+FFFD, then append U+FFFD. Whatever the
// dropped tail is, it begins with a character below U+FFFD, so the
// result is greater than the string. (Spark counts UTF-16 units, so for
// characters above U+FFFF its bound can be too low; counting code points
// avoids it.)
func TruncateStatsMax(s string) string {
	if utf8.RuneCountInString(s) <= StatsStringPrefix {
		return s
	}
	i := prefixBytes(s)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < statsTieBreaker {
			break
		}
		i += size
	}
	return s[:i] + string(statsTieBreaker)
}

func prefixBytes(s string) int {
	i := 0
	for n := 0; n < StatsStringPrefix; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// FormatStatsDate renders days since the epoch as a stats date.
func FormatStatsDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
}

// FormatStatsTimestamp renders microseconds since the epoch with
// millisecond precision, as Spark's stats do
// ("2021-10-01T08:09:20.123Z"; timestamp_ntz without the Z). A lower
// bound is truncated to the millisecond; an upper bound (upper) is
// rounded up to the next one, so that it stays an upper bound (Spark
// truncates both, which makes its max too low when there are
// microseconds).
func FormatStatsTimestamp(micros int64, utc, upper bool) string {
	ms := micros / 1000
	if r := micros % 1000; r != 0 {
		if micros < 0 && !upper {
			ms--
		} else if micros > 0 && upper {
			ms++
		}
	}
	t := time.UnixMilli(ms).UTC()
	if utc {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	return t.Format("2006-01-02T15:04:05.000")
}

// StatsValues is one of the stats' objects (minValues, maxValues,
// nullCount): its keys in the order they were set, nested by path.
type StatsValues struct {
	keys []string
	vals []any // *StatsValues, int64, string or json.RawMessage
}

// Set puts v at path (a column's names, outermost first). v is an int64,
// a string (written quoted) or a json.RawMessage (written as it is).
func (o *StatsValues) Set(path []string, v any) {
	cur := o
	for _, k := range path[:len(path)-1] {
		var next *StatsValues
		for i, key := range cur.keys {
			if key == k {
				next, _ = cur.vals[i].(*StatsValues)
			}
		}
		if next == nil {
			next = &StatsValues{}
			cur.keys = append(cur.keys, k)
			cur.vals = append(cur.vals, next)
		}
		cur = next
	}
	cur.keys = append(cur.keys, path[len(path)-1])
	cur.vals = append(cur.vals, v)
}

func (o *StatsValues) write(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, k)
		b.WriteByte(':')
		switch v := o.vals[i].(type) {
		case *StatsValues:
			v.write(b)
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case string:
			writeJSONString(b, v)
		case json.RawMessage:
			b.Write(v)
		}
	}
	b.WriteByte('}')
}

// RenderStats renders an add's stats: numRecords and, when the table
// keeps stats for any column, minValues, maxValues and nullCount.
func RenderStats(rows int64, columns bool, minV, maxV, nulls *StatsValues) string {
	var b bytes.Buffer
	b.WriteString(`{"numRecords":`)
	b.WriteString(strconv.FormatInt(rows, 10))
	if columns {
		b.WriteString(`,"minValues":`)
		minV.write(&b)
		b.WriteString(`,"maxValues":`)
		maxV.write(&b)
		b.WriteString(`,"nullCount":`)
		nulls.write(&b)
	}
	b.WriteByte('}')
	return b.String()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
