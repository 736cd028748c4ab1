package cdc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// A decoder reads one non-null JSON value of a column into the Go form
// actions gives its Delta type (int32, string, []byte, actions.Decimal,
// actions.Date, actions.Timestamp, actions.TimestampNTZ, ...); arrays are
// []any, maps MapValue, structs []any in field order.
type decoder func(raw []byte) (any, error)

// MapValue is a map column's value: its entries in the event's order.
type MapValue []MapEntry

// MapEntry is one entry of a MapValue.
type MapEntry struct {
	Key   string
	Value any
}

func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// decodeValue decodes raw with dec; JSON null is nil.
func decodeValue(dec decoder, raw []byte) (any, error) {
	if isNull(raw) {
		return nil, nil
	}
	return dec(bytes.TrimSpace(raw))
}

func intDecoder(bits int) decoder {
	return func(raw []byte) (any, error) {
		n, err := strconv.ParseInt(string(raw), 10, bits)
		if err != nil {
			return nil, fmt.Errorf("not a %d-bit integer", bits)
		}
		switch bits {
		case 8:
			return int8(n), nil
		case 16:
			return int16(n), nil
		case 32:
			return int32(n), nil
		}
		return n, nil
	}
}

// floatDecoder reads a JSON number, or the text JsonConverter writes
// for what JSON has no number for: "NaN", "Infinity", "-Infinity".
func floatDecoder(bits int) decoder {
	return func(raw []byte) (any, error) {
		s := string(raw)
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			switch s {
			case "NaN", "Infinity", "-Infinity":
			default:
				return nil, errors.New("not a number")
			}
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errors.New("not a number")
		}
		if err != nil && !math.IsInf(f, 0) {
			return nil, errors.New("out of range")
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	}
}

func boolDecoder(raw []byte) (any, error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, errors.New("not a boolean")
}

