package uniform_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/uniform"
	"github.com/lakelog/lakelog/writer"
)

// manualHook stands in for the converter that importing uniform
// registers: the tests of this package convert by hand (Sync, Convert)
// at the versions they choose, except the hook's own tests, which give
// the real one to their commits (deltalog.WithHooks).
type manualHook struct{}

func (manualHook) Name() string                                  { return deltalog.HookIceberg }
func (manualHook) Run(context.Context, *deltalog.Snapshot) error { return nil }

func TestMain(m *testing.M) {
	deltalog.RegisterHook(manualHook{})
	os.Exit(m.Run())
}

// TestHookConvertsEveryOperation: with the converter as a post-commit
// hook, an append, a DELETE and an overwrite through the Go API each
// leave the Iceberg metadata at their version, with the rows Delta has,
// and nothing but the commit is asked of the caller.
func TestHookConvertsEveryOperation(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema)
	hooks := deltalog.WithHooks(uniform.Hook())
	r := rand.New(rand.NewPCG(7, 8))
	var next int64
	check := func(what string, res *deltalog.CommitResult) {
		t.Helper()
		if err := res.WaitHooks(); err != nil {
			t.Fatalf("%s: hook: %v", what, err)
		}
		snap := tabletest.Open(t, store)
		got, md := icebergLines(t, metadataOf(t, store), nil)
		tabletest.DiffLines(t, what+": iceberg-go rows", got, tabletest.ScanLines(t, snap))
		if v := md.Properties()[uniform.PropDeltaVersion]; v != fmtInt(snap.Version()) {
			t.Fatalf("%s: Iceberg metadata at Delta version %s, want %d", what, v, snap.Version())
		}
	}
	snap := tabletest.Open(t, store)
	res, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, randomRows(r, &next, 20))), writer.WithCommitOptions(hooks))
	if err != nil {
		t.Fatal(err)
	}
	check("append", res)
	pred, err := expr.Parse("id % 3 = 0")
	if err != nil {
		t.Fatal(err)
	}
	dres, err := dml.Delete(ctx, tabletest.Open(t, store), pred, dml.WithCommitOptions(hooks))
	if err != nil {
		t.Fatal(err)
	}
	check("delete", dres.CommitResult)
	snap = tabletest.Open(t, store)
	res, err = writer.Overwrite(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, randomRows(r, &next, 5))), writer.WithCommitOptions(hooks))
	if err != nil {
		t.Fatal(err)
	}
	check("overwrite", res)
}

// TestHookFailureKeepsTheCommit: a converter that fails leaves the commit
// standing and reports a *deltalog.HookError; the next commit's hook
// catches up the version that failed.
func TestHookFailureKeepsTheCommit(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(9, 10))
	var next int64
	snap := tabletest.Open(t, store)
	res, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, randomRows(r, &next, 5))),
		writer.WithCommitOptions(deltalog.WithHooks(failingHook{})))
	if err != nil {
		t.Fatalf("a failing hook failed the commit: %v", err)
	}
	var he *deltalog.HookError
	if err := res.WaitHooks(); !errors.As(err, &he) || he.Version != res.Version || he.Hook != deltalog.HookIceberg {
		t.Fatalf("WaitHooks = %v, want a HookError of version %d", err, res.Version)
	}
	if got := tabletest.Open(t, store).Version(); got != res.Version {
		t.Fatalf("table at version %d, want the commit's %d", got, res.Version)
	}
	snap = tabletest.Open(t, store)
	res, err = writer.Append(ctx, snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, randomRows(r, &next, 5))),
		writer.WithCommitOptions(deltalog.WithHooks(uniform.Hook()), deltalog.WithPostCommit(deltalog.PostCommitSync)))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	got, _ := icebergLines(t, metadataOf(t, store), nil)
	tabletest.DiffLines(t, "rows after the catch-up", got, tabletest.ScanLines(t, tabletest.Open(t, store)))
}

type failingHook struct{}

func (failingHook) Name() string { return deltalog.HookIceberg }
func (failingHook) Run(context.Context, *deltalog.Snapshot) error {
	return errors.New("the catalog is down")
}

func fmtInt(v int64) string { return strconv.FormatInt(v, 10) }
