package reader

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/internal/arrowconv"
)

// The canonical row encoding is the one of testdata/delta/README.md
// ("Canonical row encoding"), which the CLI's `scan --format jsonl` prints
// and the golden tables hash: one compact JSON object per row, keys the
// column names in schema order, with
//
//	null                  null
//	boolean               true / false
//	integers              exact JSON integers
//	float                 Go json.Marshal(float32(v))
//	double                Go json.Marshal(v) (shortest round trip)
//	NaN, ±Inf             "NaN", "Infinity", "-Infinity"
//	decimal(p,s)          a string with exactly s fractional digits
//	string                JSON string, HTML characters not escaped
//	binary                standard base64 with padding, as a string
//	date                  "YYYY-MM-DD"
//	timestamp             "YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC)
//	timestamp_ntz         "YYYY-MM-DDTHH:MM:SS.ffffff"
//	struct                object, fields in order
//	array                 array in stored order
//	map                   array of [key, value], sorted by the key's text
//
// The Delta type is read from the Arrow type of the batches this package
// produces: an Arrow timestamp with a time zone is a Delta timestamp, one
// without is timestamp_ntz.

// AppendCanonicalRow appends row of rec in the canonical row encoding to
// dst (without a newline) and returns the extended slice. Column names are
// rec's field names, which for batches from a Scan are the logical names.
func AppendCanonicalRow(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	return appendRow(dst, rec, row, false)
}

// AppendJSONRow is AppendCanonicalRow with maps as JSON objects, as
// Spark's to_json writes them: each key's text (a string key as it is,
// any other key as its canonical JSON) names its value, keys sorted as in
// the canonical encoding. It is the encoding for people and scripts (the
// CLI's output); the canonical one is for hashing and comparing.
func AppendJSONRow(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	return appendRow(dst, rec, row, true)
}