func stringDecoder(raw []byte) (any, error) {
	if raw[0] != '"' {
		return nil, errors.New("not a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s, nil
}

func bytesDecoder(raw []byte) (any, error) {
	s, err := stringDecoder(raw)
	if err != nil {
		return nil, errors.New("not base64 text")
	}
	b, err := base64.StdEncoding.DecodeString(s.(string))
	if err != nil {
		return nil, errors.New("not base64 text")
	}
	return b, nil
}

// twosComplement reads big-endian two's complement bytes, as Connect's
// Decimal encodes an unscaled value.
func twosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// decimalDecoder reads Connect's Decimal: base64 of the unscaled value,
// the scale being the schema's (the event's own: after ALTER COLUMN TYPE
// numeric(14,3) the events say scale 3, whatever the table held before).
func decimalDecoder(precision, scale int) decoder {
	return func(raw []byte) (any, error) {
		b, err := bytesDecoder(raw)
		if err != nil {
			return nil, err
		}
		d := actions.Decimal{Unscaled: twosComplement(b.([]byte)), Scale: scale}
		if !d.Fits(precision) {
			return nil, fmt.Errorf("%s has more than %d digits", d, precision)
		}
		return d, nil
	}
}

// variableValue reads io.debezium.data.VariableScaleDecimal: {"scale":
// s, "value": base64 of the unscaled value}.
func variableValue(raw []byte) (actions.Decimal, error) {
	var v struct {
		Scale *int   `json:"scale"`
		Value []byte `json:"value"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Scale == nil || v.Value == nil {
		return actions.Decimal{}, errors.New(`not {"scale": s, "value": base64}`)
	}
	if *v.Scale < 0 || *v.Scale > 1000 {
		return actions.Decimal{}, fmt.Errorf("scale %d is out of range", *v.Scale)
	}
	return actions.Decimal{Unscaled: twosComplement(v.Value), Scale: *v.Scale}, nil
}

func variableDecimal(scale int) decoder {
	return func(raw []byte) (any, error) {
		d, err := variableValue(raw)
		if err != nil {
			return nil, err
		}
		r, err := d.Rescale(scale)
		if err != nil {
			return nil, fmt.Errorf("%s has more than %d fractional digits (the chosen scale of unconstrained numerics)", d, scale)
		}
		if !r.Fits(actions.MaxDecimalPrecision) {
			return nil, fmt.Errorf("%s has more than %d integer digits (decimal(38,%d))", d, actions.MaxDecimalPrecision-scale, scale)
		}
		return r, nil
	}
}

// variableDecimalText is the value's exact text at its own scale, as
// Postgres prints it ("1.50" stays "1.50").
func variableDecimalText(raw []byte) (any, error) {
	d, err := variableValue(raw)
	if err != nil {
		return nil, err
	}
	return d.String(), nil
}

func daysDecoder(raw []byte) (any, error) {
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		return nil, errors.New("not a number of days")
	}
	return actions.Date(n), nil
}

func isoDateDecoder(raw []byte) (any, error) {
	s, err := stringDecoder(raw)
	if err != nil {
		return nil, err
	}
	return actions.ParseDate(s.(string))
}

// epochDecoder reads a count since the epoch in a unit: milliseconds
// (perMicro 1000: times 1000), microseconds (1) or nanoseconds (-1000:
// divided by 1000, which must be exact: Delta holds microseconds).
func epochDecoder(perMicro int64) decoder {
	return func(raw []byte) (any, error) {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, errors.New("not a number")
		}
		us, err := toMicros(n, perMicro)
		if err != nil {
			return nil, err
		}
		return actions.TimestampNTZ(us), nil
	}
}

func toMicros(n, perMicro int64) (int64, error) {
	switch {
	case perMicro > 1:
		if n > math.MaxInt64/perMicro || n < math.MinInt64/perMicro {
			return 0, errors.New("out of range")
		}
		return n * perMicro, nil
	case perMicro < 0:
		if n%(-perMicro) != 0 {
			return 0, errors.New("has nanoseconds, which Delta's microseconds cannot hold")
		}
		return n / -perMicro, nil
	}
	return n, nil
}

func isoTimestampNTZDecoder(raw []byte) (any, error) {
	s, err := stringDecoder(raw)
	if err != nil {
		return nil, err
	}
	return actions.ParseTimestampNTZ(s.(string))
}

// zonedTimestampDecoder reads io.debezium.time.ZonedTimestamp: ISO-8601
// text with an offset ("2026-01-01T10:00:00.123456Z").
func zonedTimestampDecoder(raw []byte) (any, error) {
	s, err := stringDecoder(raw)
	if err != nil {
		return nil, err
	}
	return actions.ParseTimestamp(s.(string))
}

// timeOfDayDecoder reads a time of day counted from midnight (in
// milliseconds: perMicro 1000, microseconds: 1, nanoseconds: -1000) into
// its text as Postgres prints a time: "HH:MM:SS" and the fraction
// without trailing zeros ("10:00:00.5"). Delta has no time type; the
// text sorts in time order and reads as Postgres shows it.
func timeOfDayDecoder(perMicro int64) decoder {
	return func(raw []byte) (any, error) {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, errors.New("not a number")
		}
		us, err := toMicros(n, perMicro)
		if err != nil {
			return nil, err
		}
		if us < 0 || us > 24*3600*1e6 {
			return nil, errors.New("not a time of day")
		}
		return TimeText(us), nil
	}
}

// TimeText is a time of day in microseconds since midnight as Postgres
// prints a time: "HH:MM:SS" with the fraction's significant digits.
func TimeText(us int64) string {
	s := us / 1e6
	b := fmt.Appendf(nil, "%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if frac := us % 1e6; frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		b = append(append(b, '.'), f...)
	}
	return string(b)
}

func arrayDecoder(elem decoder) decoder {
	return func(raw []byte) (any, error) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, errors.New("not an array")
		}
		out := make([]any, len(items))
		for i, it := range items {
			v, err := decodeValue(elem, it)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
}

func mapDecoder(val decoder) decoder {
	return func(raw []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
			return nil, errors.New("not an object")
		}
		var out MapValue
		for d.More() {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			var rv json.RawMessage
			if err := d.Decode(&rv); err != nil {
				return nil, err
			}
			v, err := decodeValue(val, rv)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", tok, err)
			}
			out = append(out, MapEntry{Key: tok.(string), Value: v})
		}
		return out, nil
	}
}

func structDecoder(names []string, decs []decoder) decoder {
	return func(raw []byte) (any, error) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, errors.New("not an object")
		}
		out := make([]any, len(names))
		for i, n := range names {
			v, err := decodeValue(decs[i], obj[n])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", n, err)
			}
			out[i] = v
		}
		return out, nil
	}
}

// AppendValue appends v, a value in the form a decoder gives (nil for
// null), to b, a builder of its Delta type's Arrow form
// (actions.ArrowType): arrays, maps and structs element by element, the
// rest through actions.AppendArrowValue.
func AppendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.ListBuilder:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("cdc: cannot append %T to %s", v, b.Type())
		}
		b.Append(true)
		for _, it := range items {
			if err := AppendValue(b.ValueBuilder(), it); err != nil {
				return err
			}
		}
		return nil
	case *array.MapBuilder:
		m, ok := v.(MapValue)
		if !ok {
			return fmt.Errorf("cdc: cannot append %T to %s", v, b.Type())
		}
		b.Append(true)
		for _, e := range m {
			b.KeyBuilder().(*array.StringBuilder).Append(e.Key)
			if err := AppendValue(b.ItemBuilder(), e.Value); err != nil {
				return err
			}
		}
		return nil
	case *array.StructBuilder:
		fields, ok := v.([]any)
		if !ok || len(fields) != b.NumField() {
			return fmt.Errorf("cdc: cannot append %T to %s", v, b.Type())
		}
		b.Append(true)
		for i, f := range fields {
			if err := AppendValue(b.FieldBuilder(i), f); err != nil {
				return err
			}
		}
		return nil
	}
	return actions.AppendArrowValue(b, v)
}
