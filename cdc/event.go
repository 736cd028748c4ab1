package cdc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Op is what a change event did: Debezium's op field.
type Op string

// The ops of Debezium's envelope.
const (
	OpCreate   Op = "c" // an insert
	OpUpdate   Op = "u"
	OpDelete   Op = "d" // the row is the before image (only the key under the default replica identity)
	OpRead     Op = "r" // a row read by a snapshot
	OpTruncate Op = "t" // the table was emptied (skipped.operations must not list t)
	OpMessage  Op = "m" // a logical decoding message; not a row change
)

// Event is one decoded Debezium change event.
type Event struct {
	Op   Op
	TsMs int64 // when Debezium processed it; 0 when absent
	// Source is where and when the change happened in the database.
	Source Source
	// Transaction is the event's place in its source transaction, with
	// provide.transaction.metadata=true; nil otherwise (and for snapshot
	// reads).
	Transaction *TransactionBlock
	// Schema is the row's shape: after's, or before's for a delete. Nil
	// for a truncate.
	Schema *RowSchema
	// Key is the table's primary key columns, from the record key's
	// schema; nil for a record without a key (a table without one).
	Key []string
	// Row holds the row image's values by Schema.Columns: after for c, u
	// and r, before for d.
	Row []any
	// Unavailable[i] is true when column i's value was Debezium's
	// placeholder for an unchanged TOASTed value (Postgres's default
	// replica identity does not log it): Row[i] is then nil and is NOT
	// the column's value.
	Unavailable []bool
}

// HasUnavailable reports whether a column's value is missing (TOAST).
func (e *Event) HasUnavailable() bool {
	for _, u := range e.Unavailable {
		if u {
			return true
		}
	}
	return false
}

// Source is the event's source block (Postgres's fields; other
// connectors fill what they have).
type Source struct {
	Connector string // "postgresql", "mysql", ...
	Name      string // the connector's topic.prefix
	DB        string
	Schema    string
	Table     string
	// Snapshot is "false" for a streamed change, else which part of a
	// snapshot read the row ("true", "first", "last", "incremental", ...).
	Snapshot string
	TsMs     int64 // when the database committed the change
	// LSN is the change's WAL position (Postgres); CommitLSN the LSN of
	// the last transaction committed before it (Debezium's sequence).
	LSN, CommitLSN       int64
	TxID                 int64
	HasLSN, HasCommitLSN bool
	HasTxID              bool
}

// Streamed reports whether the event came from the change stream, not a
// snapshot.
func (s Source) Streamed() bool { return s.Snapshot == "" || s.Snapshot == "false" }

// Position is a streamed change's place in the source's log: Postgres's
// last committed LSN before it, then its own LSN. Positions of one
// connector's changes only grow (transactions stream in commit order,
// a transaction's changes in LSN order), so a change re-sent after a
// Connect crash has a position at or below one already seen (SentBefore
// says which). The LSN alone identifies a change.
type Position struct {
	CommitLSN, LSN int64
	// TxID is the change's source transaction (0 when unknown); it is
	// not part of the order.
	TxID int64
}

// SentBefore reports whether the change at p was sent before hwm, the
// highest position landed: p is at or below it in (CommitLSN, LSN)
// order, or, in hwm's own source transaction, its LSN is at or below
// hwm's. The second rule is for the events Debezium sends again after a
// restart: it re-sends whole transactions, each change with its LSN, but
// a transaction's CommitLSN (the last commit Debezium knew of) can differ
// from the first sending's; the first transaction after a connector
// starts without stored offsets has none the first time, the stored
// offset's the second.
func (p Position) SentBefore(hwm Position) bool {
	if p.TxID != 0 && p.TxID == hwm.TxID && p.LSN <= hwm.LSN {
		return true
	}
	return !hwm.Less(p)
}

// Less orders positions.
func (p Position) Less(q Position) bool {
	if p.CommitLSN != q.CommitLSN {
		return p.CommitLSN < q.CommitLSN
	}
	return p.LSN < q.LSN
}

func (p Position) String() string { return fmt.Sprintf("%d/%d", p.CommitLSN, p.LSN) }

// Position is the event's source position; ok is false for snapshot
// reads (a snapshot's rows share one LSN) and events without an LSN.
func (e *Event) Position() (p Position, ok bool) {
	s := e.Source
	if !s.Streamed() || !s.HasLSN {
		return Position{}, false
	}
	return Position{CommitLSN: s.CommitLSN, LSN: s.LSN, TxID: s.TxID}, true
}

