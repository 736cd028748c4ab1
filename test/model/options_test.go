package model

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestCommitOptionsEveryOperation: the same deltalog.CommitOption values
// reach the commit of every operation that changes a table: the app
// transaction is recorded (and a second run with the same version is
// AlreadyApplied and commits nothing), the operation parameters and user
// metadata are in commitInfo, and an app transaction without an id is
// refused before anything is written.
func TestCommitOptionsEveryOperation(t *testing.T) {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	parse := func(s string) expr.Expr {
		e, err := expr.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	set := func(s string) []*expr.Assignment {
		a, err := expr.ParseAssignment(s)
		if err != nil {
			t.Fatal(err)
		}
		return []*expr.Assignment{a}
	}
	type op struct {
		name string
		run  func(snap *deltalog.Snapshot, opts ...deltalog.CommitOption) (*deltalog.CommitResult, error)
	}
	ops := []op{
		{"append", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			return writer.Append(ctx, s, tabletest.Batches(t, tabletest.Batch(t, mem, s, `[{"id":10,"p":"a","v":1}]`)), writer.WithCommitOptions(o...))
		}},
		{"overwrite", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			return writer.Overwrite(ctx, s, tabletest.Batches(t, tabletest.Batch(t, mem, s, `[{"id":1,"p":"a","v":1},{"id":2,"p":"b","v":2}]`)), writer.WithCommitOptions(o...))
		}},
		{"replaceWhere", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			return dml.ReplaceWhere(ctx, s, parse("p = 'a'"), tabletest.Batches(t, tabletest.Batch(t, mem, s, `[{"id":3,"p":"a","v":3}]`)), dml.WithCommitOptions(o...))
		}},
		{"delete", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			r, err := dml.Delete(ctx, s, parse("id = 3"), dml.WithCommitOptions(o...))
			return dmlCommit(r, err)
		}},
		{"update", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			r, err := dml.Update(ctx, s, parse("id = 2"), set("v = 20"), dml.WithCommitOptions(o...))
			return dmlCommit(r, err)
		}},
		{"merge", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			src := tabletest.Batches(t, tabletest.Batch(t, mem, s, `[{"id":2,"p":"b","v":21},{"id":4,"p":"b","v":4}]`))
			r, err := dml.Merge(ctx, s, src, parse("target.id = source.id"), []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}, dml.WithCommitOptions(o...))
			return dmlCommit(r, err)
		}},
		{"optimize", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			r, err := maintenance.Optimize(ctx, s, maintenance.OptimizeCommitOptions(o...))
			if err != nil || len(r.Commits) == 0 {
				return nil, err
			}
			return r.Commits[0], nil
		}},
		{"add column", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			col, err := schema.ParseColumn("note string")
			if err != nil {
				return nil, err
			}
			return schema.AddColumns(ctx, s, []schema.Column{col}, schema.WithCommitOptions(o...))
		}},
		{"set property", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			return maintenance.SetProperties(ctx, s, map[string]string{"owner": "ops"}, o...)
		}},
		{"restore", func(s *deltalog.Snapshot, o ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
			r, err := maintenance.Restore(ctx, s, maintenance.ToVersion(1), maintenance.RestoreCommitOptions(o...))
			if err != nil {
				return nil, err
			}
			return r.Commit, nil
		}},
	}
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, p string, v long", nil, "p")
	tabletest.AppendTo(t, store, `[{"id":1,"p":"a","v":1}]`)
	tabletest.AppendTo(t, store, `[{"id":2,"p":"b","v":2}]`)
	for i, o := range ops {
		if o.name == "optimize" { // small files for it to compact
			tabletest.AppendTo(t, store, `[{"id":5,"p":"c","v":5}]`)
			tabletest.AppendTo(t, store, `[{"id":6,"p":"c","v":6}]`)
		}
		app := "app-" + o.name
		snap := tabletest.Open(t, store)
		if _, err := o.run(snap, deltalog.WithAppTransaction("", 1)); err == nil {
			t.Fatalf("%s: an app transaction without an id was accepted", o.name)
		}
		if v := tabletest.Open(t, store).Version(); v != snap.Version() {
			t.Fatalf("%s: the refused options committed version %d", o.name, v)
		}
		opts := []deltalog.CommitOption{
			deltalog.WithAppTransaction(app, int64(i+1)),
			deltalog.WithOperationParameters(map[string]any{"by": "test"}),
			deltalog.WithUserMetadata("note " + o.name),
		}
		res, err := o.run(snap, opts...)
		if err != nil || res == nil {
			t.Fatalf("%s: %v (result %v)", o.name, err, res)
		}
		after := tabletest.Open(t, store)
		if v, ok := after.TxnVersion(app); !ok || v != int64(i+1) {
			t.Fatalf("%s: txn(%s) = %d, %v; want %d", o.name, app, v, ok, i+1)
		}
		ci := lastCommitInfo(t, store, after.Version())
		if ci.OperationParameters["by"] != "test" || ci.UserMetadata != "note "+o.name {
			t.Fatalf("%s: commitInfo %s parameters %v userMetadata %q", o.name, ci.Operation, ci.OperationParameters, ci.UserMetadata)
		}
		again, err := o.run(after, opts...)
		if err != nil || again == nil || !again.AlreadyApplied {
			t.Fatalf("%s: the same app version again: %v, %+v; want AlreadyApplied", o.name, err, again)
		}
		if v := tabletest.Open(t, store).Version(); v != after.Version() {
			t.Fatalf("%s: the applied app version committed version %d", o.name, v)
		}
	}
}

func dmlCommit(r *dml.Result, err error) (*deltalog.CommitResult, error) {
	if err != nil {
		return nil, err
	}
	return r.CommitResult, nil
}

// lastCommitInfo is the commitInfo of version v.
func lastCommitInfo(t *testing.T, store objstore.Store, v int64) *actions.CommitInfo {
	t.Helper()
	for c, err := range deltalog.Commits(context.Background(), store, tabletest.Root, v, v) {
		if err != nil {
			t.Fatal(err)
		}
		if c.CommitInfo != nil {
			return c.CommitInfo
		}
	}
	t.Fatalf("version %d has no commitInfo", v)
	return nil
}
