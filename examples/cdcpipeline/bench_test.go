package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/cdctest"
	"github.com/lakelog/lakelog/test/testseed"
)

var (
	benchBurst  = flag.Int("pipeline.bench.burst", 0, "run TestPipelineBench with a burst of this many rows (100000 for the published figure)")
	benchSteady = flag.Int("pipeline.bench.rate", 500, "TestPipelineBench: source changes per second of its steady phase (60% inserts, 30% updates, 10% deletes)")
	benchFor    = flag.Duration("pipeline.bench.for", time.Minute, "TestPipelineBench: how long the steady phase runs")
	benchVacuum = flag.Duration("pipeline.bench.vacuum", 5*time.Minute, "TestPipelineBench: the pipeline's VACUUM interval, and the tables' delta.deletedFileRetentionDuration")
	benchLog    = flag.Duration("pipeline.bench.logretention", 0, "TestPipelineBench: the tables' delta.logRetentionDuration (0: Delta's 30 days; the log then grows with every commit)")
)

// TestPipelineBench measures the pipeline as `lakelog cdc run` runs it
// (cdc.Run: bronze and silver auto-compacted, silver vacuumed every
// -pipeline.bench.vacuum with that retention) end to end: each row's lag
// from its source commit (clock_timestamp() in the row) to the silver
// commit that holds it (silver's change feed, inserts and updates), as
// p50/p99, and rows/s, for a burst of inserts and a steady phase of
// churn (-pipeline.bench.rate source changes a second, paced by the
// clock: 60% inserts, 30% updates and 10% deletes of random rows, each
// psql call one transaction of what is due); bronze's files per commit; silver's bytes on
// disk per live byte, every minute and at the end. It measures; it
// asserts nothing about speed, only that silver ends equal to Postgres
// in row count. Run it on a quiet machine:
//
//	go test ./examples/cdcpipeline -run TestPipelineBench -pipeline.bench.burst 100000 -pipeline.bench.rate 500 -pipeline.bench.for 60m -v -timeout 90m
func TestPipelineBench(t *testing.T) {
	if *benchBurst == 0 {
		t.Skip("measures with -pipeline.bench.burst N")
	}
	svc := cdctest.Require(t)
	seed := testseed.From(t, "PIPELINE_BENCH_SEED")
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	table := strings.ReplaceAll(cloudtest.Name("bench_"), "-", "_")
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, v text, created timestamptz default clock_timestamp())", table))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	svc.Connector(t, svc.Connect, table, svc.ConnectorConfig(table, "public."+table))
	bronzeURI, silverURI := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	every := *benchVacuum
	cfg := &cdc.Config{
		Brokers: svc.BrokerList(), Connector: table,
		Properties: map[string]string{actions.PropDeletedFileRetentionDuration: fmt.Sprintf("interval %d seconds", int(every.Seconds()))},
		Vacuum:     cdc.VacuumConfig{Interval: &every},
		Tables:     []cdc.TableConfig{{Topic: table + ".public." + table, Bronze: bronzeURI, Silver: silverURI}},
	}
	if *benchLog > 0 {
		cfg.Properties[actions.PropLogRetentionDuration] = fmt.Sprintf("interval %d seconds", int(benchLog.Seconds()))
	}
	t.Logf("pipeline: auto compaction on, VACUUM of silver every %s keeping %s (delta.deletedFileRetentionDuration), properties %v", every, every, cfg.Properties)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		log := slog.New(slog.NewTextHandler(&noteworthy{t: t}, nil))
		done <- cdc.Run(ctx, cfg, log)
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("pipeline: %v", err)
			}
		}
	}
	defer stop()

	// live is silver's row count (deletion vectors deducted), -1 before
	// silver exists.
	live := func() int64 {
		snap, err := deltalog.OpenURI(t.Context(), silverURI)
		if err != nil {
			return -1
		}
		sc, err := reader.NewScan(snap)
		if err != nil {
			t.Fatal(err)
		}
		n, err := sc.Count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitRows := func(n int64) {
		deadline := time.Now().Add(30 * time.Minute)
		for time.Now().Before(deadline) {
			if live() == n {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatalf("silver did not reach %d rows (it has %d)", n, live())
	}
	// The burst: one statement.
	start := time.Now()
	svc.Psql(t, fmt.Sprintf("insert into %s (id, v) select g, md5(g::text) from generate_series(1, %d) g", table, *benchBurst))
	waitRows(int64(*benchBurst))
	burst := time.Since(start)
	t.Logf("burst: %d rows in %s: %.0f rows/s end to end", *benchBurst, burst.Round(time.Millisecond), float64(*benchBurst)/burst.Seconds())
	snap, err := deltalog.OpenURI(t.Context(), silverURI)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "burst", rowLags(t, silverURI, 0, snap.Version()))

	// The steady phase: churn, a transaction of what is due at a time.
	// Silver's change feed is read as it goes: VACUUM deletes the change
	// files of versions older than its retention.
	from := snap.Version() + 1
	var lags []time.Duration
	readLags := func() {
		s, err := deltalog.OpenURI(t.Context(), silverURI)
		if err != nil {
			t.Fatal(err)
		}
		if s.Version() >= from {
			lags = append(lags, rowLags(t, silverURI, from, s.Version())...)
			from = s.Version() + 1
		}
	}
	next := int64(*benchBurst + 1)
	began := time.Now()
	end := began.Add(*benchFor)
	lastRead, lastSample := began, began
	var inserts, updates, deletes int
	for now := time.Now(); now.Before(end); now = time.Now() {
		// Paced by the clock (psql's own time does not lower the rate),
		// the mix kept over the whole phase.
		due := int(float64(*benchSteady) * now.Sub(began).Seconds())
		ni, nu := due*6/10-inserts, due*3/10-updates
		nd := due - due*6/10 - due*3/10 - deletes
		if ni <= 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		ids := func(k int) string {
			out := make([]string, k)
			for i := range out {
				out[i] = strconv.FormatInt(1+rng.Int64N(next-1), 10)
			}
			return strings.Join(out, ",")
		}
		sql := fmt.Sprintf("insert into %s (id, v) select g, md5(g::text) from generate_series(%d, %d) g;", table, next, next+int64(ni)-1)
		if nu > 0 {
			sql += fmt.Sprintf("update %s set v = md5(random()::text), created = clock_timestamp() where id in (%s);", table, ids(nu))
		}
		if nd > 0 {
			sql += fmt.Sprintf("delete from %s where id in (%s);", table, ids(nd))
		}
		svc.Psql(t, "begin;"+sql+"commit;")
		next += int64(ni)
		inserts, updates, deletes = inserts+ni, updates+nu, deletes+nd
		if now.Sub(lastRead) >= 10*time.Second {
			readLags()
			lastRead = now
		}
		if now.Sub(lastSample) >= time.Minute {
			storage(t, fmt.Sprintf("steady +%s", now.Sub(began).Round(time.Minute)), silverURI, false)
			lastSample = now
		}
	}
	var want int64
	fmt.Sscan(strings.TrimSpace(svc.Psql(t, "select count(*) from "+table)), &want)
	waitRows(want)
	readLags()
	t.Logf("steady: %s of %d inserts, %d updates, %d deletes (%.0f changes/s; of random ids, some already deleted); Postgres holds %d rows, so does silver",
		*benchFor, inserts, updates, deletes, float64(inserts+updates+deletes)/benchFor.Seconds(), want)
	report(t, "steady", lags)
	stop()

	perCommit(t, bronzeURI)
	storage(t, "end", silverURI, true)
}

// noteworthy passes the pipeline's log lines of note (VACUUM, warnings,
// errors) to the test's log; a line per commit would drown it.
type noteworthy struct{ t *testing.T }

func (w *noteworthy) Write(p []byte) (int, error) {
	line := string(p)
	if strings.Contains(line, "vacuum") || !strings.Contains(line, "level=INFO") {
		w.t.Log(strings.TrimSpace(line))
	}
	return len(p), nil
}

// perCommit logs bronze's files per commit: the files each commit that
// added data (its appends; auto compaction's and VACUUM's commits change
// no data) added, mean and max.
func perCommit(t *testing.T, uri string) {
	t.Helper()
	store, err := objstore.Open(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(store)
	// From the oldest commit log cleanup kept (with
	// -pipeline.bench.logretention it removes the first ones).
	hist, err := deltalog.History(t.Context(), store, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	from := hist[len(hist)-1].Version
	for _, h := range hist {
		if !h.Missing {
			from = min(from, h.Version)
		}
	}
	var commits, files, most int
	for c, err := range deltalog.Commits(t.Context(), store, "", from, -1) {
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range c.Actions {
			if a.Add != nil && a.Add.DataChange {
				n++
			}
		}
		if n > 0 {
			commits, files, most = commits+1, files+n, max(most, n)
		}
	}
	if commits == 0 {
		t.Fatal("bronze has no commit with data")
	}
	t.Logf("bronze: %d commits with data from version %d; files per commit: mean %.2f, max %d", commits, from, float64(files)/float64(commits), most)
}

// storage logs silver's bytes on disk per live byte. On disk is every
// file under the table's root, _delta_log included. Live is the active
// files' sizes (the latest version's adds; rows deleted by a deletion
// vector still count). With compact, the table is then compacted
// (OPTIMIZE rewriting every file, deletion vectors applied) and its
// active size is the live rows written once: the floor for on disk.
func storage(t *testing.T, phase, root string, compact bool) {
	t.Helper()
	var disk, logBytes, changeBytes, checkpointBytes, dvBytes int64
	files, commits := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		disk, files = disk+info.Size(), files+1
		switch rel, _ := filepath.Rel(root, path); {
		case strings.HasPrefix(rel, "_delta_log"+string(filepath.Separator)):
			logBytes += info.Size()
			if strings.Contains(rel, ".checkpoint") {
				checkpointBytes += info.Size()
			} else if strings.HasSuffix(rel, ".json") {
				commits++
			}
		case strings.HasPrefix(rel, "deletion_vector_"):
			dvBytes += info.Size()
		case strings.HasPrefix(rel, "_change_data"+string(filepath.Separator)):
			changeBytes += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.OpenURI(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	live := snap.SizeInBytes()
	t.Logf("%s: silver version %d: %d bytes in %d files on disk (log %d: %d commits, checkpoints %d; change data %d, deletion vectors %d, data files %d); %d bytes in %d active files: %.2fx",
		phase, snap.Version(), disk, files, logBytes, commits, checkpointBytes, changeBytes, dvBytes, disk-logBytes-changeBytes-dvBytes, live, snap.NumFiles(), float64(disk)/float64(live))
	if !compact {
		return
	}
	if _, err := maintenance.Optimize(t.Context(), snap, maintenance.MinFileSize(math.MaxInt64)); err != nil {
		t.Fatal(err)
	}
	if snap, err = deltalog.OpenURI(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: silver's live rows written once (OPTIMIZE of every file): %d bytes in %d files; on disk before it per this: %.2fx", phase, snap.SizeInBytes(), snap.NumFiles(), float64(disk)/float64(snap.SizeInBytes()))
}

// rowLags is each inserted or updated row's lag: silver's commit time
// minus the row's created time, for silver's versions from through to.
func rowLags(t *testing.T, uri string, from, to int64) []time.Duration {
	t.Helper()
	snap, err := deltalog.OpenURI(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cdf.Open(t.Context(), snap.Store(), snap.Root(), cdf.Versions(from, to), cdf.WithColumns("created"))
	if err != nil {
		t.Fatal(err)
	}
	var lags []time.Duration
	for rec, err := range f.Records(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		created, kind, at := rec.Column(0), rec.Column(1), rec.Column(3)
		for i := range int(rec.NumRows()) {
			if k := kind.ValueStr(i); k != actions.ChangeInsert && k != actions.ChangeUpdatePostimage {
				continue
			}
			c, _ := actions.ArrowValue(created, i)
			a, _ := actions.ArrowValue(at, i)
			lags = append(lags, time.Duration(int64(a.(actions.Timestamp))-int64(c.(actions.Timestamp)))*time.Microsecond)
		}
	}
	return lags
}

func report(t *testing.T, phase string, lags []time.Duration) {
	if len(lags) == 0 {
		t.Logf("%s: no rows", phase)
		return
	}
	slices.Sort(lags)
	q := func(p float64) time.Duration { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	t.Logf("%s: %d rows, lag p50 %s p99 %s max %s", phase, len(lags), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
}