func appendRow(dst []byte, rec arrow.RecordBatch, row int, objects bool) ([]byte, error) {
	if row < 0 || int64(row) >= rec.NumRows() {
		return dst, fmt.Errorf("reader: canonical row %d: out of range [0, %d)", row, rec.NumRows())
	}
	dst = append(dst, '{')
	for c, f := range rec.Schema().Fields() {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, f.Name)
		dst = append(dst, ':')
		var err error
		dst, err = appendCanonicalValue(dst, rec.Column(c), row, objects)
		if err != nil {
			return dst, fmt.Errorf("reader: canonical row %d, column %q: %w", row, f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// CanonicalRows returns every row of rec in the canonical row encoding, in
// row order.
func CanonicalRows(rec arrow.RecordBatch) ([][]byte, error) {
	out := make([][]byte, 0, rec.NumRows())
	for i := 0; i < int(rec.NumRows()); i++ {
		line, err := AppendCanonicalRow(nil, rec, i)
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, nil
}

// appendCanonicalValue appends the canonical encoding of arr[i]; with
// objects, maps are JSON objects.
func appendCanonicalValue(dst []byte, arr arrow.Array, i int, objects bool) ([]byte, error) {
	if arr.IsNull(i) {
		return append(dst, "null"...), nil
	}
	if out, ok := arrowconv.AppendInteger(dst, arr, i); ok {
		return out, nil
	}
	switch a := arr.(type) {
	case *array.Null:
		return append(dst, "null"...), nil
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i)), nil
	case *array.Float32:
		return appendFloat(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(dst, a.Value(i), 64)
	case *array.Decimal128:
		s := a.DataType().(*arrow.Decimal128Type).Scale
		return appendJSONString(dst, decimalText(a.Value(i).BigInt(), int(s))), nil
	case *array.Decimal256:
		s := a.DataType().(*arrow.Decimal256Type).Scale
		return appendJSONString(dst, decimalText(a.Value(i).BigInt(), int(s))), nil
	case *array.Decimal64:
		s := a.DataType().(*arrow.Decimal64Type).Scale
		return appendJSONString(dst, decimalText(big.NewInt(int64(a.Value(i))), int(s))), nil
	case *array.Decimal32:
		s := a.DataType().(*arrow.Decimal32Type).Scale
		return appendJSONString(dst, decimalText(big.NewInt(int64(a.Value(i))), int(s))), nil
	case *array.String:
		return appendJSONString(dst, a.Value(i)), nil
	case *array.LargeString:
		return appendJSONString(dst, a.Value(i)), nil
	case *array.StringView:
		return appendJSONString(dst, a.Value(i)), nil
	case *array.Binary:
		return appendBase64(dst, a.Value(i)), nil
	case *array.LargeBinary:
		return appendBase64(dst, a.Value(i)), nil
	case *array.BinaryView:
		return appendBase64(dst, a.Value(i)), nil
	case *array.FixedSizeBinary:
		return appendBase64(dst, a.Value(i)), nil
	case *array.Date32:
		return appendJSONString(dst, formatDate(int64(a.Value(i)))), nil
	case *array.Date64:
		return appendJSONString(dst, formatDate(floorDiv(int64(a.Value(i)), 86_400_000))), nil
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		us, err := toMicros(int64(a.Value(i)), tt.Unit)
		if err != nil {
			return dst, err
		}
		return appendJSONString(dst, FormatTimestamp(us, tt.TimeZone != "")), nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for k := 0; k < a.NumField(); k++ {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, st.Field(k).Name)
			dst = append(dst, ':')
			var err error
			if dst, err = appendCanonicalValue(dst, a.Field(k), i, objects); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case *array.Map:
		return appendCanonicalMap(dst, a, i, objects)
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		dst = append(dst, '[')
		for k := start; k < end; k++ {
			if k > start {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonicalValue(dst, values, int(k), objects); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *array.Dictionary:
		return appendCanonicalValue(dst, a.Dictionary(), a.GetValueIndex(i), objects)
	}
	return dst, fmt.Errorf("no canonical encoding for Arrow type %s", arr.DataType())
}

func appendCanonicalMap(dst []byte, a *array.Map, i int, objects bool) ([]byte, error) {
	start, end := a.ValueOffsets(i)
	keys, items := a.Keys(), a.Items()
	type pair struct{ k, v []byte }
	pairs := make([]pair, 0, end-start)
	for k := start; k < end; k++ {
		kb, err := appendCanonicalValue(nil, keys, int(k), objects)
		if err != nil {
			return dst, err
		}
		vb, err := appendCanonicalValue(nil, items, int(k), objects)
		if err != nil {
			return dst, err
		}
		pairs = append(pairs, pair{kb, vb})
	}
	slices.SortStableFunc(pairs, func(x, y pair) int { return bytes.Compare(x.k, y.k) })
	if objects {
		dst = append(dst, '{')
		for n, p := range pairs {
			if n > 0 {
				dst = append(dst, ',')
			}
			if len(p.k) > 0 && p.k[0] == '"' {
				dst = append(dst, p.k...)
			} else {
				dst = appendJSONString(dst, string(p.k))
			}
			dst = append(dst, ':')
			dst = append(dst, p.v...)
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, '[')
	for n, p := range pairs {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = append(dst, p.k...)
		dst = append(dst, ',')
		dst = append(dst, p.v...)
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// appendFloat encodes a float as Go's encoding/json does for its bit size,
// with NaN and the infinities as strings.
func appendFloat(dst []byte, v float64, bits int) ([]byte, error) {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...), nil
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...), nil
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...), nil
	}
	var b []byte
	var err error
	if bits == 32 {
		b, err = json.Marshal(float32(v))
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// decimalText renders unscaled × 10^-scale with exactly scale fractional
// digits.
func decimalText(unscaled *big.Int, scale int) string {
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = string(bytes.Repeat([]byte{'0'}, scale-len(digits)+1)) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// does with SetEscapeHTML(false).
func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b := buf.Bytes()
	return append(dst, b[:len(b)-1]...) // drop Encode's newline
}

func formatDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
}

// FormatTimestamp renders microseconds since the epoch as
// "YYYY-MM-DDTHH:MM:SS.ffffff", with a trailing "Z" when utc is set (a
// Delta timestamp) and without for a timestamp_ntz.
func FormatTimestamp(micros int64, utc bool) string {
	t := time.UnixMicro(micros).UTC()
	if utc {
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// toMicros converts a timestamp in unit to microseconds, truncating
// nanoseconds toward negative infinity.
func toMicros(v int64, unit arrow.TimeUnit) (int64, error) {
	switch unit {
	case arrow.Second:
		return mulCheck(v, 1_000_000)
	case arrow.Millisecond:
		return mulCheck(v, 1_000)
	case arrow.Microsecond:
		return v, nil
	case arrow.Nanosecond:
		return floorDiv(v, 1_000), nil
	}
	return 0, fmt.Errorf("unknown time unit %v", unit)
}

func mulCheck(v, m int64) (int64, error) {
	if v > math.MaxInt64/m || v < math.MinInt64/m {
		return 0, fmt.Errorf("timestamp %d overflows microseconds", v)
	}
	return v * m, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
