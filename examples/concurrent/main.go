// Command concurrent runs appenders and deleters on one table at once,
// each in its own goroutine with its own handle, as separate processes
// would: appends never conflict (a blind append rebases), and a DELETE
// that lost a race is redone on the new version by
// RetryOnConflict. Every append lands once and every deleted
// row is gone.
//
//	go run ./examples/concurrent /tmp/events   # or s3://bucket/events
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
	"golang.org/x/sync/errgroup"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/expr"
)

var events = arrow.NewSchema([]arrow.Field{{Name: "writer", Type: arrow.PrimitiveTypes.Int64}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)

func run(ctx context.Context, uri string, out io.Writer) error {
	t, err := lakelog.Create(ctx, uri, events)
	if err != nil {
		return err
	}
	const writers, appends = 4, 5
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error { // writer w appends rows n = 0..4, then deletes its odd ones
			mine, err := lakelog.Open(ctx, uri)
			if err != nil {
				return err
			}
			for n := range appends {
				rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, events, strings.NewReader(fmt.Sprintf(`[{"writer":%d,"n":%d}]`, w, n)))
				if err != nil {
					return err
				}
				_, err = mine.Append(ctx, rec)
				rec.Release()
				if err != nil {
					return err
				}
			}
			odd := expr.And(expr.Col("writer").Eq(w), expr.Col("n").In(1, 3))
			return mine.RetryOnConflict(ctx, func(t *lakelog.Table) error {
				_, err := t.Delete(ctx, odd)
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := t.Refresh(ctx); err != nil {
		return err
	}
	rows := int64(0)
	for rec, err := range t.Records(ctx) {
		if err != nil {
			return err
		}
		rows += rec.NumRows()
	}
	fmt.Fprintf(out, "%d rows left of %d appended\n", rows, writers*appends)
	return nil
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: concurrent TABLE_URI")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout); err != nil {
		log.Fatal(err)
	}
}
