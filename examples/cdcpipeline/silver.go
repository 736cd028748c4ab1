package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

// silver keeps a table equal to the source table: it follows bronze's
// change feed and MERGEs each batch's latest event per key.
type silver struct {
	bronze, silver objstore.Store
	keys           []string // the source table's key columns
	app            string   // the app id of silver's commits: its offset in bronze
	out            io.Writer
}

// runSilver follows bronze from the version after the one silver's last
// commit recorded (its app transaction) until ctx ends. Each batch of
// bronze versions is applied with one MERGE committed with
// txn(app, batch.Last): a crash before the commit redoes the batch, one
// after it resumes after it, so each bronze version is applied once.
func runSilver(ctx context.Context, s *silver, poll time.Duration) error {
	for {
		// Bronze may not exist yet.
		_, err := deltalog.Open(ctx, s.bronze, "")
		if err == nil {
			break
		}
		if !errors.Is(err, deltalog.ErrNotTable) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
	start, err := cdf.Resume(ctx, cdf.TxnOffset(s.silver, "", s.app), cdf.StartingVersion(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "silver: following bronze from %s\n", start)
	onlyInserts := &expr.Compare{Op: expr.Eq, Left: expr.Col(cdf.ChangeTypeColumn), Right: expr.Lit(cdf.Insert)}
	for b, err := range cdf.Follow(ctx, s.bronze, "", start, cdf.WithPollInterval(poll), cdf.WithMaxPollInterval(8*poll),
		cdf.WithFilter(onlyInserts), cdf.WithMaxFilesPerBatch(200)) {
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.apply(ctx, b); err != nil {
			return fmt.Errorf("silver: bronze versions %d to %d: %w", b.First, b.Last, err)
		}
	}
	return nil
}

// apply MERGEs the latest event of each key of bronze's batch into silver.
func (s *silver) apply(ctx context.Context, b *cdf.Batch) error {
	latest, n, err := s.latestPerKey(ctx, b)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range latest {
			r.Release()
		}
	}()
	if n == 0 {
		return nil // nothing to apply; the next batch records the offset
	}
	columns := sourceColumns(b.TableSchema())
	for attempt := 1; ; attempt++ {
		snap, err := s.target(ctx, b.TableSchema(), columns)
		if err != nil {
			return err
		}
		res, err := dml.Merge(ctx, snap, batchesOf(latest), s.on(), s.clauses(snap, columns),
			dml.WithCommitOptions(deltalog.WithAppTransaction(s.app, b.Last)))
		if errors.Is(err, conflict.ErrConflict) && attempt < 10 {
			fmt.Fprintf(s.out, "silver: %v; retrying\n", err)
			continue
		}
		if err != nil {
			return err
		}
		switch {
		case res.CommitResult == nil:
			fmt.Fprintf(s.out, "silver: bronze %d-%d: %d keys changed nothing\n", b.First, b.Last, n)
		case res.AlreadyApplied:
			fmt.Fprintf(s.out, "silver: bronze %d-%d: already applied\n", b.First, b.Last)
		default:
			m := res.Metrics
			fmt.Fprintf(s.out, "silver: bronze %d-%d: version %d (%d keys: %d inserted, %d updated, %d deleted)\n", b.First, b.Last, res.Version, n,
				m["numTargetRowsInserted"], m["numTargetRowsUpdated"], m["numTargetRowsDeleted"])
			if err := res.WaitHooks(); err != nil {
				fmt.Fprintf(s.out, "silver: checkpoint failed (the commit stands): %v\n", err)
			}
		}
		return nil
	}
}

// sourceColumns are the source table's columns among bronze's: those
// that are not bronze's own.
func sourceColumns(bronze *actions.StructType) []*actions.StructField {
	var out []*actions.StructField
	for _, f := range bronze.Fields {
		if !strings.HasPrefix(f.Name, "__") {
			out = append(out, f)
		}
	}
	return out
}

// target opens silver, creating it with the source's columns, or adding
// the columns the source gained (an empty append that widens the
// schema, as Spark's mergeSchema does).
func (s *silver) target(ctx context.Context, bronze *actions.StructType, columns []*actions.StructField) (*deltalog.Snapshot, error) {
	snap, err := openOrCreate(ctx, s.silver, columns, nil)
	if err != nil {
		return nil, err
	}
	var missing []*actions.StructField
	for _, c := range columns {
		if snap.Schema().Field(c.Name) == nil {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return snap, nil
	}
	// A metadata commit, as Spark's ALTER TABLE ADD COLUMNS.
	wide := &actions.StructType{Fields: append(slices.Clone(snap.Schema().Fields), missing...)}
	md := *snap.Metadata()
	if md.SchemaString, err = actions.SchemaString(wide); err != nil {
		return nil, err
	}
	tx := snap.NewTransaction()
	tx.SetMetadata(&md)
	cols, err := json.Marshal(missing)
	if err != nil {
		return nil, err
	}
	tx.SetOperation("ADD COLUMNS", map[string]any{"columns": string(cols)}, nil)
	res, err := tx.Commit(ctx)
	if errors.Is(err, conflict.ErrConflict) {
		return s.target(ctx, bronze, columns) // another change to the schema won: look again
	}
	if err != nil {
		return nil, fmt.Errorf("adding columns %s: %w", fieldNames(missing), err)
	}
	fmt.Fprintf(s.out, "silver: version %d adds columns %s\n", res.Version, fieldNames(missing))
	return res.Snapshot()
}

func fieldNames(fs []*actions.StructField) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// on is target.k = source.k for every key column.
func (s *silver) on() expr.Expr {
	var conds []expr.Expr
	for _, k := range s.keys {
		conds = append(conds, &expr.Compare{Op: expr.Eq, Left: expr.Col("target", k), Right: expr.Col("source", k)})
	}
	return expr.And(conds...)
}

// clauses: a delete event deletes the row; any other event's row
// replaces it, or is inserted. Columns silver has and the batch lacks
// (a column the source dropped) are left alone on update and null on
// insert.
func (s *silver) clauses(snap *deltalog.Snapshot, columns []*actions.StructField) []dml.Clause {
	isDelete := &expr.Compare{Op: expr.Eq, Left: expr.Col("source", colOp), Right: expr.Lit("d")}
	notDelete := &expr.Compare{Op: expr.Ne, Left: expr.Col("source", colOp), Right: expr.Lit("d")}
	var set []*expr.Assignment
	for _, c := range columns {
		if snap.Schema().Field(c.Name) != nil {
			set = append(set, &expr.Assignment{Column: expr.Col(c.Name), Value: expr.Col("source", c.Name)})
		}
	}
	return []dml.Clause{
		dml.WhenMatchedDelete(isDelete),
		dml.WhenMatchedUpdate(nil, set...),
		dml.WhenNotMatchedInsert(notDelete, set...),
	}
}

// latestPerKey reads the batch's events and keeps the latest of each
// key: the highest source LSN, then the highest Kafka offset (the feed's
// order breaks what remains). It returns them as record batches of
// bronze's columns and their number.
func (s *silver) latestPerKey(ctx context.Context, b *cdf.Batch) ([]arrow.RecordBatch, int, error) {
	type pos struct {
		rec, row    int
		lsn, offset int64
		hasLSN      bool
	}
	var recs []arrow.RecordBatch
	best := map[string]pos{}
	var order []string
	release := func() {
		for _, r := range recs {
			r.Release()
		}
	}
	for rec, err := range b.Records(ctx) {
		if err != nil {
			release()
			return nil, 0, err
		}
		sc := rec.Schema()
		keyCols := make([]arrow.Array, len(s.keys))
		for i, k := range s.keys {
			idx := sc.FieldIndices(k)
			if len(idx) != 1 {
				release()
				return nil, 0, fmt.Errorf("bronze has no key column %q", k)
			}
			keyCols[i] = rec.Column(idx[0])
		}
		lsnCol := rec.Column(sc.FieldIndices(colLSN)[0]).(*array.Int64)
		offCol := rec.Column(sc.FieldIndices(colOffset)[0]).(*array.Int64)
		rec.Retain()
		recs = append(recs, rec)
		for row := range int(rec.NumRows()) {
			var key strings.Builder
			for i, c := range keyCols {
				if c.IsNull(row) {
					release()
					return nil, 0, fmt.Errorf("bronze version %d: an event with a null key column %q (offset %d)", b.First, s.keys[i], offCol.Value(row))
				}
				fmt.Fprintf(&key, "%d:%s|", len(c.ValueStr(row)), c.ValueStr(row))
			}
			p := pos{rec: len(recs) - 1, row: row, offset: offCol.Value(row), hasLSN: lsnCol.IsValid(row)}
			if p.hasLSN {
				p.lsn = lsnCol.Value(row)
			}
			k := key.String()
			cur, seen := best[k]
			if !seen {
				order = append(order, k)
			}
			if !seen || later(p.hasLSN && cur.hasLSN, p.lsn, cur.lsn, p.offset, cur.offset) {
				best[k] = p
			}
		}
	}
	defer release()
	// One batch per bronze record batch, holding its rows that won.
	take := make([][]int64, len(recs))
	for _, k := range order {
		p := best[k]
		take[p.rec] = append(take[p.rec], int64(p.row))
	}
	var out []arrow.RecordBatch
	for i, rows := range take {
		if len(rows) == 0 {
			continue
		}
		idx := array.NewInt64Builder(memory.DefaultAllocator)
		idx.AppendValues(rows, nil)
		ia := idx.NewInt64Array()
		idx.Release()
		taken, err := compute.TakeArray(ctx, array.RecordToStructArray(recs[i]), ia)
		ia.Release()
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, 0, err
		}
		out = append(out, array.RecordFromStructArray(taken.(*array.Struct), recs[i].Schema()))
		taken.Release()
	}
	return out, len(order), nil
}

// later reports whether an event at (lsn, offset) comes after one at
// (curLSN, curOffset) of the same key: by LSN when both have one, then by
// offset (a key's events share a partition).
func later(byLSN bool, lsn, curLSN, offset, curOffset int64) bool {
	if byLSN && lsn != curLSN {
		return lsn > curLSN
	}
	return offset >= curOffset
}

// batchesOf yields recs, as a MERGE source.
func batchesOf(recs []arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}
