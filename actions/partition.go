package actions

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// HiveDefaultPartition is the folder-name spelling of a null partition
// value.
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// ParsePartitionValue decodes a partitionValues entry of a column of type
// t (PROTOCOL.md "Partition Value Serialization") to the Go type listed in
// values.go. A nil pointer (JSON null) and an empty string are null, for
// every type, as the protocol says; nil is returned for them.
//
//   - Numbers are decimal text; float and double also take Java's "NaN",
//     "Infinity" and "-Infinity".
//   - boolean is "true" or "false", in any case.
//   - date is "YYYY-MM-DD".
//   - timestamp is "YYYY-MM-DD HH:MM:SS[.ffffff]" or ISO-8601 with 'T'
//     and 'Z' or an offset; see ParseTimestamp for how a value without a
//     zone is read (as UTC).
//   - timestamp_ntz is "YYYY-MM-DD HH:MM:SS[.ffffff]", without a zone.
//   - decimal is exact text that must fit the type's precision and scale.
//   - binary is the string's bytes.
//
// Struct, array, map and variant columns cannot be partition columns.
func ParsePartitionValue(t DataType, s *string) (any, error) {
	if s == nil || *s == "" {
		if _, err := partitionKind(t); err != nil {
			return nil, err
		}
		return nil, nil
	}
	v, err := parsePartitionText(t, *s)
	if err != nil {
		return nil, fmt.Errorf("actions: partition value %q of type %s: %w", *s, typeName(t), err)
	}
	return v, nil
}

// partitionKind checks that t can be a partition column's type.
func partitionKind(t DataType) (DataType, error) {
	switch x := t.(type) {
	case PrimitiveType:
		if x == TypeVariant {
			break
		}
		if _, ok := primitiveTypes[string(x)]; ok {
			return x, nil
		}
	case *DecimalType:
		if x != nil {
			return x, nil
		}
	}
	return nil, fmt.Errorf("actions: type %s cannot be a partition column", typeName(t))
}

func parsePartitionText(t DataType, s string) (any, error) {
	if _, err := partitionKind(t); err != nil {
		return nil, err
	}
	if d, ok := t.(*DecimalType); ok {
		return ParseDecimal(s, d.Precision, d.Scale)
	}
	switch p := t.(PrimitiveType); p {
	case TypeString:
		return s, nil
	case TypeBinary:
		return []byte(s), nil
	case TypeBoolean:
		switch {
		case strings.EqualFold(s, "true"):
			return true, nil
		case strings.EqualFold(s, "false"):
			return false, nil
		}
		return nil, errors.New(`want "true" or "false"`)
	case TypeByte, TypeShort, TypeInteger, TypeLong:
		bits := map[PrimitiveType]int{TypeByte: 8, TypeShort: 16, TypeInteger: 32, TypeLong: 64}[p]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("not a %d-bit integer", bits)
		}
		switch p {
		case TypeByte:
			return int8(n), nil
		case TypeShort:
			return int16(n), nil
		case TypeInteger:
			return int32(n), nil
		}
		return n, nil
	case TypeFloat, TypeDouble:
		return parseFloating(p, s)
	case TypeDate:
		return ParseDate(s)
	case TypeTimestamp:
		return ParseTimestamp(s)
	case TypeTimestampNTZ:
		return ParseTimestampNTZ(s)
	}
	return nil, fmt.Errorf("type %s cannot be a partition column", t)
}

