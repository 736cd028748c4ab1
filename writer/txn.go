package writer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// ErrEmptyInput is returned by Append when the input holds no rows and
// there is nothing else to commit (no new columns, no app transaction):
// no version is committed for it. It is an outcome, not a failure.
var ErrEmptyInput = errors.New("writer: the input holds no rows; nothing was committed")

// Append writes batches as new data files and commits them on top of
// snap: Spark's df.write.mode("append"). The commit is a blind append
// (it reads nothing), so it rebases over concurrent commits that do not
// change the table's metadata or protocol. With WithMergeSchema the commit
// also widens the schema. Nothing is committed when the input does not fit
// the schema (a *SchemaError) or any write fails, nor for an input without
// rows (ErrEmptyInput) unless it widens the schema or carries an app
// transaction, whose version an empty batch must still record.
func Append(ctx context.Context, snap *deltalog.Snapshot, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("writer: %w", deltalog.ErrNoSnapshot)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := snap.Supports(deltalog.OpAppend); err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	if err := refuseOverwriteSchema(cfg, "an append"); err != nil {
		return nil, err
	}
	tx := snap.NewTransaction(cfg.commit...)
	if res, err := tx.Start(); err != nil || res != nil {
		return res, err
	}
	wr, err := writeFiles(ctx, snap.Store(), snap.Root(), snap.Config(), batches, cfg)
	if err != nil {
		return nil, err
	}
	if wr.NumRows == 0 && len(wr.Adds) == 0 && !wr.SchemaChanged && !tx.HasAppTransaction() {
		return nil, ErrEmptyInput
	}
	params := map[string]any{"mode": "Append", "partitionBy": actions.JSONText(snap.PartitionColumns())}
	return commit(ctx, tx, wr.Changes("WRITE", params, nil))
}

// Overwrite replaces the table's rows with batches: Spark's
// df.write.mode("overwrite"). Every active file is removed and the new
// files added in one commit. With WithOverwriteSchema the table's schema
// and partitioning become the input's in the same commit. The
// transaction depends on the whole table,
// so a concurrent commit that removed files it removes (or a non-blind
// append, under WriteSerializable) makes it fail with a conflict.
func Overwrite(ctx context.Context, snap *deltalog.Snapshot, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("writer: %w", deltalog.ErrNoSnapshot)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := snap.Supports(deltalog.OpOverwrite); err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	tx := snap.NewTransaction(cfg.commit...)
	if res, err := tx.Start(); err != nil || res != nil {
		return res, err
	}
	table, replaced := snap.Config(), false
	if cfg.overwrite != nil {
		sc, seq, stop := peekSchema(batches)
		defer stop()
		batches = seq
		if sc != nil {
			md, changed, err := cfg.overwrite.metadata(snap, sc)
			if err != nil {
				return nil, err
			}
			if changed {
				if err := tx.SetMetadata(md); err != nil {
					return nil, fmt.Errorf("writer: overwrite schema: %w", err)
				}
				table, replaced = tx.Config(), true
			}
		}
	}
	wr, err := writeFiles(ctx, snap.Store(), snap.Root(), table, batches, cfg)
	if err != nil {
		return nil, err
	}
	wr.SchemaChanged = wr.SchemaChanged || replaced
	tx.ReadWholeTable()
	if err := snap.LoadStats(ctx); err != nil { // the removes carry them, as Spark's do
		return nil, err
	}
	var removed []*actions.Add
	for f := range snap.Files() {
		removed = append(removed, f)
	}
	params := map[string]any{"mode": "Overwrite", "partitionBy": actions.JSONText(wr.Metadata.PartitionColumns)}
	return commit(ctx, tx, wr.Changes("WRITE", params, removed))
}

// Changes are the changes that commit the written files: their adds, the
// removal of removed (live files the operation replaces), the schema
// change the write made (SchemaChanged), the identity high-water marks
// of the values it generated, and commitInfo with Spark's write metrics
// (numFiles, numOutputRows, numOutputBytes, and with removed or in
// overwrite mode numRemovedFiles and numRemovedBytes). An operation adds
// what else it commits and hands them to deltalog.Transaction.Stage.
func (wr *WriteResult) Changes(op string, params map[string]any, removed []*actions.Add) *deltalog.Changes {
	c := &deltalog.Changes{Operation: op, Parameters: params, Adds: wr.Adds, Removes: removed, IdentityMarks: wr.HighWaterMarks}
	if wr.SchemaChanged {
		c.Metadata = wr.Metadata
	}
	var removedBytes int64
	for _, f := range removed {
		removedBytes += f.Size
	}
	c.Metrics = map[string]any{
		"numFiles":       strconv.Itoa(len(wr.Adds)),
		"numOutputRows":  strconv.FormatInt(wr.NumRows, 10),
		"numOutputBytes": strconv.FormatInt(wr.NumBytes, 10),
	}
	if removed != nil || params["mode"] == "Overwrite" {
		c.Metrics["numRemovedFiles"] = strconv.Itoa(len(removed))
		c.Metrics["numRemovedBytes"] = strconv.FormatInt(removedBytes, 10)
	}
	return c
}

// commit stages the changes on tx and commits them. A new column the
// protocol rule refuses (timestamp_ntz without its feature) is a
// *SchemaError, as the input's other misfits are.
func commit(ctx context.Context, tx *deltalog.Transaction, c *deltalog.Changes) (*deltalog.CommitResult, error) {
	if err := tx.Stage(c); err != nil {
		var fe *actions.FeatureNotEnabledError
		if errors.As(err, &fe) {
			return nil, &SchemaError{Reason: "the input's new columns need " + fe.Error(), Err: err}
		}
		return nil, fmt.Errorf("writer: %w", err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer: commit: %w", err)
	}
	return res, nil
}

// CreateTable creates a table at root with metadata md and, in the same
// commit (version 0), the data files of batches: Spark's CREATE TABLE AS
// SELECT. It fails with deltalog.ErrTableExists when the table exists.
func CreateTable(ctx context.Context, store objstore.Store, root string, md *actions.Metadata, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*deltalog.CommitResult, error) {
	if store == nil {
		return nil, fmt.Errorf("writer: %w", deltalog.ErrNoStore)
	}
	if md == nil {
		return nil, errors.New("writer: CreateTable needs the table's metadata (md is nil)")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := refuseOverwriteSchema(cfg, "a create"); err != nil {
		return nil, err
	}
	tx, err := deltalog.Create(store, root, md, cfg.commit...)
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	r := strings.Trim(root, "/")
	if r != "" {
		r += "/"
	}
	// The files follow the table the commit creates: Create assigns a
	// column-mapped table's physical names.
	wr, err := writeFiles(ctx, store, r, tx.Config(), batches, cfg)
	if err != nil {
		return nil, err
	}
	if wr.SchemaChanged {
		return nil, fmt.Errorf("writer: create table: the input does not match the given schema")
	}
	params := map[string]any{
		"isManaged":   "false",
		"description": nil,
		"partitionBy": actions.JSONText(md.PartitionColumns),
		"properties":  actions.JSONText(md.Configuration),
	}
	return commit(ctx, tx, wr.Changes("CREATE TABLE AS SELECT", params, nil))
}
