package deltalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// commitN appends n one-file commits through the commit loop, with
// checkpoints written before each Commit returns.
func commitN(t testing.TB, st objstore.Store, from, n int, opts ...deltalog.CommitOption) {
	t.Helper()
	ctx := context.Background()
	s, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		tx := s.NewTransaction(append([]deltalog.CommitOption{deltalog.WithPostCommit("sync")}, opts...)...)
		tx.Add(addFile(fmt.Sprintf("f%06d.parquet", i), "nl"))
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.WaitHooks(); err != nil {
			t.Fatalf("checkpoint after version %d: %v", res.Version, err)
		}
		if s, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAutomaticCheckpoints(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	commitN(t, mem, 0, 25)
	for _, v := range []int64{10, 20} {
		if _, err := mem.Head(ctx, "_delta_log/"+deltalog.CheckpointName(v)); err != nil {
			t.Fatalf("checkpoint %d: %v", v, err)
		}
	}
	if _, err := mem.Head(ctx, "_delta_log/"+deltalog.CheckpointName(5)); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("unexpected checkpoint 5: %v", err)
	}
	b, err := mem.Get(ctx, "_delta_log/_last_checkpoint")
	if err != nil || !strings.Contains(string(b), `"version":20`) {
		t.Fatalf("_last_checkpoint %s %v", b, err)
	}
	// The latest snapshot loads from checkpoint 20 and commits 21..25 only.
	cs := objstore.Counting(mem)
	s := open(t, cs)
	if s.Version() != 25 || s.NumFiles() != 25 {
		t.Fatalf("version %d files %d", s.Version(), s.NumFiles())
	}
	var commits []string
	for _, k := range cs.Keys(objstore.OpGet) {
		if strings.HasSuffix(k, ".json") {
			commits = append(commits, k)
		}
	}
	slices.Sort(commits) // fetched concurrently, in any order
	if len(commits) != 5 || !strings.HasSuffix(commits[0], deltalog.CommitName(21)) {
		t.Fatalf("read commits %v, want 21..25", commits)
	}
	// Every version, before and after the checkpoints, replays the same
	// way with and without them.
	for v := int64(0); v <= 25; v++ {
		got := paths(open(t, mem, deltalog.AtVersion(v)))
		if len(got) != int(v) {
			t.Fatalf("version %d has %d files", v, len(got))
		}
	}
}

// A checkpoint that fails to write never fails the commit, and readers
// keep using the log.
func TestFailedCheckpointKeepsCommit(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	st := objstore.Faulty(mem, objstore.FailMatching(objstore.OpPut, "_delta_log/*.checkpoint.parquet", errors.New("disk full")))
	s := open(t, st)
	var last *deltalog.CommitResult
	for i := 0; i < 10; i++ {
		tx := s.NewTransaction()
		tx.Add(addFile(fmt.Sprint(i), "nl"))
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		last = res
		if s, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if err := last.WaitHooks(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("checkpoint error %v", err)
	}
	if _, err := mem.Head(ctx, "_delta_log/"+deltalog.CheckpointName(10)); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("half a checkpoint left: %v", err)
	}
	if got := open(t, mem); got.Version() != 10 || got.NumFiles() != 10 {
		t.Fatalf("version %d files %d", got.Version(), got.NumFiles())
	}
}

