package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

func init() {
	register(&verb{
		name: "quickstart", section: sectionOther,
		args:    []arg{{name: "DIR"}},
		summary: "a guided demo on a local table in DIR/orders; needs no input",
		run:     runQuickstart,
	})
}

// The demo's orders table.
const (
	ordersDDL      = "order_id long not null, customer string, amount decimal(10,2), country string, ordered_at timestamp"
	ordersWriters  = 4
	ordersPerBatch = 250
)

var ordersCountries = []string{"nl", "de", "fr", "us"}

// runQuickstart builds a small orders table in DIR/orders and walks a
// newcomer through it: create, concurrent appends from several writers,
// history, a filtered scan, and time travel. Each step prints the CLI
// command that does the same by hand.
func runQuickstart(ctx context.Context, c *call) error {
	e := c.env
	dir, err := filepath.Abs(c.args[0])
	if err != nil {
		return err
	}
	table := filepath.Join(dir, "orders")
	if _, err := os.Stat(filepath.Join(table, "_delta_log")); err == nil {
		return fmt.Errorf("%s already holds a table; give an empty or new DIR", table)
	}
	if err := os.MkdirAll(table, 0o755); err != nil {
		return err
	}
	st, err := objstore.NewLocal(table)
	if err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(e.stdout, format+"\n", a...) }

	say("== 1. Create a Delta table (version 0: protocol and metadata)")
	say("   $ lakelog create %s --schema '%s' --partition-by country", table, ordersDDL)
	schema, err := actions.ParseDDL(ordersDDL)
	if err != nil {
		return err
	}
	schemaString, err := actions.SchemaString(schema)
	if err != nil {
		return err
	}
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: schemaString, PartitionColumns: []string{"country"}})
	if err != nil {
		return err
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return err
	}
	say("   created version %d\n", res.Version)

	say("== 2. %d writers append at once; no lock: each commit is a create-if-absent", ordersWriters)
	say("   of _delta_log/<version>.json, and a writer that loses the race rebases.")
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return err
	}
	type outcome struct {
		version  int64
		attempts int
		err      error
	}
	outs := make([]outcome, ordersWriters)
	var wg sync.WaitGroup
	for w := range ordersWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := writer.Append(ctx, snap, orderBatches(w), writer.WithCommitOptions(deltalog.WithOperationParameters(map[string]any{"writer": fmt.Sprint(w)})))
			if err != nil {
				outs[w].err = err
				return
			}
			outs[w] = outcome{version: r.Version, attempts: r.Attempts}
		}()
	}
	wg.Wait()
	for w, o := range outs {
		if o.err != nil {
			return fmt.Errorf("writer %d: %w", w, o.err)
		}
		say("   writer %d: %d orders committed as version %d (%d attempt(s))", w, ordersPerBatch, o.version, o.attempts)
	}
	say("")

	say("== 3. History: one commit per version, newest first")
	say("   $ lakelog history %s", table)
	if err := e.runVerb(ctx, "history", table); err != nil {
		return err
	}
	say("")

	say("== 4. Read it back: count, then a filtered scan that prunes partitions")
	latest, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return err
	}
	n, err := countRows(ctx, latest, "")
	if err != nil {
		return err
	}
	say("   $ lakelog count %s\n   %d", table, n)
	where := "country = 'nl' AND amount >= 100"
	say("   $ lakelog scan %s --where \"%s\" --limit 3 --format jsonl", table, where)
	pred, err := bindPredicate(where, latest.Schema())
	if err != nil {
		return err
	}
	sc, err := reader.NewScan(latest, reader.WithFilter(pred), reader.WithLimit(3))
	if err != nil {
		return err
	}
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return err
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			return err
		}
		for _, r := range rows {
			say("   %s", r)
		}
	}
	m := sc.Metrics()
	inTable := 0
	for range latest.Files() {
		inTable++
	}
	// With a limit, planning stops once enough rows are read: it may look
	// at fewer files than the table has.
	say("   (files: %d in the table; of the %d planning looked at before the limit was reached, %d pruned by partition, %d skipped by stats, %d read)\n",
		inTable, m.FilesConsidered, m.FilesPrunedByPartition, m.FilesSkippedByStats, m.FilesRead)

	say("== 5. Time travel: every version stays readable")
	for _, v := range []int64{0, 1, latest.Version()} {
		old, err := deltalog.Open(ctx, st, "", deltalog.AtVersion(v))
		if err != nil {
			return err
		}
		c, err := countRows(ctx, old, "")
		if err != nil {
			return err
		}
		say("   $ lakelog count %s --version %d\n   %d", table, v, c)
	}
	say("")
	say("== Next: try these yourself")
	say("   lakelog describe %s", table)
	say("   lakelog scan %s --where \"customer = 'customer-7'\"", table)
	say("   lakelog append %s more-orders.jsonl", table)
	return nil
}

// bindPredicate parses and binds a --where predicate.
func bindPredicate(text string, schema *actions.StructType) (expr.Expr, error) {
	e, err := expr.Parse(text)
	if err != nil {
		return nil, err
	}
	return expr.BindPredicate(e, schema)
}

// countRows counts the rows matching where ("" for all) by scanning.
func countRows(ctx context.Context, snap *deltalog.Snapshot, where string) (int64, error) {
	var opts []reader.Option
	if where != "" {
		pred, err := bindPredicate(where, snap.Schema())
		if err != nil {
			return 0, err
		}
		opts = append(opts, reader.WithFilter(pred))
	}
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		return 0, err
	}
	var n int64
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
	}
	return n, nil
}

// orderBatches makes writer w's orders: deterministic, spread over the
// countries, with amounts from 1.00 to 250.00.
func orderBatches(w int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		schema, err := actions.ParseDDL(ordersDDL)
		if err != nil {
			yield(nil, err)
			return
		}
		as, err := actions.ToArrowSchema(schema, false, "")
		if err != nil {
			yield(nil, err)
			return
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		defer b.Release()
		base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		for i := range ordersPerBatch {
			id := int64(w*ordersPerBatch + i + 1)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("customer-%d", id%17))
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i+1) * 100))
			b.Field(3).(*array.StringBuilder).Append(ordersCountries[int(id)%len(ordersCountries)])
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(base.Add(time.Duration(id) * time.Minute).UnixMicro()))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		yield(rec, nil)
	}
}
