package writer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/arrowconv"
)

// ErrSchemaMismatch is wrapped by every *SchemaError: the input does not
// fit the table's schema. Nothing was committed.
var ErrSchemaMismatch = errors.New("data does not match the table schema")

// SchemaError reports input that does not fit the table: an unknown or
// missing column, a wrong type, a null in a non-nullable column, or a row
// outside a replaceWhere predicate.
type SchemaError struct {
	// Column is the column's path ("a", "s.x", "tags.element"), in the
	// table's spelling when the table has it; empty for row-level errors
	// that concern no single column.
	Column string
	// Row is the 1-based number of the offending input row, counted over
	// all input batches, or 0 when the error is not about one row.
	Row int64
	// Reason says what is wrong.
	Reason string
	// Err is the refusal behind Reason, if another package made it (the
	// protocol rule's *actions.FeatureNotEnabledError).
	Err error
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	b.WriteString("writer: ")
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(e.Reason)
	if e.Row > 0 {
		fmt.Fprintf(&b, " (input row %d)", e.Row)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrSchemaMismatch) hold, and errors.As find
// Err.
func (e *SchemaError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSchemaMismatch, e.Err}
	}
	return []error{ErrSchemaMismatch}
}

// conformer brings input batches to the table's full logical schema
// (partition columns included, in schema order), enforcing the schema. With
// merge set it first widens the schema by the input's new columns.
type conformer struct {
	schema  *actions.StructType
	arrow   *arrow.Schema
	merge   bool
	changed bool // merge added columns
	mem     memory.Allocator
	// In a column-mapped table (mode not "none") the columns merge adds
	// get ids above maxID and physical names (actions.AssignColumnMapping);
	// maxID is then the table's new delta.columnMapping.maxColumnId.
	mode  string
	maxID int64
	// gens are the table's generated columns; with generate, a batch
	// that lacks one gets its values computed, one that gives it has them
	// checked.
	gens     []*generatedColumn
	generate bool
	// ids generates the identity columns' values of rows the input
	// lacks them for (with generate); tableRows marks an input of rows
	// that already hold them (DML's copies and inserts), taken as they
	// are.
	ids       *Identity
	tableRows bool
	// widen lets merge widen a column's type as the typeWidening feature
	// does on schema evolution (actions.CanWidenOnWrite): set on a table
	// with delta.enableTypeWidening. parts are the partition columns and
	// deps the columns (lower-case dotted paths) that CHECK constraints
	// and generated columns read, which are never widened.
	widen bool
	parts []string
	deps  map[string]string
	// keepDicts: a dictionary array given for a top-level string or
	// binary column that is neither a partition column (partition, lower
	// case) nor generated stays a dictionary array, for the Parquet
	// writer's direct dictionary path (see dictpass.go).
	keepDicts bool
	partition map[string]bool
}

func newConformer(table *actions.TableConfig, merge bool, mem memory.Allocator) (*conformer, error) {
	schema, md, props := table.Schema(), table.Metadata(), table.Properties()
	c := &conformer{schema: schema, merge: merge, mem: mem, mode: table.ColumnMappingMode(), maxID: props.ColumnMappingMaxColumnID}
	if merge && props.EnableTypeWidening {
		c.widen, c.parts, c.deps = true, md.PartitionColumns, dependentColumns(schema, props)
	}
	if err := c.setSchema(schema); err != nil {
		return nil, err
	}
	return c, nil
}

