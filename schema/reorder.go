package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// MoveColumn moves a column (a field of a struct too) within its struct
// in one commit: Spark's ALTER TABLE ALTER COLUMN column FIRST (after
// "") or AFTER after (a field of the same struct). Data files name their
// columns, so the order changes without rewriting them, with or without
// column mapping. Moving a column after itself is refused.
func MoveColumn(ctx context.Context, snap *deltalog.Snapshot, column, after string, first bool, opts ...Option) (*deltalog.CommitResult, error) {
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
	shown := quotePath(names)
	if first == (after != "") {
		return nil, c.refuse(shown, "say FIRST or AFTER a column")
	}
	f := tg.parent.Fields[tg.index]
	fields := slices.Delete(slices.Clone(tg.parent.Fields), tg.index, tg.index+1)
	pos, position := 0, "FIRST"
	if !first {
		k := fieldIndex(&actions.StructType{Fields: fields}, after)
		if k < 0 {
			if strings.EqualFold(after, f.Name) {
				return nil, c.refuse(shown, "AFTER %s: a column cannot go after itself", after)
			}
			return nil, c.refuse(shown, "AFTER %s: no such column in %s (it holds %s)", after, structName(names[:len(names)-1]), strings.Join(tg.parent.Names(), ", "))
		}
		pos, position = k+1, "AFTER "+fields[k].Name
	}
	tg.parent.Fields = slices.Insert(fields, pos, f)
	c.params["position"] = position
	return c.commitChangeColumn(ctx, names, f)
}

// ReplaceColumns gives the table the columns cols, in their order, in
// one commit: Spark's ALTER TABLE REPLACE COLUMNS (col type, ...). As
// Delta checks it, the change must only reorder columns, add nullable
// ones, make NOT NULL columns nullable and change comments: a column
// keeps its type (ALTER COLUMN TYPE widens one where the table allows),
// a nullable column cannot become NOT NULL, and a column left out is
// dropped, which needs column mapping (as DROP COLUMN does) and is
// refused for partition columns and columns constraints or generated
// columns read. Columns are matched by name, ignoring case; the
// matched columns keep their metadata (column mapping's ids and physical
// names, generation expressions). A change that both adds and drops
// columns is refused as ambiguous, as in Spark.
func ReplaceColumns(ctx context.Context, snap *deltalog.Snapshot, cols []Column, opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("schema: %w", deltalog.ErrNoSnapshot)
	}
	cfg := newConfig(opts)
	c, err := begin(snap, "REPLACE COLUMNS", cfg)
	if err != nil {
		return nil, err
	}
	if c.applied != nil {
		return c.applied, nil
	}
	if len(cols) == 0 {
		return nil, c.refuse("", "no columns given")
	}
	old := c.schema
	out := &actions.StructType{}
	kept := make([]bool, len(old.Fields))
	var logged []any
	for _, col := range cols {
		if strings.Contains(col.Path, ".") || col.First || col.After != "" {
			return nil, c.refuse(col.Path, "REPLACE COLUMNS takes top-level columns in their new order (name type [NOT NULL] [COMMENT 'text'])")
		}
		name := col.Path
		if fieldIndex(out, name) >= 0 {
			return nil, c.refuse(name, "the column is named twice")
		}
		if col.Type == nil {
			return nil, c.refuse(name, "no type given")
		}
		var f *actions.StructField
		if k := fieldIndex(old, name); k >= 0 {
			was := old.Fields[k]
			kept[k] = true
			if was.Type.String() != col.Type.String() {
				return nil, c.refuse(was.Name, "REPLACE COLUMNS would change its type from %s to %s; ALTER TABLE ALTER COLUMN %s TYPE %s widens a type where delta.enableTypeWidening=true", was.Type, col.Type, was.Name, col.Type)
			}
			if was.Nullable && col.NotNull {
				return nil, c.refuse(was.Name, "REPLACE COLUMNS would make a nullable column NOT NULL, which the rows already written may break")
			}
			f = actions.CopyField(was)
			f.Name = name
			f.Nullable = !col.NotNull
		} else {
			if col.NotNull && c.snap.NumFiles() > 0 {
				return nil, c.refuse(name, "a NOT NULL column can only be added to a table without rows (the rows written before would hold nulls)")
			}
			if !c.mapped() && strings.ContainsAny(name, invalidNameChars) {
				return nil, c.refuse(name, "the name holds one of the characters %q, which a table without column mapping cannot name a column with; enable column mapping (%s=name) first", invalidNameChars, actions.PropColumnMappingMode)
			}
			f = &actions.StructField{Name: name, Type: col.Type, Nullable: !col.NotNull, Metadata: map[string]any{}}
		}
		if f.Metadata == nil {
			f.Metadata = map[string]any{}
		}
		if col.Comment != "" {
			f.Metadata["comment"] = col.Comment
		} else {
			delete(f.Metadata, "comment")
		}
		out.Fields = append(out.Fields, f)
		raw, err := actions.MarshalField(f)
		if err != nil {
			return nil, c.refuse(name, "%v", err)
		}
		logged = append(logged, json.RawMessage(raw))
	}
	added := len(out.Fields)
	for _, k := range kept {
		if k {
			added--
		}
	}
	dropped := len(old.Fields) - (len(out.Fields) - added)
	if added > 0 && dropped > 0 {
		// Spark cannot tell a drop and an add from a rename: it refuses
		// the change, and so does lakelog.
		return nil, c.refuse("", "the new columns both leave out columns the table has and add others, which is ambiguous (a rename?); make these changes one at a time with ALTER TABLE ADD, DROP or RENAME COLUMN, as Spark asks")
	}
	for k, kept := range kept {
		if kept {
			continue
		}
		names := []string{old.Fields[k].Name}
		shown := quotePath(names)
		if !c.mapped() {
			return nil, c.refuse(shown, "the column list leaves it out, which drops it, and dropping a column needs column mapping (data files name their columns); enable it with %s=name, as Spark requires, or list the column", actions.PropColumnMappingMode)
		}
		if c.isPartition(names) >= 0 {
			return nil, c.refuse(shown, "REPLACE COLUMNS leaves out a partition column, which cannot be dropped (the files are laid out by it)")
		}
		if err := c.refuseDependents(names, "drop"); err != nil {
			return nil, err
		}
		c.statsColumnsAfter(names, "")
	}
	c.schema = out
	if c.mapped() {
		var maxID int64
		c.schema, maxID = actions.AssignColumnMapping(c.schema, c.props.ColumnMappingMaxColumnID, false)
		c.md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	c.params["columns"] = actions.JSONText(logged)
	return c.commit(ctx)
}
