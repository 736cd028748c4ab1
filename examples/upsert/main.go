// Command upsert is a CDC ingestor's core: each batch of changes (an id,
// a value, a delete flag) is MERGEd into the table exactly once, as
// batch n of the application "ingest" (a replayed batch commits
// nothing), and a follower prints the change data feed as it comes.
//
//	go run ./examples/upsert /tmp/accounts   # or s3://bucket/accounts
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

var changes = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "balance", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "deleted", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

var batches = []string{
	`[{"id":1,"balance":100,"deleted":false},{"id":2,"balance":50,"deleted":false}]`,
	`[{"id":1,"balance":70,"deleted":false},{"id":3,"balance":5,"deleted":false}]`,
	`[{"id":2,"balance":null,"deleted":true}]`,
}

// ingest merges batch n into the table as the application's batch n.
func ingest(ctx context.Context, t *lakelog.Table, n int) (*lakelog.Result, error) {
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, changes, strings.NewReader(batches[n]))
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	deleted := expr.Col("s", "deleted").Eq(true)
	return t.Merge(rec).On(expr.Col("t", "id").Eq(expr.Col("s", "id"))).
		WhenMatchedDelete(deleted).
		WhenMatchedUpdate(nil, map[string]any{"balance": expr.Col("s", "balance")}).
		WhenNotMatchedInsert(expr.Not(deleted), map[string]any{"id": expr.Col("s", "id"), "balance": expr.Col("s", "balance")}).
		Options(dml.WithCommitOptions(deltalog.WithAppTransaction("ingest", int64(n)))).
		Execute(ctx)
}

func run(ctx context.Context, uri string, out io.Writer) error {
	accounts := arrow.NewSchema(changes.Fields()[:2], nil)
	t, err := lakelog.Create(ctx, uri, accounts, lakelog.Properties(map[string]string{"delta.enableChangeDataFeed": "true"}))
	if err != nil {
		return err
	}
	for _, n := range []int{0, 1, 1, 2} { // batch 1 is delivered twice
		res, err := ingest(ctx, t, n)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "batch %d: version %d, already applied %v\n", n, res.Version, res.AlreadyApplied)
	}
	follow, stop := context.WithCancel(ctx)
	defer stop()
	for b, err := range t.Follow(follow, cdf.StartingVersion(1)) {
		if follow.Err() != nil {
			return nil // stopped below
		}
		if err != nil {
			return err
		}
		for rec, err := range b.Records(ctx) {
			if err != nil {
				return err
			}
			for i := range int(rec.NumRows()) {
				row, err := reader.AppendJSONRow(nil, rec, i)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", row)
			}
		}
		if b.Last == t.Version() {
			stop() // a follower would go on; this one ends at the latest version
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: upsert TABLE_URI")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout); err != nil {
		log.Fatal(err)
	}
}
