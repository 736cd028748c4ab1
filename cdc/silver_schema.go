package cdc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
)

// PropPrimaryKey is the silver table property that records the source
// table's key columns (comma separated).
const PropPrimaryKey = "lakelog.cdc.primaryKey"

// ensureSchema opens silver (creating it from the first row shape) and
// brings its schema to shape's, each change its own commit, carrying pos
// (the segment's start: a crash after it resumes at the segment). It
// returns nil, nil when there is no table and nothing to create it from.
func (s *Silver) ensureSchema(ctx context.Context, shape *RowShape, keys []string, pos silverPosition, bronzeVersion int64) (*deltalog.Snapshot, error) {
	snap, err := deltalog.Open(ctx, s.Silver, "")
	if errors.Is(err, deltalog.ErrNotTable) {
		if shape == nil {
			return nil, nil
		}
		var cols []*actions.StructField
		for _, c := range shape.Columns {
			cols = append(cols, &actions.StructField{Name: c.Name, Type: c.DataType(), Nullable: c.Nullable})
		}
		props := maps.Clone(s.Properties)
		if props == nil {
			props = map[string]string{}
		}
		props[PropPrimaryKey] = strings.Join(keys, ",")
		if _, ok := props[actions.PropEnableDeletionVectors]; !ok {
			props[actions.PropEnableDeletionVectors] = "true"
		}
		snap, err = openOrCreate(ctx, s.Silver, cols, props)
		if err == nil {
			s.Log.Info("created silver", "version", snap.Version(), "columns", len(cols), "key", strings.Join(keys, ","),
				"deletion_vectors", snap.Config().DeletionVectors())
		}
	}
	if err != nil || shape == nil {
		return snap, err
	}
	ch := &schemaChange{s: s, snap: snap, pos: pos, version: bronzeVersion}
	return ch.apply(ctx, shape)
}

type schemaChange struct {
	s       *Silver
	snap    *deltalog.Snapshot
	pos     silverPosition
	version int64
}

func (c *schemaChange) opts() []schema.Option {
	return []schema.Option{schema.WithCommitOptions(c.s.positionOption(c.pos))}
}

// featuresFor is the option enabling the table features a column of type
// t needs that Delta adds only when asked for (featuresFor).
func (c *schemaChange) featuresFor(name string, t actions.DataType) schema.Option {
	return schema.WithCommitOptions(featuresFor(c.snap, []*actions.StructField{{Name: name, Type: t}})...)
}

func (c *schemaChange) next(res *deltalog.CommitResult, err error, what string, args ...any) error {
	if err != nil {
		return fmt.Errorf("cdc: silver: %s: %w", fmt.Sprintf(what, args...), err)
	}
	c.s.Log.Info("schema change", "change", fmt.Sprintf(what, args...), "version", res.Version, "bronze_version", c.version)
	c.snap, err = res.Snapshot()
	return err
}

