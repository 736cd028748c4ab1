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
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

const ordersSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"country","type":"string","nullable":true,"metadata":{}}]}`

func createTable(t *testing.T, st objstore.Store, props map[string]string, opts ...deltalog.CommitOption) {
	t.Helper()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: ordersSchema, PartitionColumns: []string{"country"}, Configuration: props}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func addFile(path, country string) actions.Action {
	return actions.Action{Add: &actions.Add{Path: path, PartitionValues: map[string]*string{"country": &country}, Size: 100, ModificationTime: 1, DataChange: true}}
}

func open(t *testing.T, st objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	s, err := deltalog.Open(context.Background(), st, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func paths(s *deltalog.Snapshot) []string {
	var out []string
	for f := range s.Files() {
		out = append(out, f.Path)
	}
	return out
}

func appendFiles(t *testing.T, st objstore.Store, files ...string) *deltalog.CommitResult {
	t.Helper()
	tx := open(t, st).NewTransaction()
	for _, f := range files {
		tx.Add(addFile(f, "nl"))
	}
	tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
	res, err := tx.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCreateCommitReplay(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	appendFiles(t, st, "country=nl/a.parquet", "country=nl/b.parquet")
	tx := open(t, st).NewTransaction()
	del := int64(5)
	tx.Add(actions.Action{Remove: &actions.Remove{Path: "country=nl/a.parquet", DeletionTimestamp: &del, DataChange: true}})
	tx.ReadFiles("country=nl/a.parquet")
	tx.SetOperation("DELETE", nil, nil)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s := open(t, st)
	if s.Version() != 2 {
		t.Fatalf("version %d, want 2", s.Version())
	}
	if got := strings.Join(paths(s), ","); got != "country=nl/b.parquet" {
		t.Fatalf("files %s", got)
	}
	if got := strings.Join(s.Schema().Names(), ","); got != "id,country" {
		t.Fatalf("columns %s", got)
	}
	if s.Protocol().MinReaderVersion != 1 || s.Protocol().MinWriterVersion != 2 {
		t.Fatalf("protocol %+v", s.Protocol())
	}
	// Time travel by version.
	if got := strings.Join(paths(open(t, st, deltalog.AtVersion(1))), ","); got != "country=nl/a.parquet,country=nl/b.parquet" {
		t.Fatalf("v1 files %s", got)
	}
	if got := len(paths(open(t, st, deltalog.AtVersion(0)))); got != 0 {
		t.Fatalf("v0 has %d files", got)
	}
	if _, err := deltalog.Open(ctx, st, "", deltalog.AtVersion(3)); !errors.Is(err, deltalog.ErrVersionNotFound) {
		t.Fatalf("version 3: %v", err)
	}
	// commitInfo is written as Spark writes it, and history reads it back.
	h, err := deltalog.History(ctx, st, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, e := range h {
		ops = append(ops, fmt.Sprintf("%d:%s", e.Version, e.Info.Operation))
	}
	if got := strings.Join(ops, " "); got != "2:DELETE 1:WRITE 0:CREATE TABLE" {
		t.Fatalf("history %s", got)
	}
	ci := h[1].Info
	if ci.ReadVersion == nil || *ci.ReadVersion != 0 || ci.IsBlindAppend == nil || !*ci.IsBlindAppend || ci.TxnID == "" || ci.IsolationLevel != "WriteSerializable" || ci.EngineInfo == "" || ci.Timestamp == nil {
		t.Fatalf("commitInfo of version 1: %+v", ci)
	}
	if *h[0].Info.IsBlindAppend {
		t.Fatal("a DELETE is not a blind append")
	}
}

func TestCreateTwiceFails(t *testing.T) {
	st := objstore.NewMem()
	createTable(t, st, nil)
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: ordersSchema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); !errors.Is(err, deltalog.ErrTableExists) {
		t.Fatalf("second create: %v", err)
	}
}

func TestNotADeltaTable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = deltalog.Open(context.Background(), st, "")
	if !errors.Is(err, deltalog.ErrNotTable) || !strings.Contains(err.Error(), "not a Delta table") {
		t.Fatalf("got %v", err)
	}
}

func TestCorruptCommitLineNamed(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	bad := "{\"commitInfo\":{}}\n{\"add\":{\"path\":\"x\",\"size\":\"oops\"}}\n"
	if err := st.Put(ctx, "_delta_log/00000000000000000001.json", strings.NewReader(bad), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	_, err := deltalog.Open(ctx, st, "")
	if !errors.Is(err, deltalog.ErrLogCorrupt) {
		t.Fatalf("got %v", err)
	}
	var le *actions.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "_delta_log/00000000000000000001.json") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error does not name file and line: %v", err)
	}
}

// TestEmptyCommitIsCorrupt: a 0-byte (or blank) commit file is refused,
// naming it, rather than replayed as a version that did nothing.
func TestEmptyCommitIsCorrupt(t *testing.T) {
	ctx := context.Background()
	for _, body := range []string{"", "\n  \n"} {
		st := objstore.NewMem()
		createTable(t, st, nil)
		appendFiles(t, st, "a")
		if err := st.Put(ctx, "_delta_log/00000000000000000002.json", strings.NewReader(body), objstore.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
		_, err := deltalog.Open(ctx, st, "")
		if !errors.Is(err, deltalog.ErrLogCorrupt) || !strings.Contains(err.Error(), "00000000000000000002.json") || !strings.Contains(err.Error(), "empty commit file") {
			t.Errorf("open with an empty commit %q: %v", body, err)
		}
	}
}

func TestVersionGapIsCorrupt(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	appendFiles(t, st, "a")
	appendFiles(t, st, "b")
	if err := st.Delete(ctx, "_delta_log/00000000000000000001.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := deltalog.Open(ctx, st, ""); !errors.Is(err, deltalog.ErrLogCorrupt) {
		t.Fatalf("got %v", err)
	}
}

func TestLostResponseIsOurCommit(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	st := objstore.Faulty(mem, objstore.Times(1, objstore.LoseResponse(objstore.OpPut, "_delta_log/00000000000000000001.json")))
	tx := open(t, st).NewTransaction()
	tx.Add(addFile("a.parquet", "nl"))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatalf("commit after a lost response: %v", err)
	}
	if res.Version != 1 {
		t.Fatalf("version %d", res.Version)
	}
	s := open(t, mem)
	if s.Version() != 1 || strings.Join(paths(s), ",") != "a.parquet" {
		t.Fatalf("table at %d with %v; want version 1 holding a.parquet once", s.Version(), paths(s))
	}
}

func TestStoreDownIsCommitUnknown(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	st := objstore.Faulty(mem, objstore.FailMatching(objstore.OpPut, "_delta_log/*.json", errors.New("connection refused")))
	tx := open(t, st).NewTransaction()
	tx.Add(addFile("a.parquet", "nl"))
	_, err := tx.Commit(ctx)
	var cu *deltalog.CommitUnknownError
	if !errors.Is(err, deltalog.ErrCommitUnknown) || !errors.As(err, &cu) || cu.TxnID == "" || cu.Version != 1 {
		t.Fatalf("got %v", err)
	}
	if v, err := deltalog.FindCommit(ctx, mem, "", cu.Version, cu.TxnID); err != nil || v != -1 {
		t.Fatalf("FindCommit of a commit that never landed: %d %v", v, err)
	}
}

// When the create's reply is lost and the commit cannot be read back, the
// outcome is unknown: the error carries the txnId, and FindCommit tells
// that the commit did land.
func TestFindCommitAfterUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	key := "_delta_log/" + deltalog.CommitName(1)
	st := objstore.Faulty(mem, objstore.LoseResponse(objstore.OpPut, key), objstore.FailMatching(objstore.OpGet, key, errors.New("timeout")))
	tx := open(t, st).NewTransaction()
	tx.Add(addFile("a.parquet", "nl"))
	_, err := tx.Commit(ctx)
	var cu *deltalog.CommitUnknownError
	if !errors.Is(err, deltalog.ErrCommitUnknown) || !errors.As(err, &cu) || cu.Version != 1 {
		t.Fatalf("got %v", err)
	}
	v, err := deltalog.FindCommit(ctx, mem, "", cu.Version, cu.TxnID)
	if err != nil || v != 1 {
		t.Fatalf("FindCommit: %d %v", v, err)
	}
}

func TestCrashBeforeCommitLeavesTableUnchanged(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, nil)
	appendFiles(t, mem, "country=nl/old.parquet")
	// The writer stores its data file, then dies before the commit: the
	// commit's create fails and nothing retries it.
	st := objstore.Faulty(mem, objstore.FailMatching(objstore.OpPut, "_delta_log/*", errors.New("process killed")))
	if err := st.Put(ctx, "country=nl/orphan.parquet", bytes.NewReader([]byte("PAR1")), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	tx := open(t, st).NewTransaction(deltalog.WithMaxAttempts(1))
	tx.Add(addFile("country=nl/orphan.parquet", "nl"))
	if _, err := tx.Commit(ctx); err == nil {
		t.Fatal("commit succeeded through a dead store")
	}
	s := open(t, mem)
	if s.Version() != 1 || strings.Join(paths(s), ",") != "country=nl/old.parquet" {
		t.Fatalf("table changed: version %d files %v", s.Version(), paths(s))
	}
	if _, err := mem.Head(ctx, "country=nl/orphan.parquet"); err != nil {
		t.Fatalf("the orphan should exist on disk but be invisible: %v", err)
	}
}

func TestBlindAppendsRebase(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	s := open(t, st)
	tx1, tx2 := s.NewTransaction(), s.NewTransaction()
	tx1.Add(addFile("a", "nl"))
	tx2.Add(addFile("b", "nl"))
	if _, err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := tx2.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 || res.Attempts != 2 {
		t.Fatalf("rebased commit: %+v", res)
	}
	if got := strings.Join(paths(open(t, st)), ","); got != "a,b" {
		t.Fatalf("files %s", got)
	}
}

// A transaction that read the whole table and rewrote a file: under
// Serializable a concurrent append aborts it; under WriteSerializable (the
// default) a concurrent blind append does not, as in Spark.
func TestReadWholeTableVersusAppend(t *testing.T) {
	for _, c := range []struct {
		iso   conflict.Isolation
		abort bool
	}{{conflict.Serializable, true}, {conflict.WriteSerializable, false}} {
		t.Run(string(c.iso), func(t *testing.T) {
			ctx := context.Background()
			st := objstore.NewMem()
			createTable(t, st, nil)
			appendFiles(t, st, "a")
			s := open(t, st)
			winner, loser := s.NewTransaction(), s.NewTransaction(deltalog.WithIsolation(c.iso))
			winner.Add(addFile("b", "nl"))
			loser.ReadWholeTable()
			loser.ReadFiles("a")
			loser.Add(actions.Action{Remove: &actions.Remove{Path: "a", DataChange: true}}, addFile("c", "nl"))
			if _, err := winner.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := loser.Commit(ctx)
			if !c.abort {
				if err != nil {
					t.Fatalf("want rebase, got %v", err)
				}
				if got := strings.Join(paths(open(t, st)), ","); got != "b,c" {
					t.Fatalf("files %s", got)
				}
				return
			}
			var ce *conflict.Error
			if !errors.As(err, &ce) || !errors.Is(err, conflict.ErrConcurrentAppend) || ce.WinningVersion != 2 {
				t.Fatalf("got %v", err)
			}
			if v := open(t, st).Version(); v != 2 {
				t.Fatalf("version %d after abort", v)
			}
		})
	}
}

// Two transactions delete the same file: the loser aborts.
func TestConcurrentDeleteDelete(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	appendFiles(t, st, "a", "b")
	s := open(t, st)
	var errs []error
	for range 2 {
		tx := s.NewTransaction()
		tx.ReadFiles("a")
		tx.Add(actions.Action{Remove: &actions.Remove{Path: "a", DataChange: true}})
		_, err := tx.Commit(ctx)
		errs = append(errs, err)
	}
	if errs[0] != nil || !errors.Is(errs[1], conflict.ErrConflict) {
		t.Fatalf("got %v", errs)
	}
}

func TestMetadataChangeAbortsLoser(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	s := open(t, st)
	winner, loser := s.NewTransaction(), s.NewTransaction()
	md := *s.Metadata()
	md.Configuration = map[string]string{"delta.logRetentionDuration": "interval 7 days"}
	winner.SetMetadata(&md)
	loser.Add(addFile("a", "nl"))
	if _, err := winner.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := loser.Commit(ctx); !errors.Is(err, conflict.ErrMetadataChanged) {
		t.Fatalf("got %v", err)
	}
}

func TestIdempotentAppTransaction(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	commit := func(s *deltalog.Snapshot, batch int64, file string) *deltalog.CommitResult {
		tx := s.NewTransaction()
		tx.SetTransaction("ingest-1", batch)
		tx.Add(addFile(file, "nl"))
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := commit(open(t, st), 7, "b7"); r.AlreadyApplied || r.Version != 1 {
		t.Fatalf("first: %+v", r)
	}
	if r := commit(open(t, st), 7, "b7-again"); !r.AlreadyApplied {
		t.Fatalf("replayed batch committed again: %+v", r)
	}
	// A concurrent writer of the same batch that lost the race is skipped.
	s := open(t, st)
	tx := s.NewTransaction()
	tx.SetTransaction("ingest-1", 8)
	tx.Add(addFile("b8", "nl"))
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := commit(s, 8, "b8-dup"); !r.AlreadyApplied {
		t.Fatalf("racing duplicate: %+v", r)
	}
	s = open(t, st)
	if v, ok := s.TxnVersion("ingest-1"); !ok || v != 8 {
		t.Fatalf("txn version %d %v", v, ok)
	}
	if got := strings.Join(paths(s), ","); got != "b7,b8" {
		t.Fatalf("files %s", got)
	}
}

func TestTimeTravelByTimestamp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, st, nil)
	appendFiles(t, st, "a")
	appendFiles(t, st, "b")
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Version 2's file time goes backwards: Spark makes it previous + 1 ms.
	for v, ts := range []time.Time{base, base.Add(time.Minute), base.Add(30 * time.Second)} {
		name := filepath.Join(dir, "_delta_log", deltalog.CommitName(int64(v)))
		if err := os.Chtimes(name, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		at   time.Time
		want int64
	}{
		{base, 0},
		{base.Add(59 * time.Second), 0},
		{base.Add(time.Minute), 1},
		{base.Add(time.Minute + time.Millisecond), 2},
	} {
		s, err := deltalog.Open(ctx, st, "", deltalog.AtTimestamp(c.at))
		if err != nil {
			t.Fatalf("at %s: %v", c.at, err)
		}
		if s.Version() != c.want {
			t.Errorf("at %s: version %d, want %d", c.at, s.Version(), c.want)
		}
	}
	for _, at := range []time.Time{base.Add(-time.Second), base.Add(time.Hour)} {
		if _, err := deltalog.Open(ctx, st, "", deltalog.AtTimestamp(at)); !errors.Is(err, deltalog.ErrVersionNotFound) {
			t.Errorf("at %s: %v, want ErrVersionNotFound", at, err)
		}
	}
}

func TestInCommitTimestamps(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	clock := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	createTable(t, st, map[string]string{"delta.enableInCommitTimestamps": "true"}, deltalog.WithClock(now))
	s := open(t, st)
	if !s.Protocol().HasWriterFeature("inCommitTimestamp") {
		t.Fatalf("protocol %+v lacks inCommitTimestamp", s.Protocol())
	}
	// The clock stands still and then goes backwards: timestamps must
	// still increase.
	for i := 0; i < 3; i++ {
		if i == 2 {
			clock = clock.Add(-time.Hour)
		}
		tx := open(t, st).NewTransaction(deltalog.WithClock(now))
		tx.Add(addFile(fmt.Sprint(i), "nl"))
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h, err := deltalog.History(ctx, st, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i++ {
		if !h[i].Timestamp.After(h[i+1].Timestamp) {
			t.Fatalf("timestamps not increasing: v%d %s, v%d %s", h[i+1].Version, h[i+1].Timestamp, h[i].Version, h[i].Timestamp)
		}
		if h[i].Info.InCommitTimestamp == nil {
			t.Fatalf("version %d has no inCommitTimestamp", h[i].Version)
		}
	}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s, err = deltalog.Open(ctx, st, "", deltalog.AtTimestamp(base.Add(time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version() != 1 {
		t.Fatalf("version at +1ms: %d, want 1", s.Version())
	}
}

func TestWriterFeatureGate(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: ordersSchema})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetProtocol(&actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"futureFeature"}, WriterFeatures: []string{"futureFeature"}})
	_, err = tx.Commit(ctx)
	if !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "futureFeature") {
		t.Fatalf("got %v", err)
	}
	// A table someone else wrote with an unknown reader feature.
	body := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["futureFeature"],"writerFeatures":["futureFeature"]}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{}}}
`
	if err := st.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader(body), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	_, err = deltalog.Open(ctx, st, "")
	if !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"futureFeature"`) {
		t.Fatalf("got %v", err)
	}
}

func TestAppendOnlyRefusesRemoves(t *testing.T) {
	st := objstore.NewMem()
	createTable(t, st, map[string]string{"delta.appendOnly": "true"})
	appendFiles(t, st, "a")
	tx := open(t, st).NewTransaction()
	tx.Add(actions.Action{Remove: &actions.Remove{Path: "a", DataChange: true}})
	if _, err := tx.Commit(context.Background()); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("got %v", err)
	}
}

func TestTableUnderPrefix(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	for _, root := range []string{"warehouse/a", "warehouse/b/"} {
		tx, err := deltalog.Create(st, root, &actions.Metadata{SchemaString: ordersSchema})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s, err := deltalog.Open(ctx, st, "warehouse/b")
	if err != nil {
		t.Fatal(err)
	}
	if s.TablePath("x%20y.parquet") != "warehouse/b/x y.parquet" {
		t.Fatalf("TablePath: %q", s.TablePath("x%20y.parquet"))
	}
	if _, err := deltalog.Open(ctx, st, "warehouse"); !errors.Is(err, deltalog.ErrNotTable) {
		t.Fatalf("parent folder: %v", err)
	}
}

// A writer that read an old version catches up in one step: it checks all
// the commits that landed meanwhile and tries the version after the newest.
func TestLoserCatchesUpInOneStep(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	stale := open(t, st)
	for i := 0; i < 20; i++ {
		appendFiles(t, st, fmt.Sprintf("w%02d", i))
	}
	tx := stale.NewTransaction()
	tx.Add(addFile("late", "nl"))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 21 || res.Attempts != 2 {
		t.Fatalf("landed at %d after %d attempts; want 21 after 2", res.Version, res.Attempts)
	}
	s, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s.NumFiles() != 21 || open(t, st).NumFiles() != 21 {
		t.Fatalf("post-commit snapshot has %d files", s.NumFiles())
	}
}

// The post-commit snapshot of appends (its fast path) equals a snapshot
// read from the log, and leaves the snapshot it started from unchanged.
func TestPostCommitSnapshotEqualsReopen(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	appendFiles(t, st, "m", "c")
	base := open(t, st)
	tx := base.NewTransaction()
	tx.SetTransaction("app", 3)
	tx.Add(addFile("z", "nl"), addFile("a", "nl"), addFile("n", "nl"))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := open(t, st)
	if !slices.Equal(paths(got), paths(want)) || got.Version() != want.Version() {
		t.Fatalf("post-commit %d %v, reopened %d %v", got.Version(), paths(got), want.Version(), paths(want))
	}
	if v, ok := got.TxnVersion("app"); !ok || v != 3 {
		t.Fatalf("txn %d %v", v, ok)
	}
	if _, ok := base.TxnVersion("app"); ok || base.NumFiles() != 2 {
		t.Fatal("the base snapshot changed")
	}
	// A commit that removes takes the full fold and is right too.
	tx = got.NewTransaction()
	tx.ReadFiles("m")
	tx.Add(actions.Action{Remove: &actions.Remove{Path: "m", DataChange: true}})
	res, err = tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err = res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths(got), paths(open(t, st))) {
		t.Fatalf("after remove: %v vs %v", paths(got), paths(open(t, st)))
	}
}
