package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// TestCommitRange: Commits yields each version of a range in order, with
// its actions, its commitInfo and the timestamp History gives it (in-commit
// timestamps where the table records them), and refuses ranges it cannot
// serve.
func TestCommitRange(t *testing.T) {
	ctx := context.Background()
	for _, ict := range []bool{false, true} {
		t.Run(fmt.Sprintf("inCommitTimestamps=%v", ict), func(t *testing.T) {
			st := objstore.NewMem()
			var props map[string]string
			if ict {
				props = map[string]string{"delta.enableInCommitTimestamps": "true"}
			}
			createTable(t, st, props)
			for i := range 20 {
				appendFiles(t, st, fmt.Sprintf("f%02d", i))
			}
			hist, err := deltalog.History(ctx, st, "", -1)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int64]deltalog.CommitEntry{}
			for _, h := range hist {
				want[h.Version] = h
			}
			next := int64(3)
			for vc, err := range deltalog.Commits(ctx, st, "", 3, 17) {
				if err != nil {
					t.Fatal(err)
				}
				if vc.Version != next {
					t.Fatalf("version %d, want %d", vc.Version, next)
				}
				next++
				h := want[vc.Version]
				if !vc.Timestamp.Equal(h.Timestamp) {
					t.Errorf("version %d: timestamp %v, History says %v", vc.Version, vc.Timestamp, h.Timestamp)
				}
				if vc.CommitInfo == nil || vc.CommitInfo.TxnID != h.Info.TxnID || (ict && vc.CommitInfo.InCommitTimestamp == nil) {
					t.Errorf("version %d: commitInfo %+v", vc.Version, vc.CommitInfo)
				}
				if ict && vc.Timestamp.UnixMilli() != *vc.CommitInfo.InCommitTimestamp {
					t.Errorf("version %d: timestamp %v is not the in-commit timestamp %d", vc.Version, vc.Timestamp, *vc.CommitInfo.InCommitTimestamp)
				}
				adds := 0
				for _, a := range vc.Actions {
					if a.Add != nil {
						adds++
						if want := fmt.Sprintf("f%02d", vc.Version-1); a.Add.Path != want {
							t.Errorf("version %d adds %s, want %s", vc.Version, a.Add.Path, want)
						}
					}
				}
				if adds != 1 {
					t.Errorf("version %d: %d adds, want 1", vc.Version, adds)
				}
			}
			if next != 18 {
				t.Fatalf("range 3..17 ended before version %d", next)
			}
			// Up to the latest, and stopping early.
			n := 0
			for _, err := range deltalog.Commits(ctx, st, "", 15, -1) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				if n == 3 {
					break
				}
			}
			if n != 3 {
				t.Errorf("stopping early: %d versions", n)
			}
		})
	}

	st := objstore.NewMem()
	createTable(t, st, nil)
	for i := range 4 {
		appendFiles(t, st, fmt.Sprintf("f%d", i))
	}
	firstErr := func(from, to int64) error {
		for _, err := range deltalog.Commits(ctx, st, "", from, to) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := firstErr(2, 9); !errors.Is(err, deltalog.ErrVersionNotFound) {
		t.Errorf("range past the latest: %v", err)
	}
	if err := st.Delete(ctx, "_delta_log/"+deltalog.CommitName(2)); err != nil {
		t.Fatal(err)
	}
	if err := firstErr(1, 4); !errors.Is(err, deltalog.ErrLogCorrupt) {
		t.Errorf("range over a missing commit: %v", err)
	}
	if err := firstErr(3, 4); err != nil {
		t.Errorf("range after a missing commit: %v", err)
	}
	for _, v := range []int64{0, 1} {
		if err := st.Delete(ctx, "_delta_log/"+deltalog.CommitName(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := firstErr(0, 4); !errors.Is(err, deltalog.ErrVersionNotFound) {
		t.Errorf("range from a cleaned-up version: %v", err)
	}
}

// TestCommitRangeReadsOnlyItsCommits: a range reads its own commit files
// and nothing else (no snapshot of the latest version to learn where
// in-commit timestamps begin), and still gives in-commit timestamps.
func TestCommitRangeReadsOnlyItsCommits(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, map[string]string{"delta.enableInCommitTimestamps": "true"})
	for i := range 25 {
		appendFiles(t, mem, fmt.Sprintf("f%02d", i))
	}
	st := objstore.Counting(mem)
	n := 0
	for vc, err := range deltalog.Commits(ctx, st, "", 21, 23) {
		if err != nil {
			t.Fatal(err)
		}
		if vc.CommitInfo == nil || vc.CommitInfo.InCommitTimestamp == nil || vc.Timestamp.UnixMilli() != *vc.CommitInfo.InCommitTimestamp {
			t.Fatalf("version %d: timestamp %v, commitInfo %+v", vc.Version, vc.Timestamp, vc.CommitInfo)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d versions, want 3", n)
	}
	var reads []string
	for _, op := range []objstore.Op{objstore.OpGet, objstore.OpGetRange} {
		reads = append(reads, st.Keys(op)...)
	}
	if len(reads) != 3 {
		t.Fatalf("read %d objects, want the 3 commits of the range: %v", len(reads), reads)
	}
}
