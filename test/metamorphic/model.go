package metamorphic

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// The model: a table as plain rows of values keyed by column, no Delta.
// A column is known by its uid, which a rename keeps and a drop ends, so
// a column dropped and added again under its name is a new column whose
// rows start NULL.

type colKind uint8

const (
	plainCol colKind = iota
	keyCol           // k: the row's key, unique among live rows, never changed
	identityCol
	generatedCol
)

type column struct {
	uid  int
	name string
	// phys is the column's physical name: its name on a table without
	// column mapping (and for columns that existed when mapping was
	// enabled), else a name of its own.
	phys string
	typ  actions.DataType
	kind colKind
	part bool
	// identity columns
	start, step int64
	always      bool
	// generated columns: fn over the column src (a uid)
	fn        string
	src       int
	srcIsDate bool
	genSQL    string
}

// identityPending marks an identity value the table generates; the model
// adopts the value the table chose and checks it (checkIdentity).
type pendingIdentity struct{}

type row struct {
	vals map[int]any // by column uid
	// generated holds the uids of identity columns whose value the table
	// generated (not given by the writer).
	generated map[int]bool
}

func (r row) key() int64 { return r.vals[keyUID].(int64) }

const keyUID = 0

func (r row) clone() row {
	return row{vals: maps.Clone(r.vals), generated: maps.Clone(r.generated)}
}

type constraint struct {
	name string
	pred pred
}

// features are the table's switches the model follows.
type features struct {
	mapping    string // none, name, id
	dv         bool
	cdf        bool
	rowTrack   bool
	widening   bool
	uniform    bool
	v2cp       bool
	ntz        bool // the timestampNtz feature is supported
	identityOK bool
	// rowTrackSupported: the protocol has rowTracking (it stays when a
	// RESTORE takes the property back).
	rowTrackSupported bool
}

// state is the table at one version.
type state struct {
	version     int64
	cols        []*column
	rows        []row
	feat        features
	constraints []constraint
	parts       []int // partition columns' uids
	// rowIDs are the row IDs and commit versions read at this version
	// (row tracking on), by key.
	rowIDs map[int64][2]int64
	// touched are the keys this version's commit inserted or updated
	// (their row commit version is this one).
	touched map[int64]bool
	// changes is what this version's commit did to rows, where the model
	// knows it exactly; nil when it does not (RESTORE).
	changes *changeSet
	// schemaOp marks a commit that changed columns by drop or rename (or
	// RESTORE across such a change): the change feed cannot read across it.
	op string
	// hwm are the identity columns' high-water marks the model saw.
	hwm map[int]int64
	// restorable is the oldest version left after log cleanup; vacuumed
	// and vacuumedAt tell that (and when) VACUUM removed files.
	restorable   int64
	vacuumed     bool
	vacuumedAt   int64
	restoredFrom int64
	nonAdditive  bool
	// partial marks a version before the last of an operation that
	// commits several (enabling row tracking: protocol, backfill, then
	// the property): the model knows its rows, not its configuration, so
	// RESTORE does not draw it.
	partial bool
}

type changeSet struct {
	inserts, deletes, pre, post []row
}

func (s *state) clone() *state {
	n := *s
	n.cols = slices.Clone(s.cols)
	n.rows = make([]row, len(s.rows))
	for i, r := range s.rows {
		n.rows[i] = r.clone()
	}
	n.constraints = slices.Clone(s.constraints)
	n.parts = slices.Clone(s.parts)
	n.rowIDs = nil
	n.hwm = maps.Clone(s.hwm)
	n.nonAdditive = false
	n.partial = false
	n.touched = map[int64]bool{}
	n.changes = &changeSet{}
	return &n
}

func (s *state) col(name string) *column {
	for _, c := range s.cols {
		if strings.EqualFold(c.name, name) {
			return c
		}
	}
	return nil
}

func (s *state) colByUID(uid int) *column {
	for _, c := range s.cols {
		if c.uid == uid {
			return c
		}
	}
	return nil
}

func (s *state) isPart(uid int) bool { return slices.Contains(s.parts, uid) }

// schema is the table's logical schema as the model has it.
func (s *state) schema() *actions.StructType {
	st := &actions.StructType{}
	for _, c := range s.cols {
		st.Fields = append(st.Fields, &actions.StructField{Name: c.name, Type: c.typ, Nullable: c.kind != keyCol})
	}
	return st
}

// renderRow is r under the columns cols: name=value in column order.
func renderRow(cols []*column, r row) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name)
		b.WriteString("=")
		b.WriteString(render(c.typ, r.vals[c.uid]))
	}
	return b.String()
}

func renderRows(cols []*column, rows []row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = renderRow(cols, r)
	}
	slices.Sort(out)
	return out
}

// ---- predicates, evaluated by the model with SQL's three-valued logic

type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

type pred interface {
	sql() string
	eval(s *state, r row) tri
	columns() []string
}

type cmpPred struct {
	col   string // column name, or "s.a" for a struct field
	field int    // index of the struct field, -1 for the column
	typ   actions.DataType
	op    string // = <> < <= > >=
	lit   any
}