// dependentColumns maps the columns that the table's CHECK constraints
// and generation expressions read (lower-case dotted paths) to the
// first expression that reads each, as "CHECK constraint NAME (EXPR)".
// An expression that does not parse reads nothing here; writes bind it
// and fail on it anyway.
func dependentColumns(schema *actions.StructType, props *actions.TableProperties) map[string]string {
	deps := map[string]string{}
	note := func(text, what string) {
		e, err := expr.Parse(text)
		if err != nil {
			return
		}
		expr.Walk(e, func(n expr.Expr) bool {
			if col, ok := n.(*expr.Column); ok {
				k := strings.ToLower(strings.Join(col.Path, "."))
				if _, seen := deps[k]; !seen {
					deps[k] = what
				}
			}
			return true
		})
	}
	for _, name := range slices.Sorted(maps.Keys(props.Constraints)) {
		note(props.Constraints[name], fmt.Sprintf("CHECK constraint %s (%s)", name, props.Constraints[name]))
	}
	for _, f := range schema.Fields {
		if text, ok := f.Metadata[actions.MetaGenerationExpression].(string); ok {
			note(text, fmt.Sprintf("generated column %s (%s)", f.Name, text))
		}
	}
	return deps
}

// dependent returns the expression that reads the column at path (a
// dotted path), a column inside it or a struct around it, or "".
func (c *conformer) dependent(path string) string {
	p := strings.ToLower(path)
	for _, k := range slices.Sorted(maps.Keys(c.deps)) {
		if k == p || strings.HasPrefix(k, p+".") || strings.HasPrefix(p, k+".") {
			return c.deps[k]
		}
	}
	return ""
}

func (c *conformer) setSchema(s *actions.StructType) error {
	sc, err := actions.ToArrowSchema(s, false, "")
	if err != nil {
		return fmt.Errorf("writer: table schema: %w", err)
	}
	gens, err := bindGenerated(s)
	if err != nil {
		return err
	}
	ids, err := NewIdentity(s)
	if err != nil {
		return err
	}
	if c.ids != nil { // merge-schema: the marks so far carry over
		for _, col := range c.ids.cols {
			if n := ids.column(col.index); n != nil {
				n.def, n.n = col.def, col.n
			}
		}
	}
	c.schema, c.arrow, c.gens, c.ids = s, sc, gens, ids
	return nil
}

// conform returns rec as a batch of the table's schema. rowBase is the
// number of input rows before rec, for error messages.
func (c *conformer) conform(ctx context.Context, rec arrow.RecordBatch, rowBase int64) (arrow.RecordBatch, error) {
	in := rec.Schema()
	if c.merge {
		merged, changed, err := c.mergeStruct(c.schema, in.Fields(), "")
		if err != nil {
			return nil, err
		}
		if changed {
			if c.mode != actions.ColumnMappingNone {
				merged, c.maxID = actions.AssignColumnMapping(merged, c.maxID, false)
			}
			if err := c.setSchema(merged); err != nil {
				return nil, err
			}
			c.changed = true
		}
	}
	// Match input columns to table columns, ignoring case as Spark does.
	byTable := make([]int, len(c.schema.Fields))
	for i := range byTable {
		byTable[i] = -1
	}
	for j, f := range in.Fields() {
		i := c.schema.IndexFold(f.Name)
		if i < 0 {
			return nil, &SchemaError{Column: f.Name, Reason: "is not in the table schema (columns: " + strings.Join(c.schema.Names(), ", ") + "); merge-schema adds new columns"}
		}
		if byTable[i] >= 0 {
			return nil, &SchemaError{Column: c.schema.Fields[i].Name, Reason: fmt.Sprintf("appears twice in the input (%q and %q)", in.Field(byTable[i]).Name, f.Name)}
		}
		byTable[i] = j
	}
	n := rec.NumRows()
	cols := make([]arrow.Array, len(c.schema.Fields))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, f := range c.schema.Fields {
		target := c.arrow.Field(i).Type
		j := byTable[i]
		if j >= 0 && c.generate && !c.tableRows {
			if id, ok, _ := actions.IdentityOf(f); ok && !id.AllowExplicitInsert {
				return nil, &SchemaError{Column: f.Name, Reason: "is GENERATED ALWAYS AS IDENTITY: its values cannot be supplied (leave the column out of the input, or define it GENERATED BY DEFAULT)"}
			}
		}
		if j < 0 {
			if !f.Nullable && !isGenerated(f) && !(actions.IsIdentity(f) && c.generate && !c.tableRows) {
				return nil, &SchemaError{Column: f.Name, Reason: "is missing from the input and is not nullable"}
			}
			cols[i] = array.MakeArrayOfNull(c.mem, target, int(n))
			continue
		}
		if err := compatible(in.Field(j).Type, f.Type, f.Name); err != nil {
			return nil, err
		}
		if d := c.passDictionary(rec.Column(j), f, target); d != nil {
			cols[i] = d
			if err := checkNulls(d, f.Type, f.Nullable, f.Name, nil, nil, rowBase); err != nil {
				return nil, err
			}
			continue
		}
		a, err := arrowconv.Conform(ctx, c.mem, rec.Column(j), target)
		if err != nil {
			return nil, &SchemaError{Column: f.Name, Reason: err.Error()}
		}
		cols[i] = a
		if err := checkNulls(a, f.Type, f.Nullable, f.Name, nil, nil, rowBase); err != nil {
			return nil, err
		}
	}
	out := array.NewRecordBatch(arrowbatch.SchemaOf(c.arrow, cols), cols, n)
	if !c.generate {
		return out, nil
	}
	if c.ids != nil && !c.tableRows {
		for _, col := range c.ids.cols {
			if byTable[col.index] >= 0 {
				continue // BY DEFAULT, supplied: kept as given
			}
			next, err := c.ids.replace(out, col, nil, c.mem)
			out.Release()
			if err != nil {
				return nil, err
			}
			out = next
		}
	}
	if len(c.gens) == 0 {
		return out, nil
	}
	given := make([]bool, len(byTable))
	for i, j := range byTable {
		given[i] = j >= 0
	}
	filled, err := fillGenerated(ctx, c.gens, out, given, rowBase, c.mem)
	out.Release()
	return filled, err
}

