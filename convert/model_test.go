package convert_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/convert"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestConvertConcurrentWithFaults: several converters race on one
// folder of an object store (in memory) whose calls fail at random,
// before or after they happen (a lost response: the put landed). Every
// converter retries until it gets an answer. Whatever the interleaving,
// the folder ends with exactly one commit, version 0, holding every
// file once, at most one converter reports having converted (the others
// find a Delta table), no error is anything but an injected fault, and
// the table reads the rows of the files.
func TestConvertConcurrentWithFaults(t *testing.T) {
	seed := testseed.From(t, "CONVERT_SEED")
	r := rand.New(rand.NewPCG(seed, 11))
	for round := range 8 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			ctx := context.Background()
			inner := objstore.NewMem()
			var recs []arrow.RecordBatch
			var rels []string
			for k := range 1 + r.IntN(5) {
				rec := record(t, wide, randomRows(r, 1+r.IntN(40)))
				defer rec.Release()
				rel := fmt.Sprintf("p=%d/part-%05d.parquet", r.IntN(3), k)
				var buf bytes.Buffer
				writeParquetTo(t, &buf, rec, 1+r.Int64N(20))
				if err := inner.Put(ctx, "t/"+rel, &buf, objstore.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				recs, rels = append(recs, rec), append(rels, rel)
			}
			rate := 0.02 + r.Float64()*0.1
			var mu sync.Mutex
			injected, lost := 0, 0
			fr := rand.New(rand.NewPCG(r.Uint64(), 3))
			faults := objstore.Func(func(c objstore.Call) (before, after error) {
				mu.Lock()
				defer mu.Unlock()
				switch x := fr.Float64(); {
				case x < rate:
					injected++
					return objstore.ErrInjected, nil
				case x < 2*rate && c.Op == objstore.OpPut:
					lost++
					return nil, objstore.ErrLostResponse
				}
				return nil, nil
			})
			store := objstore.Faulty(inner, faults)
			part := convert.PartitionBy(mustDDL(t, "p string"))
			const workers = 3
			var wg sync.WaitGroup
			results := make([]*convert.Result, workers)
			errs := make([]error, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 200 {
						res, err := convert.ToDelta(ctx, store, "t", part)
						if err == nil {
							results[w] = res
							return
						}
						if !errors.Is(err, objstore.ErrInjected) && !errors.Is(err, deltalog.ErrCommitUnknown) {
							errs[w] = err
							return
						}
					}
					errs[w] = errors.New("no answer in 200 tries")
				}()
			}
			wg.Wait()
			converted := 0
			for w := range workers {
				if errs[w] != nil {
					t.Fatalf("converter %d: %v", w, errs[w])
				}
				if res := results[w]; !res.AlreadyDelta {
					converted++
					if res.Version != 0 || res.Files != len(recs) {
						t.Errorf("converter %d: %+v", w, res)
					}
				}
			}
			t.Logf("%d files, %d faults before a call, %d lost responses; %d converter(s) converted", len(recs), injected, lost, converted)
			if converted > 1 {
				t.Errorf("%d converters say they converted", converted)
			}
			var logKeys []string
			for info, err := range inner.List(ctx, "t/_delta_log/", "") {
				if err != nil {
					t.Fatal(err)
				}
				logKeys = append(logKeys, path.Base(info.Key))
			}
			if strings.Join(logKeys, ",") != "00000000000000000000.json" {
				t.Fatalf("log holds %v, want the one commit", logKeys)
			}
			snap, err := deltalog.Open(ctx, inner, "t", deltalog.WithStats())
			if err != nil {
				t.Fatal(err)
			}
			if snap.NumFiles() != len(recs) {
				t.Fatalf("table has %d files, want %d", snap.NumFiles(), len(recs))
			}
			checkRows(t, snap, inner, recs, rels, true)
		})
	}
}
