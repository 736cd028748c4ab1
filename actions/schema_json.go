package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The JSON form of a schema is Spark's (PROTOCOL.md "Schema Serialization
// Format"): a primitive type is a JSON string ("long", "decimal(10,2)"),
// and struct, array and map types are objects:
//
//	{"type":"struct","fields":[{"name":..,"type":..,"nullable":..,"metadata":{..}}]}
//	{"type":"array","elementType":..,"containsNull":..}
//	{"type":"map","keyType":..,"valueType":..,"valueContainsNull":..}
//
// Reading is as lenient as Spark where Spark is lenient: a field without
// "nullable" is nullable, one without "metadata" has none, and a decimal
// may be spelled with spaces ("decimal(10, 2)") or bare ("decimal", which
// is decimal(10,0)). A missing containsNull or valueContainsNull reads as
// true. Writing prints what Spark prints, keys in Spark's order.

// primitiveTypes are the primitive type names of schemaString.
var primitiveTypes = map[string]PrimitiveType{
	"string": TypeString, "long": TypeLong, "integer": TypeInteger,
	"short": TypeShort, "byte": TypeByte, "float": TypeFloat,
	"double": TypeDouble, "boolean": TypeBoolean, "binary": TypeBinary,
	"date": TypeDate, "timestamp": TypeTimestamp,
	"timestamp_ntz": TypeTimestampNTZ, "variant": TypeVariant,
}

// MaxDecimalPrecision is the largest precision of a Delta decimal.
const MaxDecimalPrecision = 38

// ParseSchema parses a metaData schemaString: the JSON form of a struct
// type. An unknown type, or a struct, array or map that lacks a part, is
// an error naming the field's path ("a.b", "tags.element", "m.key"). Field
// metadata is kept as decoded JSON with numbers as json.Number, so that
// column-mapping ids and other numbers keep their exact text.
func ParseSchema(schemaString string) (*StructType, error) {
	t, err := ParseDataType([]byte(schemaString))
	if err != nil {
		return nil, err
	}
	st, ok := t.(*StructType)
	if !ok {
		return nil, fmt.Errorf("actions: schema: top-level type is %s, want struct", t)
	}
	return st, nil
}

// ParseDataType parses the JSON form of any Delta type: a quoted primitive
// name or a struct, array or map object.
func ParseDataType(b []byte) (DataType, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("actions: schema: %w", err)
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) != 0 {
		return nil, errors.New("actions: schema: data after the JSON value")
	}
	t, err := typeFromJSON(v, "")
	if err != nil {
		return nil, fmt.Errorf("actions: schema: %w", err)
	}
	return t, nil
}

