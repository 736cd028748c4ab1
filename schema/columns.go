package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// Column is a column for AddColumns.
type Column struct {
	// Path names the new column: "c" for a top-level column, "s.c" for a
	// field of struct s (arr.element.c and m.value.c inside arrays and
	// maps).
	Path    string
	Type    actions.DataType
	NotNull bool   // only on a table without rows
	Comment string // "" for none
	// First puts the column first in its struct; After (a field name of
	// the same struct) puts it after that field; by default it goes last.
	First bool
	After string
}

var positionRE = regexp.MustCompile("(?is)\\s+(first|after\\s+(`(?:[^`]|``)+`|[^\\s`]+))\\s*$")

// ParseColumn reads a column definition as ALTER TABLE ADD COLUMNS
// writes it, the CLI's --add-column: "path type [NOT NULL] [COMMENT
// 'text'] [FIRST | AFTER name]", the type in Spark's DDL (actions.ParseDDL).
func ParseColumn(text string) (Column, error) {
	text = strings.TrimSpace(text)
	var c Column
	if m := positionRE.FindStringSubmatchIndex(text); m != nil {
		pos := text[m[2]:m[3]]
		if strings.EqualFold(pos, "first") {
			c.First = true
		} else {
			after, err := ParseColumnPath(text[m[4]:m[5]])
			if err != nil || len(after) != 1 {
				return Column{}, fmt.Errorf("schema: %q: AFTER takes the name of a field of the same struct", text)
			}
			c.After = after[0]
		}
		text = text[:m[0]]
	}
	// The path: up to the first space outside backquotes.
	end, quoted := 0, false
	for end < len(text) && (quoted || text[end] != ' ' && text[end] != '\t') {
		if text[end] == '`' {
			quoted = !quoted
		}
		end++
	}
	if _, err := ParseColumnPath(text[:end]); err != nil {
		return Column{}, err
	}
	c.Path = text[:end]
	st, err := actions.ParseDDL("x " + text[end:])
	if err != nil {
		return Column{}, fmt.Errorf("schema: column %s: %w", c.Path, err)
	}
	if len(st.Fields) != 1 {
		return Column{}, fmt.Errorf("schema: %q: one column at a time (give several --add-column)", text)
	}
	f := st.Fields[0]
	if actions.IsIdentity(f) {
		return Column{}, fmt.Errorf("schema: column %s: an identity column cannot be added to an existing table (Spark refuses ADD COLUMNS ... AS IDENTITY too); create the table with it", c.Path)
	}
	c.Type, c.NotNull = f.Type, !f.Nullable
	if s, ok := f.Metadata["comment"].(string); ok {
		c.Comment = s
	}
	return c, nil
}

// invalidNameChars are the characters Spark refuses in column names of a
// table without column mapping (they break Parquet and Hive paths).
const invalidNameChars = " ,;{}()\n\t="

