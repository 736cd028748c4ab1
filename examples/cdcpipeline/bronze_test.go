package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// Two consumers that both hold a partition for a while (a rebalance: the
// old owner still lands what it polled while the new one starts from the
// table's offset) land overlapping runs of records concurrently: every
// record lands exactly once and the table's offset per partition is the
// last one.
func TestBronzeLandsOnceUnderRaces(t *testing.T) {
	seed := *pipelineSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -pipeline.seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := openOrCreate(ctx, store, bronzeColumns, nil); err != nil {
		t.Fatal(err)
	}
	const topic, partitions, perPartition = "pg.public.t", 3, 60
	record := func(p int32, off int64) *kgo.Record {
		v := fmt.Sprintf(`{"op": "c", "after": {"id": %d, "p": %d}, "source": {"lsn": %d}}`, off, p, off)
		if off%7 == 3 {
			v = "" // a tombstone
		}
		return &kgo.Record{Topic: topic, Partition: p, Offset: off, Value: []byte(v)}
	}
	// Each consumer lands random overlapping runs of each partition, in
	// order per partition, several partitions per commit.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for c := range 4 {
		crng := rand.New(rand.NewPCG(seed, uint64(c)+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &bronze{store: store, app: "bronze", out: io.Discard}
			next := [partitions]int64{}
			for {
				var recs []*kgo.Record
				for p := range int32(partitions) {
					n := int64(crng.IntN(12))
					for off := next[p]; off < min(next[p]+n, perPartition); off++ {
						recs = append(recs, record(p, off))
					}
					next[p] = min(next[p]+n, perPartition)
					if crng.IntN(4) == 0 { // this consumer falls behind: it re-reads
						next[p] = max(0, next[p]-int64(crng.IntN(8)))
					}
				}
				if len(recs) > 0 {
					if err := b.land(ctx, recs); err != nil {
						errs <- err
						return
					}
				}
				done := true
				for p := range partitions {
					done = done && next[p] >= perPartition
				}
				if done {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_ = rng
	snap, err := deltalog.Open(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	for p := range partitions {
		if v, ok := snap.TxnVersion(fmt.Sprintf("bronze/%s/%d", topic, p)); !ok || v != perPartition-1 {
			t.Errorf("partition %d: offset %d %v, want %d", p, v, ok, perPartition-1)
		}
	}
	scan, err := reader.NewScan(snap, reader.WithColumns(colPartition, colOffset))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for rec, err := range scan.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			seen[rec.Column(0).ValueStr(i)+"/"+rec.Column(1).ValueStr(i)]++
		}
	}
	for p := range partitions {
		for off := range int64(perPartition) {
			k := fmt.Sprintf("%d/%d", p, off)
			want := 1
			if off%7 == 3 {
				want = 0
			}
			if seen[k] != want {
				t.Errorf("event %s landed %d times, want %d", k, seen[k], want)
			}
		}
	}
	t.Logf("%d versions", snap.Version())
}
