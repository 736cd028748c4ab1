package maintenance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestEnableRowTrackingAfterCheckpoint: enabling row tracking on a table
// whose files are known from a checkpoint backfills them from the
// checkpoint's stats (their numRecords), and every row gets an ID.
func TestEnableRowTrackingAfterCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, statsForm := range []map[string]string{
		nil, // stats as JSON, the default
		{"delta.checkpoint.writeStatsAsStruct": "true", "delta.checkpoint.writeStatsAsJson": "false"},
	} {
		store := objstore.NewMem()
		tabletest.Create(t, store, "id long, v string", statsForm)
		tabletest.AppendTo(t, store, `[{"id":1,"v":"a"},{"id":2,"v":"b"}]`)
		snap := tabletest.AppendTo(t, store, `[{"id":3,"v":"c"}]`)
		if _, err := snap.Checkpoint(ctx, snap.Timestamp()); err != nil {
			t.Fatal(err)
		}
		snap = tabletest.Open(t, store) // from the checkpoint: stats not loaded
		if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableRowTracking": "true"}); err != nil {
			t.Fatalf("stats %v: enable row tracking after a checkpoint: %v", statsForm, err)
		}
		after := tabletest.Open(t, store)
		if !after.Config().RowTracking() {
			t.Fatalf("row tracking is not enabled: protocol %+v", after.Protocol())
		}
		lines := tabletest.ScanLines(t, after, reader.WithRowTracking())
		seen := map[string]bool{}
		for _, l := range lines {
			i := strings.Index(l, `"_row_id":`)
			if i < 0 || strings.Contains(l, `"_row_id":null`) {
				t.Fatalf("row without an ID: %s", l)
			}
			id := l[i:]
			if seen[id] {
				t.Fatalf("row ID given twice: %s", l)
			}
			seen[id] = true
		}
		if len(lines) != 3 {
			t.Fatalf("%d rows, want 3", len(lines))
		}
	}
}