// FormatPartitionValue encodes v, a value of type t as values.go lists
// them, for partitionValues. nil gives nil (JSON null). So does the empty
// string: Spark stores an empty string partition value as null, because
// the protocol reads "" as null.
//
// Timestamps are written in UTC as ISO-8601 with six fractional digits and
// 'Z' ("2021-10-01T08:09:20.000000Z"), the form PROTOCOL.md recommends and
// newer Spark writers use: unlike the zone-less form it means the same
// instant to every reader. timestamp_ntz is "YYYY-MM-DD HH:MM:SS.ffffff".
// Floats use the shortest text that reads back to the same value, and
// "NaN", "Infinity", "-Infinity". Decimals are written at the type's
// scale.
func FormatPartitionValue(t DataType, v any) (*string, error) {
	if v == nil {
		if _, err := partitionKind(t); err != nil {
			return nil, err
		}
		return nil, nil
	}
	s, err := formatPartitionText(t, v)
	if err != nil {
		return nil, fmt.Errorf("actions: partition value of type %s: %w", typeName(t), err)
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}

func formatPartitionText(t DataType, v any) (string, error) {
	if _, err := partitionKind(t); err != nil {
		return "", err
	}
	wrong := func() error { return fmt.Errorf("a Go %T is not a value of type %s", v, typeName(t)) }
	if dt, ok := t.(*DecimalType); ok {
		d, ok := v.(Decimal)
		if !ok {
			return "", wrong()
		}
		r, err := d.Rescale(dt.Scale)
		if err != nil || !r.Fits(dt.Precision) {
			return "", fmt.Errorf("decimal %s does not fit %s", d, dt)
		}
		return r.String(), nil
	}
	var s string
	var ok bool
	switch t.(PrimitiveType) {
	case TypeString:
		s, ok = v.(string)
	case TypeBinary:
		var b []byte
		b, ok = v.([]byte)
		s = string(b)
	case TypeBoolean:
		var b bool
		b, ok = v.(bool)
		s = strconv.FormatBool(b)
	case TypeByte:
		var n int8
		n, ok = v.(int8)
		s = strconv.FormatInt(int64(n), 10)
	case TypeShort:
		var n int16
		n, ok = v.(int16)
		s = strconv.FormatInt(int64(n), 10)
	case TypeInteger:
		var n int32
		n, ok = v.(int32)
		s = strconv.FormatInt(int64(n), 10)
	case TypeLong:
		var n int64
		n, ok = v.(int64)
		s = strconv.FormatInt(n, 10)
	case TypeFloat:
		var f float32
		f, ok = v.(float32)
		s = formatFloat(float64(f), 32)
	case TypeDouble:
		var f float64
		f, ok = v.(float64)
		s = formatFloat(f, 64)
	case TypeDate:
		var d Date
		d, ok = v.(Date)
		s = d.String()
	case TypeTimestamp:
		var ts Timestamp
		ts, ok = v.(Timestamp)
		s = ts.String()
	case TypeTimestampNTZ:
		var ts TimestampNTZ
		ts, ok = v.(TimestampNTZ)
		s = string(appendDateTime(nil, int64(ts), ' '))
	}
	if !ok {
		return "", wrong()
	}
	return s, nil
}

// formatFloat writes f with Java's names for the special values.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// escapeTable marks the bytes Hive and Spark escape in partition folder
// names (ExternalCatalogUtils.escapePathName): control characters, DEL,
// and " # % ' * / : = ? \ { [ ] ^. Spark leaves NUL alone; escaping it too
// keeps every name a valid path.
var escapeTable = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t[0x7F] = true
	for _, c := range []byte("\"#%'*/:=?\\{[]^") {
		t[c] = true
	}
	return t
}()

// EscapePartitionPath escapes a partition column name or value for use in
// a folder name: each byte of Spark's escape set becomes %XX, upper-case
// hex. Other bytes, UTF-8 included, are kept.
func EscapePartitionPath(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if escapeTable[s[i]] {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escapeTable[c] {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// UnescapePartitionPath reverses EscapePartitionPath: each %XX becomes the
// byte XX. A '%' not followed by two hex digits is an error.
func UnescapePartitionPath(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", fmt.Errorf("actions: bad escape at offset %d in partition path %q", i, s)
		}
		b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// PartitionPath returns the folder of a data file with the given
// partition values: "a=1/b=__HIVE_DEFAULT_PARTITION__/", one level per
// column of cols in order, names and values escaped, null (nil or "") as
// HiveDefaultPartition. values is keyed as partitionValues is (by the
// names in cols). When schema is not nil, every column must be in it and
// every value must parse as its type. No columns give "".
func PartitionPath(cols []string, schema *StructType, values map[string]*string) (string, error) {
	var b strings.Builder
	for _, c := range cols {
		v, ok := values[c]
		if !ok {
			return "", fmt.Errorf("actions: partition path: no value for partition column %q", c)
		}
		if schema != nil {
			f := schema.Field(c)
			if f == nil {
				return "", fmt.Errorf("actions: partition path: partition column %q is not in the schema", c)
			}
			if _, err := ParsePartitionValue(f.Type, v); err != nil {
				return "", fmt.Errorf("actions: partition path: column %q: %w", c, err)
			}
		}
		b.WriteString(EscapePartitionPath(c))
		b.WriteByte('=')
		if v == nil || *v == "" {
			b.WriteString(HiveDefaultPartition)
		} else {
			b.WriteString(EscapePartitionPath(*v))
		}
		b.WriteByte('/')
	}
	return b.String(), nil
}