func isGenerated(f *actions.StructField) bool {
	_, ok := f.Metadata[actions.MetaGenerationExpression]
	return ok
}

// compatible checks that values of the Arrow type in can be stored in a
// column of Delta type t without loss: the same type, or a narrower
// integer, float or decimal, or another Arrow encoding of the same values
// (large or view strings, dictionaries, other timestamp units). Structs
// match their fields by name; a field the input lacks must be nullable.
func compatible(in arrow.DataType, t actions.DataType, path string) error {
	if in.ID() == arrow.NULL {
		return nil // all nulls; checkNulls rejects them where not allowed
	}
	if d, ok := in.(*arrow.DictionaryType); ok {
		return compatible(d.ValueType, t, path)
	}
	if e, ok := in.(arrow.ExtensionType); ok {
		return compatible(e.StorageType(), t, path)
	}
	bad := func() error {
		return &SchemaError{Column: path, Reason: fmt.Sprintf("input type %s cannot be written to a column of type %s", in, t)}
	}
	id := in.ID()
	switch t := t.(type) {
	case actions.PrimitiveType:
		ok := false
		switch t {
		case actions.TypeBoolean:
			ok = id == arrow.BOOL
		case actions.TypeByte:
			ok = id == arrow.INT8
		case actions.TypeShort:
			ok = id == arrow.INT8 || id == arrow.INT16 || id == arrow.UINT8
		case actions.TypeInteger:
			ok = id == arrow.INT8 || id == arrow.INT16 || id == arrow.INT32 || id == arrow.UINT8 || id == arrow.UINT16
		case actions.TypeLong:
			ok = id == arrow.INT8 || id == arrow.INT16 || id == arrow.INT32 || id == arrow.INT64 ||
				id == arrow.UINT8 || id == arrow.UINT16 || id == arrow.UINT32
		case actions.TypeFloat:
			ok = id == arrow.FLOAT32 || id == arrow.INT8 || id == arrow.INT16 || id == arrow.UINT8
		case actions.TypeDouble:
			ok = id == arrow.FLOAT32 || id == arrow.FLOAT64 || id == arrow.INT8 || id == arrow.INT16 ||
				id == arrow.INT32 || id == arrow.UINT8 || id == arrow.UINT16 || id == arrow.UINT32
		case actions.TypeString:
			ok = id == arrow.STRING || id == arrow.LARGE_STRING || id == arrow.STRING_VIEW
		case actions.TypeBinary:
			ok = id == arrow.BINARY || id == arrow.LARGE_BINARY || id == arrow.BINARY_VIEW || id == arrow.FIXED_SIZE_BINARY
		case actions.TypeDate:
			ok = id == arrow.DATE32 || id == arrow.DATE64
		case actions.TypeTimestamp, actions.TypeTimestampNTZ:
			ts, isTS := in.(*arrow.TimestampType)
			if !isTS {
				break
			}
			if (ts.TimeZone != "") != (t == actions.TypeTimestamp) {
				if t == actions.TypeTimestamp {
					return &SchemaError{Column: path, Reason: fmt.Sprintf("input type %s has no time zone, so it is a timestamp_ntz, not a timestamp; give the input a time zone", in)}
				}
				return &SchemaError{Column: path, Reason: fmt.Sprintf("input type %s has a time zone, so it is a timestamp, not a timestamp_ntz", in)}
			}
			ok = true
		}
		if !ok {
			return bad()
		}
		return nil
	case *actions.DecimalType:
		intDigits := map[arrow.Type]int{arrow.INT8: 3, arrow.INT16: 5, arrow.INT32: 10, arrow.INT64: 19, arrow.UINT8: 3, arrow.UINT16: 5, arrow.UINT32: 10, arrow.UINT64: 20}
		if d, ok := intDigits[id]; ok {
			if t.Precision-t.Scale >= d {
				return nil
			}
			return bad()
		}
		dt, ok := in.(arrow.DecimalType)
		if !ok {
			return bad()
		}
		p, s := int(dt.GetPrecision()), int(dt.GetScale())
		if s <= t.Scale && p-s <= t.Precision-t.Scale {
			return nil
		}
		return bad()
	case *actions.StructType:
		st, ok := in.(*arrow.StructType)
		if !ok {
			return bad()
		}
		seen := make([]bool, len(t.Fields))
		for _, f := range st.Fields() {
			i := t.IndexFold(f.Name)
			if i < 0 {
				return &SchemaError{Column: path + "." + f.Name, Reason: "is not in the table schema; merge-schema adds new fields"}
			}
			if seen[i] {
				return &SchemaError{Column: path + "." + t.Fields[i].Name, Reason: "appears twice in the input"}
			}
			seen[i] = true
			if err := compatible(f.Type, t.Fields[i].Type, path+"."+t.Fields[i].Name); err != nil {
				return err
			}
		}
		for i, f := range t.Fields {
			if !seen[i] && !f.Nullable {
				return &SchemaError{Column: path + "." + f.Name, Reason: "is missing from the input and is not nullable"}
			}
		}
		return nil
	case *actions.ArrayType:
		if id != arrow.LIST && id != arrow.LARGE_LIST {
			return bad()
		}
		return compatible(in.(arrow.ListLikeType).Elem(), t.ElementType, path+".element")
	case *actions.MapType:
		m, ok := in.(*arrow.MapType)
		if !ok {
			return bad()
		}
		if err := compatible(m.KeyType(), t.KeyType, path+".key"); err != nil {
			return err
		}
		return compatible(m.ItemType(), t.ValueType, path+".value")
	}
	return bad()
}