// TestRestoreBeforeRename: RESTORE of a column-mapped table to a version
// before a rename (and a drop and a re-add) restores that version's schema
// and rows, and keeps delta.columnMapping.maxColumnId where it was, as
// Spark does: a column added afterwards gets an id never used before.
func TestRestoreBeforeRename(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "a long, x long", map[string]string{"delta.columnMapping.mode": "name"})
	target := tabletest.AppendTo(t, store, `[{"a":1,"x":10},{"a":2,"x":20}]`)
	want := tabletest.ScanLines(t, target)
	if _, err := schema.RenameColumn(ctx, tabletest.Open(t, store), "a", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.DropColumns(ctx, tabletest.Open(t, store), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	col, err := schema.ParseColumn("x long")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.AddColumns(ctx, tabletest.Open(t, store), []schema.Column{col}); err != nil {
		t.Fatal(err)
	}
	before := tabletest.Open(t, store)
	maxID := before.Properties().ColumnMappingMaxColumnID
	if _, err := maintenance.Restore(ctx, before, maintenance.ToVersion(target.Version())); err != nil {
		t.Fatalf("restore to version %d, before the rename: %v", target.Version(), err)
	}
	after := tabletest.Open(t, store)
	if got := actions.FormatDDL(after.Schema()); got != "a long, x long" {
		t.Errorf("restored schema %s, want a long, x long", got)
	}
	tabletest.DiffLines(t, "restored rows", tabletest.ScanLines(t, after), want)
	if got := after.Properties().ColumnMappingMaxColumnID; got != maxID {
		t.Errorf("maxColumnId %d after the restore, want %d kept", got, maxID)
	}
	// A column added now gets an id above every id ever given.
	col, _ = schema.ParseColumn("y long")
	if _, err := schema.AddColumns(ctx, after, []schema.Column{col}); err != nil {
		t.Fatal(err)
	}
	if id, _ := tabletest.Open(t, store).Schema().Field("y").FieldID(); id <= maxID {
		t.Errorf("new column id %d, want above %d", id, maxID)
	}
	_ = deltalog.OpRestore
}

// TestEnableRowTrackingResumes: when the backfill of enabling row
// tracking cannot finish (its commit fails), the protocol upgrade that
// committed stays, no row has an ID yet and the property is not set; the
// next ALTER resumes the backfill and finishes, and every row gets an ID.
func TestEnableRowTrackingResumes(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	tabletest.Create(t, mem, "id long", nil)
	tabletest.AppendTo(t, mem, `[{"id":1},{"id":2}]`)
	tabletest.AppendTo(t, mem, `[{"id":3}]`)
	// Version 3 is the protocol upgrade, version 4 the backfill: fail
	// every attempt to create version 4.
	faulty := objstore.Faulty(mem, objstore.FailMatching(objstore.OpPut, "tbl/_delta_log/00000000000000000004.json", errors.New("the store is down")))
	snap, err := deltalog.Open(ctx, faulty, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableRowTracking": "true"}); err == nil {
		t.Fatal("enabling row tracking succeeded while its backfill could not commit")
	}
	half := tabletest.Open(t, mem)
	if half.Version() != 3 || half.Config().RowTracking() || !half.Config().AssignsRowIDs() {
		t.Fatalf("after the failed backfill: version %d, row tracking %v, assigns IDs %v; want version 3 with the upgrade only", half.Version(), half.Config().RowTracking(), half.Config().AssignsRowIDs())
	}
	if _, err := maintenance.SetProperties(ctx, half, map[string]string{"delta.enableRowTracking": "true"}); err != nil {
		t.Fatalf("the next ALTER did not resume the backfill: %v", err)
	}
	after := tabletest.Open(t, mem)
	if !after.Config().RowTracking() {
		t.Fatal("row tracking not enabled after the resumed backfill")
	}
	for _, l := range tabletest.ScanLines(t, after, reader.WithRowTracking()) {
		if strings.Contains(l, `"_row_id":null`) {
			t.Fatalf("row without an ID: %s", l)
		}
	}
}

// TestEnableInCommitTimestamps: enabling in-commit timestamps on an
// existing table (as Spark's ALTER TABLE does) records, in that commit,
// its own version and timestamp as where they begin; that commit and
// every later one carry an increasing inCommitTimestamp, the protocol
// gets the feature, and time travel by timestamp finds each version.
func TestEnableInCommitTimestamps(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	tabletest.AppendTo(t, store, `[{"id":1}]`)
	res, err := maintenance.SetProperties(ctx, tabletest.Open(t, store), map[string]string{"delta.enableInCommitTimestamps": "true"})
	if err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Open(t, store)
	p := snap.Properties()
	if !p.EnableInCommitTimestamps || p.InCommitTimestampEnablementVersion != res.Version || p.InCommitTimestampEnablementTimestamp <= 0 {
		t.Fatalf("enablement: %+v at version %d", p, res.Version)
	}
	if !snap.Config().Enabled(actions.FeatureInCommitTimestamp) {
		t.Fatalf("protocol %+v lacks inCommitTimestamp", snap.Protocol())
	}
	for range 3 {
		tabletest.AppendTo(t, store, `[{"id":2}]`)
	}
	last := int64(0)
	for c, err := range deltalog.Commits(ctx, store, tabletest.Root, res.Version, tabletest.Open(t, store).Version()) {
		if err != nil {
			t.Fatal(err)
		}
		ict := c.CommitInfo.InCommitTimestamp
		if ict == nil || *ict <= last {
			t.Fatalf("version %d: inCommitTimestamp %v after %d", c.Version, ict, last)
		}
		if c.Version == res.Version && *ict != p.InCommitTimestampEnablementTimestamp {
			t.Fatalf("the enablement commit's timestamp %d, the property's %d", *ict, p.InCommitTimestampEnablementTimestamp)
		}
		last = *ict
		at, err := deltalog.Open(ctx, store, tabletest.Root, deltalog.AtTimestamp(time.UnixMilli(*ict)))
		if err != nil || at.Version() != c.Version {
			t.Fatalf("time travel to %d: %v, version %v; want %d", *ict, err, at, c.Version)
		}
	}
}
