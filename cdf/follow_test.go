package cdf_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// followTable is a table with the change data feed on, written through
// the library's own operations.
type followTable struct {
	t     testing.TB
	store objstore.Store
	root  string
}

func newFollowTable(t testing.TB, store objstore.Store, ddl string, props map[string]string) *followTable {
	t.Helper()
	schema, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	conf := map[string]string{"delta.enableChangeDataFeed": "true"}
	for k, v := range props {
		conf[k] = v
	}
	tx, err := deltalog.Create(store, "t", &actions.Metadata{SchemaString: s, Configuration: conf})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &followTable{t: t, store: store, root: "t"}
}

func (ft *followTable) snap() *deltalog.Snapshot {
	ft.t.Helper()
	s, err := deltalog.Open(context.Background(), ft.store, ft.root)
	if err != nil {
		ft.t.Fatal(err)
	}
	return s
}

// jsonRows is one batch of the table's current schema from JSON rows.
func (ft *followTable) jsonRows(snap *deltalog.Snapshot, rows string) iter.Seq2[arrow.RecordBatch, error] {
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		ft.t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		ft.t.Fatal(err)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer rec.Release()
		yield(rec, nil)
	}
}

func (ft *followTable) append(rows string, opts ...writer.Option) int64 {
	ft.t.Helper()
	snap := ft.snap()
	res, err := writer.Append(context.Background(), snap, ft.jsonRows(snap, rows), opts...)
	if err != nil {
		ft.t.Fatal(err)
	}
	return res.Version
}

// changeLines are a batch's rows as text, one line each.
func changeLines(rec arrow.RecordBatch) []string {
	var out []string
	for i := range int(rec.NumRows()) {
		var cols []string
		for c := range int(rec.NumCols()) {
			col := rec.Column(c)
			if col.IsNull(i) {
				cols = append(cols, "null")
			} else {
				cols = append(cols, col.ValueStr(i))
			}
		}
		out = append(out, strings.Join(cols, "|"))
	}
	return out
}

// closedRange is the closed-range feed of versions from..to as lines.
func closedRange(t testing.TB, store objstore.Store, root string, from, to int64) []string {
	t.Helper()
	f, err := cdf.Open(context.Background(), store, root, cdf.Versions(from, to))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range f.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, changeLines(rec)...)
	}
	return out
}

// batchLines reads a batch whole.
func batchLines(t testing.TB, ctx context.Context, b *cdf.Batch) ([]string, error) {
	var out []string
	for rec, err := range b.Records(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, changeLines(rec)...)
	}
	return out, nil
}

