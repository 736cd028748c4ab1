package dml

import (
	"context"
	"fmt"
	"iter"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// ReplaceWhere atomically replaces the rows matching predicate with
// batches: Spark's df.write.mode("overwrite").option("replaceWhere", p).
// opts are the writer's (allocator, compression, app transaction, ...).
//
// As in Spark, every input row must satisfy the predicate (a
// *writer.SchemaError names the first that does not) and the rows the
// predicate matches are deleted:
//
//   - When the predicate reads only partition columns, the files of the
//     matching partitions are removed.
//   - Otherwise each file whose partition values and statistics may hold a
//     matching row is removed, and its rows for which the predicate is not
//     TRUE are written again to new files (Spark's DELETE), so only the
//     matching rows disappear.
//
// The removals and additions are one commit. The transaction read the
// table under the predicate: a concurrent commit that adds rows it may
// match (by partition values and stats; which commits count depends on
// the isolation level) or removes a file it replaced aborts it, as in
// Spark; one that writes elsewhere rebases.
func ReplaceWhere(ctx context.Context, snap *deltalog.Snapshot, predicate expr.Expr, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("dml: %w", deltalog.ErrNoSnapshot)
	}
	if err := snap.Supports(deltalog.OpReplaceWhere); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	if predicate == nil {
		return nil, fmt.Errorf("dml: replaceWhere needs a predicate")
	}
	bound, err := expr.BindPredicate(predicate, snap.Schema())
	if err != nil {
		return nil, fmt.Errorf("dml: replaceWhere: %w", err)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("dml: replaceWhere: %w", err)
	}
	settings := cfg.writer
	tx := snap.NewTransaction(cfg.commit...)
	if res, err := tx.Start(); err != nil || res != nil {
		return res, err
	}
	mem := settings.Allocator()
	check := func(rec arrow.RecordBatch, rowBase int64) error {
		mask, err := expr.EvalPredicate(bound, rec, mem)
		if err != nil {
			return fmt.Errorf("dml: replaceWhere: %w", err)
		}
		defer mask.Release()
		for i := 0; i < mask.Len(); i++ {
			if mask.IsNull(i) || !mask.Value(i) {
				return &writer.SchemaError{Row: rowBase + int64(i) + 1, Reason: fmt.Sprintf("row does not satisfy the replaceWhere predicate %s", bound)}
			}
		}
		return nil
	}

	// Which files hold rows to replace: planned as a scan of the
	// predicate, under every rule a scan keeps (a widened column's stats
	// bounds are not trusted, for one). As in Spark, the transaction reads
	// the replaced range, not the whole table: the scan records the
	// predicate and the files it plans. A file whose partition values (or
	// stats) show that every row satisfies it is replaced whole, without
	// being read; the others are read and their other rows kept.
	plan, err := reader.NewScan(snap, reader.WithFilter(bound), reader.WithColumns(), reader.WithAllocator(mem), reader.RecordReads(tx))
	if err != nil {
		return nil, fmt.Errorf("dml: replaceWhere: %w", err)
	}
	var removed, rewrite []*actions.Add
	var live int64 // the rows of the removed files (deletion vectors applied)
	for f, err := range plan.Files(ctx) {
		if err != nil {
			return nil, fmt.Errorf("dml: replaceWhere: %w", err)
		}
		n, err := plan.NumRecords(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("dml: replaceWhere: %w", err)
		}
		if dv := f.Add.DeletionVector; dv != nil {
			n -= dv.Cardinality
		}
		live += n
		removed = append(removed, f.Add)
		if !plan.AllMatch(f) {
			rewrite = append(rewrite, f.Add)
		}
	}

	wr, err := writer.WriteFiles(ctx, snap, batches, writer.WithSettings(settings), writer.WithRowCheck(check))
	if err != nil {
		return nil, err
	}
	var copied int64
	if len(rewrite) > 0 {
		// Keep the rows of the touched files for which the predicate is
		// not TRUE (FALSE or NULL). They have the table's schema, so the
		// rewrite never changes it.
		keep := expr.Or(expr.Not(bound), &expr.IsNull{X: bound})
		sc, err := reader.NewScan(snap, reader.WithFilter(keep), reader.WithAllocator(mem))
		if err != nil {
			return nil, fmt.Errorf("dml: replaceWhere: %w", err)
		}
		kept := func(yield func(arrow.RecordBatch, error) bool) {
			for _, f := range rewrite {
				sf := &reader.ScanFile{Add: f, Key: snap.TablePath(f.Path)}
				for rec, err := range sc.ReadFile(ctx, sf) {
					if !yield(rec, err) || err != nil {
						return
					}
				}
			}
		}
		rw, err := writer.WriteFiles(ctx, snap, kept, writer.WithSettings(settings), writer.WithTableRows())
		if err != nil {
			return nil, fmt.Errorf("dml: replaceWhere: rewrite: %w", err)
		}
		copied = rw.NumRows
		wr.Adds = append(wr.Adds, rw.Adds...)
		wr.NumRows += rw.NumRows
		wr.NumBytes += rw.NumBytes
	}
	params := map[string]any{
		"mode":        "Overwrite",
		"partitionBy": jsonText(append([]string{}, snap.PartitionColumns()...)),
		"predicate":   jsonText([]string{bound.String()}),
	}
	changes := wr.Changes("WRITE", params, removed)
	// Spark's metrics of the delete half: the rows replaced, the rows
	// kept from the rewritten files, and no change data files (the feed
	// of this commit is read from its adds and removes).
	changes.Metrics["numCopiedRows"] = strconv.FormatInt(copied, 10)
	changes.Metrics["numDeletedRows"] = strconv.FormatInt(live-copied, 10)
	changes.Metrics["numAddedChangeFiles"] = "0"
	if err := tx.Stage(changes); err != nil {
		return nil, fmt.Errorf("dml: replaceWhere: %w", err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("dml: replaceWhere: commit: %w", err)
	}
	return res, nil
}
