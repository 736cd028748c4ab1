package actions

import "math/big"

// Typed scalar values. Partition values, literals in predicates and stats
// bounds decode to these Go types, by Delta type:
//
//	boolean       bool
//	byte          int8
//	short         int16
//	integer       int32
//	long          int64
//	float         float32
//	double        float64
//	string        string
//	binary        []byte
//	date          Date
//	timestamp     Timestamp
//	timestamp_ntz TimestampNTZ
//	decimal(p,s)  Decimal
//
// and nil for null.

// Date is days since 1970-01-01.
type Date int32

// Timestamp is microseconds since 1970-01-01T00:00:00Z.
type Timestamp int64

// TimestampNTZ is microseconds since 1970-01-01T00:00:00 in no time zone.
type TimestampNTZ int64

// Decimal is Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}
