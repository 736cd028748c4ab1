package cdc

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/lakelog/lakelog/actions"
)

// The bronze table's own columns, before the source table's: what each
// event was, where it came from, and the shape of its row.
const (
	ColOp          = "__op"           // c, u, d, r, t; END for a transaction's end
	ColTsMs        = "__ts_ms"        // when Debezium processed the change (ms)
	ColSourceTsMs  = "__source_ts_ms" // when the database committed it (ms)
	ColLSN         = "__lsn"          // the change's WAL position
	ColCommitLSN   = "__commit_lsn"   // the LSN of the last commit before it
	ColTxID        = "__txid"         // the database transaction
	ColTxOrder     = "__tx_order"     // its place in the transaction (transaction metadata)
	ColTxEvents    = "__tx_events"    // END: the transaction's events of this table
	ColTopic       = "__topic"
	ColPartition   = "__partition"
	ColOffset      = "__offset"
	ColSchema      = "__schema"      // the row's shape (RowShape as JSON)
	ColUnavailable = "__unavailable" // JSON list of the columns whose value Debezium did not have (TOAST)

	// OpEnd is the op of a row that marks a source transaction's end.
	OpEnd = "END"
)

// bronzeColumns are the bronze table's first columns.
var bronzeColumns = []*actions.StructField{
	{Name: ColOp, Type: actions.TypeString},
	{Name: ColTsMs, Type: actions.TypeLong, Nullable: true},
	{Name: ColSourceTsMs, Type: actions.TypeLong, Nullable: true},
	{Name: ColLSN, Type: actions.TypeLong, Nullable: true},
	{Name: ColCommitLSN, Type: actions.TypeLong, Nullable: true},
	{Name: ColTxID, Type: actions.TypeLong, Nullable: true},
	{Name: ColTxOrder, Type: actions.TypeLong, Nullable: true},
	{Name: ColTxEvents, Type: actions.TypeLong, Nullable: true},
	{Name: ColTopic, Type: actions.TypeString},
	{Name: ColPartition, Type: actions.TypeInteger},
	{Name: ColOffset, Type: actions.TypeLong},
	{Name: ColSchema, Type: actions.TypeString, Nullable: true},
	{Name: ColUnavailable, Type: actions.TypeString, Nullable: true},
}

// IsBronzeColumn reports whether name is one of bronze's own columns.
func IsBronzeColumn(name string) bool {
	for _, f := range bronzeColumns {
		if f.Name == name {
			return true
		}
	}
	return false
}

// RowShape is an event's row as bronze records it beside the row (in
// __schema): the source's columns with their own types, nullability and
// defaults, the primary key, and where bronze keeps each column. A
// source column whose type changed to one bronze's column cannot hold
// (integer to text) lands in a new bronze column, "name__2" and so on;
// Column says which.
type RowShape struct {
	Columns []ShapeColumn `json:"columns"`
	Key     []string      `json:"key,omitempty"`
}

// ShapeColumn is one column of a RowShape.
type ShapeColumn struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"` // Delta's JSON form of the type
	Nullable bool            `json:"nullable"`
	// Default is the column's default as a partition value's text
	// (absent when the source declares none, or for a nested type).
	Default *string `json:"default,omitempty"`
	// Column is the bronze column holding it, when not Name.
	Column string `json:"column,omitempty"`

	typ actions.DataType
}

// DataType is the column's Delta type.
func (c *ShapeColumn) DataType() actions.DataType { return c.typ }

// BronzeColumn is the bronze column holding the column.
func (c *ShapeColumn) BronzeColumn() string {
	if c.Column != "" {
		return c.Column
	}
	return c.Name
}

// DefaultValue is the column's default (Value forms), and whether it
// has one.
func (c *ShapeColumn) DefaultValue() (any, bool, error) {
	if c.Default == nil {
		return nil, false, nil
	}
	v, err := actions.ParsePartitionValue(c.typ, c.Default)
	return v, err == nil, err
}

var shapeCache sync.Map // JSON text -> *RowShape

// ParseRowShape reads a __schema value (cached: a bronze table holds few
// distinct shapes).
func ParseRowShape(text string) (*RowShape, error) {
	if s, ok := shapeCache.Load(text); ok {
		return s.(*RowShape), nil
	}
	var s RowShape
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return nil, fmt.Errorf("cdc: bronze's %s %q: %w", ColSchema, text, err)
	}
	for i := range s.Columns {
		t, err := actions.ParseDataType(s.Columns[i].Type)
		if err != nil {
			return nil, fmt.Errorf("cdc: bronze's %s: column %q: %w", ColSchema, s.Columns[i].Name, err)
		}
		s.Columns[i].typ = t
	}
	shapeCache.Store(text, &s)
	return &s, nil
}

// shapeOf is the RowShape of an event's schema with the bronze column of
// each source column.
func shapeOf(rs *RowSchema, key []string, bronzeCol []string) (string, error) {
	s := RowShape{Key: key}
	for i, c := range rs.Columns {
		t, err := actions.MarshalDataType(c.Type)
		if err != nil {
			return "", err
		}
		sc := ShapeColumn{Name: c.Name, Type: t, Nullable: c.Nullable}
		if bronzeCol[i] != c.Name {
			sc.Column = bronzeCol[i]
		}
		if c.HasDefault {
			if d, err := actions.FormatPartitionValue(c.Type, c.Default); err == nil {
				sc.Default = d
			}
		}
		s.Columns = append(s.Columns, sc)
	}
	b, err := json.Marshal(s)
	return string(b), err
}
