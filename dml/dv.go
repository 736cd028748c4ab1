package dml

import (
	"encoding/json"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/deletionvector"
)

// writeDeletionVectors marks the deleted and updated rows of each touched
// file in a deletion vector holding the union with the file's current one
// (PROTOCOL.md: the remove carries the old vector, the add the new). A
// file none of whose rows are left is removed instead.
func (j *job) writeDeletionVectors(touched []*target, out *outcome) error {
	w := deletionvector.NewWriter(j.snap.Store(), j.snap.Root())
	for _, t := range touched {
		add := t.file.Add
		live := t.liveRows()
		if t.all {
			out.removed = append(out.removed, add)
			if add.DeletionVector != nil {
				j.count("dvRemoved", 1)
			}
			continue
		}
		rows := roaring64.Or(t.deleted, t.updated)
		if old := add.DeletionVector; old != nil {
			prev, err := deletionvector.Load(j.ctx, j.snap.FileStore(), j.snap.Root(), old)
			if err != nil {
				return fmt.Errorf("dml: %s: %s: %w", j.op, add.Path, err)
			}
			if roaring64.And(prev, rows).GetCardinality() > 0 {
				return fmt.Errorf("dml: %s: %s: rows already deleted by the file's deletion vector were matched", j.op, add.Path)
			}
			rows.Or(prev)
		}
		if live >= 0 && t.file.Stats != nil && int64(rows.GetCardinality()) >= t.file.Stats.NumRecords {
			out.removed = append(out.removed, add)
			if add.DeletionVector != nil {
				j.count("dvRemoved", 1)
			}
			continue
		}
		dv, err := w.Add(rows)
		if err != nil {
			return fmt.Errorf("dml: %s: %s: %w", j.op, add.Path, err)
		}
		na := *add
		na.DeletionVector = dv
		na.DataChange = true
		na.Stats = wideStats(add.Stats)
		if add.DeletionVector != nil {
			j.count("dvUpdated", 1)
		} else {
			j.count("dvAdded", 1)
		}
		out.dvAdds = append(out.dvAdds, &na)
		out.dvOld = append(out.dvOld, add)
	}
	err := w.Flush(j.ctx)
	out.dvKeys = append(out.dvKeys, w.Keys()...)
	if err != nil {
		return fmt.Errorf("dml: %s: deletion vectors: %w", j.op, err)
	}
	return nil
}

// wideStats is a file's stats JSON with tightBounds false: once rows are
// deleted through a deletion vector, the file's min and max still bound
// its live rows but need no longer be attained, and its null counts
// count deleted rows too (PROTOCOL.md, Per-file Statistics).
func wideStats(stats string) string {
	if stats == "" {
		return ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stats), &m); err != nil {
		return stats
	}
	m["tightBounds"] = json.RawMessage("false")
	b, err := json.Marshal(m)
	if err != nil {
		return stats
	}
	return string(b)
}
