package deltalog

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
)

// Row tracking (PROTOCOL.md "Row Tracking"): on a table whose protocol
// supports the rowTracking writer feature every add carries a baseRowId
// (the row ID of its first row; row i of the file has baseRowId + i unless
// the file materializes another) and a defaultRowCommitVersion. The commit
// loop assigns both, on every attempt, to the adds that lack them: fresh
// IDs above the table's high-water mark, which the commit raises in the
// delta.rowTracking domain ({"rowIdHighWaterMark": N}, the highest ID
// given). A loser rebasing over a winner continues above the winner's
// mark, so no ID is given twice and none is reused (Spark's
// RowId.assignFreshRowIds on each attempt). Adds that already carry a
// baseRowId (a file re-added with a deletion vector, a restored file,
// Spark's backfill) keep it and their commit version.

// RowTrackingDomain is the system domain of the row ID high-water mark.
const RowTrackingDomain = "delta.rowTracking"

// rowTrackingConfig is the configuration of RowTrackingDomain.
type rowTrackingConfig struct {
	RowIDHighWaterMark *int64 `json:"rowIdHighWaterMark"`
}

// RowIDHighWaterMark is the highest row ID the table has given, -1 when it
// has given none (no delta.rowTracking domain). A domain that does not
// decode is ErrLogCorrupt.
func (s *Snapshot) RowIDHighWaterMark() (int64, error) {
	d, ok := s.domains[RowTrackingDomain]
	if !ok {
		return -1, nil
	}
	return parseHighWaterMark(d.Configuration)
}

func parseHighWaterMark(conf string) (int64, error) {
	var c rowTrackingConfig
	if err := json.Unmarshal([]byte(conf), &c); err != nil || c.RowIDHighWaterMark == nil {
		return 0, fmt.Errorf("%w: domain %s configuration %q is not {\"rowIdHighWaterMark\": N}", ErrLogCorrupt, RowTrackingDomain, conf)
	}
	return *c.RowIDHighWaterMark, nil
}

// RowTrackingSupported reports whether writers must assign row IDs: the
// protocol supports the rowTracking feature (delta.enableRowTracking then
// says whether readers may rely on them).
func (s *Snapshot) RowTrackingSupported() bool {
	return s.config.AssignsRowIDs()
}

// RowTrackingEnabled reports whether the table's row IDs and row commit
// versions are complete (delta.enableRowTracking=true on a protocol that
// supports the feature): readers expose them as _metadata.row_id and
// _metadata.row_commit_version.
func (s *Snapshot) RowTrackingEnabled() bool {
	return s.config.RowTracking()
}

// rowTracked reports whether the commit must assign row IDs: the protocol
// it leaves supports the feature.
func (tx *Transaction) rowTracked() bool {
	c, err := tx.config()
	return err == nil && c.AssignsRowIDs()
}

// startHighWaterMark is the mark the first attempt builds on: the read
// snapshot's.
func (tx *Transaction) startHighWaterMark() (int64, error) {
	if tx.snap == nil {
		return -1, nil
	}
	return tx.snap.RowIDHighWaterMark()
}

// winnerHighWaterMark raises hwm to a winning commit's mark, if it wrote one.
func winnerHighWaterMark(hwm int64, winner []actions.Action) (int64, error) {
	for _, a := range winner {
		if d := a.DomainMetadata; d != nil && d.Domain == RowTrackingDomain && !d.Removed {
			w, err := parseHighWaterMark(d.Configuration)
			if err != nil {
				return 0, err
			}
			hwm = max(hwm, w)
		}
	}
	return hwm, nil
}

// assignRowIDs returns acts with row IDs given for version above hwm: each
// add without a baseRowId gets the next numRecords IDs, each add without
// a defaultRowCommitVersion gets version, and, when any ID was given, the
// delta.rowTracking domain with the new mark is appended. Adds are copied,
// never changed in place: the next attempt assigns again from its own mark.
func assignRowIDs(acts []actions.Action, hwm, version int64) ([]actions.Action, error) {
	out := make([]actions.Action, len(acts), len(acts)+1)
	next := hwm + 1
	given := false
	for i, a := range acts {
		out[i] = a
		add := a.Add
		if add == nil || (add.BaseRowID != nil && add.DefaultRowCommitVersion != nil) {
			continue
		}
		c := *add
		if c.BaseRowID == nil {
			n, err := addNumRecords(&c)
			if err != nil {
				return nil, err
			}
			base := next
			c.BaseRowID = &base
			next += n
			given = true
		}
		if c.DefaultRowCommitVersion == nil {
			v := version
			c.DefaultRowCommitVersion = &v
		}
		out[i].Add = &c
	}
	if given {
		mark := next - 1
		conf, err := json.Marshal(rowTrackingConfig{RowIDHighWaterMark: &mark})
		if err != nil {
			return nil, err
		}
		out = append(out, actions.Action{DomainMetadata: &actions.DomainMetadata{Domain: RowTrackingDomain, Configuration: string(conf)}})
	}
	return out, nil
}

// addNumRecords is an add's row count from its stats, which row tracking
// requires (a file's row IDs are baseRowId + its physical row index).
func addNumRecords(add *actions.Add) (int64, error) {
	st, err := actions.ParseStats(add.Stats)
	if err != nil {
		return 0, fmt.Errorf("row tracking: add %s: %w", add.Path, err)
	}
	if st == nil || st.NumRecords < 0 {
		return 0, fmt.Errorf("row tracking: add %s has no numRecords in its stats; row IDs cannot be assigned without it", add.Path)
	}
	return st.NumRecords, nil
}

// MaterializedRowTrackingNames returns conf with the names of row
// tracking's hidden columns (delta.rowTracking.materializedRowIdColumnName
// and ...RowCommitVersionColumnName) set where absent, as Spark names them
// when the protocol first supports the feature: "_row-id-col-<uuid>" and
// "_row-commit-version-col-<uuid>". conf is not changed; the result is a
// copy when anything was added.
func MaterializedRowTrackingNames(conf map[string]string) map[string]string {
	_, idOK := conf[actions.PropMaterializedRowIDName]
	_, verOK := conf[actions.PropMaterializedRowCommitVersionName]
	if idOK && verOK {
		return conf
	}
	out := maps.Clone(conf)
	if out == nil {
		out = map[string]string{}
	}
	if !idOK {
		out[actions.PropMaterializedRowIDName] = "_row-id-col-" + uuid.NewString()
	}
	if !verOK {
		out[actions.PropMaterializedRowCommitVersionName] = "_row-commit-version-col-" + uuid.NewString()
	}
	return out
}
