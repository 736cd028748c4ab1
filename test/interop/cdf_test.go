package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// peerChanges asks p for the change data feed of versions from through to
// (to < 0: the latest) and returns its rows as sorted canonical lines.
func peerChanges(t testing.TB, p *peer, dir string, from, to int64) []string {
	t.Helper()
	req := request{Op: "changes", Path: dir, Version: &from, Out: filepath.Join(t.TempDir(), "changes.parquet")}
	if to >= 0 {
		req.EndVersion = &to
	}
	resp := p.call(t, req)
	lines := parquetLines(t, req.Out)
	if int64(len(lines)) != resp.Rows {
		t.Fatalf("%s read %d change rows, but the file holds %d", p.engine, resp.Rows, len(lines))
	}
	return lines
}

// lakelogChanges reads the same feed with lakelog, through the checked
// allocator.
func lakelogChanges(t testing.TB, store objstore.Store, from, to int64) []string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	f, err := cdf.Open(context.Background(), store, "", cdf.Versions(from, to), cdf.WithAllocator(mem), cdf.WithParallelism(3))
	if err != nil {
		t.Fatalf("lakelog cdf: %v", err)
	}
	var recs []arrow.RecordBatch
	for rec, err := range f.Records(context.Background()) {
		if err != nil {
			t.Fatalf("lakelog cdf %d to %d: %v", from, to, err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	lines := canonical(t, recs...)
	for _, r := range recs {
		r.Release()
	}
	return lines
}

// commitStamp is the _commit_timestamp of a canonical change row.
var commitStamp = regexp.MustCompile(`,"_commit_timestamp":"[^"]*"}$`)

// compareFeeds checks ranges of versions of the table (the whole range,
// each version alone, and the second half), lakelog against the peer, row
// for row; with the commit timestamps when stamps is set.
//
// adjust, when not nil, rewrites the peer's lines of a range first.
func compareFeeds(t *testing.T, p *peer, store objstore.Store, dir string, latest int64, stamps bool, adjust func(from, to int64, line string) string) {
	ranges := [][2]int64{{0, latest}, {latest / 2, latest}}
	for v := range latest + 1 {
		ranges = append(ranges, [2]int64{v, v})
	}
	total := 0
	for _, r := range ranges {
		want := peerChanges(t, p, dir, r[0], r[1])
		got := lakelogChanges(t, store, r[0], r[1])
		if adjust != nil {
			for i := range want {
				want[i] = adjust(r[0], r[1], want[i])
			}
			slices.Sort(want)
		}
		if !stamps {
			for _, lines := range [][]string{got, want} {
				for i := range lines {
					lines[i] = commitStamp.ReplaceAllString(lines[i], "}")
				}
				slices.Sort(lines)
			}
		}
		sameRows(t, fmt.Sprintf("lakelog's changes %d to %d", r[0], r[1]), got, want)
		total += len(want)
	}
	if total == 0 {
		t.Fatal("the feeds are empty: the test tests nothing")
	}
}

// TestSparkChangeFeeds: tables Spark writes with the feed on (INSERT,
// UPDATE, DELETE, MERGE, a column added, with and without deletion
// vectors): lakelog's changes equal Spark's table_changes over every
// range of versions.
func TestSparkChangeFeeds(t *testing.T) {
	sp := requirePeer(t, spark)
	for _, dv := range []bool{false, true} {
		t.Run(fmt.Sprintf("deletionVectors=%v", dv), func(t *testing.T) {
			store, dir := newLocal(t)
			table := "delta.`" + dir + "`"
			for _, stmt := range []string{
				"CREATE TABLE " + table + " (id INT, p STRING, v STRING, d DECIMAL(10,2)) USING delta PARTITIONED BY (p) " +
					fmt.Sprintf("TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = '%v')", dv),
				"INSERT INTO " + table + " SELECT id, CASE WHEN id % 3 = 0 THEN 'a' WHEN id % 3 = 1 THEN 'b' ELSE NULL END, concat('v', id), id / 4 FROM range(0, 60)",
				"INSERT INTO " + table + " SELECT id, 'c', concat('w', id), NULL FROM range(60, 90)",
				"UPDATE " + table + " SET v = concat(v, '-u'), d = d + 1 WHERE id % 7 = 0",
				"DELETE FROM " + table + " WHERE id % 5 = 0 OR p IS NULL AND id > 70",
				"UPDATE " + table + " SET p = 'b' WHERE p = 'c' AND id % 2 = 0",
				"MERGE INTO " + table + " t USING (SELECT id, concat('m', id) AS v FROM range(80, 100)) s ON t.id = s.id " +
					"WHEN MATCHED AND s.id % 2 = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, p, v, d) VALUES (s.id, 'a', s.v, 0)",
				"ALTER TABLE " + table + " ADD COLUMNS (extra BIGINT)",
				"UPDATE " + table + " SET extra = id * 10 WHERE id < 20",
				"DELETE FROM " + table + " WHERE id BETWEEN 30 AND 40",
			} {
				// One call each: the worker answers each within its timeout.
				sp.call(t, request{Op: "sql", Statements: []string{stmt}})
			}
			latest := sp.call(t, request{Op: "version", Path: dir}).Version
			if latest != 9 {
				t.Fatalf("spark made version %d, want 9", latest)
			}
			// Spark reads every range under the latest schema; lakelog, as
			// the issue asks, under the range's end version's (the column
			// extra, added at version 7, is not in the earlier ones).
			adjust := func(_, to int64, line string) string {
				if to < 7 {
					return strings.Replace(line, `,"extra":null`, "", 1)
				}
				return line
			}
			compareFeeds(t, sp, store, dir, latest, true, adjust)
			if dv && !hasDVDiff(t, store, latest) {
				t.Fatal("no version of Spark's table changes a file's deletion vector without change data files: the test does not test the deletion-vector difference")
			}
			// Timestamp ranges map to versions as Spark maps them: exactly
			// at a commit's time, and a millisecond past it.
			hist, err := deltalog.History(context.Background(), store, "", -1)
			if err != nil {
				t.Fatal(err)
			}
			at := map[int64]time.Time{}
			for _, h := range hist {
				at[h.Version] = h.Timestamp
			}
			for _, c := range [][2]time.Time{
				{at[2], at[5]},
				{at[2].Add(time.Millisecond), at[5].Add(-time.Millisecond)},
				{at[8], {}},
			} {
				req := request{Op: "changes", Path: dir, Out: filepath.Join(t.TempDir(), "changes.parquet"), StartTimestamp: c[0].UTC().Format("2006-01-02 15:04:05.000")}
				if !c[1].IsZero() {
					req.EndTimestamp = c[1].UTC().Format("2006-01-02 15:04:05.000")
				}
				resp := sp.call(t, req)
				want := parquetLines(t, req.Out)
				if int64(len(want)) != resp.Rows {
					t.Fatalf("spark read %d rows, the file holds %d", resp.Rows, len(want))
				}
				f, err := cdf.Open(context.Background(), store, "", cdf.Timestamps(c[0], c[1]))
				if err != nil {
					t.Fatal(err)
				}
				from, to := f.Versions()
				got := lakelogChanges(t, store, from, to)
				for i := range want {
					want[i] = adjust(from, to, want[i])
				}
				slices.Sort(want)
				sameRows(t, fmt.Sprintf("lakelog's changes from %s to %s (versions %d to %d)", req.StartTimestamp, req.EndTimestamp, from, to), got, want)
			}
		})
	}
}

// hasDVDiff reports whether some version of the table removes and adds
// one file with different deletion vectors and has no cdc action.
func hasDVDiff(t *testing.T, store objstore.Store, latest int64) bool {
	for vc, err := range deltalog.Commits(context.Background(), store, "", 0, latest) {
		if err != nil {
			t.Fatal(err)
		}
		removed := map[string]string{}
		cdc := false
		for _, a := range vc.Actions {
			if a.Remove != nil && a.Remove.DataChange {
				removed[a.Remove.Path] = a.Remove.DeletionVector.UniqueID()
			}
			cdc = cdc || a.CDC != nil
		}
		for _, a := range vc.Actions {
			if a.Add == nil || cdc {
				continue
			}
			if dv, ok := removed[a.Add.Path]; ok && dv != a.Add.DeletionVector.UniqueID() {
				return true
			}
		}
	}
	return false
}

// TestDeltaRSChangeFeeds: a table delta-rs writes with the feed on
// (appends, a DELETE, an UPDATE): lakelog's changes equal load_cdf's.
func TestDeltaRSChangeFeeds(t *testing.T) {
	rs := requirePeer(t, deltaRS)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	l := layouts[0]
	_, sc := tableSchema(t, l.ddl)
	g := newGen(77)
	store, dir := newLocal(t)
	files := t.TempDir()
	cfg := map[string]string{"delta.enableChangeDataFeed": "true"}
	for i := range 3 {
		rec := g.batch(mem, sc, 50)
		in := filepath.Join(files, fmt.Sprintf("in-%d.parquet", i))
		writeParquet(t, in, rec)
		rec.Release()
		rs.call(t, request{Op: "write", Path: dir, Input: in, Mode: "append", PartitionBy: l.parts, Configuration: cfg})
	}
	rs.call(t, request{Op: "delete", Path: dir, Where: "id % 3 = 0"})
	rs.call(t, request{Op: "update", Path: dir, Where: "id % 4 = 1", Statements: []string{"id=id + 1000"}})
	latest := rs.call(t, request{Op: "version", Path: dir}).Version
	// delta-rs stamps changes with commitInfo.timestamp, as a timestamp
	// without time zone; Spark, and lakelog, with the commit file's time
	// (PROTOCOL.md: the in-commit timestamp where enabled, else the file's
	// modification time). The rows are compared without it.
	compareFeeds(t, rs, store, dir, latest, false, nil)
}
