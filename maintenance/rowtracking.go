package maintenance

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// OPTIMIZE on a table with row tracking enabled keeps every row's ID and
// commit version, as Spark does: the bin is read with reader.WithRowTracking
// and the two columns are written into the new files' materialized
// columns (writer.WithMaterializedRowTracking), renamed; the commit is
// tagged delta.rowTracking.preserved=true.

// rowTrackingOptions are the scan and write options of a rewrite of snap.
func rowTrackingOptions(snap *deltalog.Snapshot) ([]reader.Option, []writer.Option) {
	if !snap.Config().RowTracking() {
		return nil, nil
	}
	return []reader.Option{reader.WithRowTracking()}, []writer.Option{writer.WithMaterializedRowTracking()}
}

// materializedRows renames the scan's trailing _row_id and
// _row_commit_version to the table's materialized column names. Each
// renamed batch is released when the consumer's yield returns.
func materializedRows(snap *deltalog.Snapshot, rows iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	if !snap.Config().RowTracking() {
		return rows
	}
	props := snap.Properties()
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range rows {
			if err != nil {
				yield(nil, err)
				return
			}
			fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
			k := len(fields)
			fields[k-2].Name = props.MaterializedRowIDColumnName
			fields[k-1].Name = props.MaterializedRowCommitVersionColumnName
			out := array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns(), rec.NumRows())
			ok := yield(out, nil)
			out.Release()
			if !ok {
				return
			}
		}
	}
}

// rowTrackingTags are the commit tags of a rewrite of snap: Spark's
// delta.rowTracking.preserved when the table tracks rows.
func rowTrackingTags(snap *deltalog.Snapshot) map[string]string {
	if !snap.Config().RowTracking() {
		return nil
	}
	return map[string]string{actions.TagRowTrackingPreserved: "true"}
}

// backfillAttempts bounds how often a backfill commit that lost to a
// concurrent remove is tried again from a fresh snapshot.
const backfillAttempts = 10

// backfillAdds are the live files of snap without a baseRowId, re-added
// unchanged (dataChange=false) with their row count in their stats:
// from the stats the snapshot read (a checkpoint's, struct or JSON, are
// loaded for it), else from the file's footer, for a file written
// without stats.
func backfillAdds(ctx context.Context, snap *deltalog.Snapshot) ([]*actions.Add, error) {
	if err := snap.LoadStats(ctx); err != nil {
		return nil, fmt.Errorf("maintenance: enable row tracking: %w", err)
	}
	var scan *reader.Scan
	var adds []*actions.Add
	for f := range snap.Files() {
		if f.BaseRowID != nil {
			continue
		}
		c := *f
		c.DataChange = false
		st, err := actions.ParseStats(c.Stats)
		if err != nil || st == nil || st.NumRecords < 0 {
			if scan == nil {
				if scan, err = reader.NewScan(snap, reader.WithColumns()); err != nil {
					return nil, fmt.Errorf("maintenance: enable row tracking: %w", err)
				}
			}
			n, err := scan.NumRecords(ctx, &reader.ScanFile{Add: f, Key: snap.TablePath(f.Path)})
			if err != nil {
				return nil, fmt.Errorf("maintenance: enable row tracking: %s has no row count in its stats, and its footer: %w", f.Path, err)
			}
			c.Stats = actions.RenderStats(n, false, nil, nil, nil)
		}
		adds = append(adds, &c)
	}
	return adds, nil
}

// enableRowTracking prepares snap for delta.enableRowTracking=true as
// Spark's ALTER TABLE does before it sets the property: (1) a protocol
// upgrade to the rowTracking and domainMetadata features, with the
// materialized column names set (from then on every add gets row IDs),
// then (2) the backfill: every live file without a baseRowId is re-added
// unchanged (dataChange=false, "ROW TRACKING BACKFILL"), and the commit
// gives it IDs above the high-water mark. A backfill that loses to a
// concurrent commit removing one of its files aborts (it read them) and is
// planned again. It returns the snapshot to set the property on.
func enableRowTracking(ctx context.Context, snap *deltalog.Snapshot, opts []deltalog.CommitOption) (*deltalog.Snapshot, error) {
	if !snap.Config().AssignsRowIDs() || snap.Properties().MaterializedRowIDColumnName == "" || snap.Properties().MaterializedRowCommitVersionColumnName == "" {
		md := *snap.Metadata()
		md.Configuration = deltalog.MaterializedRowTrackingNames(md.Configuration)
		tx := snap.NewTransaction(opts...)
		if err := tx.EnableFeatures(actions.FeatureDomainMetadata, actions.FeatureRowTracking); err != nil {
			return nil, fmt.Errorf("maintenance: enable row tracking: %w", err)
		}
		if err := tx.Stage(&deltalog.Changes{Operation: "UPGRADE PROTOCOL", Metadata: &md}); err != nil {
			return nil, fmt.Errorf("maintenance: enable row tracking: %w", err)
		}
		tx.SetOperation("UPGRADE PROTOCOL", map[string]any{"newProtocol": actions.JSONText(tx.Config().Protocol())}, nil)
		res, err := tx.Commit(ctx)
		if err != nil {
			return nil, fmt.Errorf("maintenance: enable row tracking: protocol upgrade: %w", err)
		}
		if snap, err = res.Snapshot(); err != nil {
			return nil, fmt.Errorf("maintenance: enable row tracking: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		adds, err := backfillAdds(ctx, snap)
		if err != nil {
			return nil, err
		}
		if len(adds) == 0 {
			return snap, nil
		}
		n := len(adds)
		tx := snap.NewTransaction(opts...)
		for _, a := range adds {
			tx.ReadFiles(a.Path)
		}
		if err := tx.Stage(&deltalog.Changes{Operation: "ROW TRACKING BACKFILL", Parameters: map[string]any{"numFiles": strconv.Itoa(n)}, Adds: adds}); err != nil {
			return nil, fmt.Errorf("maintenance: enable row tracking: backfill: %w", err)
		}
		res, err := tx.Commit(ctx)
		var ce *conflict.Error
		switch {
		case err == nil:
			return res.Snapshot()
		case errors.As(err, &ce) && attempt < backfillAttempts:
			if snap, err = deltalog.Open(ctx, snap.Store(), snap.Root()); err != nil {
				return nil, fmt.Errorf("maintenance: enable row tracking: backfill: %w", err)
			}
		default:
			return nil, fmt.Errorf("maintenance: enable row tracking: backfill of %d files: %w", n, err)
		}
	}
}
