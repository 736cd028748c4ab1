package uniform

import (
	"context"

	"github.com/lakelog/lakelog/deltalog"
)

// Importing uniform registers its converter as the post-commit hook of
// UniForm tables (deltalog.HookIceberg): every commit of every operation
// of a program that links this package, to a table with
// delta.universalFormat.enabledFormats=iceberg, brings the table's
// Iceberg metadata up to the commit. A commit to such a table from a
// program that does not link it reports deltalog.ErrHookNotLinked (the
// commit stands; lakelog uniform sync catches up).
func init() { deltalog.RegisterHook(Hook()) }

// Hook is the post-commit hook that converts a UniForm table's commits to
// Iceberg metadata (Convert). Its failure never fails the commit, and the
// next commit's run, or Sync, catches up from the version the Iceberg
// metadata is at.
func Hook(opts ...Option) deltalog.PostCommitHook { return hook{opts: opts} }

type hook struct{ opts []Option }

func (hook) Name() string { return deltalog.HookIceberg }

func (h hook) Run(ctx context.Context, snap *deltalog.Snapshot) error {
	if !snap.Config().UniversalFormat("iceberg") {
		return nil
	}
	if snap.Timestamp().IsZero() {
		// The snapshot a commit derives does not know its commit's time
		// (the file's, when the table has no in-commit timestamps), which
		// Iceberg's snapshot records: read it from the log.
		var err error
		if snap, err = deltalog.Open(ctx, snap.Store(), snap.Root(), deltalog.AtVersion(snap.Version())); err != nil {
			return err
		}
	}
	_, err := Convert(ctx, snap, h.opts...)
	return err
}