// TransactionBlock is an event's transaction block.
type TransactionBlock struct {
	ID string // the transaction's id ("txId:LSN" for Postgres)
	// TotalOrder is the event's place among all of the transaction's
	// events, CollectionOrder among those of its table (from 1).
	TotalOrder, CollectionOrder int64
}

// Option configures a Decoder.
type Option func(*options)

type options struct {
	numeric     *NumericMode
	placeholder string
}

// WithVariableNumeric says what unconstrained numerics become (see
// NumericMode). Without it they are refused.
func WithVariableNumeric(m NumericMode) Option { return func(o *options) { o.numeric = &m } }

// WithUnavailablePlaceholder sets the text of Debezium's
// unavailable.value.placeholder (default "__debezium_unavailable_value").
func WithUnavailablePlaceholder(s string) Option { return func(o *options) { o.placeholder = s } }

// DefaultPlaceholder is Debezium's default unavailable.value.placeholder.
const DefaultPlaceholder = "__debezium_unavailable_value"

// Decoder decodes Debezium's JSON change events (Kafka Connect's
// JsonConverter with schemas.enable=true). It keeps each distinct schema
// it has seen parsed, so that an event costs one parse of its payload.
// It is safe for concurrent use.
type Decoder struct {
	opts options
	// The placeholder's JSON forms: as a string, as base64 bytes, as a
	// one-element string array, and as an integer array of its bytes
	// (what Debezium sends for a TOASTed int[]).
	phString, phBytes, phArray, phInts []byte

	mu      sync.Mutex
	schemas map[string]*envelopeSchema // by the schema part's text
	keys    map[string][]string        // key schema text -> key columns
}

type envelopeSchema struct {
	before, after *RowSchema
	err           error
}

// NewDecoder returns a Decoder.
func NewDecoder(opts ...Option) *Decoder {
	d := &Decoder{opts: options{placeholder: DefaultPlaceholder}, schemas: map[string]*envelopeSchema{}, keys: map[string][]string{}}
	for _, o := range opts {
		o(&d.opts)
	}
	d.phString, _ = json.Marshal(d.opts.placeholder)
	d.phBytes, _ = json.Marshal([]byte(d.opts.placeholder))
	d.phArray, _ = json.Marshal([]string{d.opts.placeholder})
	ints := make([]int, len(d.opts.placeholder))
	for i, c := range []byte(d.opts.placeholder) {
		ints[i] = int(c)
	}
	d.phInts, _ = json.Marshal(ints)
	return d
}

type message struct {
	Schema  json.RawMessage `json:"schema"`
	Payload json.RawMessage `json:"payload"`
}

type payload struct {
	Before      json.RawMessage `json:"before"`
	After       json.RawMessage `json:"after"`
	Source      *sourceJSON     `json:"source"`
	Transaction *struct {
		ID                  string `json:"id"`
		TotalOrder          int64  `json:"total_order"`
		DataCollectionOrder int64  `json:"data_collection_order"`
	} `json:"transaction"`
	Op   string `json:"op"`
	TsMs *int64 `json:"ts_ms"`
}

type sourceJSON struct {
	Connector string `json:"connector"`
	Name      string `json:"name"`
	DB        string `json:"db"`
	Schema    string `json:"schema"`
	Table     string `json:"table"`
	Snapshot  any    `json:"snapshot"` // "true"/"false"/"last"... or a boolean
	TsMs      *int64 `json:"ts_ms"`
	LSN       *int64 `json:"lsn"`
	TxID      *int64 `json:"txId"`
	Sequence  string `json:"sequence"`
}

