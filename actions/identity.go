package actions

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// The field metadata keys of an identity column (the identityColumns
// feature), as Spark writes them.
const (
	MetaIdentityStart               = "delta.identity.start"
	MetaIdentityStep                = "delta.identity.step"
	MetaIdentityHighWaterMark       = "delta.identity.highWaterMark"
	MetaIdentityAllowExplicitInsert = "delta.identity.allowExplicitInsert"
)

// Identity is an identity column's definition and state: values are
// Start, Start+Step, Start+2*Step..., each beyond HighWaterMark (the
// largest value generated so far for a positive Step, the smallest for a
// negative one) when HasHighWaterMark. AllowExplicitInsert is GENERATED
// BY DEFAULT (writers accept supplied values); without it the column is
// GENERATED ALWAYS.
type Identity struct {
	Start, Step         int64
	HighWaterMark       int64
	HasHighWaterMark    bool
	AllowExplicitInsert bool
}

// IsIdentity reports whether f is an identity column (its metadata has
// delta.identity.start, as Spark's test).
func IsIdentity(f *StructField) bool {
	_, ok := f.Metadata[MetaIdentityStart]
	return f != nil && ok
}

// IdentityOf reads f's identity definition: ok is false when f is not an
// identity column; err names the column when its metadata is not a valid
// one (a non-long column, a missing or zero step, values of the wrong
// JSON type).
func IdentityOf(f *StructField) (id Identity, ok bool, err error) {
	if !IsIdentity(f) {
		return Identity{}, false, nil
	}
	bad := func(format string, args ...any) (Identity, bool, error) {
		return Identity{}, true, fmt.Errorf("identity column %q: %s", f.Name, fmt.Sprintf(format, args...))
	}
	if f.Type != TypeLong {
		return bad("type %s (identity columns are long)", f.Type)
	}
	if id.Start, err = metaLong(f.Metadata, MetaIdentityStart); err != nil {
		return bad("%v", err)
	}
	if _, has := f.Metadata[MetaIdentityStep]; !has {
		return bad("no %s", MetaIdentityStep)
	}
	if id.Step, err = metaLong(f.Metadata, MetaIdentityStep); err != nil {
		return bad("%v", err)
	}
	if id.Step == 0 {
		return bad("%s is 0", MetaIdentityStep)
	}
	if _, has := f.Metadata[MetaIdentityHighWaterMark]; has {
		if id.HighWaterMark, err = metaLong(f.Metadata, MetaIdentityHighWaterMark); err != nil {
			return bad("%v", err)
		}
		id.HasHighWaterMark = true
	}
	switch v := f.Metadata[MetaIdentityAllowExplicitInsert].(type) {
	case bool:
		id.AllowExplicitInsert = v
	case nil:
	default:
		return bad("%s is %v, not a boolean", MetaIdentityAllowExplicitInsert, v)
	}
	return id, true, nil
}

func metaLong(m map[string]any, key string) (int64, error) {
	switch v := m[key].(type) {
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is %s, not a long", key, v)
		}
		return n, nil
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return 0, fmt.Errorf("%s is %v, not a long", key, v)
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("%s is %v, not a long", key, m[key])
}

// First is the first value a write generates: Start when no value was
// generated yet, else the one after HighWaterMark. ok is false when that
// value overflows a long.
func (id Identity) First() (v int64, ok bool) {
	if !id.HasHighWaterMark {
		return id.Start, true
	}
	return addExact(id.HighWaterMark, id.Step)
}

// Nth is the value n (>= 0) steps after first, and false on overflow.
func (id Identity) Nth(first, n int64) (int64, bool) {
	if n < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(n), absU(id.Step))
	switch {
	case hi != 0:
		return 0, false
	case id.Step > 0 && lo <= math.MaxInt64:
		return addExact(first, int64(lo))
	case id.Step < 0 && lo <= math.MaxInt64:
		return addExact(first, -int64(lo))
	case id.Step < 0 && lo == 1<<63:
		return addExact(first, math.MinInt64)
	}
	return 0, false
}

// Beyond reports whether v lies past the high-water mark in the step's
// direction (what a generated value must).
func (id Identity) Beyond(v int64) bool {
	if !id.HasHighWaterMark {
		return true
	}
	if id.Step > 0 {
		return v > id.HighWaterMark
	}
	return v < id.HighWaterMark
}

// Advance is the high-water mark after values up to last were generated:
// the farther of the current mark and last in the step's direction.
func (id Identity) Advance(last int64) int64 {
	if !id.HasHighWaterMark {
		return last
	}
	if id.Step > 0 {
		return max(id.HighWaterMark, last)
	}
	return min(id.HighWaterMark, last)
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(^a) + 1
	}
	return uint64(a)
}

// WithIdentityHighWaterMarks returns a copy of s whose identity columns
// named in marks (by top-level name) have those high-water marks. Fields
// not named are shared with s.
func WithIdentityHighWaterMarks(s *StructType, marks map[string]int64) *StructType {
	out := &StructType{Fields: make([]*StructField, len(s.Fields))}
	copy(out.Fields, s.Fields)
	for i, f := range s.Fields {
		m, ok := marks[f.Name]
		if !ok {
			continue
		}
		nf := *f
		nf.Metadata = make(map[string]any, len(f.Metadata)+1)
		for k, v := range f.Metadata {
			nf.Metadata[k] = v
		}
		nf.Metadata[MetaIdentityHighWaterMark] = m
		out.Fields[i] = &nf
	}
	return out
}

// MergeIdentityHighWaterMarks returns s with each identity column's
// high-water mark moved to the farther of its own and that of the column
// of the same name in from (Spark's copySchemaWithMergedHighWaterMarks):
// a RESTORE to an older schema must not let values be generated again.
// s is returned itself when nothing changes.
func MergeIdentityHighWaterMarks(s, from *StructType) *StructType {
	marks := map[string]int64{}
	for _, f := range s.Fields {
		id, ok, err := IdentityOf(f)
		if !ok || err != nil {
			continue
		}
		i := from.IndexFold(f.Name)
		if i < 0 {
			continue
		}
		other, ok, err := IdentityOf(from.Fields[i])
		if !ok || err != nil || !other.HasHighWaterMark {
			continue
		}
		if m := id.Advance(other.HighWaterMark); !id.HasHighWaterMark || m != id.HighWaterMark {
			marks[f.Name] = m
		}
	}
	if len(marks) == 0 {
		return s
	}
	return WithIdentityHighWaterMarks(s, marks)
}