// AddColumns adds columns to the table in one commit: Spark's ALTER
// TABLE ADD COLUMNS. A column goes last in its struct unless First or
// After says otherwise; nested fields are added to a struct column (also
// inside arrays and maps). A column that exists (ignoring case), a
// parent that is not a struct, a NOT NULL column on a table that has
// rows, and (without column mapping) a name with one of the characters
// " ,;{}()\n\t=" are refused. In a column-mapped table the new columns
// get the next ids and new physical names. No data file is written: rows
// written before read the new columns as null.
func AddColumns(ctx context.Context, snap *deltalog.Snapshot, cols []Column, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "ADD COLUMNS", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	if len(cols) == 0 {
		return nil, c.refuse("", "no column to add")
	}
	var logged []any
	for _, col := range cols {
		entry, err := c.addColumn(col)
		if err != nil {
			return nil, err
		}
		logged = append(logged, entry)
	}
	if c.mapped() {
		var maxID int64
		c.schema, maxID = actions.AssignColumnMapping(c.schema, c.props.ColumnMappingMaxColumnID, false)
		c.md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	c.params["columns"] = actions.JSONText(logged)
	return c.commit(ctx)
}

func (c *change) addColumn(col Column) (any, error) {
	path, err := ParseColumnPath(col.Path)
	if err != nil {
		return nil, c.refuse("", "%v", err)
	}
	shown := quotePath(path)
	name := path[len(path)-1]
	if col.Type == nil {
		return nil, c.refuse(shown, "no type given")
	}
	parent := c.schema
	if len(path) > 1 {
		tg, err := resolve(c.schema, path[:len(path)-1])
		if err != nil {
			return nil, c.refuse(shown, "%v", err)
		}
		st, ok := tg.dataType().(*actions.StructType)
		if !ok {
			return nil, c.refuse(shown, "%s is a %s, not a struct: only structs take fields", quotePath(path[:len(path)-1]), tg.dataType())
		}
		parent = st
	}
	if k := fieldIndex(parent, name); k >= 0 {
		return nil, c.refuse(shown, "a column %s already exists (names are compared ignoring case)", quotePath(append(append([]string{}, path[:len(path)-1]...), parent.Fields[k].Name)))
	}
	if !c.mapped() && strings.ContainsAny(name, invalidNameChars) {
		return nil, c.refuse(shown, "the name holds one of the characters %q, which a table without column mapping cannot name a column with; enable column mapping (%s=name) first", invalidNameChars, actions.PropColumnMappingMode)
	}
	f := &actions.StructField{Name: name, Type: col.Type, Nullable: !col.NotNull}
	if col.Comment != "" {
		f.Metadata = map[string]any{"comment": col.Comment}
	}
	if !f.Nullable || hasNotNull(f.Type) {
		if c.snap.NumFiles() > 0 {
			return nil, c.refuse(shown, "a NOT NULL column can only be added to a table without rows (the rows written before would hold nulls)")
		}
		c.tx.ReadWholeTable() // a concurrent append would add rows without it
	}
	pos := len(parent.Fields)
	position := ""
	switch {
	case col.First:
		pos, position = 0, "FIRST"
	case col.After != "":
		k := fieldIndex(parent, col.After)
		if k < 0 {
			return nil, c.refuse(shown, "AFTER %s: no such column in %s (it holds %s)", col.After, structName(path[:len(path)-1]), strings.Join(parent.Names(), ", "))
		}
		pos, position = k+1, "AFTER "+parent.Fields[k].Name
	}
	parent.Fields = slices.Insert(parent.Fields, pos, f)
	logField := *f
	logField.Name = quotePath(path)
	raw, err := actions.MarshalField(&logField)
	if err != nil {
		return nil, c.refuse(shown, "%v", err)
	}
	entry := map[string]any{"column": json.RawMessage(raw)}
	if position != "" {
		entry["position"] = position
	}
	return entry, nil
}

// hasNotNull reports whether a type holds a non-nullable struct field.
func hasNotNull(t actions.DataType) bool {
	switch x := t.(type) {
	case *actions.StructType:
		for _, f := range x.Fields {
			if !f.Nullable || hasNotNull(f.Type) {
				return true
			}
		}
	case *actions.ArrayType:
		return hasNotNull(x.ElementType)
	case *actions.MapType:
		return hasNotNull(x.KeyType) || hasNotNull(x.ValueType)
	}
	return false
}

// structField resolves a column path to a struct field (not an array
// element or map key or value).
func (c *change) structField(column string) (*target, []string, error) {
	path, err := ParseColumnPath(column)
	if err != nil {
		return nil, nil, c.refuse("", "%v", err)
	}
	tg, err := resolve(c.schema, path)
	if err != nil {
		return nil, nil, c.refuse(quotePath(path), "%v", err)
	}
	if tg.field() == nil {
		return nil, nil, c.refuse(quotePath(tg.names), "%s is an array element or map key or value, not a column", quotePath(tg.names))
	}
	return tg, tg.names, nil
}

// isPartition reports whether a top-level path names a partition column,
// returning its index in partitionColumns.
func (c *change) isPartition(names []string) int {
	if len(names) != 1 {
		return -1
	}
	for i, p := range c.md.PartitionColumns {
		if strings.EqualFold(p, names[0]) {
			return i
		}
	}
	return -1
}

// RenameColumn renames a column (nested ones too) in one commit: Spark's
// ALTER TABLE RENAME COLUMN column TO newName. It needs column mapping:
// the data files keep the column's physical name. A name another column
// of the same struct has (ignoring case), and a column a CHECK
// constraint or generated column reads, are refused. A partition column
// keeps being one under its new name, and delta.dataSkippingStatsColumns
// follows the rename, as in Spark.
func RenameColumn(ctx context.Context, snap *deltalog.Snapshot, column, newName string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "RENAME COLUMN", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	tg, names, err := c.structField(column)
	if err != nil {
		return nil, err
	}
	if err := c.needMapping(quotePath(names)); err != nil {
		return nil, err
	}
	if newName == "" {
		return nil, c.refuse(quotePath(names), "the new name is empty")
	}
	if k := fieldIndex(tg.parent, newName); k >= 0 && k != tg.index {
		return nil, c.refuse(quotePath(names), "a column %s already exists (names are compared ignoring case)", quotePath(append(append([]string{}, names[:len(names)-1]...), tg.parent.Fields[k].Name)))
	}
	if err := c.refuseDependents(names, "rename"); err != nil {
		return nil, err
	}
	if i := c.isPartition(names); i >= 0 {
		c.md.PartitionColumns[i] = newName
	}
	c.statsColumnsAfter(names, newName)
	f := actions.CopyField(tg.field())
	f.Name = newName
	tg.parent.Fields[tg.index] = f
	newPath := append(append([]string{}, names[:len(names)-1]...), newName)
	c.params["oldColumnPath"] = quotePath(names)
	c.params["newColumnPath"] = quotePath(newPath)
	return c.commit(ctx)
}

// DropColumns drops columns (nested ones too) in one commit: Spark's
// ALTER TABLE DROP COLUMNS. It needs column mapping: the data files keep
// the columns, which are no longer read (time travel to earlier versions
// still reads them). Partition columns, the last field of a struct, the
// last data column, and a column a CHECK constraint or generated column
// reads, are refused. delta.dataSkippingStatsColumns drops them too.
func DropColumns(ctx context.Context, snap *deltalog.Snapshot, columns []string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "DROP COLUMNS", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	if len(columns) == 0 {
		return nil, c.refuse("", "no column to drop")
	}
	var dropped []string
	for i, column := range columns {
		path, err := ParseColumnPath(column)
		if err != nil {
			return nil, c.refuse("", "%v", err)
		}
		for _, other := range columns[:i] {
			if p, err := ParseColumnPath(other); err == nil && len(p) == len(path) && overlaps(p, path) {
				return nil, c.refuse(quotePath(path), "the column is named twice")
			}
		}
	}
	for _, column := range columns {
		tg, names, err := c.structField(column)
		if err != nil {
			return nil, err
		}
		shown := quotePath(names)
		if err := c.needMapping(shown); err != nil {
			return nil, err
		}
		if c.isPartition(names) >= 0 {
			return nil, c.refuse(shown, "a partition column cannot be dropped (the files are laid out by it), as in Spark")
		}
		if len(tg.parent.Fields) == 1 && len(names) > 1 {
			return nil, c.refuse(shown, "it is the only field of struct %s, which cannot be left without fields; drop %s instead", quotePath(names[:len(names)-1]), quotePath(names[:len(names)-1]))
		}
		if err := c.refuseDependents(names, "drop"); err != nil {
			return nil, err
		}
		c.statsColumnsAfter(names, "")
		tg.parent.Fields = slices.Delete(tg.parent.Fields, tg.index, tg.index+1)
		dropped = append(dropped, shown)
	}
	if len(c.schema.Fields) <= len(c.md.PartitionColumns) {
		return nil, c.refuse(strings.Join(dropped, ", "), "a table needs at least one column that is not a partition column")
	}
	c.params["columns"] = actions.JSONText(dropped)
	return c.commit(ctx)
}

// ChangeColumnType widens the type of a column (a struct field, or an
// array element or map key or value) in one commit: Spark's ALTER TABLE
// ALTER COLUMN column TYPE t. Only the widenings of the typeWidening
// feature (actions.CanWidenType) are made, and only on a table with
// delta.enableTypeWidening=true (which adds the feature); data files
// keep the old type and are read widened. The change is recorded in the
// column's delta.typeChanges. A partition column widens only between
// numbers; a column a CHECK constraint or generated column reads is
// refused.
func ChangeColumnType(ctx context.Context, snap *deltalog.Snapshot, column string, to actions.DataType, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "CHANGE COLUMN", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	path, err := ParseColumnPath(column)
	if err != nil {
		return nil, c.refuse("", "%v", err)
	}
	tg, err := resolve(c.schema, path)
	if err != nil {
		return nil, c.refuse(quotePath(path), "%v", err)
	}
	shown := quotePath(tg.names)
	from := tg.dataType()
	switch {
	case to == nil:
		return nil, c.refuse(shown, "no type given")
	case from.String() == to.String():
		return nil, c.refuse(shown, "the column is already of type %s", to)
	case !actions.CanWidenType(from, to):
		return nil, c.refuse(shown, "cannot change type %s to %s: the typeWidening feature widens byte, short, int to long, double or a wide enough decimal, float to double, decimals to more digits, and date to timestamp_ntz (other changes rewrite the data, which ALTER does not)", from, to)
	case !c.props.EnableTypeWidening:
		return nil, c.refuse(shown, "changing the type %s to %s needs type widening: set %s=true first (maintenance.SetProperties)", from, to, actions.PropEnableTypeWidening)
	case c.isPartition(tg.names) >= 0 && from == actions.TypeDate:
		return nil, c.refuse(shown, "partition column of type date cannot become %s (its partition values are dates)", to)
	}
	if err := c.refuseDependents(tg.names, "change the type of"); err != nil {
		return nil, err
	}
	owner := actions.CopyField(tg.owner)
	if f := tg.field(); f != nil {
		owner.Type = to
		tg.parent.Fields[tg.index] = owner
	} else {
		tg.set(to)
		c.replaceOwner(tg, owner)
	}
	actions.AddTypeChange(owner, from, to, tg.fieldPath)
	return c.commitChangeColumn(ctx, tg.names, owner)
}

// replaceOwner puts owner (a changed copy of tg.owner) in its place.
func (c *change) replaceOwner(tg *target, owner *actions.StructField) {
	var walk func(st *actions.StructType) bool
	walk = func(st *actions.StructType) bool {
		for i, f := range st.Fields {
			if f == tg.owner {
				owner.Type = f.Type
				st.Fields[i] = owner
				return true
			}
			if inner := structsIn(f.Type); inner != nil {
				for _, s := range inner {
					if walk(s) {
						return true
					}
				}
			}
		}
		return false
	}
	walk(c.schema)
}

// structsIn lists the structs directly in t (through arrays and maps).
func structsIn(t actions.DataType) []*actions.StructType {
	switch x := t.(type) {
	case *actions.StructType:
		return []*actions.StructType{x}
	case *actions.ArrayType:
		return structsIn(x.ElementType)
	case *actions.MapType:
		return append(structsIn(x.KeyType), structsIn(x.ValueType)...)
	}
	return nil
}

// commitChangeColumn commits a CHANGE COLUMN with Spark's parameter: the
// changed field, named by its path.
func (c *change) commitChangeColumn(ctx context.Context, names []string, f *actions.StructField) (*deltalog.CommitResult, error) {
	logField := *f
	logField.Name = quotePath(names)
	raw, err := actions.MarshalField(&logField)
	if err != nil {
		return nil, c.refuse(quotePath(names), "%v", err)
	}
	c.params["column"] = string(raw)
	return c.commit(ctx)
}

// DropNotNull makes a NOT NULL column nullable in one commit: Spark's
// ALTER TABLE ALTER COLUMN column DROP NOT NULL (a nullable column stays
// so, and the commit is made anyway, as Spark makes it).
func DropNotNull(ctx context.Context, snap *deltalog.Snapshot, column string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "CHANGE COLUMN", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	tg, names, err := c.structField(column)
	if err != nil {
		return nil, err
	}
	f := actions.CopyField(tg.field())
	f.Nullable = true
	tg.parent.Fields[tg.index] = f
	return c.commitChangeColumn(ctx, names, f)
}

// SetComment sets a column's comment (its "comment" metadata) in one
// commit: Spark's ALTER TABLE ALTER COLUMN column COMMENT 'text'. An
// empty comment removes it.
func SetComment(ctx context.Context, snap *deltalog.Snapshot, column, comment string, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "CHANGE COLUMN", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	tg, names, err := c.structField(column)
	if err != nil {
		return nil, err
	}
	f := actions.CopyField(tg.field())
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	if comment == "" {
		delete(f.Metadata, "comment")
	} else {
		f.Metadata["comment"] = comment
	}
	tg.parent.Fields[tg.index] = f
	return c.commitChangeColumn(ctx, names, f)
}