// A follower started before the commits delivers each as it lands, in
// order, and its lines equal the closed range's. It starts after version
// 0 (the table as created), not at Latest: the first append is released
// before Follow runs, and had it landed before Follow read the latest
// version, the follower would wait for version 2, which the appender
// makes only after the follower delivered version 1 (TestFollowStarts
// checks Latest).
func TestFollowDeliversNewVersions(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long, v string", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := make(chan struct{})
	go func() {
		for i := range 5 {
			<-next
			ft.append(fmt.Sprintf(`[{"id": %d, "v": "a"}, {"id": %d, "v": "b"}]`, 2*i, 2*i+1))
		}
	}()
	var got []string
	want := int64(1)
	next <- struct{}{}
	for b, err := range cdf.Follow(ctx, ft.store, ft.root, cdf.After(0), cdf.WithPollInterval(time.Millisecond)) {
		if err != nil {
			t.Fatal(err)
		}
		if b.First != want {
			t.Fatalf("batch starts at %d, want %d", b.First, want)
		}
		lines, err := batchLines(t, ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, lines...)
		want = b.Last + 1
		if b.Last == 5 {
			break
		}
		next <- struct{}{}
	}
	if w := closedRange(t, ft.store, ft.root, 1, 5); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Fatalf("followed:\n%s\nclosed range:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

// The starts: a version, the version after an offset, a timestamp, latest.
func TestFollowStarts(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long", nil)
	for i := range 4 {
		ft.append(fmt.Sprintf(`[{"id": %d}]`, i))
	}
	ctx := context.Background()
	first := func(s cdf.Start) (int64, error) {
		trigger := make(chan struct{})
		close(trigger)
		for b, err := range cdf.Follow(ctx, ft.store, ft.root, s, cdf.WithTrigger(trigger), cdf.WithMaxVersionsPerBatch(1)) {
			if err != nil {
				return 0, err
			}
			return b.First, nil
		}
		return -1, nil // nothing delivered
	}
	var ts3 time.Time
	for vc, err := range deltalog.Commits(ctx, ft.store, ft.root, 3, 3) {
		if err != nil {
			t.Fatal(err)
		}
		ts3 = vc.Timestamp
	}
	for _, c := range []struct {
		start cdf.Start
		want  int64
	}{
		{cdf.StartingVersion(0), 0},
		{cdf.StartingVersion(2), 2},
		{cdf.After(2), 3},
		{cdf.After(4), -1},
		{cdf.StartingTimestamp(ts3), 3},
		{cdf.StartingTimestamp(ts3.Add(time.Hour)), -1},
		{cdf.Latest(), -1},
	} {
		got, err := first(c.start)
		if err != nil || got != c.want {
			t.Errorf("start %s: first version %d (%v), want %d", c.start, got, err, c.want)
		}
	}
	_, err := first(cdf.StartingVersion(6))
	wantErr(t, err, deltalog.ErrVersionNotFound, "starting version 6", "next version to be committed, 5")
}

// Limits cut batches at whole versions; a version over the limit comes
// alone.
func TestFollowLimits(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long", nil)
	sizes := []int{1, 1, 3, 1, 1, 1} // files per version (rows with a small target size)
	for i, n := range sizes {
		snap := ft.snap()
		tx := snap.NewTransaction()
		for j := range n {
			wr, err := writer.WriteFiles(context.Background(), snap, ft.jsonRows(snap, fmt.Sprintf(`[{"id": %d}]`, 10*i+j)))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range wr.Adds {
				tx.Add(actions.Action{Add: a})
			}
		}
		tx.SetOperation("WRITE", nil, nil)
		if _, err := tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run := func(opts ...cdf.Option) string {
		trigger := make(chan struct{})
		close(trigger)
		var got []string
		for b, err := range cdf.Follow(context.Background(), ft.store, ft.root, cdf.StartingVersion(1), append(opts, cdf.WithTrigger(trigger))...) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d-%d", b.First, b.Last))
		}
		return strings.Join(got, " ")
	}
	check := func(what, got, want string) {
		if got != want {
			t.Errorf("%s: batches %s, want %s", what, got, want)
		}
	}
	files := map[int64]int{}
	for vc, err := range deltalog.Commits(context.Background(), ft.store, ft.root, 1, -1) {
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range vc.Actions {
			if a.Add != nil {
				files[vc.Version]++
			}
		}
	}
	if files[3] < 2 {
		t.Fatalf("version 3 has %d files; the test needs more than one", files[3])
	}
	check("2 versions", run(cdf.WithMaxVersionsPerBatch(2)), "1-2 3-4 5-6")
	check("2 files", run(cdf.WithMaxFilesPerBatch(2)), "1-2 3-3 4-5 6-6")
	check("no limit", run(), "1-6")
	check("1 byte", run(cdf.WithMaxBytesPerBatch(1)), "1-1 2-2 3-3 4-4 5-5 6-6")
}

// An added column starts a batch of its own schema; a dropped one (here
// through an overwrite with another schema) stops the follower naming the
// version.
func TestFollowSchemaChanges(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long, v string", nil)
	ft.append(`[{"id": 1, "v": "a"}]`)
	snap := ft.snap()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "w", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(`[{"id": 2, "v": "b", "w": 7}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if _, err := writer.Append(context.Background(), snap, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, writer.WithMergeSchema()); err != nil {
		t.Fatal(err)
	}
	ft.append(`[{"id": 3, "v": "c", "w": 8}]`) // version 3
	trigger := make(chan struct{})
	close(trigger)
	var got []string
	for b, err := range cdf.Follow(context.Background(), ft.store, ft.root, cdf.StartingVersion(1), cdf.WithTrigger(trigger)) {
		if err != nil {
			t.Fatal(err)
		}
		lines, err := batchLines(t, context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d-%d %v %d cols: %s", b.First, b.Last, b.SchemaChanged, len(b.Schema().Fields()), strings.Join(lines, "; ")))
	}
	joined := strings.Join(got, "\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "1-1 false 5 cols") || !strings.HasPrefix(got[1], "2-3 true 6 cols") {
		t.Fatalf("batches:\n%s", joined)
	}

	// A non-additive change: the table is overwritten with w dropped.
	snap = ft.snap()
	md := *snap.Metadata()
	schema, err := actions.ParseDDL("id long, v string")
	if err != nil {
		t.Fatal(err)
	}
	if md.SchemaString, err = actions.SchemaString(schema); err != nil {
		t.Fatal(err)
	}
	tx := snap.NewTransaction()
	tx.SetMetadata(&md)
	tx.SetOperation("CHANGE COLUMN", nil, nil)
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ferr error
	for _, err := range cdf.Follow(context.Background(), ft.store, ft.root, cdf.After(3), cdf.WithTrigger(trigger)) {
		ferr = err
	}
	wantErr(t, ferr, cdf.ErrSchemaChange, "version 4", "column w", "follow again from version 4")
	// Following again from that version goes on under the new schema.
	for _, err := range cdf.Follow(context.Background(), ft.store, ft.root, cdf.StartingVersion(4), cdf.WithTrigger(trigger)) {
		if err != nil {
			t.Fatalf("following again from the change: %v", err)
		}
	}
}

// A commit removed by log cleanup, and a file removed by VACUUM, stop the
// follower naming the version and the retention property.
func TestFollowRetention(t *testing.T) {
	store := objstore.NewMem()
	ft := newFollowTable(t, store, "id long", nil)
	for i := range 3 {
		ft.append(fmt.Sprintf(`[{"id": %d}]`, i))
	}
	ctx := context.Background()
	// The file of version 2, gone.
	var gone string
	for vc, err := range deltalog.Commits(ctx, store, "t", 2, 2) {
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range vc.Actions {
			if a.Add != nil {
				gone = a.Add.Path
			}
		}
	}
	if err := store.Delete(ctx, "t/"+gone); err != nil {
		t.Fatal(err)
	}
	trigger := make(chan struct{})
	close(trigger)
	var ferr error
	for b, err := range cdf.Follow(ctx, store, "t", cdf.StartingVersion(2), cdf.WithTrigger(trigger)) {
		if err != nil {
			ferr = err
			break
		}
		if _, ferr = batchLines(t, ctx, b); ferr != nil {
			break
		}
	}
	wantErr(t, ferr, cdf.ErrFileMissing, "version 2", gone, "delta.deletedFileRetentionDuration")

	// Versions 0 and 1's commits, cleaned up (a checkpoint at 2 keeps the
	// table readable).
	snap, err := deltalog.Open(ctx, store, "t", deltalog.AtVersion(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Checkpoint(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	for v := range 2 {
		if err := store.Delete(ctx, "t/_delta_log/"+deltalog.CommitName(int64(v))); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range cdf.Follow(ctx, store, "t", cdf.StartingVersion(1), cdf.WithTrigger(trigger)) {
		ferr = err
		break
	}
	wantErr(t, ferr, cdf.ErrLogCleanedUp, "version 1", "oldest kept is 2", "delta.logRetentionDuration")
}

// Offsets: a file (object) offset and the target table's app
// transaction resume after the version saved.
func TestFollowOffsets(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	o := cdf.ObjectOffset(store, "follower/offset")
	s, err := cdf.Resume(ctx, o, cdf.StartingVersion(0))
	if err != nil || s.String() != "version 0" {
		t.Fatalf("resume without an offset: %v %v", s, err)
	}
	if err := o.Save(ctx, 41); err != nil {
		t.Fatal(err)
	}
	if s, err = cdf.Resume(ctx, o, cdf.Latest()); err != nil || s.String() != "after version 41" {
		t.Fatalf("resume after 41: %v %v", s, err)
	}
	if err := store.Put(ctx, "follower/offset", strings.NewReader("x"), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cdf.Resume(ctx, o, cdf.Latest()); err == nil || !strings.Contains(err.Error(), "follower/offset") {
		t.Fatalf("a bad offset: %v", err)
	}

	tgt := cdf.TxnOffset(store, "target", "silver")
	if _, ok, err := tgt.Load(ctx); ok || err != nil {
		t.Fatalf("no target yet: %v %v", ok, err)
	}
	ft := newFollowTable(t, store, "id long", nil)
	ft.root = "target"
	tx, err := deltalog.Create(store, "target", ft.snapOf("t").Metadata())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ft.append(`[{"id": 1}]`, writer.WithCommitOptions(deltalog.WithAppTransaction("silver", 7)))
	if v, ok, err := tgt.Load(ctx); v != 7 || !ok || err != nil {
		t.Fatalf("target offset %d %v %v, want 7", v, ok, err)
	}
}

func (ft *followTable) snapOf(root string) *deltalog.Snapshot {
	s, err := deltalog.Open(context.Background(), ft.store, root)
	if err != nil {
		ft.t.Fatal(err)
	}
	return s
}

// A follower waiting with nothing new ends with the context's error.
func TestFollowCancel(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var ferr error
	for _, err := range cdf.Follow(ctx, ft.store, ft.root, cdf.Latest(), cdf.WithPollInterval(time.Millisecond)) {
		ferr = err
	}
	if !errors.Is(ferr, context.DeadlineExceeded) {
		t.Fatalf("err = %v", ferr)
	}
}

// OPTIMIZE's versions are delivered (their offsets count) with no rows.
func TestFollowOptimizeHasNoRows(t *testing.T) {
	ft := newFollowTable(t, objstore.NewMem(), "id long", nil)
	for i := range 3 {
		ft.append(fmt.Sprintf(`[{"id": %d}]`, i))
	}
	res, err := maintenance.Optimize(context.Background(), ft.snap())
	if err != nil || len(res.Commits) != 1 || res.Commits[0].Version != 4 {
		t.Fatalf("optimize: %+v %v", res, err)
	}
	if _, err := dml.Delete(context.Background(), ft.snap(), &expr.Compare{Op: expr.Eq, Left: expr.Col("id"), Right: expr.Lit(int64(1))}); err != nil {
		t.Fatal(err)
	}
	trigger := make(chan struct{})
	close(trigger)
	for b, err := range cdf.Follow(context.Background(), ft.store, ft.root, cdf.After(3), cdf.WithTrigger(trigger), cdf.WithMaxVersionsPerBatch(1)) {
		if err != nil {
			t.Fatal(err)
		}
		lines, err := batchLines(t, context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		if b.First == 4 && len(lines) != 0 || b.First == 5 && len(lines) != 1 {
			t.Errorf("version %d: %q", b.First, lines)
		}
	}
}
