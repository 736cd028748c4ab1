package cdc

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
)

// vacuumer vacuums one source table's silver, and bronze when asked,
// every interval.
type vacuumer struct {
	cfg    VacuumConfig
	silver *Silver // the stage: its tables and application id
	log    *slog.Logger
}

func (v *vacuumer) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v.once(ctx)
	}
}

// once vacuums silver, then bronze when asked; a failure is logged and
// the next interval tries again.
func (v *vacuumer) once(ctx context.Context) {
	if err := v.vacuum(ctx, "silver", v.silver.Silver, v.cfg.Retention); err != nil && ctx.Err() == nil {
		v.log.Warn("vacuum failed; the next interval tries again", "layer", "silver", "err", err)
	}
	if !v.cfg.Bronze {
		return
	}
	retention, err := v.bronzeRetention(ctx)
	if err == nil {
		err = v.vacuum(ctx, "bronze", v.silver.Bronze, retention)
	}
	if err != nil && ctx.Err() == nil {
		v.log.Warn("vacuum failed; the next interval tries again", "layer", "bronze", "err", err)
	}
}

// vacuum vacuums the table in store with the retention (0: the table's).
func (v *vacuumer) vacuum(ctx context.Context, name string, store objstore.Store, retention time.Duration) error {
	snap, err := deltalog.Open(ctx, store, "")
	if errors.Is(err, deltalog.ErrNotTable) {
		return nil // not created yet
	}
	if err != nil {
		return err
	}
	var opts []maintenance.VacuumOption
	if retention > 0 {
		opts = append(opts, maintenance.Retain(retention))
	}
	res, err := maintenance.Vacuum(ctx, snap, opts...)
	if err != nil {
		return err
	}
	v.log.Info("vacuumed", "layer", name, "files_deleted", len(res.Files), "bytes_deleted", res.Bytes,
		"cutoff", res.Cutoff.UTC().Format(time.RFC3339), "version", res.EndVersion)
	for _, c := range []*deltalog.CommitResult{res.StartCommit, res.EndCommit} {
		if err := c.WaitHooks(); err != nil {
			v.log.Warn("post-commit work failed (the commit stands)", "layer", name, "err", err)
		}
	}
	return nil
}

// bronzeRetention is the retention of bronze's VACUUM: the configured
// one (or bronze's own), stretched to keep the files of every bronze
// version silver has yet to read. Silver reads them through the change
// feed; auto compaction removed them after their version was committed,
// and VACUUM keeps what was removed inside the window.
func (v *vacuumer) bronzeRetention(ctx context.Context) (time.Duration, error) {
	snap, err := deltalog.Open(ctx, v.silver.Bronze, "")
	if err != nil {
		return 0, err
	}
	retention := v.cfg.Retention
	if retention == 0 {
		retention = snap.Properties().DeletedFileRetention
	}
	pos, err := v.silver.position(ctx)
	if err != nil {
		return 0, err
	}
	at, err := deltalog.Open(ctx, v.silver.Bronze, "", deltalog.AtVersion(min(pos.Version, snap.Version())))
	if err != nil {
		return 0, err
	}
	// An hour more than silver's lag: silver reads on while VACUUM lists.
	return max(retention, time.Since(at.Timestamp())+time.Hour), nil
}
