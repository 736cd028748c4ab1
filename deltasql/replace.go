package deltasql

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// replaceTable is CREATE OR REPLACE TABLE and REPLACE TABLE on a table
// that exists: one commit, as Spark's, that gives the table the new
// schema, partitioning, properties and comment (its id stays) and
// removes every file, adding the query's rows for ... AS SELECT. The
// protocol only grows (the one protocol rule). done is false when the
// table does not exist and CREATE OR REPLACE should create it.
func (x *run) replaceTable(ctx context.Context, n *createTable, loc string, md *actions.Metadata, rows iter.Seq2[arrow.RecordBatch, error]) (done bool, err error) {
	t := n.table
	st, err := objstore.Open(ctx, loc)
	if err != nil {
		return false, x.errAt(t.pos, err)
	}
	x.s.stores = append(x.s.stores, st)
	snap, err := deltalog.Open(ctx, st, "")
	if errors.Is(err, deltalog.ErrNotTable) {
		if n.orCreate {
			return false, nil
		}
		return false, x.errorf(t.pos, "REPLACE TABLE %s: there is no table to replace; CREATE OR REPLACE TABLE creates it", t.display())
	}
	if err != nil {
		return false, x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	old := snap.Metadata()
	md.ID, md.Format = old.ID, old.Format
	md.CreatedTime = old.CreatedTime
	if err := replaceColumnMapping(md, snap); err != nil {
		return true, x.errAt(t.pos, err)
	}
	op := n.kind()
	params := map[string]any{
		"isManaged":   "false",
		"description": nil,
		"partitionBy": actions.JSONText(md.PartitionColumns),
		"properties":  actions.JSONText(md.Configuration),
	}
	if md.Description != nil {
		params["description"] = *md.Description
	}
	tx := snap.NewTransaction()
	if _, err := tx.Start(); err != nil {
		return true, x.errAt(t.pos, err)
	}
	if err := tx.SetMetadata(md); err != nil {
		return true, x.errAt(t.pos, err)
	}
	tx.ReadWholeTable()
	if err := snap.LoadStats(ctx); err != nil { // the removes carry them, as Spark's do
		return true, x.errAt(t.pos, err)
	}
	var removed []*actions.Add
	for f := range snap.Files() {
		removed = append(removed, f)
	}
	changes := &deltalog.Changes{Operation: op, Parameters: params, Removes: removed, Metadata: md, Metrics: map[string]any{}}
	if rows != nil {
		wr, err := writer.WriteFiles(ctx, snap, rows, writer.WithSchemaChange(tx.Config()))
		if err != nil {
			return true, x.errAt(n.query.pos, err)
		}
		changes = wr.Changes(op, params, removed)
		changes.Metadata = md
	}
	if err := tx.Stage(changes); err != nil {
		return true, x.errAt(t.pos, err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return true, x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	x.r.committed(res)
	x.r.Summary = fmt.Sprintf("replaced table %s at version %d (%d files removed)", t.display(), res.Version, len(removed))
	return true, x.register(t, loc)
}

// cloneProperties are the source's properties with the clone's own on
// top (SHALLOW CLONE ... TBLPROPERTIES).
func cloneProperties(src, own map[string]string) map[string]string {
	out := maps.Clone(src)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, own)
	return out
}

// clone is CREATE [OR REPLACE] TABLE t SHALLOW CLONE source [VERSION
// AS OF n]: one commit that creates t with the source's protocol, schema,
// partitioning and properties (the clone's TBLPROPERTIES on top) and a
// new id, whose adds name the source's data files by their absolute
// paths (and deletion vector files likewise), as Delta defines a shallow
// clone: no data is copied, and the clone's writes go to its own folder.
// VACUUM of the source can delete files the clone still reads, as in
// Delta.
func (x *run) clone(ctx context.Context, n *createTable) error {
	t := n.table
	src, err := x.snapshot(ctx, *n.cloneOf)
	if err != nil {
		return err
	}
	if src.Config().RowTracking() {
		return x.errorf(n.cloneOf.pos, "SHALLOW CLONE of a table with row tracking is not supported yet: CREATE TABLE t AS SELECT * FROM source copies the rows")
	}
	loc := t.path
	if t.name != "" {
		c := x.s.catalog
		if c == nil {
			return x.errorf(t.pos, "CREATE TABLE %s: there is no catalog to register the name in; name the table by its path: delta.`/path/to/%s`", t.name, t.name)
		}
		old, ok := c.Location(t.name)
		switch {
		case ok && n.ifNotExists:
			x.r.Summary = fmt.Sprintf("table %s exists (%s); nothing was done", t.name, old)
			return nil
		case ok && !n.replace:
			return x.errorf(t.pos, "table %s already exists in the catalog (at %s)", t.name, old)
		case ok:
			loc = old
		default:
			loc = n.location
			if loc == "" {
				loc = c.defaultLocation(t.name)
			}
		}
	} else if n.location != "" && n.location != t.path {
		return x.errorf(t.pos, "LOCATION '%s' differs from the table's path %s", n.location, t.path)
	}
	st, err := objstore.Open(ctx, loc)
	if err != nil {
		return x.errAt(t.pos, err)
	}
	x.s.stores = append(x.s.stores, st)
	srcRoot, err := objstore.RootURI(src.Store())
	if err != nil {
		return x.errAt(n.cloneOf.pos, fmt.Errorf("SHALLOW CLONE: %w", err))
	}
	srcRoot = strings.TrimSuffix(srcRoot, "/") + "/" + src.Root()
	if err := src.LoadStats(ctx); err != nil {
		return x.errAt(n.cloneOf.pos, err)
	}
	var adds []*actions.Add
	var size int64
	for f := range src.Files() {
		a := *f
		a.DataChange = true
		if !strings.Contains(a.Path, "://") && !strings.HasPrefix(a.Path, "/") && !strings.HasPrefix(a.Path, "file:") {
			a.Path = srcRoot + a.Path
		}
		if dv := a.DeletionVector; dv != nil && dv.StorageType == deletionvector.StorageUUID {
			key, err := deletionvector.Key(src.Store(), src.Root(), dv)
			if err != nil {
				return x.errAt(n.cloneOf.pos, err)
			}
			abs := *dv
			abs.StorageType = deletionvector.StorageAbsolute
			abs.PathOrInlineDv = strings.TrimSuffix(srcRoot, src.Root()) + actions.EscapePath(key)
			a.DeletionVector = &abs
		}
		size += a.Size
		adds = append(adds, &a)
	}
	smd := src.Metadata()
	md := &actions.Metadata{
		Name: smd.Name, Description: smd.Description, Format: smd.Format,
		SchemaString: smd.SchemaString, PartitionColumns: slices.Clone(smd.PartitionColumns),
		Configuration: cloneProperties(smd.Configuration, n.properties),
	}
	sp := src.Protocol()
	params := map[string]any{
		"source":        n.cloneOf.display(),
		"sourceVersion": src.Version(),
		"isShallow":     true,
	}
	metrics := map[string]any{
		"sourceTableSize":  strconv.FormatInt(size, 10),
		"sourceNumOfFiles": strconv.Itoa(len(adds)),
		"numRemovedFiles":  "0",
		"numCopiedFiles":   "0",
		"removedFilesSize": "0",
		"copiedFilesSize":  "0",
	}
	features := slices.Concat(sp.ReaderFeatures, sp.WriterFeatures)
	var tx *deltalog.Transaction
	var removed []*actions.Add
	old, err := deltalog.Open(ctx, st, "")
	switch {
	case err == nil && !n.replace:
		if n.ifNotExists {
			x.r.Summary = fmt.Sprintf("table %s exists; nothing was done", t.display())
			return x.register(t, loc)
		}
		return x.errorf(t.pos, "%s: %v", t.display(), deltalog.ErrTableExists)
	case err == nil:
		md.ID = old.Metadata().ID
		tx = old.NewTransaction(deltalog.WithTableFeatures(features...))
		if _, err := tx.Start(); err != nil {
			return x.errAt(t.pos, err)
		}
		tx.ReadWholeTable()
		if err := old.LoadStats(ctx); err != nil {
			return x.errAt(t.pos, err)
		}
		var removedSize int64
		for f := range old.Files() {
			removed = append(removed, f)
			removedSize += f.Size
		}
		metrics["numRemovedFiles"] = strconv.Itoa(len(removed))
		metrics["removedFilesSize"] = strconv.FormatInt(removedSize, 10)
	case errors.Is(err, deltalog.ErrNotTable):
		if tx, err = deltalog.Create(st, "", md, deltalog.WithTableFeatures(features...)); err != nil {
			return x.errAt(t.pos, err)
		}
	default:
		return x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	changes := &deltalog.Changes{Operation: "CLONE", Parameters: params, Metrics: metrics, Adds: adds, Removes: removed}
	if removed != nil || old != nil {
		changes.Metadata = md // replacing a table: Create has it otherwise
	}
	if err := tx.Stage(changes); err != nil {
		return x.errAt(t.pos, err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	x.r.committed(res)
	// Spark's row: the clone's metrics.
	i64 := arrow.PrimitiveTypes.Int64
	row := newRowTable(col("source_table_size", i64), col("source_num_of_files", i64), col("num_removed_files", i64),
		col("num_copied_files", i64), col("removed_files_size", i64), col("copied_files_size", i64))
	num := func(k string) any {
		v, _ := strconv.ParseInt(metrics[k].(string), 10, 64)
		return v
	}
	row.add(num("sourceTableSize"), num("sourceNumOfFiles"), num("numRemovedFiles"), num("numCopiedFiles"), num("removedFilesSize"), num("copiedFilesSize"))
	x.r.set(row)
	x.r.Summary = fmt.Sprintf("cloned %s version %d as %s version %d: %d files, none copied", n.cloneOf.display(), src.Version(), t.display(), res.Version, len(adds))
	return x.register(t, loc)
}

// replaceColumnMapping gives a replacing table's new columns column
// mapping ids and physical names when it is column-mapped: a mapping
// mode cannot be turned off, so a table that had one keeps it unless the
// new properties name one, and ids continue above the old table's
// largest, so that no new column takes an id its old files use.
func replaceColumnMapping(md *actions.Metadata, snap *deltalog.Snapshot) error {
	oldProps := snap.Properties()
	if _, ok := md.Configuration[actions.PropColumnMappingMode]; !ok && snap.Config().ColumnMapped() {
		md.Configuration[actions.PropColumnMappingMode] = snap.Metadata().Configuration[actions.PropColumnMappingMode]
	}
	props := md.Properties()
	if props.ColumnMappingMode == actions.ColumnMappingNone {
		return nil
	}
	schema, err := md.Schema()
	if err != nil {
		return err
	}
	schema, maxID := actions.AssignColumnMapping(schema, max(oldProps.ColumnMappingMaxColumnID, 0), false)
	text, err := actions.SchemaString(schema)
	if err != nil {
		return err
	}
	md.SchemaString = text
	md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	return nil
}