// checkNulls rejects nulls where the schema forbids them: in a
// non-nullable column or struct field (where the enclosing struct is not
// null), in array elements without containsNull, in map keys, and in map
// values without valueContainsNull. rows maps an index of a to its
// input row (nil: the index is the row) and live marks the indices that
// matter (nil: all).
func checkNulls(a arrow.Array, t actions.DataType, nullable bool, path string, rows []int, live []bool, rowBase int64) error {
	n := a.Len()
	rowOf := func(i int) int64 {
		if rows != nil {
			return rowBase + int64(rows[i]) + 1
		}
		return rowBase + int64(i) + 1
	}
	if !nullable && a.NullN() > 0 {
		for i := 0; i < n; i++ {
			if (live == nil || live[i]) && a.IsNull(i) {
				return &SchemaError{Column: path, Row: rowOf(i), Reason: "null in a non-nullable column"}
			}
		}
	}
	if !hasNullConstraint(t) {
		return nil
	}
	alive := func(i int) bool { return (live == nil || live[i]) && a.IsValid(i) }
	switch t := t.(type) {
	case *actions.StructType:
		st := a.(*array.Struct)
		var childLive []bool
		if live != nil || st.NullN() > 0 {
			childLive = make([]bool, n)
			for i := range childLive {
				childLive[i] = alive(i)
			}
		}
		for k, f := range t.Fields {
			if err := checkNulls(st.Field(k), f.Type, f.Nullable, path+"."+f.Name, rows, childLive, rowBase); err != nil {
				return err
			}
		}
	case *actions.ArrayType:
		l := a.(*array.List)
		values := l.ListValues()
		vRows, vLive := childIndex(l, values.Len(), n, alive, rows)
		return checkNulls(values, t.ElementType, t.ContainsNull, path+".element", vRows, vLive, rowBase)
	case *actions.MapType:
		m := a.(*array.Map)
		vRows, vLive := childIndex(m, m.Keys().Len(), n, alive, rows)
		if err := checkNulls(m.Keys(), t.KeyType, false, path+".key", vRows, vLive, rowBase); err != nil {
			return err
		}
		return checkNulls(m.Items(), t.ValueType, t.ValueContainsNull, path+".value", vRows, vLive, rowBase)
	}
	return nil
}

