package writer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// Identity generates the values of a table's identity columns for the
// rows one write inserts, in input order: Start, Start+Step, ... beyond
// the high-water mark of the metadata it was made from. It is not safe
// for concurrent use; a write uses one.
//
// One Identity never generates a value twice, and the commit that carries
// its HighWaterMarks makes every later write start beyond them. Two
// writes from the same snapshot generate the same values: both commits
// change the metadata, so the second fails with a metadata conflict
// (conflict.ErrMetadataChanged, as Spark's MetadataChangedException) and
// nothing of it is committed; its retry, from a new snapshot, starts
// beyond the winner's mark. So no identity value is committed twice.
type Identity struct {
	cols []*identityColumn
}

type identityColumn struct {
	index int
	name  string
	def   actions.Identity // HighWaterMark advances as values are generated
	n     int64            // values generated
}

// NewIdentity returns the generator of schema's identity columns
// (top-level fields with delta.identity.* metadata), nil when it has none.
// An identity definition lakelog cannot use is an error naming the column.
func NewIdentity(schema *actions.StructType) (*Identity, error) {
	var g Identity
	for i, f := range schema.Fields {
		def, ok, err := actions.IdentityOf(f)
		if err != nil {
			return nil, fmt.Errorf("writer: %w", err)
		}
		if !ok {
			continue
		}
		g.cols = append(g.cols, &identityColumn{index: i, name: f.Name, def: def})
	}
	if len(g.cols) == 0 {
		return nil, nil
	}
	return &g, nil
}

// column is the identity column at schema position i, or nil.
func (g *Identity) column(i int) *identityColumn {
	if g == nil {
		return nil
	}
	for _, c := range g.cols {
		if c.index == i {
			return c
		}
	}
	return nil
}

// values returns a column of n rows: old's values where old is not null
// (old nil: none), new values where it is. Values that would overflow a
// long are an error naming the column, and nothing is taken then.
func (c *identityColumn) values(n int, old arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	need := int64(n)
	if old != nil {
		need = int64(old.NullN())
		if need == 0 {
			old.Retain()
			return old, nil
		}
	}
	first, ok := c.def.First()
	if !ok {
		return nil, &ConstraintError{Kind: "identity column", Name: c.name, Expr: fmt.Sprintf("the value after the high-water mark %d overflows a long (step %d)", c.def.HighWaterMark, c.def.Step)}
	}
	last, ok := c.def.Nth(first, need-1)
	if !ok {
		return nil, &ConstraintError{Kind: "identity column", Name: c.name, Expr: fmt.Sprintf("%d values from %d by %d overflow a long", need, first, c.def.Step)}
	}
	var given *array.Int64
	if old != nil {
		given, ok = old.(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("writer: identity column %q: values of type %s, want int64", c.name, old.DataType())
		}
	}
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	v := first
	for r := 0; r < n; r++ {
		if given != nil && given.IsValid(r) {
			b.Append(given.Value(r))
			continue
		}
		b.Append(v)
		if v != last {
			v += c.def.Step // within range: Nth checked last
		}
	}
	c.def.HighWaterMark, c.def.HasHighWaterMark = last, true
	c.n += need
	return b.NewArray(), nil
}

// FillNulls returns rec (a batch in the table's schema, every column in
// place) with new identity values where its identity columns are null:
// how MERGE gives the rows its INSERT clauses write values for the
// identity columns they do not assign. A value that would overflow a long
// is a *ConstraintError naming the column.
func (g *Identity) FillNulls(rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	rec.Retain()
	if g == nil {
		return rec, nil
	}
	for _, c := range g.cols {
		next, err := g.replace(rec, c, rec.Column(c.index), mem)
		rec.Release()
		if err != nil {
			return nil, err
		}
		rec = next
	}
	return rec, nil
}

// replace returns rec with column c.index replaced by c.values(old).
func (g *Identity) replace(rec arrow.RecordBatch, c *identityColumn, old arrow.Array, mem memory.Allocator) (arrow.RecordBatch, error) {
	col, err := c.values(int(rec.NumRows()), old, mem)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	cols := make([]arrow.Array, rec.NumCols())
	copy(cols, rec.Columns())
	cols[c.index] = col
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
}

// HighWaterMarks are the identity columns' new high-water marks, by
// column name: the last value generated for each column that got values.
func (g *Identity) HighWaterMarks() map[string]int64 {
	if g == nil {
		return nil
	}
	var m map[string]int64
	for _, c := range g.cols {
		if c.n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[c.name] = c.def.HighWaterMark
		}
	}
	return m
}