func (c *schemaChange) apply(ctx context.Context, shape *RowShape) (*deltalog.Snapshot, error) {
	cur := c.snap.Schema()
	want := map[string]int{}
	for i, col := range shape.Columns {
		want[col.Name] = i
	}
	var kept, dropped []string
	for _, f := range cur.Fields {
		if _, ok := want[f.Name]; ok {
			kept = append(kept, f.Name)
		} else {
			dropped = append(dropped, f.Name)
		}
	}
	var added []int
	for i, col := range shape.Columns {
		if cur.Field(col.Name) == nil {
			added = append(added, i)
		}
	}
	// Renames: Postgres adds columns at the end, so a new column that
	// sits before a kept one took the place of a dropped one.
	renames, err := c.renames(shape, cur, kept, dropped, added)
	if err != nil {
		return nil, err
	}
	for from, to := range renames {
		dropped = slices.DeleteFunc(dropped, func(n string) bool { return n == from })
		added = slices.DeleteFunc(added, func(i int) bool { return shape.Columns[i].Name == to })
	}
	if len(renames) > 0 || len(dropped) > 0 {
		if err := c.columnMapping(ctx); err != nil {
			return nil, err
		}
	}
	for _, from := range sortedKeys(renames) {
		res, err := schema.RenameColumn(ctx, c.snap, quoteName(from), renames[from], c.opts()...)
		if err := c.next(res, err, "rename column %s to %s", from, renames[from]); err != nil {
			return nil, err
		}
	}
	if len(dropped) > 0 {
		var paths []string
		for _, d := range dropped {
			paths = append(paths, quoteName(d))
		}
		res, err := schema.DropColumns(ctx, c.snap, paths, c.opts()...)
		if err := c.next(res, err, "drop columns %s", strings.Join(dropped, ", ")); err != nil {
			return nil, err
		}
	}
	// Types and NOT NULL of the columns silver keeps.
	for _, col := range shape.Columns {
		f := c.snap.Schema().Field(col.Name)
		if f == nil {
			continue
		}
		if err := c.retype(ctx, f, col); err != nil {
			return nil, err
		}
		if f = c.snap.Schema().Field(col.Name); !f.Nullable && col.Nullable {
			res, err := schema.DropNotNull(ctx, c.snap, quoteName(col.Name), c.opts()...)
			if err := c.next(res, err, "drop NOT NULL of %s", col.Name); err != nil {
				return nil, err
			}
		}
	}
	if len(added) > 0 {
		var cols []schema.Column
		var names []string
		var fields []*actions.StructField
		for _, i := range added {
			col := shape.Columns[i]
			cols = append(cols, schema.Column{Path: quoteName(col.Name), Type: col.DataType()})
			fields = append(fields, &actions.StructField{Name: col.Name, Type: col.DataType()})
			names = append(names, col.Name)
		}
		opts := append(c.opts(), schema.WithCommitOptions(featuresFor(c.snap, fields)...))
		res, err := schema.AddColumns(ctx, c.snap, cols, opts...)
		if err := c.next(res, err, "add columns %s", strings.Join(names, ", ")); err != nil {
			return nil, err
		}
		if err := c.backfill(ctx, shape, added); err != nil {
			return nil, err
		}
	}
	return c.snap, nil
}

// renames pairs dropped and added columns that are renames.
func (c *schemaChange) renames(shape *RowShape, cur *actions.StructType, kept, dropped []string, added []int) (map[string]string, error) {
	out := map[string]string{}
	if len(dropped) == 0 || len(added) == 0 {
		return out, nil
	}
	// The kept column before each position, in silver and in the shape.
	anchorOf := func(names []string, i int, isKept func(string) bool) string {
		for j := i - 1; j >= 0; j-- {
			if isKept(names[j]) {
				return names[j]
			}
		}
		return ""
	}
	isKept := func(n string) bool { return slices.Contains(kept, n) }
	curNames := cur.Names()
	var shapeNames []string
	for _, col := range shape.Columns {
		shapeNames = append(shapeNames, col.Name)
	}
	lastKept := ""
	if len(kept) > 0 {
		lastKept = kept[len(kept)-1]
	}
	gapDropped, gapAdded := map[string][]string{}, map[string][]string{}
	for _, d := range dropped {
		a := anchorOf(curNames, slices.Index(curNames, d), isKept)
		gapDropped[a] = append(gapDropped[a], d)
	}
	for _, i := range added {
		a := anchorOf(shapeNames, i, isKept)
		gapAdded[a] = append(gapAdded[a], shape.Columns[i].Name)
	}
	for a, adds := range gapAdded {
		drops := gapDropped[a]
		switch {
		case len(drops) == 0:
		case a == lastKept && c.s.ResumeFromVersion != c.version:
			// After every kept column: a drop and an add, or a rename of
			// the last columns; Postgres's events cannot tell.
			return nil, &SchemaChangeError{Column: drops[0], BronzeVersion: c.version,
				Change: fmt.Sprintf("was dropped and %s appeared at the end of the table: a rename or a drop and an add, which the events cannot tell apart (if it was a rename, rename the column in silver yourself and restart; resuming takes it as a drop and an add)", strings.Join(adds, ", "))}
		case a == lastKept:
		case len(drops) != len(adds):
			return nil, &SchemaChangeError{Column: drops[0], BronzeVersion: c.version,
				Change: fmt.Sprintf("columns %s gave way to %s at the same place", strings.Join(drops, ", "), strings.Join(adds, ", "))}
		default:
			for k := range drops {
				out[drops[k]] = adds[k]
			}
		}
	}
	return out, nil
}

