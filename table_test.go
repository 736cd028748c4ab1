package lakelog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
)

var orders = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "day", Type: arrow.BinaryTypes.String},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// rows is a batch of orders from JSON.
func rows(t testing.TB, text string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, orders, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Release)
	return rec
}

// lines reads the handle's version as sorted JSON lines.
func lines(t testing.TB, tb *lakelog.Table) []string {
	t.Helper()
	var out []string
	for rec, err := range tb.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			b, err := reader.AppendJSONRow(nil, rec, i)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out
}

func want(t *testing.T, what string, got []string, w ...string) {
	t.Helper()
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, w)
	}
}

// TestTableLifecycle runs every method of the handle on one table and
// checks the rows, the versions and the results after each.
func TestTableLifecycle(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	tb, err := lakelog.Create(ctx, "orders", orders, lakelog.WithStore(st), lakelog.PartitionBy("day"),
		lakelog.Properties(map[string]string{"delta.enableChangeDataFeed": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if tb.Version() != 0 {
		t.Fatalf("created at version %d", tb.Version())
	}
	res, err := tb.Append(ctx, rows(t, `[{"id":1,"day":"mon","amount":10},{"id":2,"day":"mon","amount":20}]`), rows(t, `[{"id":3,"day":"tue","amount":30}]`))
	if err != nil || !res.Committed || res.Version != 1 || tb.Version() != 1 || res.Metrics["numOutputRows"] != 3 {
		t.Fatalf("append: %+v, %v; handle at %d", res, err, tb.Version())
	}
	res, err = tb.Delete(ctx, expr.Col("id").Eq(2))
	if err != nil || res.Version != 2 || res.Metrics["numDeletedRows"] != 1 {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	res, err = tb.Delete(ctx, expr.Col("id").Eq(99))
	if err != nil || res.Committed || res.Version != 2 {
		t.Fatalf("delete of nothing: %+v, %v (want not committed, at version 2)", res, err)
	}
	res, err = tb.Update(ctx, expr.Col("day").Eq("tue"), map[string]any{"amount": 31.5})
	if err != nil || res.Version != 3 || res.Metrics["numUpdatedRows"] != 1 {
		t.Fatalf("update: %+v, %v", res, err)
	}
	want(t, "after update", lines(t, tb), `{"id":1,"day":"mon","amount":10}`, `{"id":3,"day":"tue","amount":31.5}`)
	res, err = tb.Merge(rows(t, `[{"id":1,"day":"mon","amount":11},{"id":4,"day":"wed","amount":40}]`)).
		On(expr.Col("t", "id").Eq(expr.Col("s", "id"))).
		WhenMatchedUpdateAll(nil).WhenNotMatchedInsertAll(nil).Execute(ctx)
	if err != nil || res.Version != 4 || res.Metrics["numTargetRowsUpdated"] != 1 || res.Metrics["numTargetRowsInserted"] != 1 {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	want(t, "after merge", lines(t, tb), `{"id":1,"day":"mon","amount":11}`, `{"id":3,"day":"tue","amount":31.5}`, `{"id":4,"day":"wed","amount":40}`)

	// Reads: time travel, the change feed, history.
	v1, err := tb.At(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "version 1", lines(t, v1), `{"id":1,"day":"mon","amount":10}`, `{"id":2,"day":"mon","amount":20}`, `{"id":3,"day":"tue","amount":30}`)
	feed, err := tb.Changes(ctx, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for rec, err := range feed.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		ct := rec.Column(rec.Schema().FieldIndices(actions.ChangeTypeColumn)[0]).(*array.String)
		for i := range ct.Len() {
			kinds = append(kinds, ct.Value(i))
		}
	}
	slices.Sort(kinds)
	want(t, "changes of versions 2-4", kinds, "delete", "insert", "update_postimage", "update_postimage", "update_preimage", "update_preimage")
	hist, err := tb.History(ctx, -1)
	if err != nil || len(hist) != 5 {
		t.Fatalf("history: %d entries, %v", len(hist), err)
	}

	// Schema changes and maintenance.
	if _, err := tb.AddColumns(ctx, schema.Column{Path: "note", Type: actions.TypeString}); err != nil {
		t.Fatal(err)
	}
	res, err = tb.Optimize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("optimize: %+v", res.Metrics)
	res, err = tb.Restore(ctx, maintenance.ToVersion(1))
	if err != nil || !res.Committed {
		t.Fatalf("restore: %+v, %v", res, err)
	}
	// RESTORE brings back version 1's schema too, as Spark's does.
	want(t, "restored to version 1", lines(t, tb), `{"id":1,"day":"mon","amount":10}`, `{"id":2,"day":"mon","amount":20}`, `{"id":3,"day":"tue","amount":30}`)
	if _, err := tb.Vacuum(ctx, maintenance.DryRun()); err != nil {
		t.Fatal(err)
	}
	res, err = tb.Overwrite(ctx)
	if err != nil || len(lines(t, tb)) != 0 {
		t.Fatalf("overwrite with nothing: %+v, %v, rows %v", res, err, lines(t, tb))
	}

	// Another handle sees it all after Open; this one after Refresh sees
	// another's write.
	other, err := lakelog.Open(ctx, "orders", lakelog.WithStore(st))
	if err != nil || other.Version() != tb.Version() {
		t.Fatalf("open: %v at %d, want %d", err, other.Version(), tb.Version())
	}
	if _, err := other.Append(ctx, rows(t, `[{"id":9,"day":"sun","amount":null}]`)); err != nil {
		t.Fatal(err)
	}
	if err := tb.Refresh(ctx); err != nil || tb.Version() != other.Version() {
		t.Fatalf("refresh: %v, at %d, want %d", err, tb.Version(), other.Version())
	}
}

// TestTableFollow: Follow yields what Append commits.
func TestTableFollow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tb, err := lakelog.Create(ctx, "f", orders, lakelog.WithStore(objstore.NewMem()), lakelog.Properties(map[string]string{"delta.enableChangeDataFeed": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Append(ctx, rows(t, `[{"id":1,"day":"mon","amount":1}]`)); err != nil {
		t.Fatal(err)
	}
	for b, err := range tb.Follow(ctx, cdf.StartingVersion(0), cdf.WithPollInterval(time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range b.Records(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if rec.NumRows() == 1 {
				return
			}
		}
	}
	t.Fatal("the feed ended without the appended row")
}

// TestTableConcurrent: one handle used by several goroutines ends at the
// newest version any of them committed, with every row.
func TestTableConcurrent(t *testing.T) {
	ctx := context.Background()
	tb, err := lakelog.Create(ctx, "c", orders, lakelog.WithStore(objstore.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := tb.Append(ctx, rows(t, fmt.Sprintf(`[{"id":%d,"day":"d","amount":1}]`, i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if tb.Version() != 8 || len(lines(t, tb)) != 8 {
		t.Fatalf("at version %d with %d rows, want 8 and 8", tb.Version(), len(lines(t, tb)))
	}
}

// TestTableBadInput: a nil handle, nil schema, create options on Open and
// a missing table give errors, never a panic.
func TestTableBadInput(t *testing.T) {
	ctx := context.Background()
	var nilTable *lakelog.Table
	if _, err := nilTable.Append(ctx); !errors.Is(err, lakelog.ErrNilTable) {
		t.Errorf("Append on a nil handle: %v", err)
	}
	if _, err := nilTable.Merge().Execute(ctx); !errors.Is(err, lakelog.ErrNilTable) {
		t.Errorf("Merge on a nil handle: %v", err)
	}
	for range nilTable.Records(ctx) {
	}
	if nilTable.Version() != -1 || nilTable.Snapshot() != nil {
		t.Error("a nil handle has a version")
	}
	if _, err := lakelog.Create(ctx, "x", nil, lakelog.WithStore(objstore.NewMem())); err == nil {
		t.Error("Create without a schema: no error")
	}
	st := objstore.NewMem()
	if _, err := lakelog.Open(ctx, "x", lakelog.WithStore(st)); !errors.Is(err, deltalog.ErrNotTable) {
		t.Errorf("Open of no table: %v", err)
	}
	if _, err := lakelog.Create(ctx, "x", orders, lakelog.WithStore(st)); err != nil {
		t.Fatal(err)
	}
	if _, err := lakelog.Open(ctx, "x", lakelog.WithStore(st), lakelog.PartitionBy("day")); err == nil {
		t.Error("Open with PartitionBy: no error")
	}
	if _, err := lakelog.Create(ctx, "x", orders, lakelog.WithStore(st)); !errors.Is(err, deltalog.ErrTableExists) {
		t.Errorf("Create over a table: %v", err)
	}
}
