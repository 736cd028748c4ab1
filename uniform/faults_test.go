package uniform_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	gosync "sync"
	"testing"

	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/uniform"
)

// TestConversionFaults: a conversion that fails at its nth store call
// (every n until one succeeds), or whose metadata commit's reply is
// lost, leaves the Delta log untouched and the Iceberg side at the
// previous metadata or the new one, never a part of it (iceberg-go reads
// the newest metadata file with exactly lakelog's rows at the version it
// records); a clean sync then converges.
func TestConversionFaults(t *testing.T) {
	ctx := context.Background()
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(21, 22))
	var next int64
	tabletest.AppendTo(t, store, randomRows(r, &next, 20))
	sync(t, store)

	// checkIceberg: the newest metadata file reads as lakelog's rows at
	// the Delta version it records.
	checkIceberg := func(what string) {
		t.Helper()
		meta := metadataOf(t, store)
		got, md := icebergLines(t, meta, nil)
		var v int64
		fmt.Sscan(md.Properties()[uniform.PropDeltaVersion], &v)
		tabletest.DiffLines(t, what, got, tabletest.ScanLines(t, tabletest.Open(t, store, deltalogAt(v))))
	}
	// noLogWrites fails the test when the conversion writes under _delta_log/.
	var mu gosync.Mutex
	var logWrites []string
	watch := objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op == objstore.OpPut && strings.Contains(c.Key, "_delta_log/") {
			mu.Lock()
			logWrites = append(logWrites, c.Key)
			mu.Unlock()
		}
		return nil, nil
	})

	for round := range 3 {
		// A commit that adds and one that removes, then conversions that
		// fail at call n = 1, 2, ... until one gets through.
		tabletest.AppendTo(t, store, randomRows(r, &next, 10))
		pred, _ := expr.Parse(fmt.Sprintf("id %% 3 = %d", round))
		if _, err := dml.Delete(ctx, tabletest.Open(t, store), pred); err != nil {
			t.Fatal(err)
		}
		before := tabletest.Open(t, store).Version()
		for n := 1; ; n++ {
			faulty := objstore.Faulty(store, watch, objstore.FailNth(objstore.OpAny, n, nil))
			_, err := uniform.Sync(ctx, faulty, tabletest.Root)
			if tabletest.Open(t, store).Version() != before {
				t.Fatalf("round %d: a conversion changed the Delta table's version", round)
			}
			checkIceberg(fmt.Sprintf("round %d, conversion failing at call %d (%v)", round, n, err))
			if err == nil {
				break
			}
			if !errors.Is(err, objstore.ErrInjected) {
				t.Fatalf("round %d, call %d: %v, want the injected error", round, n, err)
			}
			if n > 200 {
				t.Fatal("the conversion never got through")
			}
		}
		res := sync(t, store)
		if res.Snapshots != 0 || res.To != before {
			t.Fatalf("round %d: the successful conversion left work: %+v", round, res)
		}
	}

	// A lost reply to the metadata commit: the file was written, the
	// converter saw an error; the next sync finds it done.
	tabletest.AppendTo(t, store, randomRows(r, &next, 5))
	faulty := objstore.Faulty(store, objstore.Times(1, objstore.LoseResponse(objstore.OpPut, tabletest.Root+"/metadata/v*.metadata.json")))
	if _, err := uniform.Sync(ctx, faulty, tabletest.Root); err == nil {
		t.Fatal("a lost reply to the metadata commit was not reported")
	}
	res := sync(t, store)
	if res.Snapshots != 0 || res.MetadataLocation != "" {
		t.Fatalf("after a lost reply the next sync converted again: %+v", res)
	}
	checkIceberg("after a lost reply")
	if len(logWrites) > 0 {
		t.Fatalf("conversions wrote to the Delta log: %v", logWrites)
	}
}