// childIndex maps each element of a list-like array's values to its row
// and marks the elements of live, non-null lists.
func childIndex(l array.ListLike, nvalues, n int, alive func(int) bool, rows []int) ([]int, []bool) {
	vRows := make([]int, nvalues)
	vLive := make([]bool, nvalues)
	for i := 0; i < n; i++ {
		if !alive(i) {
			continue
		}
		start, end := l.ValueOffsets(i)
		row := i
		if rows != nil {
			row = rows[i]
		}
		for k := start; k < end; k++ {
			vRows[k] = row
			vLive[k] = true
		}
	}
	return vRows, vLive
}

// hasNullConstraint reports whether t has a non-nullable part inside.
func hasNullConstraint(t actions.DataType) bool {
	switch t := t.(type) {
	case *actions.StructType:
		for _, f := range t.Fields {
			if !f.Nullable || hasNullConstraint(f.Type) {
				return true
			}
		}
	case *actions.ArrayType:
		return !t.ContainsNull || hasNullConstraint(t.ElementType)
	case *actions.MapType:
		return true // keys are never null
	}
	return false
}

// mergeStruct adds the input's columns and struct fields that the table
// lacks, as nullable, after the existing ones (Spark's mergeSchema). With
// widen it also widens a column (or struct field) of a primitive or
// decimal type to the input's wider type where the typeWidening feature
// does so on schema evolution, recording the change in the field's
// delta.typeChanges; other type differences are left for compatible to
// report.
func (c *conformer) mergeStruct(s *actions.StructType, in []arrow.Field, path string) (*actions.StructType, bool, error) {
	fields := make([]*actions.StructField, len(s.Fields))
	copy(fields, s.Fields)
	changed := false
	for _, f := range in {
		fpath := f.Name
		if path != "" {
			fpath = path + "." + f.Name
		}
		i := -1
		for k, tf := range fields {
			if strings.EqualFold(tf.Name, f.Name) {
				i = k
				break
			}
		}
		if i < 0 {
			t, err := actions.FromArrowType(f.Type)
			if err != nil {
				return nil, false, &SchemaError{Column: fpath, Reason: fmt.Sprintf("cannot add a column of input type %s: %v", f.Type, err)}
			}
			fields = append(fields, &actions.StructField{Name: f.Name, Type: actions.NullableType(t), Nullable: true})
			changed = true
			continue
		}
		if nf, ch, err := c.widenField(fields[i], f.Type, fpath); err != nil {
			return nil, false, err
		} else if ch {
			fields[i] = nf
			changed = true
			continue
		}
		// Recurse into structs (also as array elements and map values).
		nt, ch, err := c.mergeType(fields[i].Type, f.Type, fpath)
		if err != nil {
			return nil, false, err
		}
		if ch {
			nf := *fields[i]
			nf.Type = nt
			fields[i] = &nf
			changed = true
		}
	}
	if !changed {
		return s, false, nil
	}
	return &actions.StructType{Fields: fields}, true, nil
}

