package lakelog_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
)

var accounts = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "owner", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "balance", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// exampleTable is an in-memory table of three accounts (version 1), with
// the change data feed on.
func exampleTable() *lakelog.Table {
	ctx := context.Background()
	t, err := lakelog.Create(ctx, "mem://accounts", accounts, lakelog.Properties(map[string]string{"delta.enableChangeDataFeed": "true"}))
	check(err)
	_, err = t.Append(ctx, batch(`[{"id":1,"owner":"ann","balance":100},{"id":2,"owner":"bob","balance":50},{"id":3,"owner":"cy","balance":0}]`))
	check(err)
	return t
}

func batch(rows string) arrow.RecordBatch {
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, accounts, strings.NewReader(rows))
	check(err)
	return rec
}

// show prints the rows of the handle's version, by id.
func show(t *lakelog.Table) {
	var lines []string
	for rec, err := range t.Records(context.Background()) {
		check(err)
		for i := range int(rec.NumRows()) {
			b, err := reader.AppendJSONRow(nil, rec, i)
			check(err)
			lines = append(lines, string(b))
		}
	}
	sortLines(lines)
	fmt.Println(strings.Join(lines, "\n"))
}

func sortLines(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func ExampleOpen() {
	ctx := context.Background()
	dir := tempDir()
	_, err := lakelog.Create(ctx, dir, accounts)
	check(err)
	t, err := lakelog.Open(ctx, dir) // or s3://..., with lakelog.WithStorageOptions(map[string]string{"AWS_ENDPOINT_URL": ...})
	check(err)
	fmt.Println(t.Version())
	// Output: 0
}

func ExampleTable_Delete() {
	t := exampleTable()
	res, err := t.Delete(context.Background(), expr.Col("balance").Eq(0))
	check(err)
	fmt.Println(res.Version, res.Metrics["numDeletedRows"])
	show(t)
	// Output:
	// 2 1
	// {"id":1,"owner":"ann","balance":100}
	// {"id":2,"owner":"bob","balance":50}
}

func ExampleTable_Update() {
	t := exampleTable()
	res, err := t.Update(context.Background(), expr.Col("owner").In("ann", "bob"), map[string]any{"balance": 0})
	check(err)
	fmt.Println(res.Metrics["numUpdatedRows"])
	// Output: 2
}

func ExampleTable_Merge() {
	t := exampleTable()
	changes := batch(`[{"id":2,"owner":"bob","balance":75},{"id":4,"owner":"dee","balance":10},{"id":3,"owner":null,"balance":null}]`)
	res, err := t.Merge(changes).On(expr.Col("t", "id").Eq(expr.Col("s", "id"))).
		WhenMatchedDelete(expr.Col("s", "owner").IsNull()).
		WhenMatchedUpdateAll(nil).
		WhenNotMatchedInsertAll(nil).
		Execute(context.Background())
	check(err)
	fmt.Println(res.Metrics["numTargetRowsUpdated"], res.Metrics["numTargetRowsInserted"], res.Metrics["numTargetRowsDeleted"])
	show(t)
	// Output:
	// 1 1 1
	// {"id":1,"owner":"ann","balance":100}
	// {"id":2,"owner":"bob","balance":75}
	// {"id":4,"owner":"dee","balance":10}
}

func ExampleTable_Changes() {
	t := exampleTable()
	ctx := context.Background()
	_, err := t.Delete(ctx, expr.Col("id").Eq(3))
	check(err)
	feed, err := t.Changes(ctx, 2, -1) // the versions from 2 on
	check(err)
	for rec, err := range feed.Records(ctx) {
		check(err)
		ct := rec.Column(rec.Schema().FieldIndices(actions.ChangeTypeColumn)[0]).(*array.String)
		fmt.Println(rec.NumRows(), ct.Value(0))
	}
	// Output: 1 delete
}

func ExampleTable_Follow() {
	t := exampleTable()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for b, err := range t.Follow(ctx, cdf.StartingVersion(1)) {
		if ctx.Err() != nil {
			break
		}
		check(err)
		fmt.Println("versions", b.First, "to", b.Last)
		stop() // a follower would go on as versions are committed
	}
	// Output: versions 1 to 1
}

func ExampleTable_At() {
	t := exampleTable()
	ctx := context.Background()
	_, err := t.Delete(ctx, nil) // every row
	check(err)
	v1, err := t.At(ctx, 1)
	check(err)
	n := int64(0)
	for rec, err := range v1.Records(ctx) {
		check(err)
		n += rec.NumRows()
	}
	fmt.Println(t.Version(), v1.Version(), n)
	// Output: 2 1 3
}

func ExampleTable_History() {
	t := exampleTable()
	h, err := t.History(context.Background(), -1)
	check(err)
	for _, c := range h {
		fmt.Println(c.Version, c.Info.Operation)
	}
	// Output:
	// 1 WRITE
	// 0 CREATE TABLE
}

func ExampleTable_Optimize() {
	t := exampleTable()
	ctx := context.Background()
	_, err := t.Append(ctx, batch(`[{"id":5,"owner":"eve","balance":1}]`))
	check(err)
	res, err := t.Optimize(ctx)
	check(err)
	fmt.Println(res.Version, res.Metrics["numRemovedFiles"], res.Metrics["numAddedFiles"])
	// Output: 3 2 1
}

func ExampleTable_Restore() {
	t := exampleTable()
	ctx := context.Background()
	_, err := t.Delete(ctx, nil)
	check(err)
	res, err := t.Restore(ctx, maintenance.ToVersion(1))
	check(err)
	fmt.Println(res.Version, res.Metrics["numRestoredFiles"])
	// Output: 3 1
}

func ExampleTable_Vacuum() {
	t := exampleTable()
	ctx := context.Background()
	_, err := t.Overwrite(ctx, batch(`[{"id":9,"owner":"zed","balance":9}]`))
	check(err)
	// No retention (only when nothing else writes), as if run a minute later.
	later := func() time.Time { return time.Now().Add(time.Minute) }
	res, err := t.Vacuum(ctx, maintenance.Retain(0), maintenance.Force(), maintenance.VacuumClock(later))
	check(err)
	fmt.Println(res.Metrics["numDeletedFiles"])
	// Output: 1
}

func ExampleTable_AddColumns() {
	t := exampleTable()
	_, err := t.AddColumns(context.Background(), schema.Column{Path: "email", Type: actions.TypeString})
	check(err)
	sc, err := t.Schema()
	check(err)
	fmt.Println(sc.Field(3).Name)
	// Output: email
}

// tempDir is a fresh folder for an example's table.
func tempDir() string {
	dir, err := os.MkdirTemp("", "lakelog-example")
	check(err)
	return dir
}
