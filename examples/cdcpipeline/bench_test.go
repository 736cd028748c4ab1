package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/test/cdctest"
)

var (
	benchBurst  = flag.Int("pipeline.bench.burst", 0, "run TestPipelineBench with a burst of this many rows (100000 for the published figure)")
	benchSteady = flag.Int("pipeline.bench.rate", 500, "TestPipelineBench: rows per second of its steady phase")
	benchFor    = flag.Duration("pipeline.bench.for", time.Minute, "TestPipelineBench: how long the steady phase runs")
)

// TestPipelineBench measures the pipeline end to end: each row's lag
// from its source commit (clock_timestamp() in the row) to the silver
// commit that holds it (silver's change feed), as p50/p99, and rows/s,
// for a burst and a steady rate; bronze's files per commit and silver's
// bytes on disk per live byte. It measures; it asserts nothing about
// speed. Run it on a quiet machine:
//
//	go test ./examples/cdcpipeline -run TestPipelineBench -pipeline.bench.burst 100000 -pipeline.bench.rate 500 -pipeline.bench.for 10m -v -timeout 60m
func TestPipelineBench(t *testing.T) {
	if *benchBurst == 0 {
		t.Skip("measures with -pipeline.bench.burst N")
	}
	svc := cdctest.Require(t)
	dir := t.TempDir()
	table := strings.ReplaceAll(cloudtest.Name("bench_"), "-", "_")
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, v text, created timestamptz default clock_timestamp())", table))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	svc.Connector(t, svc.Connect, table, svc.ConnectorConfig(table, "public."+table))
	bronzeURI, silverURI := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	bronze := newStage(t, dir, "bronze", "bronze", "-table", bronzeURI, "-brokers", svc.Brokers, "-topic", table+".public."+table,
		"-tx-topic", table+".transaction", "-group", table)
	silver := newStage(t, dir, "silver", "silver", "-bronze", bronzeURI, "-table", silverURI, "-poll", "100ms")
	bronze.start()
	silver.start()
	defer bronze.kill(syscall.SIGTERM)
	defer silver.kill(syscall.SIGTERM)

	waitRows := func(n int) {
		deadline := time.Now().Add(30 * time.Minute)
		for time.Now().Before(deadline) {
			if snap, err := deltalog.OpenURI(t.Context(), silverURI); err == nil {
				var rows int64
				for a := range snap.Files() {
					if st, err := actions.ParseStats(a.Stats); err == nil && st != nil {
						rows += st.NumRecords
					}
				}
				if rows >= int64(n) {
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("silver did not reach %d rows", n)
	}
	// The burst: one statement.
	start := time.Now()
	svc.Psql(t, fmt.Sprintf("insert into %s (id, v) select g, md5(g::text) from generate_series(1, %d) g", table, *benchBurst))
	waitRows(*benchBurst)
	burst := time.Since(start)
	t.Logf("burst: %d rows in %s: %.0f rows/s end to end", *benchBurst, burst.Round(time.Millisecond), float64(*benchBurst)/burst.Seconds())
	burstLag := rowLags(t, silverURI, 0)
	report(t, "burst", burstLag)

	// The steady phase: batches of rate/10 rows every 100 ms.
	snap, _ := deltalog.OpenURI(t.Context(), silverURI)
	from := snap.Version() + 1
	next := *benchBurst + 1
	end := time.Now().Add(*benchFor)
	for time.Now().Before(end) {
		n := max(1, *benchSteady/10)
		svc.Psql(t, fmt.Sprintf("insert into %s (id, v) select g, md5(g::text) from generate_series(%d, %d) g", table, next, next+n-1))
		next += n
		time.Sleep(100 * time.Millisecond)
	}
	waitRows(next - 1)
	report(t, "steady", rowLags(t, silverURI, from))

	b, _ := deltalog.OpenURI(t.Context(), bronzeURI)
	s, _ := deltalog.OpenURI(t.Context(), silverURI)
	t.Logf("bronze: %d files in %d versions (%.1f per commit); silver: %d bytes of live files for %d rows",
		b.NumFiles(), b.Version()+1, float64(b.NumFiles())/float64(b.Version()+1), s.SizeInBytes(), next-1)
}

// rowLags is each inserted row's lag: silver's commit time minus the
// row's created time, for silver's versions from from on.
func rowLags(t *testing.T, uri string, from int64) []time.Duration {
	t.Helper()
	snap, err := deltalog.OpenURI(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cdf.Open(t.Context(), snap.Store(), snap.Root(), cdf.Versions(from, snap.Version()), cdf.WithColumns("created"))
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
			if kind.ValueStr(i) != actions.ChangeInsert {
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
