package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/test/cdctest"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestBronzeRebalances runs three bronze consumers in one consumer group
// on a real Kafka topic of four partitions while events are produced, and
// churns the group: consumers are killed with SIGKILL, stopped with
// SIGTERM, restarted and added, and frozen (SIGSTOP) for longer than the
// group's session timeout, so that partitions move between them many
// times, and a frozen owner wakes up to land what it polled after its
// partitions moved on (a zombie consumer). Bronze
// must then hold every event of the topic exactly once, and record each
// partition's last offset.
func TestBronzeRebalances(t *testing.T) {
	svc := cdctest.Require(t)
	seed := testseed.From(t, "REBALANCE_SEED")
	rng := rand.New(rand.NewPCG(seed, 3))
	events, churns := 3000, 8
	if *pipelineSoak {
		events, churns = 30000, 40
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	const partitions = 4
	topic := strings.ReplaceAll(cloudtest.Name("rebalance."), "-", "_")
	prod, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(svc.Brokers, ",")...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	createTopic(ctx, t, prod, topic, partitions)

	dir := t.TempDir()
	uri := filepath.Join(dir, "bronze")
	group := strings.ReplaceAll(topic, ".", "_")
	stages := make([]*stage, 3)
	for i := range stages {
		stages[i] = newStage(t, dir, fmt.Sprintf("bronze%d", i), "bronze", "-table", uri, "-brokers", svc.Brokers,
			"-topic", topic, "-group", group, "-instance-id", fmt.Sprintf("%s-%d", group, i), "-app", "bronze",
			"-max-records", fmt.Sprint(20+rng.IntN(200)))
	}
	running := []bool{true, true, false}
	stages[0].start()
	stages[1].start()
	defer func() {
		for i, s := range stages {
			s.kill(syscall.SIGTERM)
			if t.Failed() {
				t.Logf("bronze%d's log:\n%s", i, tail(s.logText(), 40))
			}
		}
	}()

	// The producer: keyed Debezium events (tombstones among them), in
	// bursts, while the group churns.
	produced := make(chan error, 1)
	go func() {
		prng := rand.New(rand.NewPCG(seed, 4))
		for i := range events {
			v := fmt.Sprintf(`{"schema": {"type": "struct", "fields": [{"field": "after", "type": "struct", "optional": true, "fields": [
				{"field": "id", "type": "int64"}, {"field": "name", "type": "string", "optional": true}]}]},
				"payload": {"op": "c", "after": {"id": %d, "name": "n%d"}, "source": {"lsn": %d, "snapshot": "false"}}}`, i, i, 1000+i)
			if i%11 == 5 {
				v = "" // a tombstone: consumed, never landed
			}
			key := fmt.Sprintf(`{"schema": {"type": "struct", "fields": [{"field": "id", "type": "int64"}]}, "payload": {"id": %d}}`, prng.IntN(1000))
			rec := &kgo.Record{Key: []byte(key), Value: []byte(v)}
			if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
				produced <- err
				return
			}
			if i%100 == 99 {
				time.Sleep(time.Duration(prng.IntN(120)) * time.Millisecond)
			}
		}
		produced <- nil
	}()

	// The churn: each step changes the group's membership. Two of them
	// freeze a consumer past its session timeout (10 s).
	freezes := map[int]bool{churns / 3: true, 2 * churns / 3: true}
	for n := range churns {
		time.Sleep(time.Duration(400+rng.IntN(1500)) * time.Millisecond)
		i := rng.IntN(len(stages))
		switch {
		case freezes[n] && running[i]:
			stages[i].signal(syscall.SIGSTOP)
			time.Sleep(time.Duration(11000+rng.IntN(3000)) * time.Millisecond)
			stages[i].signal(syscall.SIGCONT)
		case !running[i]:
			stages[i].start() // a member joins (or comes back)
			running[i] = true
		case rng.IntN(2) == 0:
			stages[i].kill(syscall.SIGKILL) // dies mid-poll or mid-commit
			time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
			stages[i].start()
		default:
			stages[i].kill(syscall.SIGTERM) // leaves the group cleanly
			running[i] = false
		}
		for j, s := range stages {
			if running[j] && s.exited() {
				t.Fatalf("bronze%d died by itself (churn %d)", j, n)
			}
		}
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if !running[0] && !running[1] && !running[2] {
		stages[0].start()
		running[0] = true
	}

	// Wait until bronze records every partition's end, then check it
	// against the topic record by record.
	ends := topicEnds(ctx, t, prod, topic, partitions)
	for {
		snap, err := deltalog.OpenURI(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for p, end := range ends {
			v, ok := snap.TxnVersion(fmt.Sprintf("bronze/%s/%d", topic, p))
			done = done && (end == 0 || ok && v == end-1)
		}
		if done {
			break
		}
		for j, s := range stages {
			if running[j] && s.exited() {
				t.Fatalf("bronze%d died by itself while catching up", j)
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("bronze did not reach the topic's ends %v", ends)
		}
		time.Sleep(300 * time.Millisecond)
	}
	checkBronze(t, svc, uri, topic)
}

// createTopic creates topic with the given number of partitions.
func createTopic(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Topics {
		if r.ErrorCode != 0 {
			t.Fatalf("create topic %s: error code %d %v", topic, r.ErrorCode, r.ErrorMessage)
		}
	}
}

// topicEnds returns each partition's end offset (the next offset to be
// written).
func topicEnds(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("list offsets %s/%d: error code %d", topic, rp.Partition, rp.ErrorCode)
			}
			ends[rp.Partition] = rp.Offset
		}
	}
	if len(ends) != int(partitions) {
		t.Fatalf("list offsets %s: %d partitions, want %d", topic, len(ends), partitions)
	}
	return ends
}

// signal sends sig to the stage's process, if it runs.
func (s *stage) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}
