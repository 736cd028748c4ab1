package cdc

import (
	"errors"
	"fmt"
)

// Sentinels. Each is wrapped by a typed error that names what is wrong;
// test with errors.Is and errors.As.
var (
	// ErrTombstone is a record without a value: Debezium sends one after
	// each delete so that log compaction can drop the key. It is not an
	// error to skip it.
	ErrTombstone = errors.New("cdc: a tombstone (a record without a value)")
	// ErrNotChangeEvent is a message that is not a Debezium change event.
	ErrNotChangeEvent = errors.New("cdc: not a Debezium change event")
	// ErrNoSchema is an event without Connect's schema part: its types
	// cannot be known, and are never guessed.
	ErrNoSchema = errors.New("cdc: the event has no schema part (set value.converter.schemas.enable=true and key.converter.schemas.enable=true on the connector)")
	// ErrUnsupportedType is a column whose Connect type has no Delta
	// mapping here (*TypeError names it).
	ErrUnsupportedType = errors.New("cdc: unsupported column type")
	// ErrBadValue is a value its own schema does not describe
	// (*ValueError names it).
	ErrBadValue = errors.New("cdc: bad value")
	// ErrIncompatibleChange is a source schema change Delta cannot carry
	// without rewriting the rows (*SchemaChangeError names it). Terminal
	// for the stage until the operator decides.
	ErrIncompatibleChange = errors.New("cdc: incompatible schema change")
)

// TypeError is a column whose type the decoder refuses.
type TypeError struct {
	Column string // the column's name
	Type   string // its Connect type, as the schema spells it
	Reason string
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("cdc: column %q has type %s: %s", e.Column, e.Type, e.Reason)
}

func (e *TypeError) Unwrap() error { return ErrUnsupportedType }

// ValueError is a value that cannot be read as its column's type.
type ValueError struct {
	Column string
	Type   string // the column's Connect type
	Value  string // the JSON value, cut to 100 bytes
	Err    error
}

func (e *ValueError) Error() string {
	v := e.Value
	if len(v) > 100 {
		v = v[:100] + "..."
	}
	return fmt.Sprintf("cdc: column %q (%s): value %s: %v", e.Column, e.Type, v, e.Err)
}

func (e *ValueError) Unwrap() []error { return []error{ErrBadValue, e.Err} }

// RecordError places an error at the Kafka record it came from.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s/%d offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }
