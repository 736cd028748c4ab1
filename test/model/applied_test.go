package model

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// An idempotent write that finds its app version applied reports
// AlreadyApplied, writes nothing, and its result's Snapshot is the table
// it read (CommitResult.Snapshot: "For an AlreadyApplied result it is the
// read snapshot plus the winners seen"), so a writer can go on from it as
// from any other result.
func TestAlreadyAppliedResultHasSnapshot(t *testing.T) {
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
	batch := []row{{ID: 1, P: "a", V: 1}}
	res, err := writer.Append(ctx, snap, batchOf(batch), writer.WithCommitOptions(deltalog.WithAppTransaction("ingest", 7)))
	if err != nil {
		t.Fatal(err)
	}
	after, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := after.TxnVersion("ingest"); !ok || v != 7 {
		t.Fatalf("TxnVersion(ingest) = %d, %v after the commit; want 7", v, ok)
	}

	// The same batch again, from the new snapshot and from the old one:
	// both are already applied and land nothing.
	for name, from := range map[string]*deltalog.Snapshot{"new snapshot": after, "old snapshot": snap} {
		again, err := writer.Append(ctx, from, batchOf(batch), writer.WithCommitOptions(deltalog.WithAppTransaction("ingest", 7)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !again.AlreadyApplied {
			t.Fatalf("%s: the same app version committed again at version %d", name, again.Version)
		}
		s, err := again.Snapshot()
		if err != nil {
			t.Errorf("%s: Snapshot of an already-applied result: %v", name, err)
			continue
		}
		if s.Version() != again.Version || s.NumFiles() != 1 {
			t.Errorf("%s: Snapshot of an already-applied result: version %d with %d files, want version %d with 1", name, s.Version(), s.NumFiles(), again.Version)
		}
	}
	latest, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version() != 1 || latest.NumFiles() != 1 {
		t.Fatalf("table at version %d with %d files, want version 1 with 1", latest.Version(), latest.NumFiles())
	}
}