func (p *cmpPred) sql() string {
	return fmt.Sprintf("%s %s %s", quoteCol(p.col), p.op, sqlLiteral(p.typ, p.lit))
}

func (p *cmpPred) columns() []string { return []string{strings.Split(p.col, ".")[0]} }

func (p *cmpPred) value(s *state, r row) any {
	return valueOf(s, r, p.col, p.field)
}

func valueOf(s *state, r row, col string, field int) any {
	name := strings.Split(col, ".")[0]
	c := s.col(name)
	v := r.vals[c.uid]
	if field >= 0 && v != nil {
		v = v.([]any)[field]
	}
	return v
}

func (p *cmpPred) eval(s *state, r row) tri {
	v := p.value(s, r)
	if v == nil || p.lit == nil {
		return triNull
	}
	c := compare(p.typ, v, p.lit)
	var ok bool
	switch p.op {
	case "=":
		ok = c == 0
	case "<>":
		ok = c != 0
	case "<":
		ok = c < 0
	case "<=":
		ok = c <= 0
	case ">":
		ok = c > 0
	case ">=":
		ok = c >= 0
	}
	return boolTri(ok)
}

func boolTri(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

type nullPred struct {
	col   string
	field int
	not   bool
}

func (p *nullPred) sql() string {
	if p.not {
		return quoteCol(p.col) + " IS NOT NULL"
	}
	return quoteCol(p.col) + " IS NULL"
}
func (p *nullPred) columns() []string { return []string{strings.Split(p.col, ".")[0]} }
func (p *nullPred) eval(s *state, r row) tri {
	return boolTri((valueOf(s, r, p.col, p.field) == nil) != p.not)
}

type inPred struct {
	col  string
	typ  actions.DataType
	lits []any
}

func (p *inPred) sql() string {
	parts := make([]string, len(p.lits))
	for i, l := range p.lits {
		parts[i] = sqlLiteral(p.typ, l)
	}
	return fmt.Sprintf("%s IN (%s)", quoteCol(p.col), strings.Join(parts, ", "))
}
func (p *inPred) columns() []string { return []string{p.col} }
func (p *inPred) eval(s *state, r row) tri {
	v := valueOf(s, r, p.col, -1)
	if v == nil {
		return triNull
	}
	for _, l := range p.lits {
		if compare(p.typ, v, l) == 0 {
			return triTrue
		}
	}
	return triFalse
}

type logicPred struct {
	op   string // AND, OR, NOT
	a, b pred
}

func (p *logicPred) sql() string {
	if p.op == "NOT" {
		return "NOT (" + p.a.sql() + ")"
	}
	return "(" + p.a.sql() + ") " + p.op + " (" + p.b.sql() + ")"
}
func (p *logicPred) columns() []string {
	if p.b == nil {
		return p.a.columns()
	}
	return append(p.a.columns(), p.b.columns()...)
}
func (p *logicPred) eval(s *state, r row) tri {
	a := p.a.eval(s, r)
	switch p.op {
	case "NOT":
		switch a {
		case triTrue:
			return triFalse
		case triFalse:
			return triTrue
		}
		return triNull
	case "AND":
		b := p.b.eval(s, r)
		switch {
		case a == triFalse || b == triFalse:
			return triFalse
		case a == triTrue && b == triTrue:
			return triTrue
		}
		return triNull
	}
	b := p.b.eval(s, r)
	switch {
	case a == triTrue || b == triTrue:
		return triTrue
	case a == triFalse && b == triFalse:
		return triFalse
	}
	return triNull
}

// truePred is a predicate that holds for every row: TRUE.
type truePred struct{}

func (truePred) sql() string          { return "true" }
func (truePred) columns() []string    { return nil }
func (truePred) eval(*state, row) tri { return triTrue }
func quoteCol(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
	}
	return strings.Join(parts, ".")
}

// ---- generated columns

// generate is the value of the generated column c for a row whose source
// value is v.
func generate(c *column, v any) any {
	if v == nil {
		return nil
	}
	switch c.fn {
	case "year":
		return int64(instant(v, c).Year())
	case "month":
		return int64(instant(v, c).Month())
	case "length":
		return int64(utf8.RuneCountInString(v.(string)))
	}
	panic("metamorphic: generated column function " + c.fn)
}

// instant reads a date (days) or timestamp (micros) source value; the
// generated column's fnOnDate tells which.
func instant(v any, c *column) time.Time {
	if c.srcIsDate {
		return epoch.AddDate(0, 0, int(v.(int64)))
	}
	return time.UnixMicro(v.(int64)).UTC()
}

// complete fills r's generated columns from their sources.
func (s *state) complete(r row) {
	for _, c := range s.cols {
		if c.kind == generatedCol {
			r.vals[c.uid] = generate(c, r.vals[c.src])
		}
	}
}

// checkRow is the name of the first CHECK constraint r violates, "" when
// none. As in Delta, a constraint is violated unless it is TRUE: NULL
// violates it too.
func (s *state) checkRow(r row) string {
	for _, c := range s.constraints {
		if c.pred.eval(s, r) != triTrue {
			return c.name
		}
	}
	return ""
}
