package deltalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/testseed"
)

func rowsFile(path string, n int64) actions.Action {
	a := addFile(path, "nl")
	a.Add.Stats = fmt.Sprintf(`{"numRecords":%d}`, n)
	return a
}

// logAdds reads every commit of the table from version 1 to the latest
// and returns its adds by version, and the high-water mark each commit
// wrote (-2 when it wrote none).
func logAdds(t *testing.T, st objstore.Store) (adds map[int64][]*actions.Add, marks map[int64]int64, latest int64) {
	t.Helper()
	ctx := context.Background()
	adds, marks = map[int64][]*actions.Add{}, map[int64]int64{}
	latest = open(t, st).Version()
	for v := int64(1); v <= latest; v++ {
		body, err := st.Get(ctx, "_delta_log/"+deltalog.CommitName(v))
		if err != nil {
			t.Fatal(err)
		}
		as, err := actions.ParseCommit(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		marks[v] = -2
		for _, a := range as {
			if a.Add != nil {
				adds[v] = append(adds[v], a.Add)
			}
			if d := a.DomainMetadata; d != nil && d.Domain == deltalog.RowTrackingDomain {
				var m struct{ RowIDHighWaterMark int64 }
				if err := json.Unmarshal([]byte(d.Configuration), &m); err != nil {
					t.Fatalf("version %d: %s: %v", v, d.Configuration, err)
				}
				marks[v] = m.RowIDHighWaterMark
			}
		}
	}
	return adds, marks, latest
}

// checkRowIDs checks the row tracking invariants over the whole log: every
// add has a baseRowId and its commit's version as defaultRowCommitVersion;
// the ID ranges of all adds ever committed are disjoint and together cover
// 0..mark with no gap (none given twice, none lost); each commit that
// gives IDs raises the mark to its highest ID, and the mark never falls.
func checkRowIDs(t *testing.T, st objstore.Store) (rows int64) {
	t.Helper()
	adds, marks, latest := logAdds(t, st)
	type span struct{ lo, hi, v int64 }
	var spans []span
	mark := int64(-1)
	for v := int64(1); v <= latest; v++ {
		top := int64(-1)
		for _, a := range adds[v] {
			if a.BaseRowID == nil || a.DefaultRowCommitVersion == nil {
				t.Fatalf("version %d: add %s without row tracking fields", v, a.Path)
			}
			if *a.DefaultRowCommitVersion != v {
				t.Fatalf("version %d: add %s has defaultRowCommitVersion %d", v, a.Path, *a.DefaultRowCommitVersion)
			}
			st, _ := actions.ParseStats(a.Stats)
			spans = append(spans, span{*a.BaseRowID, *a.BaseRowID + st.NumRecords, v})
			top = max(top, *a.BaseRowID+st.NumRecords-1)
		}
		if len(adds[v]) > 0 {
			if marks[v] < mark || marks[v] != top {
				t.Fatalf("version %d: mark %d after %d, highest ID given %d", v, marks[v], mark, top)
			}
			mark = marks[v]
		} else if marks[v] != -2 {
			t.Fatalf("version %d: a mark without adds", v)
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
	next := int64(0)
	for _, s := range spans {
		if s.lo != next {
			t.Fatalf("row IDs: span [%d,%d) of version %d starts at %d, want %d (IDs given twice or lost)", s.lo, s.hi, s.v, s.lo, next)
		}
		next = s.hi
	}
	if next-1 != mark {
		t.Fatalf("IDs cover 0..%d, mark %d", next-1, mark)
	}
	if hwm, err := open(t, st).RowIDHighWaterMark(); err != nil || hwm != mark {
		t.Fatalf("snapshot mark %d (%v), want %d", hwm, err, mark)
	}
	return next
}

func createRowTracked(t *testing.T, st objstore.Store) {
	t.Helper()
	createTable(t, st, map[string]string{"delta.enableRowTracking": "true"})
}

func TestRowTrackingCreateAndAppend(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createRowTracked(t, st)
	s := open(t, st)
	p := s.Protocol()
	if !p.HasWriterFeature(actions.FeatureRowTracking) || !p.HasWriterFeature(actions.FeatureDomainMetadata) || p.MinWriterVersion != 7 {
		t.Fatalf("protocol %+v", p)
	}
	props := s.Properties()
	if !strings.HasPrefix(props.MaterializedRowIDColumnName, "_row-id-col-") || !strings.HasPrefix(props.MaterializedRowCommitVersionColumnName, "_row-commit-version-col-") {
		t.Fatalf("materialized names %q %q", props.MaterializedRowIDColumnName, props.MaterializedRowCommitVersionColumnName)
	}
	if !s.RowTrackingEnabled() {
		t.Fatal("not enabled")
	}
	if hwm, err := s.RowIDHighWaterMark(); err != nil || hwm != -1 {
		t.Fatalf("fresh mark %d %v", hwm, err)
	}
	tx := s.NewTransaction()
	tx.Add(rowsFile("a", 3), rowsFile("b", 5), rowsFile("empty", 0))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post := mustSnap(t, res)
	if hwm, _ := post.RowIDHighWaterMark(); hwm != 7 {
		t.Fatalf("post-commit mark %d", hwm)
	}
	got := map[string][2]int64{}
	for f := range open(t, st).Files() {
		a := f
		got[a.Path] = [2]int64{*a.BaseRowID, *a.DefaultRowCommitVersion}
	}
	want := map[string][2]int64{"a": {0, 1}, "b": {3, 1}, "empty": {8, 1}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: baseRowId, defaultRowCommitVersion %v, want %v", k, got[k], w)
		}
	}
	// A re-added file (as with a deletion vector) keeps its IDs and
	// version; only the new file gets fresh ones.
	s = open(t, st)
	var old *actions.Add
	for f := range s.Files() {
		if f.Path == "b" {
			old = f
		}
	}
	tx = s.NewTransaction()
	readd := *old
	readd.DataChange = true
	tx.RemoveFile(old, true)
	tx.Add(actions.Action{Add: &readd}, rowsFile("c", 2))
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for f := range open(t, st).Files() {
		a := f
		switch a.Path {
		case "b":
			if *a.BaseRowID != 3 || *a.DefaultRowCommitVersion != 1 {
				t.Errorf("re-added b: %d %d", *a.BaseRowID, *a.DefaultRowCommitVersion)
			}
		case "c":
			if *a.BaseRowID != 8 || *a.DefaultRowCommitVersion != 2 {
				t.Errorf("new c: %d %d", *a.BaseRowID, *a.DefaultRowCommitVersion)
			}
		}
	}
	// An add without numRecords cannot get IDs: nothing is committed.
	tx = open(t, st).NewTransaction()
	tx.Add(addFile("nostats", "nl"))
	if _, err := tx.Commit(ctx); err == nil || !strings.Contains(err.Error(), "numRecords") || !strings.Contains(err.Error(), "nostats") {
		t.Fatalf("add without stats: %v", err)
	}
	if v := open(t, st).Version(); v != 2 {
		t.Fatalf("version %d after the refused commit", v)
	}
	// Rewrites that would move rows to new files are refused until they
	// materialize the rows' IDs.
	for _, op := range []deltalog.Operation{deltalog.OpReplaceWhere} {
		if err := open(t, st).Supports(op); !errors.Is(err, deltalog.ErrUnsupportedFeature) {
			t.Errorf("%s: %v", op, err)
		}
	}
	for _, op := range []deltalog.Operation{deltalog.OpScan, deltalog.OpAppend, deltalog.OpOverwrite, deltalog.OpDelete, deltalog.OpUpdate, deltalog.OpMerge, deltalog.OpOptimize, deltalog.OpVacuum} {
		if err := open(t, st).Supports(op); err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
}

// TestRowTrackingLoserRebasesMark: a loser assigns its IDs above the
// winner's mark, at the version it lands, never reusing the winner's IDs.
func TestRowTrackingLoserRebasesMark(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createRowTracked(t, st)
	s := open(t, st)
	w, l := s.NewTransaction(), s.NewTransaction()
	w.Add(rowsFile("w", 10))
	l.Add(rowsFile("l1", 4), rowsFile("l2", 1))
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := l.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 || res.Attempts != 2 {
		t.Fatalf("loser at %d after %d attempts", res.Version, res.Attempts)
	}
	if rows := checkRowIDs(t, st); rows != 15 {
		t.Fatalf("rows %d", rows)
	}
}

// TestRowTrackingConcurrentWritersWithFaults is the model test of the
// commit path: writers append concurrently through a store that loses
// replies and fails calls at random; afterwards the log must give every
// row exactly one ID (no ID twice, none lost), every add its commit's
// version, and the mark must follow the IDs. A commit whose outcome is
// unknown is looked up with FindCommit and counted only if it landed.
func TestRowTrackingConcurrentWritersWithFaults(t *testing.T) {
	ctx := context.Background()
	seed := testseed.From(t, "ROWTRACKING_SEED")
	mem := objstore.NewMem()
	createRowTracked(t, mem)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 1))
	chance := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
	st := objstore.Faulty(mem, objstore.Func(func(c objstore.Call) (before, after error) {
		if !strings.Contains(c.Key, "_delta_log/") {
			return nil, nil
		}
		switch {
		case c.Op == objstore.OpPut && chance(0.1):
			return nil, objstore.ErrLostResponse
		case chance(0.05):
			return errors.New("injected: connection reset"), nil
		}
		return nil, nil
	}))
	const writers, commits = 4, 8
	var (
		wg        sync.WaitGroup
		wantRows  = make([]int64, writers)
		errs      = make(chan error, writers*commits)
		committed = make([]int, writers)
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)+2))
			for c := 0; c < commits; c++ {
				s, err := deltalog.Open(ctx, st, "")
				if err != nil {
					c-- // an injected read failure: open again
					continue
				}
				tx := s.NewTransaction(deltalog.WithPostCommit(deltalog.PostCommitOff))
				var n int64
				for f := 0; f <= r.IntN(3); f++ {
					k := int64(r.IntN(50))
					n += k
					tx.Add(rowsFile(fmt.Sprintf("w%d-c%d-f%d", w, c, f), k))
				}
				_, err = tx.Commit(ctx)
				var cu *deltalog.CommitUnknownError
				switch {
				case err == nil:
				case errors.As(err, &cu):
					v, ferr := deltalog.FindCommit(ctx, mem, "", cu.Version, cu.TxnID)
					if ferr != nil {
						errs <- ferr
						return
					}
					if v < 0 {
						continue // did not land: nothing to count
					}
				case errors.Is(err, objstore.ErrInjected):
					continue // failed before anything was written (the count below checks it)
				default:
					errs <- fmt.Errorf("writer %d commit %d: %w", w, c, err)
					return
				}
				wantRows[w] += n
				committed[w]++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var total int64
	for _, n := range wantRows {
		total += n
	}
	if rows := checkRowIDs(t, mem); rows != total {
		t.Fatalf("IDs for %d rows, writers committed %d", rows, total)
	}
	t.Logf("%d commits, %d rows", open(t, mem).Version(), total)
}