// A checkpoint a crash left truncated, with a _last_checkpoint pointing at
// it, is passed over for the previous checkpoint.
func TestCorruptCheckpointFallsBack(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	commitN(t, mem, 0, 22)
	key := "_delta_log/" + deltalog.CheckpointName(20)
	b, err := mem.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, key, bytes.NewReader(b[:len(b)/2]), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s := open(t, mem)
	if s.Version() != 22 || s.NumFiles() != 22 {
		t.Fatalf("version %d files %d", s.Version(), s.NumFiles())
	}
	// A garbage _last_checkpoint is only a lost hint.
	if err := mem.Put(ctx, "_delta_log/_last_checkpoint", strings.NewReader("{not json"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := open(t, mem); s.Version() != 22 || s.NumFiles() != 22 {
		t.Fatalf("with a corrupt hint: version %d files %d", s.Version(), s.NumFiles())
	}
}

// A table with 100,000 commits: the latest snapshot loads from one
// checkpoint and at most 10 commits.
func TestLongHistoryLoadsFromCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 commits")
	}
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	const commits = 100000
	for i := 1; i <= commits; i++ {
		body, err := actions.MarshalCommit([]actions.Action{{CommitInfo: &actions.CommitInfo{Operation: "WRITE"}}, addFile(fmt.Sprintf("f%06d.parquet", i), "nl")})
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.Put(ctx, "_delta_log/"+deltalog.CommitName(int64(i)), bytes.NewReader(body), objstore.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	cp := open(t, mem, deltalog.AtVersion(commits-7))
	if _, err := cp.Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	cs := objstore.Counting(mem)
	s := open(t, cs)
	if s.Version() != commits || s.NumFiles() != commits {
		t.Fatalf("version %d files %d", s.Version(), s.NumFiles())
	}
	var jsonReads, checkpointFiles int
	seen := map[string]bool{}
	for _, op := range []objstore.Op{objstore.OpGet, objstore.OpGetRange, objstore.OpHead} {
		for _, k := range cs.Keys(op) {
			switch {
			case strings.HasSuffix(k, ".checkpoint.parquet"):
				if !seen[k] {
					checkpointFiles++
					seen[k] = true
				}
			case strings.HasSuffix(k, ".json"):
				jsonReads++
			}
		}
	}
	if checkpointFiles != 1 || jsonReads > 10 {
		t.Fatalf("read %d checkpoint files and %d commits; want 1 and at most 10", checkpointFiles, jsonReads)
	}
}

// Log cleanup with a fake clock: files older than the retention go, but
// every version inside the retention window stays readable.
func TestLogCleanupKeepsRetainedVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, st, map[string]string{"delta.logRetentionDuration": "interval 30 days"})
	commitN(t, st, 0, 30, deltalog.WithPostCommit("off"))
	s := open(t, st)
	for _, v := range []int64{10, 20} {
		if _, err := open(t, st, deltalog.AtVersion(v)).Checkpoint(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// Version v was committed on day v.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v := int64(0); v <= 30; v++ {
		ts := base.Add(time.Duration(v) * 24 * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, "_delta_log", deltalog.CommitName(v)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	// On day 45 the window starts at day 15: version 15 is the oldest kept,
	// so checkpoint 10 and everything after it must stay.
	now := base.Add(45 * 24 * time.Hour)
	res, err := s.CleanupLog(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.KeptFrom != 10 || len(res.Deleted) != 10 {
		t.Fatalf("cleanup %+v", res)
	}
	for v := int64(10); v <= 30; v++ {
		if got := open(t, st, deltalog.AtVersion(v)); got.NumFiles() != int(v) {
			t.Fatalf("version %d: %d files", v, got.NumFiles())
		}
	}
	if _, err := deltalog.Open(ctx, st, "", deltalog.AtVersion(9)); !errors.Is(err, deltalog.ErrVersionNotFound) {
		t.Fatalf("version 9 after cleanup: %v", err)
	}
	at := base.Add(15 * 24 * time.Hour)
	if got, err := deltalog.Open(ctx, st, "", deltalog.AtTimestamp(at)); err != nil || got.Version() != 15 {
		t.Fatalf("time travel to day 15: %v", err)
	}
	// Cleaning up again on the same day removes nothing more.
	res, err = s.CleanupLog(ctx, now)
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("second cleanup %+v %v", res, err)
	}
	left, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, deltalog.CheckpointName(10)) || slices.Contains(names, deltalog.CommitName(9)) {
		t.Fatalf("log after cleanup: %v", names)
	}
}

// A compacted file stands for the commits it covers: with it, the covered
// commits are not read, and the snapshot is the same.
func TestCompactedCommitsAreUsed(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	commitN(t, mem, 0, 6, deltalog.WithPostCommit("off"))
	tx := open(t, mem).NewTransaction()
	tx.ReadFiles("f000001.parquet")
	tx.Add(actions.Action{Remove: &actions.Remove{Path: "f000001.parquet", DataChange: true}})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want := paths(open(t, mem))
	// Versions 1..6, newest first (as Databricks writes them).
	var as []actions.Action
	for i := 5; i >= 0; i-- {
		as = append(as, addFile(fmt.Sprintf("f%06d.parquet", i), "nl"))
	}
	body, err := actions.MarshalCommit(as)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, "_delta_log/00000000000000000001.00000000000000000006.compacted.json", bytes.NewReader(body), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := objstore.Counting(mem)
	got := paths(open(t, cs))
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for _, k := range cs.Keys(objstore.OpGet) {
		if strings.HasSuffix(k, deltalog.CommitName(3)) {
			t.Fatalf("read %s although the compacted file covers it", k)
		}
	}
}

// When the only checkpoint is unreadable and the commits before it are
// gone, the read fails with an error instead of looping or guessing.
func TestOnlyCheckpointUnreadable(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	commitN(t, mem, 0, 12)
	for v := int64(0); v < 10; v++ {
		if err := mem.Delete(ctx, "_delta_log/"+deltalog.CommitName(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.Put(ctx, "_delta_log/"+deltalog.CheckpointName(10), strings.NewReader("PAR1 not really"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := deltalog.Open(ctx, mem, ""); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("opened a table whose only checkpoint is garbage")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open loops on an unreadable checkpoint")
	}
}

// Commits after a checkpoint that remove and re-add its files are folded
// over the checkpoint's files exactly as over commits.
func TestCommitsAfterCheckpointRemoveItsFiles(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	commitN(t, mem, 0, 10) // checkpoint at version 10
	tx := open(t, mem).NewTransaction()
	del := time.Now().UnixMilli()
	tx.ReadFiles("f000003.parquet", "f000004.parquet")
	tx.Add(
		actions.Action{Remove: &actions.Remove{Path: "f000003.parquet", DeletionTimestamp: &del, DataChange: true}},
		actions.Action{Remove: &actions.Remove{Path: "f000004.parquet", DeletionTimestamp: &del, DataChange: true}},
		addFile("f000004.parquet", "nl"), // rewritten under the same name
	)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s := open(t, mem)
	got := paths(s)
	if len(got) != 9 || slices.Contains(got, "f000003.parquet") || !slices.Contains(got, "f000004.parquet") {
		t.Fatalf("files %v", got)
	}
	var tomb []string
	for r := range s.Tombstones() {
		tomb = append(tomb, r.Path)
	}
	if !slices.Equal(tomb, []string{"f000003.parquet"}) {
		t.Fatalf("tombstones %v", tomb)
	}
}

// TestUnreadableCheckpointIsNamed: when the only checkpoint that could
// serve is unreadable and the commits before it were cleaned up, the
// error names that checkpoint and why it failed, not only that no
// checkpoint serves.
func TestUnreadableCheckpointIsNamed(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	for i := range 4 {
		appendFiles(t, st, fmt.Sprintf("f%d", i))
	}
	if _, err := open(t, st, deltalog.AtVersion(3)).Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	for v := range int64(3) {
		if err := st.Delete(ctx, "_delta_log/"+deltalog.CommitName(v)); err != nil {
			t.Fatal(err)
		}
	}
	key := "_delta_log/00000000000000000003.checkpoint.parquet"
	if err := st.Put(ctx, key, strings.NewReader("not parquet"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := deltalog.Open(ctx, st, "")
	if err == nil || !strings.Contains(err.Error(), "checkpoint of version 3 is unreadable") || !strings.Contains(err.Error(), key) || !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("open with an unreadable checkpoint and no older commits: %v", err)
	}
}

// TestErrorsNameTheTable: messages name the table as the user would
// (the store's location), not "the store root".
func TestErrorsNameTheTable(t *testing.T) {
	dir := t.TempDir()
	st, err := objstore.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = deltalog.Open(context.Background(), st, "")
	if !errors.Is(err, deltalog.ErrNotTable) || !strings.Contains(err.Error(), dir+" is not a Delta table") {
		t.Fatalf("open of an empty folder: %v", err)
	}
}
