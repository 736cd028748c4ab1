package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// A Debezium change event, as Kafka Connect's JsonConverter writes it:
// with the schema part ({"schema": ..., "payload": {...}}, the
// converter's schemas.enable=true) or without it (the payload alone). A
// record with no value is a tombstone: Debezium sends one after each
// delete so that log compaction can drop the key.
//
//	{"before": {...} | null, "after": {...} | null,
//	 "source": {"ts_ms": ..., "lsn": ..., "txId": ..., ...},
//	 "op": "c" | "u" | "d" | "r", "ts_ms": ...}
//
// op c is an insert, u an update, d a delete (the row is before: with the
// table's default replica identity only its key columns), r a row read by
// the initial snapshot.

// event is one decoded change event.
type event struct {
	op         string
	tsMs       *int64 // when Debezium processed it
	sourceTsMs *int64 // when the database committed it
	lsn        *int64 // the change's position in the WAL (Postgres)
	txID       *int64
	// row is the row image: after for c, u and r; before for d.
	row map[string]json.RawMessage
	// fields are the row's columns in order, with their types when the
	// message had a schema (typed is false without one).
	fields []rowField
	typed  bool
}

// rowField is a column of the row image.
type rowField struct {
	name   string
	schema *connectSchema // nil without the schema part
}

// connectSchema is a Kafka Connect schema as JsonConverter writes it.
type connectSchema struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Parameters map[string]string `json:"parameters"`
	Fields     []*connectSchema  `json:"fields"`
	Items      *connectSchema    `json:"items"`
	Keys       *connectSchema    `json:"keys"`
	Values     *connectSchema    `json:"values"`
}

type payload struct {
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	Source *struct {
		TsMs *int64 `json:"ts_ms"`
		LSN  *int64 `json:"lsn"`
		TxID *int64 `json:"txId"`
	} `json:"source"`
	Op   string `json:"op"`
	TsMs *int64 `json:"ts_ms"`
}

// errTombstone is a record without a value.
var errTombstone = errors.New("tombstone")

