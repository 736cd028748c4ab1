package conflict_test

import (
	"errors"
	"fmt"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/expr"
)

// A DELETE on partition nl lost the race to a blind append into nl. At
// WriteSerializable it rebases (the appended rows are ordered after the
// delete); at Serializable the delete should have seen them, so it aborts.
func Example() {
	// The table as the transaction read it; a snapshot gives it
	// (deltalog.Snapshot.Config).
	schema, _ := actions.ParseDDL("country string, id long")
	text, _ := actions.SchemaString(schema)
	table, _ := actions.NewTableConfig(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		&actions.Metadata{SchemaString: text, PartitionColumns: []string{"country"}})

	where, _ := expr.Parse("country = 'nl'")
	where, _ = expr.BindPredicate(where, schema)
	nl := "nl"
	tx := &conflict.Txn{
		ReadVersion:    7,
		ReadPredicates: []expr.Expr{where},
		ReadFiles:      []string{"country=nl/part-0.parquet"},
		ReadProtocol:   &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		Actions: []actions.Action{
			{Remove: &actions.Remove{Path: "country=nl/part-0.parquet", DataChange: true}},
		},
	}
	blind := true
	winner := conflict.Winner{Version: 8, Actions: []actions.Action{
		{CommitInfo: &actions.CommitInfo{Operation: "WRITE", IsBlindAppend: &blind}},
		{Add: &actions.Add{Path: "country=nl/part-1.parquet", PartitionValues: map[string]*string{"country": &nl}, DataChange: true}},
	}}

	for _, iso := range []conflict.Isolation{conflict.WriteSerializable, conflict.Serializable} {
		tx.Isolation = iso
		err := conflict.Check(tx, table, winner)
		var ce *conflict.Error
		switch {
		case err == nil:
			fmt.Printf("%s: rebase\n", iso)
		case errors.As(err, &ce) && errors.Is(err, conflict.ErrConcurrentAppend):
			fmt.Printf("%s: concurrent append at version %d in %v\n", iso, ce.WinningVersion, ce.Partitions)
		default:
			fmt.Printf("%s: %v\n", iso, err)
		}
	}
	// Output:
	// WriteSerializable: rebase
	// Serializable: concurrent append at version 8 in [country=nl]
}
