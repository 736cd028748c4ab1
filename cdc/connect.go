package cdc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// ConnectSchema is a Kafka Connect schema as Connect's JsonConverter
// writes it in the "schema" part of a message (schemas.enable=true): a
// type ("int8", "int16", "int32", "int64", "float", "double", "boolean",
// "string", "bytes", "array", "map", "struct"), optionally a logical
// type's name and parameters, and a default value in the payload's
// encoding.
type ConnectSchema struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name,omitempty"`
	Version    int               `json:"version,omitempty"`
	Field      string            `json:"field,omitempty"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Default    json.RawMessage   `json:"default,omitempty"`
	Fields     []*ConnectSchema  `json:"fields,omitempty"`
	Items      *ConnectSchema    `json:"items,omitempty"`
	Keys       *ConnectSchema    `json:"keys,omitempty"`
	Values     *ConnectSchema    `json:"values,omitempty"`
}

// String is the schema's type as messages name it: "int32",
// "bytes org.apache.kafka.connect.data.Decimal", "array<string>".
func (s *ConnectSchema) String() string {
	if s == nil {
		return "no schema"
	}
	t := s.Type
	switch {
	case s.Type == "array" && s.Items != nil:
		t = "array<" + s.Items.String() + ">"
	case s.Type == "map" && s.Keys != nil && s.Values != nil:
		t = "map<" + s.Keys.String() + "," + s.Values.String() + ">"
	}
	if s.Name != "" {
		t += " " + s.Name
	}
	return t
}

// The logical types of Kafka Connect and Debezium that the decoder maps.
// Any other named type is refused (*TypeError), never guessed.
const (
	connectDecimal   = "org.apache.kafka.connect.data.Decimal"
	connectDate      = "org.apache.kafka.connect.data.Date"
	connectTime      = "org.apache.kafka.connect.data.Time"
	connectTimestamp = "org.apache.kafka.connect.data.Timestamp"

	dbzVariableDecimal = "io.debezium.data.VariableScaleDecimal"
	dbzDate            = "io.debezium.time.Date"
	dbzTimestamp       = "io.debezium.time.Timestamp"
	dbzMicroTimestamp  = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp   = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp  = "io.debezium.time.ZonedTimestamp"
	dbzIsoDate         = "io.debezium.time.IsoDate"
	dbzIsoTimestamp    = "io.debezium.time.IsoTimestamp"
	dbzTime            = "io.debezium.time.Time"
	dbzMicroTime       = "io.debezium.time.MicroTime"
	dbzNanoTime        = "io.debezium.time.NanoTime"
	dbzZonedTime       = "io.debezium.time.ZonedTime"
	dbzIsoTime         = "io.debezium.time.IsoTime"
	dbzMicroDuration   = "io.debezium.time.MicroDuration"
	dbzInterval        = "io.debezium.time.Interval"
	dbzYear            = "io.debezium.time.Year"
	dbzJSON            = "io.debezium.data.Json"
	dbzXML             = "io.debezium.data.Xml"
	dbzUUID            = "io.debezium.data.Uuid"
	dbzEnum            = "io.debezium.data.Enum"
	dbzEnumSet         = "io.debezium.data.EnumSet"
	dbzLtree           = "io.debezium.data.Ltree"
	dbzBits            = "io.debezium.data.Bits"
)

// NumericMode says what a numeric column without a declared precision
// and scale (Postgres's unconstrained numeric, which Debezium sends as
// io.debezium.data.VariableScaleDecimal: each value with its own scale)
// becomes. There is no default: an event with such a column is refused
// until the caller chooses (WithVariableNumeric).
type NumericMode struct {
	// AsString keeps each value as its exact decimal text ("12.5",
	// "-0.000001"); Scale is then unused.
	AsString bool
	// Scale is the scale of decimal(38, Scale) otherwise: a value with
	// more fractional digits (other than trailing zeros) or more than
	// 38-Scale integer digits is an error naming the column, never
	// rounded.
	Scale int
}

// Column is a column of a source table's row, as its change events
// describe it.
type Column struct {
	Name     string
	Type     actions.DataType
	Nullable bool // false for a column declared NOT NULL
	// Default is the column's default value (as Value's forms: int32,
	// string, actions.Decimal, ...) when the schema declares one
	// (HasDefault): what Postgres gives existing rows when the column is
	// added.
	Default    any
	HasDefault bool
	// Source is the Connect schema the column came from, for messages.
	Source string

	decode decoder
}

// RowSchema is the shape of a source table's rows in change events: its
// columns in the table's order.
type RowSchema struct {
	// Name is the row struct's Connect name (server.schema.table.Value).
	Name    string
	Columns []Column
	index   map[string]int
}

// Column returns the column named name, or nil.
func (r *RowSchema) Column(name string) *Column {
	if i, ok := r.index[name]; ok {
		return &r.Columns[i]
	}
	return nil
}

// StructType is the row as a Delta schema.
func (r *RowSchema) StructType() *actions.StructType {
	st := &actions.StructType{}
	for _, c := range r.Columns {
		st.Fields = append(st.Fields, &actions.StructField{Name: c.Name, Type: c.Type, Nullable: c.Nullable})
	}
	return st
}

// rowSchemaOf maps a row struct's Connect schema to Delta columns.
func rowSchemaOf(s *ConnectSchema, opts *options) (*RowSchema, error) {
	if s.Type != "struct" {
		return nil, fmt.Errorf("cdc: the row is a %s, not a struct", s)
	}
	rs := &RowSchema{Name: s.Name, index: map[string]int{}}
	for _, f := range s.Fields {
		c, err := columnOf(f, opts)
		if err != nil {
			return nil, err
		}
		if _, dup := rs.index[c.Name]; dup {
			return nil, fmt.Errorf("cdc: the row has two columns named %q", c.Name)
		}
		rs.index[c.Name] = len(rs.Columns)
		rs.Columns = append(rs.Columns, c)
	}
	return rs, nil
}

// columnOf maps one field of a row struct.
func columnOf(f *ConnectSchema, opts *options) (Column, error) {
	t, dec, err := typeOf(f, opts)
	if err != nil {
		var te *TypeError
		if e, ok := err.(*TypeError); ok {
			te = e
		} else {
			te = &TypeError{Type: f.String(), Reason: err.Error()}
		}
		te.Column = f.Field
		return Column{}, te
	}
	c := Column{Name: f.Field, Type: t, Nullable: f.Optional, Source: f.String(), decode: dec}
	if len(f.Default) > 0 && !bytes.Equal(bytes.TrimSpace(f.Default), []byte("null")) {
		v, err := dec(f.Default)
		if err != nil {
			return Column{}, &ValueError{Column: f.Field, Type: f.String(), Value: string(f.Default), Err: fmt.Errorf("its default: %w", err)}
		}
		c.Default, c.HasDefault = v, true
	}
	return c, nil
}

// typeOf is the Delta type of a Connect schema and the decoder of its
// values.
func typeOf(s *ConnectSchema, opts *options) (actions.DataType, decoder, error) {
	switch s.Name {
	case "":
	case connectDecimal:
		if s.Type != "bytes" {
			break
		}
		scale, err := strconv.Atoi(s.Parameters["scale"])
		if err != nil || scale < 0 || scale > actions.MaxDecimalPrecision {
			return nil, nil, &TypeError{Type: s.String(), Reason: fmt.Sprintf("scale %q is not a scale Delta can hold (0 to %d)", s.Parameters["scale"], actions.MaxDecimalPrecision)}
		}
		precision := actions.MaxDecimalPrecision
		if p, ok := s.Parameters["connect.decimal.precision"]; ok {
			if precision, err = strconv.Atoi(p); err != nil || precision < 1 {
				return nil, nil, &TypeError{Type: s.String(), Reason: fmt.Sprintf("precision %q is not a number", p)}
			}
		}
		if precision > actions.MaxDecimalPrecision {
			return nil, nil, &TypeError{Type: s.String(), Reason: fmt.Sprintf("precision %d is more than Delta's decimal holds (%d); have Debezium send it as text (decimal.handling.mode=string)", precision, actions.MaxDecimalPrecision)}
		}
		precision = max(precision, scale)
		return &actions.DecimalType{Precision: precision, Scale: scale}, decimalDecoder(precision, scale), nil
	case dbzVariableDecimal:
		if s.Type != "struct" {
			break
		}
		if opts.numeric == nil {
			return nil, nil, &TypeError{Type: s.String(), Reason: "a numeric without precision and scale has a scale per value: choose decimal(38, s) or text for it (cdc.WithVariableNumeric; pipeline setting variable_numeric)"}
		}
		if opts.numeric.AsString {
			return actions.TypeString, variableDecimalText, nil
		}
		scale := opts.numeric.Scale
		return &actions.DecimalType{Precision: actions.MaxDecimalPrecision, Scale: scale}, variableDecimal(scale), nil
	case connectDate, dbzDate:
		if s.Type == "int32" {
			return actions.TypeDate, daysDecoder, nil
		}
	case dbzIsoDate:
		if s.Type == "string" {
			return actions.TypeDate, isoDateDecoder, nil
		}
	case connectTimestamp, dbzTimestamp:
		if s.Type == "int64" {
			return actions.TypeTimestampNTZ, epochDecoder(1000), nil
		}
	case dbzMicroTimestamp:
		if s.Type == "int64" {
			return actions.TypeTimestampNTZ, epochDecoder(1), nil
		}
	case dbzNanoTimestamp:
		if s.Type == "int64" {
			return actions.TypeTimestampNTZ, epochDecoder(-1000), nil
		}
	case dbzIsoTimestamp:
		if s.Type == "string" {
			return actions.TypeTimestampNTZ, isoTimestampNTZDecoder, nil
		}
	case dbzZonedTimestamp:
		if s.Type == "string" {
			return actions.TypeTimestamp, zonedTimestampDecoder, nil
		}
	case connectTime, dbzTime:
		if s.Type == "int32" {
			return actions.TypeString, timeOfDayDecoder(1000), nil
		}
	case dbzMicroTime:
		if s.Type == "int64" {
			return actions.TypeString, timeOfDayDecoder(1), nil
		}
	case dbzNanoTime:
		if s.Type == "int64" {
			return actions.TypeString, timeOfDayDecoder(-1000), nil
		}
	case dbzZonedTime, dbzIsoTime, dbzInterval, dbzJSON, dbzXML, dbzUUID, dbzEnum, dbzEnumSet, dbzLtree:
		if s.Type == "string" {
			return actions.TypeString, stringDecoder, nil
		}
	case dbzMicroDuration:
		if s.Type == "int64" {
			return actions.TypeLong, intDecoder(64), nil
		}
	case dbzYear:
		if s.Type == "int32" {
			return actions.TypeInteger, intDecoder(32), nil
		}
	case dbzBits:
		switch s.Type {
		case "bytes":
			return actions.TypeBinary, bytesDecoder, nil
		case "boolean":
			return actions.TypeBoolean, boolDecoder, nil
		}
	default:
		return nil, nil, &TypeError{Type: s.String(), Reason: "an unknown logical type (map it by hand, or have the connector send it as one it knows)"}
	}
	if s.Name != "" {
		return nil, nil, &TypeError{Type: s.String(), Reason: fmt.Sprintf("logical type %s on Connect type %s", s.Name, s.Type)}
	}
	switch s.Type {
	case "int8":
		return actions.TypeByte, intDecoder(8), nil
	case "int16":
		return actions.TypeShort, intDecoder(16), nil
	case "int32":
		return actions.TypeInteger, intDecoder(32), nil
	case "int64":
		return actions.TypeLong, intDecoder(64), nil
	case "float":
		return actions.TypeFloat, floatDecoder(32), nil
	case "double":
		return actions.TypeDouble, floatDecoder(64), nil
	case "boolean":
		return actions.TypeBoolean, boolDecoder, nil
	case "string":
		return actions.TypeString, stringDecoder, nil
	case "bytes":
		return actions.TypeBinary, bytesDecoder, nil
	case "array":
		if s.Items == nil {
			return nil, nil, &TypeError{Type: s.String(), Reason: "an array without items"}
		}
		et, dec, err := typeOf(s.Items, opts)
		if err != nil {
			return nil, nil, err
		}
		return &actions.ArrayType{ElementType: et, ContainsNull: s.Items.Optional}, arrayDecoder(dec), nil
	case "map":
		if s.Keys == nil || s.Values == nil {
			return nil, nil, &TypeError{Type: s.String(), Reason: "a map without keys or values"}
		}
		if s.Keys.Type != "string" || s.Keys.Name != "" {
			return nil, nil, &TypeError{Type: s.String(), Reason: "only maps with string keys come as JSON objects"}
		}
		vt, dec, err := typeOf(s.Values, opts)
		if err != nil {
			return nil, nil, err
		}
		return &actions.MapType{KeyType: actions.TypeString, ValueType: vt, ValueContainsNull: s.Values.Optional}, mapDecoder(dec), nil
	case "struct":
		st := &actions.StructType{}
		var decs []decoder
		var names []string
		for _, f := range s.Fields {
			t, dec, err := typeOf(f, opts)
			if err != nil {
				return nil, nil, err
			}
			st.Fields = append(st.Fields, &actions.StructField{Name: f.Field, Type: t, Nullable: f.Optional})
			decs, names = append(decs, dec), append(names, f.Field)
		}
		return st, structDecoder(names, decs), nil
	}
	return nil, nil, &TypeError{Type: s.String(), Reason: "not a Kafka Connect type (JsonConverter writes int8, int16, int32, int64, float, double, boolean, string, bytes, array, map or struct)"}
}

// typeText is a short name of a Delta type for messages.
func typeText(t actions.DataType) string {
	if t == nil {
		return "no type"
	}
	return strings.ToLower(t.String())
}
