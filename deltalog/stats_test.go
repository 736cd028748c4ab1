package deltalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// statsOf maps each active file's path to its stats string.
func statsOf(s *deltalog.Snapshot) map[string]string {
	out := map[string]string{}
	for f := range s.Files() {
		out[f.Path] = f.Stats
	}
	return out
}

// TestCheckpointStatsAreLoadedOnDemand: a snapshot loaded from a
// checkpoint has its files' stats once LoadStats returns, snapshots
// derived from it by later commits too, and a checkpoint written from it
// keeps every file's stats. A checkpoint written without them would
// silently end data skipping for the table.
func TestCheckpointStatsAreLoadedOnDemand(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	s := open(t, st)
	want := map[string]string{}
	for i := range 5 {
		a := addFile(fmt.Sprintf("f%d.parquet", i), "nl")
		a.Add.Stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, 10+i, i, 100+i)
		a.Add.Size = int64(1000 + i)
		want[a.Add.Path] = a.Add.Stats
		tx := s.NewTransaction()
		tx.Add(a)
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}

	s = open(t, st)
	for p, got := range statsOf(s) {
		if got != "" {
			t.Fatalf("%s: stats %q before LoadStats: Open read the checkpoint's stats", p, got)
		}
	}
	// A commit after the checkpoint: its snapshot shares the deferred stats.
	tx := s.NewTransaction()
	tx.Add(addFile("late.parquet", "nl"))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	later, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want["late.parquet"] = ""
	if err := later.LoadStats(ctx); err != nil {
		t.Fatal(err)
	}
	if got := statsOf(later); !equalMaps(got, want) {
		t.Fatalf("stats after LoadStats:\n got %v\nwant %v", got, want)
	}
	if err := s.LoadStats(ctx); err != nil { // already loaded through later
		t.Fatal(err)
	}

	// A checkpoint written from a snapshot opened from a checkpoint.
	fresh := open(t, st)
	if _, err := fresh.Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	again := open(t, st)
	if again.Version() != fresh.Version() {
		t.Fatalf("reopened at %d, want the new checkpoint's %d", again.Version(), fresh.Version())
	}
	if err := again.LoadStats(ctx); err != nil {
		t.Fatal(err)
	}
	if got := statsOf(again); !equalMaps(got, want) {
		t.Fatalf("stats in the second checkpoint:\n got %v\nwant %v", got, want)
	}
}

// TestLoadStatsCheckpointGone: stats of a checkpoint deleted after the
// open are an error naming it, not empty stats.
func TestLoadStatsCheckpointGone(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	commitN(t, st, 0, 10) // version 10 is checkpointed
	s := open(t, st)
	var keys []string
	for o, err := range st.List(ctx, "_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(o.Key, ".checkpoint.") {
			keys = append(keys, o.Key)
		}
	}
	if len(keys) == 0 {
		t.Fatal("no checkpoint written")
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	err := s.LoadStats(ctx)
	if err == nil || !strings.Contains(err.Error(), "checkpoint 10") {
		t.Fatalf("LoadStats after the checkpoint was deleted: %v, want an error naming checkpoint 10", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
