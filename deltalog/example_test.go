package deltalog_test

import (
	"context"
	"fmt"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

func Example() {
	ctx := context.Background()
	st := objstore.NewMem()
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`
	tx, _ := deltalog.Create(st, "", &actions.Metadata{SchemaString: schema})
	tx.Commit(ctx)

	// Two writers read version 0 and append at once: both land.
	snap, _ := deltalog.Open(ctx, st, "")
	a, b := snap.NewTransaction(), snap.NewTransaction()
	a.Add(actions.Action{Add: &actions.Add{Path: "a.parquet", Size: 1, DataChange: true}})
	b.Add(actions.Action{Add: &actions.Add{Path: "b.parquet", Size: 1, DataChange: true}})
	ra, _ := a.Commit(ctx)
	rb, _ := b.Commit(ctx)
	fmt.Println(ra.Version, rb.Version, rb.Attempts)

	latest, _ := deltalog.Open(ctx, st, "")
	old, _ := deltalog.Open(ctx, st, "", deltalog.AtVersion(1))
	fmt.Println(latest.NumFiles(), old.NumFiles())
	// Output:
	// 1 2 2
	// 2 1
}
