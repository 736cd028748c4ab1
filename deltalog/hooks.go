package deltalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// PostCommitHook is work that follows a commit once it has landed and is
// never part of it (delta-rs's PostCommitHook): the checkpoint the
// interval asks for, the symlink manifest, the Iceberg metadata of a
// UniForm table. Every commit of every operation runs the hooks, in the
// library, so that a program that links lakelog gets them as the CLI
// does: the built-in ones (checkpoint, symlink manifest), those
// registered for the process (RegisterHook: package uniform registers
// its converter when it is imported) and those given to the commit
// (WithHooks). A hook decides from the snapshot's configuration whether
// it has work. A failing hook never fails the commit: its error is
// reported as a *HookError (CommitResult.WaitHooks), and the hook must be
// one the next commit retries (it catches up from what it finds, not
// from this commit alone).
type PostCommitHook interface {
	// Name names the hook in errors (HookCheckpoint, HookIceberg, ...);
	// a hook registered under a name replaces the one before it.
	Name() string
	// Run does the hook's work for snap, the table as of the commit.
	Run(ctx context.Context, snap *Snapshot) error
}

// CommitHook is a PostCommitHook that is given the commit's own actions
// too (Spark's PostCommitHook gets them): auto compaction compacts the
// partitions the commit wrote. A commit runs RunCommit instead of Run.
type CommitHook interface {
	PostCommitHook
	RunCommit(ctx context.Context, snap *Snapshot, committed []actions.Action) error
}

// The names of the hooks lakelog has.
const (
	HookCheckpoint      = "checkpoint"
	HookSymlinkManifest = "symlink manifest"
	HookIceberg         = "Iceberg metadata"
	HookAutoCompact     = "auto compaction"
)

// HookError is a post-commit hook that failed after the commit at
// Version landed: the commit stands.
type HookError struct {
	Hook    string
	Version int64
	Err     error
}

func (e *HookError) Error() string {
	return fmt.Sprintf("deltalog: %s after version %d failed (the commit stands; the next commit retries it): %v", e.Hook, e.Version, e.Err)
}

func (e *HookError) Unwrap() error { return e.Err }

// ErrHookNotLinked is a hook the table needs but the program does not
// have: a UniForm table written by a program that does not import
// package uniform (which registers HookIceberg), a table with auto
// compaction written by one that does not import package maintenance
// (HookAutoCompact).
var ErrHookNotLinked = errors.New("the program does not link the hook this table needs")

var registered struct {
	sync.Mutex
	hooks []PostCommitHook
}

// RegisterHook adds a hook that every commit of the process runs after
// the built-in ones, replacing one of the same name. Packages that
// implement a hook a table may need register it when they are imported
// (uniform's init), as database/sql drivers register themselves.
func RegisterHook(h PostCommitHook) {
	registered.Lock()
	defer registered.Unlock()
	registered.hooks = slices.DeleteFunc(registered.hooks, func(o PostCommitHook) bool { return o.Name() == h.Name() })
	registered.hooks = append(registered.hooks, h)
}

// hooks are the hooks the commit runs, in order: the built-in ones, the
// registered ones, the commit's own.
func (tx *Transaction) hooks() []PostCommitHook {
	registered.Lock()
	reg := slices.Clone(registered.hooks)
	registered.Unlock()
	hs := []PostCommitHook{checkpointHook{now: tx.cfg.now}, manifestHook{}}
	hs = append(hs, reg...)
	return append(hs, tx.cfg.hooks...)
}

// neededHooks are the hooks a table's configuration asks every commit to
// run, which the program must link.
func neededHooks(c *actions.TableConfig) []string {
	var out []string
	if c.UniversalFormat("iceberg") {
		out = append(out, HookIceberg)
	}
	if c.AutoCompact() {
		out = append(out, HookAutoCompact)
	}
	return out
}

// notLinkedHints say, per needed hook, which property asks for it and
// how a program links it.
var notLinkedHints = map[string][2]string{
	HookIceberg:     {actions.PropUniversalFormatEnabledFormats, "import github.com/lakelog/lakelog/uniform, or run lakelog uniform sync"},
	HookAutoCompact: {actions.PropAutoCompact, "import github.com/lakelog/lakelog/maintenance, or run lakelog optimize"},
}

// runHooks starts the post-commit hooks of res's commit as the mode
// asks; their outcome is res.WaitHooks'.
func (tx *Transaction) runHooks(ctx context.Context, res *CommitResult) {
	if tx.cfg.postCommit == PostCommitOff {
		return
	}
	hooks := tx.hooks()
	res.hooks = make(chan error, 1)
	run := func(ctx context.Context) {
		snap, err := res.Snapshot()
		if err != nil {
			res.hooks <- &HookError{Hook: "post-commit snapshot", Version: res.Version, Err: err}
			return
		}
		var errs []error
		for _, name := range neededHooks(snap.Config()) {
			if !slices.ContainsFunc(hooks, func(h PostCommitHook) bool { return h.Name() == name }) {
				errs = append(errs, &HookError{Hook: name, Version: res.Version, Err: fmt.Errorf("%w: the table enables it (%s); %s", ErrHookNotLinked, notLinkedHints[name][0], notLinkedHints[name][1])})
			}
		}
		committed := res.applied[len(res.applied)-1]
		for _, h := range hooks {
			run := h.Run
			if ch, ok := h.(CommitHook); ok {
				run = func(ctx context.Context, snap *Snapshot) error { return ch.RunCommit(ctx, snap, committed) }
			}
			if err := run(ctx, snap); err != nil {
				errs = append(errs, &HookError{Hook: h.Name(), Version: res.Version, Err: err})
			}
		}
		res.hooks <- errors.Join(errs...)
	}
	if tx.cfg.postCommit == PostCommitSync {
		run(ctx)
		return
	}
	go run(context.WithoutCancel(ctx))
}

// checkpointHook writes the checkpoint delta.checkpointInterval asks for
// (every interval versions, not version 0), then cleans up the log.
type checkpointHook struct{ now func() time.Time }

func (checkpointHook) Name() string { return HookCheckpoint }

func (h checkpointHook) Run(ctx context.Context, snap *Snapshot) error {
	if snap.version == 0 || snap.version%snap.CheckpointInterval() != 0 {
		return nil
	}
	return snap.CheckpointAndCleanup(ctx, h.now())
}

// manifestHook regenerates the symlink manifest of a table with
// delta.compatibility.symlinkFormatManifest.enabled.
type manifestHook struct{}

func (manifestHook) Name() string { return HookSymlinkManifest }

func (manifestHook) Run(ctx context.Context, snap *Snapshot) error {
	if !snap.config.SymlinkManifest() {
		return nil
	}
	return snap.WriteSymlinkManifest(ctx)
}