// SchemaString returns the schemaString of s, as Spark prints it.
func SchemaString(s *StructType) (string, error) {
	b, err := s.MarshalJSON()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// MarshalDataType returns the JSON form of any Delta type.
func MarshalDataType(t DataType) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendTypeJSON(&buf, t, ""); err != nil {
		return nil, fmt.Errorf("actions: schema: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalJSON returns the JSON form of the struct type, as Spark prints
// it: field keys in the order name, type, nullable, metadata; metadata {}
// when a field has none, its keys sorted.
func (s *StructType) MarshalJSON() ([]byte, error) {
	if s == nil {
		return nil, errors.New("actions: schema: nil struct type")
	}
	return MarshalDataType(s)
}

// UnmarshalJSON parses the JSON form of a struct type, as ParseSchema does.
func (s *StructType) UnmarshalJSON(b []byte) error {
	st, err := ParseSchema(string(b))
	if err != nil {
		return err
	}
	*s = *st
	return nil
}

// ParsePrimitiveType parses a primitive type name as schemaString spells
// it: "long", "timestamp_ntz", "decimal(10,2)".
func ParsePrimitiveType(name string) (DataType, error) {
	if p, ok := primitiveTypes[name]; ok {
		return p, nil
	}
	if rest, ok := strings.CutPrefix(name, "decimal"); ok {
		return parseDecimalSuffix(rest, name)
	}
	return nil, fmt.Errorf("unknown type %q", name)
}

// parseDecimalSuffix parses what follows "decimal": nothing, or
// "(p,s)" with optional spaces.
func parseDecimalSuffix(rest, name string) (DataType, error) {
	if rest == "" {
		return &DecimalType{Precision: 10, Scale: 0}, nil
	}
	inner, ok := strings.CutPrefix(rest, "(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	ps, ss, ok2 := strings.Cut(inner, ",")
	if !ok || !ok2 {
		return nil, fmt.Errorf("unknown type %q", name)
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(ps))
	s, err2 := strconv.Atoi(strings.TrimSpace(ss))
	if err1 != nil || err2 != nil || !allDigits(strings.TrimSpace(ps)) || !allDigits(strings.TrimSpace(ss)) {
		return nil, fmt.Errorf("unknown type %q", name)
	}
	d := &DecimalType{Precision: p, Scale: s}
	if err := d.validate(); err != nil {
		return nil, err
	}
	return d, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (t *DecimalType) validate() error {
	if t.Precision < 1 || t.Precision > MaxDecimalPrecision {
		return fmt.Errorf("decimal precision %d is outside 1..%d", t.Precision, MaxDecimalPrecision)
	}
	if t.Scale < 0 || t.Scale > t.Precision {
		return fmt.Errorf("decimal scale %d is outside 0..%d", t.Scale, t.Precision)
	}
	return nil
}

// fieldErr prefixes err with the field path, when there is one.
func fieldErr(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("field %q: %w", path, err)
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// typeFromJSON converts a decoded JSON value (strings, json.Number,
// map[string]any, []any) into a DataType. path names the field, for errors.
func typeFromJSON(v any, path string) (DataType, error) {
	switch x := v.(type) {
	case string:
		t, err := ParsePrimitiveType(x)
		if err != nil {
			return nil, fieldErr(path, err)
		}
		return t, nil
	case map[string]any:
		kind, _ := x["type"].(string)
		switch kind {
		case "struct":
			return structFromJSON(x, path)
		case "array":
			elem, ok := x["elementType"]
			if !ok {
				return nil, fieldErr(path, errors.New("array without elementType"))
			}
			et, err := typeFromJSON(elem, joinPath(path, "element"))
			if err != nil {
				return nil, err
			}
			cn, err := optBool(x, "containsNull", path)
			if err != nil {
				return nil, err
			}
			return &ArrayType{ElementType: et, ContainsNull: cn}, nil
		case "map":
			kv, ok1 := x["keyType"]
			vv, ok2 := x["valueType"]
			if !ok1 || !ok2 {
				return nil, fieldErr(path, errors.New("map without keyType or valueType"))
			}
			kt, err := typeFromJSON(kv, joinPath(path, "key"))
			if err != nil {
				return nil, err
			}
			vt, err := typeFromJSON(vv, joinPath(path, "value"))
			if err != nil {
				return nil, err
			}
			vcn, err := optBool(x, "valueContainsNull", path)
			if err != nil {
				return nil, err
			}
			return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vcn}, nil
		case "":
			return nil, fieldErr(path, errors.New("type object without a \"type\" name"))
		default:
			return nil, fieldErr(path, fmt.Errorf("unknown type %q", kind))
		}
	default:
		return nil, fieldErr(path, fmt.Errorf("type is %s, want a type name or object", jsonKind(v)))
	}
}

// optBool reads an optional boolean key; absent means true.
func optBool(obj map[string]any, key, path string) (bool, error) {
	v, ok := obj[key]
	if !ok {
		return true, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fieldErr(path, fmt.Errorf("%s is %s, want a boolean", key, jsonKind(v)))
	}
	return b, nil
}

func structFromJSON(obj map[string]any, path string) (*StructType, error) {
	raw, ok := obj["fields"].([]any)
	if !ok {
		return nil, fieldErr(path, fmt.Errorf("struct fields is %s, want an array", jsonKind(obj["fields"])))
	}
	st := &StructType{Fields: make([]*StructField, 0, len(raw))}
	for i, rf := range raw {
		fo, ok := rf.(map[string]any)
		if !ok {
			return nil, fieldErr(path, fmt.Errorf("struct field %d is %s, want an object", i, jsonKind(rf)))
		}
		name, ok := fo["name"].(string)
		if !ok {
			return nil, fieldErr(path, fmt.Errorf("struct field %d has no name", i))
		}
		fpath := joinPath(path, name)
		tv, ok := fo["type"]
		if !ok {
			return nil, fieldErr(fpath, errors.New("no type"))
		}
		t, err := typeFromJSON(tv, fpath)
		if err != nil {
			return nil, err
		}
		nullable, err := optBool(fo, "nullable", fpath)
		if err != nil {
			return nil, err
		}
		f := &StructField{Name: name, Type: t, Nullable: nullable}
		switch md := fo["metadata"].(type) {
		case nil:
		case map[string]any:
			if len(md) > 0 {
				f.Metadata = md
			}
		default:
			return nil, fieldErr(fpath, fmt.Errorf("metadata is %s, want an object", jsonKind(md)))
		}
		st.Fields = append(st.Fields, f)
	}
	return st, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null or absent"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// appendTypeJSON writes the JSON form of t.
func appendTypeJSON(buf *bytes.Buffer, t DataType, path string) error {
	switch x := t.(type) {
	case PrimitiveType:
		if _, ok := primitiveTypes[string(x)]; !ok {
			return fieldErr(path, fmt.Errorf("unknown type %q", string(x)))
		}
		appendJSONString(buf, string(x))
	case *DecimalType:
		if x == nil {
			return fieldErr(path, errors.New("nil type"))
		}
		if err := x.validate(); err != nil {
			return fieldErr(path, err)
		}
		appendJSONString(buf, x.String())
	case *ArrayType:
		if x == nil {
			return fieldErr(path, errors.New("nil type"))
		}
		buf.WriteString(`{"type":"array","elementType":`)
		if err := appendTypeJSON(buf, x.ElementType, joinPath(path, "element")); err != nil {
			return err
		}
		buf.WriteString(`,"containsNull":`)
		buf.WriteString(strconv.FormatBool(x.ContainsNull))
		buf.WriteByte('}')
	case *MapType:
		if x == nil {
			return fieldErr(path, errors.New("nil type"))
		}
		buf.WriteString(`{"type":"map","keyType":`)
		if err := appendTypeJSON(buf, x.KeyType, joinPath(path, "key")); err != nil {
			return err
		}
		buf.WriteString(`,"valueType":`)
		if err := appendTypeJSON(buf, x.ValueType, joinPath(path, "value")); err != nil {
			return err
		}
		buf.WriteString(`,"valueContainsNull":`)
		buf.WriteString(strconv.FormatBool(x.ValueContainsNull))
		buf.WriteByte('}')
	case *StructType:
		if x == nil {
			return fieldErr(path, errors.New("nil type"))
		}
		buf.WriteString(`{"type":"struct","fields":[`)
		for i, f := range x.Fields {
			if f == nil {
				return fieldErr(path, fmt.Errorf("struct field %d is nil", i))
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			fpath := joinPath(path, f.Name)
			buf.WriteString(`{"name":`)
			appendJSONString(buf, f.Name)
			buf.WriteString(`,"type":`)
			if err := appendTypeJSON(buf, f.Type, fpath); err != nil {
				return err
			}
			buf.WriteString(`,"nullable":`)
			buf.WriteString(strconv.FormatBool(f.Nullable))
			buf.WriteString(`,"metadata":`)
			if len(f.Metadata) == 0 {
				buf.WriteString("{}")
			} else {
				b, err := marshalNoEscape(f.Metadata)
				if err != nil {
					return fieldErr(fpath, fmt.Errorf("metadata: %w", err))
				}
				buf.Write(b)
			}
			buf.WriteByte('}')
		}
		buf.WriteString("]}")
	case nil:
		return fieldErr(path, errors.New("nil type"))
	default:
		return fieldErr(path, fmt.Errorf("unknown type %T", t))
	}
	return nil
}

func appendJSONString(buf *bytes.Buffer, s string) {
	b, _ := marshalNoEscape(s) // a string always encodes
	buf.Write(b)
}

// MarshalField returns the JSON form of one struct field, as a field of
// a schemaString: {"name":...,"type":...,"nullable":...,"metadata":...}.
func MarshalField(f *StructField) ([]byte, error) {
	b, err := MarshalDataType(&StructType{Fields: []*StructField{f}})
	if err != nil {
		return nil, err
	}
	const pre, post = `{"type":"struct","fields":[`, `]}`
	return b[len(pre) : len(b)-len(post)], nil
}