// widenField returns a copy of f widened to the input type in, when
// schema evolution widens it (see mergeStruct); an input type that is
// wider but may not widen here is an error saying why.
func (c *conformer) widenField(f *actions.StructField, in arrow.DataType, path string) (*actions.StructField, bool, error) {
	if d, ok := in.(*arrow.DictionaryType); ok {
		in = d.ValueType
	}
	switch f.Type.(type) {
	case actions.PrimitiveType, *actions.DecimalType:
	default:
		return nil, false, nil
	}
	to, err := actions.FromArrowType(in)
	if err != nil {
		return nil, false, nil
	}
	if _, ok := to.(*actions.DecimalType); !ok {
		if _, isPrim := to.(actions.PrimitiveType); !isPrim {
			return nil, false, nil
		}
	}
	from := f.Type
	if !actions.CanWidenOnWrite(from, to) {
		return nil, false, nil
	}
	if !c.widen {
		return nil, false, &SchemaError{Column: path, Reason: fmt.Sprintf("input type %s is wider than the column's type %s; merge-schema widens it only on a table with %s=true (the typeWidening feature)", in, from, actions.PropEnableTypeWidening)}
	}
	if slices.ContainsFunc(c.parts, func(p string) bool { return strings.EqualFold(p, path) }) && from == actions.TypeDate {
		return nil, false, &SchemaError{Column: path, Reason: fmt.Sprintf("partition column of type date cannot widen to %s (its partition values are dates)", to)}
	}
	if dep := c.dependent(path); dep != "" {
		return nil, false, &SchemaError{Column: path, Reason: fmt.Sprintf("input type %s would widen the column's type %s, but %s reads the column; change or drop it first", in, from, dep)}
	}
	nf := actions.CopyField(f)
	nf.Type = to
	actions.AddTypeChange(nf, from, to, "")
	return nf, true, nil
}

func (c *conformer) mergeType(t actions.DataType, in arrow.DataType, path string) (actions.DataType, bool, error) {
	if d, ok := in.(*arrow.DictionaryType); ok {
		in = d.ValueType
	}
	switch t := t.(type) {
	case *actions.StructType:
		if st, ok := in.(*arrow.StructType); ok {
			return c.mergeStruct(t, st.Fields(), path)
		}
	case *actions.ArrayType:
		if l, ok := in.(arrow.ListLikeType); ok && (in.ID() == arrow.LIST || in.ID() == arrow.LARGE_LIST) {
			et, ch, err := c.mergeType(t.ElementType, l.Elem(), path+".element")
			if err != nil || !ch {
				return t, false, err
			}
			return &actions.ArrayType{ElementType: et, ContainsNull: t.ContainsNull}, true, nil
		}
	case *actions.MapType:
		if m, ok := in.(*arrow.MapType); ok {
			vt, ch, err := c.mergeType(t.ValueType, m.ItemType(), path+".value")
			if err != nil || !ch {
				return t, false, err
			}
			return &actions.MapType{KeyType: t.KeyType, ValueType: vt, ValueContainsNull: t.ValueContainsNull}, true, nil
		}
	}
	return t, false, nil
}
