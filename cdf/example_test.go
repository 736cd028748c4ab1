package cdf_test

import (
	"context"
	"fmt"
	"log"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/golden"
)

// The deletes and updates of versions 1 to 3 of a table, with two of its
// columns.
func Example() {
	c, err := golden.Find("cdf-table")
	if err != nil {
		log.Fatal(err)
	}
	store, err := objstore.NewLocal(c.Dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	feed, err := cdf.Open(ctx, store, "", cdf.Versions(1, 3),
		cdf.WithColumns("id", "name"),
		cdf.WithFilter(expr.Or(
			&expr.Compare{Op: expr.Eq, Left: expr.Col("_change_type"), Right: expr.Lit("delete")},
			&expr.Compare{Op: expr.Eq, Left: expr.Col("id"), Right: expr.Lit(int64(2))})),
		cdf.WithParallelism(1))
	if err != nil {
		log.Fatal(err)
	}
	for rec, err := range feed.Records(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			fmt.Println(rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(2).ValueStr(i), rec.Column(3).ValueStr(i))
		}
	}
	// Output:
	// 2 Bob update_postimage 1
	// 2 Bob update_preimage 1
	// 7 Dennis delete 3
}
