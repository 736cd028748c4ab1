package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

// A transaction that read the table under a predicate is not a blind
// append, even when the predicate matched no file: Spark's isBlindAppend
// is "only adds, and no read predicates and no read files". Two
// insert-if-absent MERGEs into an empty partition that read it at the same
// version must not both commit: the second meets the first's add, which
// its read predicate matches, and aborts with ConcurrentAppend. (Found by
// TestConcurrentWriters: DELETE, UPDATE and MERGE commits that read no
// file were declared blind appends.)
func TestReadPredicateIsNotBlindAppend(t *testing.T) {
	ctx := context.Background()
	st, err := objstore.NewLocal(filepath.Join(t.TempDir(), "table"))
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, st, false)
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	pred, err := expr.Parse("p = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	bound, err := expr.BindPredicate(pred, snap.Schema())
	if err != nil {
		t.Fatal(err)
	}
	mergeInsert := func(name string) *deltalog.Transaction {
		tx := snap.NewTransaction()
		tx.ReadPredicates(bound) // found nothing: partition a is empty
		a := "a"
		tx.Add(actions.Action{Add: &actions.Add{
			Path: fmt.Sprintf("p=a/%s.parquet", name), PartitionValues: map[string]*string{"p": &a},
			Size: 1, ModificationTime: 1, DataChange: true,
			Stats: `{"numRecords":1,"minValues":{"id":1,"v":1},"maxValues":{"id":1,"v":1},"nullCount":{"id":0,"v":0}}`,
		}})
		tx.SetOperation("MERGE", nil, nil)
		return tx
	}
	first, second := mergeInsert("first"), mergeInsert("second")
	res, err := first.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, err := st.Get(ctx, deltalog.LogDir+deltalog.CommitName(res.Version))
	if err != nil {
		t.Fatal(err)
	}
	commit, err := actions.ParseCommit(bytesReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range commit {
		if a.CommitInfo != nil && (a.CommitInfo.IsBlindAppend == nil || *a.CommitInfo.IsBlindAppend) {
			t.Errorf("a commit that read under a predicate has isBlindAppend %v, want false", deref(a.CommitInfo.IsBlindAppend))
		}
	}
	_, err = second.Commit(ctx)
	if !errors.Is(err, conflict.ErrConcurrentAppend) {
		t.Errorf("the second insert-if-absent: err %v, want ConcurrentAppend", err)
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
