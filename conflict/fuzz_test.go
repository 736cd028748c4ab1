package conflict_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/expr"
)

// FuzzCheck feeds arbitrary winning commits to Check: it must not panic,
// and must answer nil or a *conflict.Error with the winner's version.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"commitInfo":{"operation":"WRITE","isBlindAppend":true}}
{"add":{"path":"country=nl/x.parquet","partitionValues":{"country":"nl"},"size":1,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1,\"minValues\":{\"id\":5},\"maxValues\":{\"id\":5}}"}}`,
		`{"remove":{"path":"country=nl/a.parquet","dataChange":true}}`,
		`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["x"],"writerFeatures":["x"]}}`,
		`{"txn":{"appId":"app1","version":3}}`,
		`{"add":{"path":"%zz","partitionValues":{"country":null},"size":1,"modificationTime":1,"dataChange":true,"stats":"{\"minValues\":{\"id\":\"oops\"}}"}}`,
	} {
		f.Add([]byte(seed))
	}
	tbl := layouts["part"].table()
	f.Fuzz(func(t *testing.T, commit []byte) {
		acts, err := actions.ParseCommit(bytes.NewReader(commit))
		if err != nil {
			return
		}
		for _, iso := range []conflict.Isolation{conflict.Serializable, conflict.WriteSerializable} {
			where, err := expr.Parse("country = 'nl' AND id > 3")
			if err != nil {
				t.Fatal(err)
			}
			where, err = expr.BindPredicate(where, tbl.Schema())
			if err != nil {
				t.Fatal(err)
			}
			tx := &conflict.Txn{
				ReadVersion: 10, Isolation: iso, ReadProtocol: readProtocol,
				ReadPredicates: []expr.Expr{where},
				ReadFiles:      []string{"country=nl/a.parquet"},
				ReadAppIDs:     []string{"app1"},
				Actions:        []actions.Action{{Remove: &actions.Remove{Path: "country=nl/a.parquet", DataChange: true}}},
			}
			err = conflict.Check(tx, tbl, conflict.Winner{Version: 11, Actions: acts})
			if err == nil {
				continue
			}
			var ce *conflict.Error
			if !errors.As(err, &ce) || ce.WinningVersion != 11 || !errors.Is(err, conflict.ErrConflict) {
				t.Fatalf("Check = %v", err)
			}
			_ = ce.Error()
		}
	})
}
