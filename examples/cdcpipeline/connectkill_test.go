package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/test/cdctest"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestPipelineConnectKill SIGKILLs Kafka Connect (a worker of the
// test's own) in the middle of bursts of source transactions and starts
// it again: Debezium streams again what came after the offsets it last
// flushed, and bronze must hold each source change once all the same,
// silver equal the Postgres table, and no silver version show part of a
// source transaction.
func TestPipelineConnectKill(t *testing.T) {
	svc := cdctest.Require(t)
	seed := testseed.From(t, "CONNECTKILL_SEED")
	rng := rand.New(rand.NewPCG(seed, 3))
	krng := rand.New(rand.NewPCG(seed, 4))
	kills, txPerBurst := 2, 30
	if *pipelineSoak {
		kills, txPerBurst = 8, 100
	}
	const flush = 3 * time.Second
	worker := svc.StartConnect(t, flush)
	dir := t.TempDir()
	bronzeURI, silverURI := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")

	table := strings.ReplaceAll(cloudtest.Name("cdck_"), "-", "_")
	cols := slices.Clone(sourceColumns)
	var ddl []string
	for _, c := range cols {
		ddl = append(ddl, c.name+" "+c.pgType)
	}
	svc.Psql(t, `create or replace function big_text(n int) returns text language sql as $$ select string_agg(md5(g::text || random()::text), '') from generate_series(1, n) g $$;`)
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, blk int, %s)", table, strings.Join(ddl, ", ")))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	nextID := int64(1)
	var seedSQL strings.Builder
	insertRows(&seedSQL, rng, table, cols, &nextID, 20, 0)
	svc.Psql(t, seedSQL.String())

	name := table
	svc.Connector(t, worker.URL(), name, svc.ConnectorConfig(name, "public."+table))
	topic := name + ".public." + table
	bronze := newStage(t, dir, "bronze", "bronze", "-table", bronzeURI, "-brokers", svc.Brokers, "-topic", topic,
		"-tx-topic", name+".transaction", "-group", table, "-instance-id", table+"-bronze", "-numeric", "string", "-max-wait", "300ms",
		"-auto-compact-min-files", fmt.Sprint(autoCompactMinFiles))
	// Silver without deletion vectors (copy-on-write): delta-rs, which
	// cannot read them, checks it below.
	silver := newStage(t, dir, "silver", "silver", "-bronze", bronzeURI, "-table", silverURI, "-poll", "100ms",
		"-auto-compact-min-files", fmt.Sprint(autoCompactMinFiles), "-deletion-vectors", "false")
	bronze.start()
	silver.start()
	defer func() {
		bronze.kill(syscall.SIGTERM)
		silver.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("bronze's log:\n%s", tail(bronze.logText(), 30))
			t.Logf("silver's log:\n%s", tail(silver.logText(), 30))
			t.Logf("Kafka Connect's log:\n%s", worker.LogTail(30))
		}
	}()
	worker.WaitStreaming(120 * time.Second)

	blocks := map[int]int{}
	blk := 0
	for k := range kills {
		// Debezium's offsets are flushed past what came before the burst.
		time.Sleep(flush + time.Second)
		// The burst: source transactions back to back, each a block of
		// inserts and an update and delete of earlier rows.
		var burst sync.WaitGroup
		burst.Add(1)
		var sqls []string
		for range txPerBurst {
			blk++
			n := 50 + rng.IntN(150)
			var sql strings.Builder
			sql.WriteString("begin;\n")
			insertRows(&sql, rng, table, cols, &nextID, n, blk)
			fmt.Fprintf(&sql, "update %s set flag = not flag, code = 'u' || (id %% 1000) where id %% 11 = %d and blk = 0;\n", table, rng.IntN(11))
			fmt.Fprintf(&sql, "delete from %s where id in (select id from %[1]s where blk = 0 order by random() limit 1);\ncommit;\n", table)
			sqls = append(sqls, sql.String())
			blocks[blk] = n
		}
		go func() {
			defer burst.Done()
			for _, sql := range sqls {
				if _, err := svc.PsqlErr(sql); err != nil {
					t.Errorf("psql: %v", err)
					return
				}
			}
		}()
		time.Sleep(time.Duration(500+krng.IntN(1500)) * time.Millisecond)
		worker.Kill()
		svc.WaitSlotInactive(t, name, 60*time.Second)
		worker.Start()
		worker.WaitStreaming(120 * time.Second)
		burst.Wait()
		if t.Failed() {
			t.FailNow()
		}
		t.Logf("kill %d: Connect killed mid-burst and started again", k+1)
		if bronze.exited() || silver.exited() {
			t.Fatal("a stage died by itself")
		}
	}
	waitSilverEqual(t, svc, table, cols, silverURI, []*stage{bronze, silver})
	checkBronze(t, svc, bronzeURI, topic)
	checkWholeTransactions(t, silverURI, blocks)
	// No schema change and no deletion vectors here: delta-rs can read silver.
	if snap, err := deltalog.OpenURI(t.Context(), silverURI); err != nil || snap.Config().Supports(actions.FeatureDeletionVectors) {
		t.Fatalf("silver run with -deletion-vectors false has them: %v", err)
	}
	checkDeltaRS(t, silverURI, cols, false)
	// The kills made Debezium send changes again: otherwise the test
	// proved nothing about them.
	dec := cdc.NewDecoder(cdc.WithVariableNumeric(cdc.NumericMode{AsString: true}))
	seen := map[int64]int{}
	resent := 0
	for _, r := range svc.ReadTopics(t, 3*time.Second, topic) {
		e, err := dec.Decode(r.Key, r.Value)
		if errors.Is(err, cdc.ErrTombstone) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := e.Position(); ok {
			if seen[p.LSN]++; seen[p.LSN] == 2 {
				resent++
			}
		}
	}
	if resent == 0 {
		t.Fatalf("after %d kills of Connect mid-burst Debezium sent no change twice: nothing was tested", kills)
	}
	t.Logf("Debezium sent %d of %d source changes again after %d kills; bronze holds each once", resent, len(seen), kills)
}
