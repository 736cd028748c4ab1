package checkpoint_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/objstore"
)

// Example writes the checkpoint of a small table state, records it in
// _last_checkpoint, and reads it back the way a log reader would.
func Example() {
	ctx := context.Background()
	store := objstore.NewMem()
	const logDir = "sales/_delta_log"

	state := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &actions.Metadata{
			ID:           "0b5b3e7a-5c1e-4bd2-9f44-6c2a1b0d9e11",
			Format:       actions.Format{Provider: "parquet"},
			SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		}},
		{Add: &actions.Add{Path: "part-0.parquet", Size: 512, ModificationTime: 1700000000000,
			Stats: `{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}}`}},
		{Add: &actions.Add{Path: "part-1.parquet", Size: 498, ModificationTime: 1700000000500}},
		{Txn: &actions.Txn{AppID: "ingest", Version: 42}},
	}
	lc, err := checkpoint.Write(ctx, store, logDir, 7, slice(state))
	if err != nil {
		fmt.Println("write:", err)
		return
	}
	if err := checkpoint.WriteLast(ctx, store, logDir, lc); err != nil {
		fmt.Println("write hint:", err)
		return
	}

	hint, err := checkpoint.ReadLast(ctx, store, logDir)
	if err != nil || hint == nil {
		fmt.Println("read hint:", hint, err)
		return
	}
	fmt.Printf("hint: version %d, %d actions, %d files\n", hint.Version, hint.Size, *hint.NumOfAddFiles)

	parts := []checkpoint.Part{{Key: logDir + "/" + checkpoint.ClassicName(hint.Version)}}
	for a, err := range checkpoint.Read(ctx, store, parts, checkpoint.WithoutStats()) {
		if err != nil {
			fmt.Println("read:", err)
			return
		}
		switch {
		case a.Add != nil:
			fmt.Println("add", a.Add.Path, a.Add.Size)
		case a.Txn != nil:
			fmt.Println("txn", a.Txn.AppID, a.Txn.Version)
		default:
			fmt.Println(a.Kind())
		}
	}
	// Output:
	// hint: version 7, 5 actions, 2 files
	// protocol
	// metaData
	// add part-0.parquet 512
	// add part-1.parquet 498
	// txn ingest 42
}

func slice(as []actions.Action) iter.Seq2[actions.Action, error] {
	return func(yield func(actions.Action, error) bool) {
		for _, a := range as {
			if !yield(a, nil) {
				return
			}
		}
	}
}