// Decode decodes a record: its key (nil for none) and its value. A
// record without a value is ErrTombstone. Errors name the column and
// value; an event without the schema part is ErrNoSchema.
func (d *Decoder) Decode(key, value []byte) (*Event, error) {
	if isNull(value) {
		return nil, ErrTombstone
	}
	var m message
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrNotChangeEvent, err)
	}
	if m.Schema == nil || m.Payload == nil {
		var probe map[string]json.RawMessage
		if json.Unmarshal(value, &probe) == nil && probe["op"] != nil {
			return nil, ErrNoSchema
		}
		return nil, fmt.Errorf(`%w: no "schema" and "payload"`, ErrNotChangeEvent)
	}
	var p payload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrNotChangeEvent, err)
	}
	e := &Event{Op: Op(p.Op)}
	if p.TsMs != nil {
		e.TsMs = *p.TsMs
	}
	if p.Source != nil {
		e.Source = p.Source.decode()
	}
	if p.Transaction != nil && p.Transaction.ID != "" {
		e.Transaction = &TransactionBlock{ID: p.Transaction.ID, TotalOrder: p.Transaction.TotalOrder, CollectionOrder: p.Transaction.DataCollectionOrder}
	}
	image := p.After
	switch e.Op {
	case OpCreate, OpUpdate, OpRead:
	case OpDelete:
		image = p.Before
	case OpTruncate:
		return e, nil
	case "":
		return nil, fmt.Errorf(`%w: no "op"`, ErrNotChangeEvent)
	default:
		return nil, fmt.Errorf("%w: op %q is not a row change (c, u, d, r or t)", ErrNotChangeEvent, p.Op)
	}
	if isNull(image) {
		return nil, fmt.Errorf("%w: op %q without its row image", ErrNotChangeEvent, p.Op)
	}
	es := d.envelope(m.Schema)
	if es.err != nil {
		return nil, es.err
	}
	e.Schema = es.after
	if e.Op == OpDelete {
		e.Schema = es.before
	}
	if e.Schema == nil {
		return nil, fmt.Errorf("%w: the schema has no row struct for op %q", ErrNotChangeEvent, p.Op)
	}
	if err := d.decodeRow(e, image); err != nil {
		return nil, err
	}
	if len(key) > 0 && !isNull(key) {
		k, err := d.keyColumns(key)
		if err != nil {
			return nil, err
		}
		e.Key = k
	}
	return e, nil
}

func (s *sourceJSON) decode() Source {
	out := Source{Connector: s.Connector, Name: s.Name, DB: s.DB, Schema: s.Schema, Table: s.Table}
	switch v := s.Snapshot.(type) {
	case string:
		out.Snapshot = v
	case bool:
		out.Snapshot = strconv.FormatBool(v)
	}
	if s.TsMs != nil {
		out.TsMs = *s.TsMs
	}
	if s.LSN != nil {
		out.LSN, out.HasLSN = *s.LSN, true
	}
	if s.TxID != nil {
		out.TxID, out.HasTxID = *s.TxID, true
	}
	// sequence: ["<last commit LSN>", "<LSN>"], either may be null.
	var seq []*string
	if s.Sequence != "" && json.Unmarshal([]byte(s.Sequence), &seq) == nil && len(seq) == 2 && seq[0] != nil {
		if n, err := strconv.ParseInt(*seq[0], 10, 64); err == nil {
			out.CommitLSN, out.HasCommitLSN = n, true
		}
	}
	return out
}

// envelope parses (once per distinct text) the envelope's schema.
func (d *Decoder) envelope(raw json.RawMessage) *envelopeSchema {
	d.mu.Lock()
	defer d.mu.Unlock()
	if es, ok := d.schemas[string(raw)]; ok {
		return es
	}
	es := &envelopeSchema{}
	var s ConnectSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		es.err = fmt.Errorf("%w: schema: %v", ErrNotChangeEvent, err)
	} else {
		for _, f := range s.Fields {
			if f.Field != "before" && f.Field != "after" {
				continue
			}
			rs, err := rowSchemaOf(f, &d.opts)
			if err != nil {
				es.err = err
				break
			}
			if f.Field == "before" {
				es.before = rs
			} else {
				es.after = rs
			}
		}
	}
	if len(d.schemas) > 1000 { // a bound: schemas change rarely
		clear(d.schemas)
	}
	d.schemas[string(raw)] = es
	return es
}

// decodeRow reads the row image's values by the schema's columns.
func (d *Decoder) decodeRow(e *Event, image json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(image, &obj); err != nil {
		return fmt.Errorf("%w: row: %v", ErrNotChangeEvent, err)
	}
	cols := e.Schema.Columns
	e.Row = make([]any, len(cols))
	for i := range cols {
		c := &cols[i]
		raw := bytes.TrimSpace(obj[c.Name])
		if isNull(raw) {
			continue
		}
		if d.unavailable(raw) {
			if e.Unavailable == nil {
				e.Unavailable = make([]bool, len(cols))
			}
			e.Unavailable[i] = true
			continue
		}
		v, err := c.decode(raw)
		if err != nil {
			return &ValueError{Column: c.Name, Type: c.Source, Value: string(raw), Err: err}
		}
		e.Row[i] = v
	}
	return nil
}

