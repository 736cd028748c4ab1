package deltasql

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
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

// clone is CREATE TABLE t SHALLOW CLONE source.
func (x *run) clone(ctx context.Context, n *createTable) error {
	return x.errorf(n.cloneOf.pos, "SHALLOW CLONE is not supported yet: lakelog cannot yet read a table whose log names files in another table's folder; CREATE TABLE t AS SELECT * FROM source copies the rows")
}
