package deltalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// TestHookNotLinked: a commit to a table whose configuration needs a
// hook the program does not link (auto compaction, UniForm's Iceberg
// metadata) lands, and its WaitHooks reports ErrHookNotLinked naming the
// property and the package that links the hook; with the hook linked
// nothing is reported.
func TestHookNotLinked(t *testing.T) {
	registered.Lock()
	saved := registered.hooks
	registered.hooks = nil // as a program that imports neither maintenance nor uniform
	registered.Unlock()
	t.Cleanup(func() {
		registered.Lock()
		registered.hooks = saved
		registered.Unlock()
	})
	ctx := context.Background()
	md := &actions.Metadata{
		SchemaString:  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		Configuration: map[string]string{actions.PropAutoCompact: "TRUE"},
	}
	tx, err := Create(objstore.NewMem(), "", md, WithPostCommit(PostCommitSync))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatalf("the commit must land whatever its hooks do: %v", err)
	}
	err = res.WaitHooks()
	var he *HookError
	if !errors.Is(err, ErrHookNotLinked) || !errors.As(err, &he) || he.Hook != HookAutoCompact {
		t.Fatalf("WaitHooks = %v, want a *HookError of %q wrapping ErrHookNotLinked", err, HookAutoCompact)
	}
	for _, want := range []string{actions.PropAutoCompact, "lakelog/maintenance"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	// Linked, the same commit reports nothing.
	RegisterHook(nopHook{HookAutoCompact})
	snap, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tx = snap.NewTransaction(WithPostCommit(PostCommitSync))
	tx.SetOperation("SET TBLPROPERTIES", nil, nil)
	md2 := *snap.Metadata()
	md2.Configuration = map[string]string{actions.PropAutoCompact: "true"}
	if err := tx.SetMetadata(&md2); err != nil {
		t.Fatal(err)
	}
	if res, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := res.WaitHooks(); err != nil {
		t.Fatalf("with the hook linked: %v", err)
	}
	if got := neededHooks(snap.Config()); len(got) != 1 || got[0] != HookAutoCompact {
		t.Fatalf("neededHooks = %v", got)
	}
}

type nopHook struct{ name string }

func (h nopHook) Name() string                       { return h.name }
func (nopHook) Run(context.Context, *Snapshot) error { return nil }