// decodeEvent decodes a record's value. A tombstone is errTombstone.
func decodeEvent(value []byte) (*event, error) {
	if len(bytes.TrimSpace(value)) == 0 || bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
		return nil, errTombstone
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(value, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	raw := value
	var schema *connectSchema
	if s, ok := top["schema"]; ok {
		p, ok := top["payload"]
		if !ok {
			return nil, errors.New(`a "schema" without a "payload"`)
		}
		if err := json.Unmarshal(s, &schema); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		raw = p
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	e := &event{op: p.Op, tsMs: p.TsMs, typed: schema != nil}
	if p.Source != nil {
		e.sourceTsMs, e.lsn, e.txID = p.Source.TsMs, p.Source.LSN, p.Source.TxID
	}
	image, imageName := p.After, "after"
	switch p.Op {
	case "c", "u", "r":
	case "d":
		image, imageName = p.Before, "before"
	case "":
		return nil, errors.New(`no "op": not a Debezium change event`)
	default:
		return nil, fmt.Errorf("op %q is not a row change (c, u, d or r); truncate and message events are not ingested", p.Op)
	}
	if len(image) == 0 || string(image) == "null" {
		return nil, fmt.Errorf("op %q without %q (a delete needs the table's key in before)", p.Op, imageName)
	}
	if err := json.Unmarshal(image, &e.row); err != nil {
		return nil, fmt.Errorf("%s: %w", imageName, err)
	}
	if schema != nil {
		var rowSchema *connectSchema
		for _, f := range schema.Fields {
			if f.Field == imageName {
				rowSchema = f
			}
		}
		if rowSchema == nil || rowSchema.Type != "struct" {
			return nil, fmt.Errorf("the schema has no struct %q", imageName)
		}
		for _, f := range rowSchema.Fields {
			e.fields = append(e.fields, rowField{name: f.Field, schema: f})
		}
	} else {
		// Without a schema the columns come in the JSON object's order.
		d := json.NewDecoder(bytes.NewReader(image))
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		for d.More() {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			e.fields = append(e.fields, rowField{name: tok.(string)})
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// deltaType is the table type of a column: from its Connect schema when
// the message has one, else inferred from a value (nil: null, no type
// yet). Debezium's logical types map to Delta's date, timestamp and
// decimal; what has no Delta counterpart (time of day, intervals,
// variable-scale decimals, nested values) is kept as its JSON text.
func deltaType(f rowField, v json.RawMessage) actions.DataType {
	if s := f.schema; s != nil {
		switch s.Name {
		case "io.debezium.time.Date":
			return actions.TypeDate
		case "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp",
			"io.debezium.time.ZonedTimestamp", "org.apache.kafka.connect.data.Timestamp":
			return actions.TypeTimestamp
		case "org.apache.kafka.connect.data.Decimal":
			scale, err := strconv.Atoi(s.Parameters["scale"])
			if err != nil {
				return actions.TypeString
			}
			precision, err := strconv.Atoi(s.Parameters["connect.decimal.precision"])
			if err != nil || precision > 38 || precision < scale {
				precision = 38
			}
			return &actions.DecimalType{Precision: precision, Scale: scale}
		case "org.apache.kafka.connect.data.Date":
			return actions.TypeDate
		}
		if s.Name != "" && s.Type != "string" && s.Type != "boolean" && !isIntType(s.Type) && s.Type != "float32" && s.Type != "float64" {
			return actions.TypeString
		}
		switch s.Type {
		case "int8":
			return actions.TypeByte
		case "int16":
			return actions.TypeShort
		case "int32":
			return actions.TypeInteger
		case "int64":
			return actions.TypeLong
		case "float32":
			return actions.TypeFloat
		case "float64":
			return actions.TypeDouble
		case "boolean":
			return actions.TypeBoolean
		case "bytes":
			return actions.TypeBinary
		}
		return actions.TypeString
	}
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return nil
	case v[0] == '"':
		return actions.TypeString
	case string(v) == "true" || string(v) == "false":
		return actions.TypeBoolean
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		if bytes.ContainsAny(v, ".eE") {
			return actions.TypeDouble
		}
		return actions.TypeLong
	}
	return actions.TypeString
}

func isIntType(t string) bool { return t == "int8" || t == "int16" || t == "int32" || t == "int64" }

// value converts a column's JSON value to the form the JSON Lines decoder
// reads for the table type t: Debezium's encodings of dates (days since
// the epoch), timestamps (milli-, micro- or nanoseconds, or ISO text) and
// decimals (base64 of the unscaled big-endian two's complement) become
// text; values kept as text are their JSON text.
func value(f rowField, t actions.DataType, v json.RawMessage) (any, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	name := ""
	if f.schema != nil {
		name = f.schema.Name
	}
	switch t {
	case actions.TypeString:
		if v[0] == '"' {
			return v, nil
		}
		return string(v), nil // a number, boolean or nested value, as its JSON text
	case actions.TypeDate:
		if v[0] == '"' {
			return v, nil
		}
		days, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("date %s is not a number of days", v)
		}
		return time.Unix(days*86400, 0).UTC().Format(time.DateOnly), nil
	case actions.TypeTimestamp:
		if v[0] == '"' {
			return v, nil // ZonedTimestamp: ISO-8601 text
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("timestamp %s is not a number", v)
		}
		var ts time.Time
		switch name {
		case "io.debezium.time.MicroTimestamp":
			ts = time.UnixMicro(n)
		case "io.debezium.time.NanoTimestamp":
			ts = time.Unix(0, n)
		default:
			ts = time.UnixMilli(n)
		}
		return ts.UTC().Format(time.RFC3339Nano), nil
	}
	if d, ok := t.(*actions.DecimalType); ok && name == "org.apache.kafka.connect.data.Decimal" && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("decimal %s is not base64", v)
		}
		unscaled := new(big.Int).SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 { // negative: two's complement
			unscaled.Sub(unscaled, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		return decimalText(unscaled, d.Scale), nil
	}
	return v, nil
}

// decimalText writes unscaled × 10^-scale.
func decimalText(unscaled *big.Int, scale int) string {
	s := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// sortedNames is the names of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