// unavailable reports whether raw is Debezium's placeholder for a value
// it does not have (an unchanged TOASTed column), in any of the forms it
// sends it: text, bytes, a text array of the placeholder alone, or an
// integer array of the placeholder's bytes.
func (d *Decoder) unavailable(raw []byte) bool {
	switch raw[0] {
	case '"':
		return bytes.Equal(raw, d.phString) || bytes.Equal(raw, d.phBytes)
	case '[':
		if len(raw) < len(d.phArray) || len(raw) > 8*len(d.phInts) {
			return false
		}
		c := compactJSON(raw)
		return bytes.Equal(c, d.phArray) || bytes.Equal(c, d.phInts)
	}
	return false
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// keyColumns are the primary key's columns: the fields of the record
// key's schema.
func (d *Decoder) keyColumns(key []byte) ([]string, error) {
	var m message
	if err := json.Unmarshal(key, &m); err != nil || m.Schema == nil {
		return nil, fmt.Errorf("%w (the record key has none)", ErrNoSchema)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.keys[string(m.Schema)]; ok {
		return k, nil
	}
	var s ConnectSchema
	if err := json.Unmarshal(m.Schema, &s); err != nil || s.Type != "struct" {
		return nil, fmt.Errorf("%w: the record key's schema is not a struct", ErrNotChangeEvent)
	}
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Field)
	}
	if len(d.keys) > 1000 {
		clear(d.keys)
	}
	d.keys[string(m.Schema)] = names
	return names, nil
}

// TransactionEvent is a record of Debezium's transaction topic
// (<topic.prefix>.transaction, with provide.transaction.metadata=true):
// a transaction's BEGIN or END.
type TransactionEvent struct {
	Status string // "BEGIN" or "END"
	ID     string
	TsMs   int64
	// EventCount is the transaction's number of change events (END
	// only), Collections the number per table ("schema.table").
	EventCount  int64
	Collections map[string]int64
}

// DecodeTransaction decodes a record of the transaction topic.
func DecodeTransaction(value []byte) (*TransactionEvent, error) {
	if isNull(value) {
		return nil, ErrTombstone
	}
	var m message
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrNotChangeEvent, err)
	}
	body := m.Payload
	if body == nil {
		body = value // without the schema part
	}
	var p struct {
		Status          string `json:"status"`
		ID              string `json:"id"`
		TsMs            int64  `json:"ts_ms"`
		EventCount      *int64 `json:"event_count"`
		DataCollections []struct {
			DataCollection string `json:"data_collection"`
			EventCount     int64  `json:"event_count"`
		} `json:"data_collections"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("%w: transaction event: %v", ErrNotChangeEvent, err)
	}
	if (p.Status != "BEGIN" && p.Status != "END") || p.ID == "" {
		return nil, fmt.Errorf(`%w: a transaction event needs "status" BEGIN or END and an "id"`, ErrNotChangeEvent)
	}
	t := &TransactionEvent{Status: p.Status, ID: p.ID, TsMs: p.TsMs}
	if p.Status == "END" {
		if p.EventCount == nil {
			return nil, errors.New(`cdc: a transaction END without "event_count"`)
		}
		t.EventCount = *p.EventCount
		t.Collections = map[string]int64{}
		for _, c := range p.DataCollections {
			t.Collections[c.DataCollection] += c.EventCount
		}
	}
	return t, nil
}

// ParseTransactionID splits a Postgres transaction id of Debezium's
// transaction metadata ("txId:LSN") into the database's transaction id
// and the LSN. Debezium 3 puts the LSN of the event (or, for END, of the
// commit) after the colon, so only txId names the transaction.
func ParseTransactionID(id string) (txID, lsn int64, err error) {
	a, b, ok := strings.Cut(id, ":")
	if ok {
		txID, err = strconv.ParseInt(a, 10, 64)
		if err == nil {
			lsn, err = strconv.ParseInt(b, 10, 64)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("cdc: transaction id %q is not txId:LSN", id)
	}
	return txID, lsn, nil
}