// retype widens a column to the source's type, or stops.
func (c *schemaChange) retype(ctx context.Context, f *actions.StructField, col ShapeColumn) error {
	to := col.DataType()
	if f.Type.String() == to.String() {
		return nil
	}
	if actions.CanWidenType(f.Type, to) {
		snap, err := enableTypeWidening(ctx, c.snap, c.s.Log)
		if err != nil {
			return err
		}
		c.snap = snap
		res, err := schema.ChangeColumnType(ctx, c.snap, quoteName(col.Name), to, append(c.opts(), c.featuresFor(col.Name, to))...)
		return c.next(res, err, "widen %s from %s to %s", col.Name, typeText(f.Type), typeText(to))
	}
	if c.s.ResumeFromVersion != c.version {
		return &SchemaChangeError{Column: col.Name, BronzeVersion: c.version,
			Change: fmt.Sprintf("its type changed from %s to %s, which Delta cannot widen to; Postgres rewrote the existing rows without change events, so silver cannot know their new values", typeText(f.Type), typeText(to))}
	}
	if err := c.columnMapping(ctx); err != nil {
		return err
	}
	res, err := schema.DropColumns(ctx, c.snap, []string{quoteName(col.Name)}, c.opts()...)
	if err := c.next(res, err, "drop %s (its type changed from %s to %s)", col.Name, typeText(f.Type), typeText(to)); err != nil {
		return err
	}
	res, err = schema.AddColumns(ctx, c.snap, []schema.Column{{Path: quoteName(col.Name), Type: to}}, append(c.opts(), c.featuresFor(col.Name, to))...)
	return c.next(res, err, "add %s back as %s", col.Name, typeText(to))
}

// columnMapping enables column mapping (name mode) on silver when it is
// off: drops and renames need it.
func (c *schemaChange) columnMapping(ctx context.Context) error {
	if c.snap.Config().ColumnMapped() {
		return nil
	}
	res, err := maintenance.SetProperties(ctx, c.snap, map[string]string{actions.PropColumnMappingMode: actions.ColumnMappingName},
		c.s.positionOption(c.pos))
	return c.next(res, err, "enable column mapping (for a drop or rename)")
}

// backfill gives the rows silver had the added columns' defaults, as
// Postgres gives existing rows a new column's default.
func (c *schemaChange) backfill(ctx context.Context, shape *RowShape, added []int) error {
	var set []*expr.Assignment
	var names []string
	for _, i := range added {
		col := shape.Columns[i]
		v, ok, err := col.DefaultValue()
		if err != nil || !ok {
			continue
		}
		set = append(set, &expr.Assignment{Column: expr.Col(col.Name), Value: expr.Lit(v)})
		names = append(names, col.Name)
	}
	if len(set) == 0 || c.snap.NumFiles() == 0 {
		return nil
	}
	res, err := dml.Update(ctx, c.snap, nil, set, dml.WithCommitOptions(c.s.positionOption(c.pos)))
	if err != nil {
		return fmt.Errorf("cdc: silver: giving the existing rows the defaults of %s: %w", strings.Join(names, ", "), err)
	}
	if res.CommitResult == nil {
		return nil
	}
	return c.next(res.CommitResult, nil, "default of %s for the existing rows", strings.Join(names, ", "))
}

// scanKeys reads silver's key values, as key text.
func scanKeys(ctx context.Context, snap *deltalog.Snapshot, keys []string) ([]string, error) {
	scan, err := reader.NewScan(snap, reader.WithColumns(keys...))
	if err != nil {
		return nil, err
	}
	var out []string
	for rec, err := range scan.Records(ctx) {
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			var b strings.Builder
			for c := range int(rec.NumCols()) {
				fmt.Fprintf(&b, "%v\x00", arrowValue(rec.Column(c), i))
			}
			out = append(out, b.String())
		}
	}
	return out, nil
}
