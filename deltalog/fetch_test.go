package deltalog_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// TestOpenFetchesCommitsConcurrently opens a table whose checkpoint is
// followed by 30 commits (adds, removes, re-adds) through a store with
// 15 ms of latency per read: the snapshot must equal the one read
// directly, the commits must be fetched with several reads in flight and
// at most the read-ahead bound, and each commit exactly once.
func TestOpenFetchesCommitsConcurrently(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, map[string]string{"delta.checkpointInterval": "10"})
	commitN(t, mem, 0, 10) // checkpoint of version 10
	s := open(t, mem)
	for i := range 30 {
		tx := s.NewTransaction(deltalog.WithPostCommit("off"))
		tx.Add(addFile(fmt.Sprintf("g%03d.parquet", i), "de"))
		if i%3 == 2 {
			tx.Add(actions.Action{Remove: &actions.Remove{Path: fmt.Sprintf("f%06d.parquet", i/3), DataChange: true}})
		}
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	want := open(t, mem)

	var inflight, most atomic.Int64
	slow := objstore.Faulty(mem, objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op != objstore.OpGet {
			return nil, nil
		}
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(15 * time.Millisecond)
		inflight.Add(-1)
		return nil, nil
	}))
	cs := objstore.Counting(slow)
	got := open(t, cs)
	if got.Version() != want.Version() || got.Version() != 40 {
		t.Fatalf("version %d, want %d (40)", got.Version(), want.Version())
	}
	if !reflect.DeepEqual(slices.Collect(got.Files()), slices.Collect(want.Files())) {
		t.Fatalf("files differ: %v, want %v", paths(got), paths(want))
	}
	if !reflect.DeepEqual(slices.Collect(got.Tombstones()), slices.Collect(want.Tombstones())) {
		t.Fatal("tombstones differ")
	}
	var commits []string
	for _, k := range cs.Keys(objstore.OpGet) {
		if len(k) > 5 && k[len(k)-5:] == ".json" {
			commits = append(commits, k)
		}
	}
	slices.Sort(commits)
	if len(commits) != 30 || commits[0] != "_delta_log/"+deltalog.CommitName(11) || len(slices.Compact(commits)) != 30 {
		t.Fatalf("read commits %v, want 11..40 once each", commits)
	}
	if m := most.Load(); m < 4 || m > 9 {
		t.Errorf("at most %d reads in flight, want 4..9 (commitsAhead queued and the one awaited)", m)
	}
}
