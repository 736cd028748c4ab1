package dml

import (
	"context"
	"fmt"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
)

// Delete deletes the rows for which predicate is TRUE: Spark's
// DELETE FROM t WHERE predicate (a nil predicate deletes every row).
//
// Files whose partition values or statistics rule the predicate out are
// not read, and a file the predicate matches entirely (by partition values
// and stats) is removed without being read. In the other files, the
// predicate's columns are read to find the matching rows; then, on a
// table with deletion vectors enabled (delta.enableDeletionVectors), those
// rows are marked in the file's deletion vector, and otherwise the file is
// rewritten without them (copy-on-write). With delta.enableChangeDataFeed
// the deleted rows are also written as change data. Everything is one
// commit. The transaction reads the table under the predicate: a
// concurrent commit that adds rows it may match, or removes a file it
// changed, aborts it; one that writes elsewhere rebases.
//
// The result is nil-committed (Result.CommitResult nil) when no row
// matched.
func Delete(ctx context.Context, snap *deltalog.Snapshot, predicate expr.Expr, opts ...Option) (*Result, error) {
	if snap == nil {
		return nil, fmt.Errorf("dml: %w", deltalog.ErrNoSnapshot)
	}
	if err := snap.Supports(deltalog.OpDelete); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	j := newJob(ctx, snap, cfg, opDelete)
	if res, err := j.tx.Start(); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	} else if res != nil {
		return &Result{CommitResult: res}, nil
	}
	targets, err := j.plan(predicate, false)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"predicate": jsonText(predicateList(predicate))}
	return j.rewrite(targets, params)
}
