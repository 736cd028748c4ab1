package writer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
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
	if res, done := alreadyApplied(snap, cfg); done {
		return res, nil
	}
	wr, err := writeFiles(ctx, snap.Store(), snap.Root(), snap.Config(), batches, cfg)
	if err != nil {
		return nil, err
	}
	if wr.NumRows == 0 && len(wr.Adds) == 0 && !wr.SchemaChanged && !cfg.hasAppTxn {
		return nil, ErrEmptyInput
	}
	tx := snap.NewTransaction(cfg.txnOpts...)
	params := map[string]any{"mode": "Append", "partitionBy": actions.JSONText(snap.PartitionColumns())}
	return commitWrite(ctx, tx, cfg, wr, nil, "WRITE", params, nil)
}

// Overwrite replaces the table's rows with batches: Spark's
// df.write.mode("overwrite"). Every active file is removed and the new
// files added in one commit. With WithOverwriteSchema the table's schema
// and partitioning become the input's in the same commit. The
// transaction depends on the whole table,
// so a concurrent commit that removed files it removes (or a non-blind
// append, under WriteSerializable) makes it fail with a conflict.
func Overwrite(ctx context.Context, snap *deltalog.Snapshot, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*deltalog.CommitResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := snap.Supports(deltalog.OpOverwrite); err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	if res, done := alreadyApplied(snap, cfg); done {
		return res, nil
	}
	tx := snap.NewTransaction(cfg.txnOpts...)
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
	return commitWrite(ctx, tx, cfg, wr, removed, "WRITE", params, nil)
}

// Commit commits files written by WriteFiles on tx: the adds, the removal
// of removed (Transaction.RemoveFile), the schema change the write made,
// opts' app transaction and operation parameters, and commitInfo with
// Spark's metrics for op plus extraMetrics. It is how an operation built
// on WriteFiles that only adds and removes whole files commits
// (dml.ReplaceWhere); DELETE, UPDATE and MERGE, which also commit
// deletion vectors and change data files, commit on the transaction
// themselves (dml's rewrite).
func Commit(ctx context.Context, tx *deltalog.Transaction, wr *WriteResult, removed []*actions.Add, op string, params, extraMetrics map[string]any, opts ...Option) (*deltalog.CommitResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return commitWrite(ctx, tx, cfg, wr, removed, op, params, extraMetrics)
}

// alreadyApplied short-cuts an idempotent write whose app transaction the
// snapshot already holds: nothing is written or committed.
func alreadyApplied(snap *deltalog.Snapshot, cfg *config) (*deltalog.CommitResult, bool) {
	if !cfg.hasAppTxn {
		return nil, false
	}
	return snap.AlreadyApplied(cfg.appID, cfg.appVersion)
}

// commitWrite commits the written files, the removal of removed, the
// schema change and the app transaction, with commitInfo as Spark writes
// it for the operation.
func commitWrite(ctx context.Context, tx *deltalog.Transaction, cfg *config, wr *WriteResult, removed []*actions.Add, op string, params, extraMetrics map[string]any) (*deltalog.CommitResult, error) {
	if wr.SchemaChanged && tx.Snapshot() != nil {
		// The protocol follows the new schema by deltalog's one rule: a
		// new timestamp_ntz column is refused unless the table has the
		// feature, as Spark refuses it.
		if err := tx.SetMetadata(wr.Metadata); err != nil {
			var fe *actions.FeatureNotEnabledError
			if errors.As(err, &fe) {
				return nil, &SchemaError{Reason: "the input's new columns need " + fe.Error(), Err: err}
			}
			return nil, fmt.Errorf("writer: %w", err)
		}
	}
	if err := SetHighWaterMarks(tx, wr.HighWaterMarks); err != nil {
		return nil, err
	}
	var removedBytes int64
	for _, f := range removed {
		tx.RemoveFile(f, true)
		removedBytes += f.Size
	}
	for _, a := range wr.Adds {
		tx.Add(actions.Action{Add: a})
	}
	if cfg.hasAppTxn {
		tx.SetTransaction(cfg.appID, cfg.appVersion)
	}
	metrics := map[string]any{
		"numFiles":       strconv.Itoa(len(wr.Adds)),
		"numOutputRows":  strconv.FormatInt(wr.NumRows, 10),
		"numOutputBytes": strconv.FormatInt(wr.NumBytes, 10),
	}
	if removed != nil || params["mode"] == "Overwrite" {
		metrics["numRemovedFiles"] = strconv.Itoa(len(removed))
		metrics["numRemovedBytes"] = strconv.FormatInt(removedBytes, 10)
	}
	maps.Copy(metrics, extraMetrics)
	maps.Copy(params, cfg.opParams)
	tx.SetOperation(op, params, metrics)
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
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := refuseOverwriteSchema(cfg, "a create"); err != nil {
		return nil, err
	}
	tx, err := deltalog.Create(store, root, md, cfg.txnOpts...)
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
	return commitWrite(ctx, tx, cfg, wr, nil, "CREATE TABLE AS SELECT", params, nil)
}
