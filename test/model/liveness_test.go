package model

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// A writer whose snapshot is some versions behind a table that others
// keep committing to must still land its commit: it has to catch up with
// the log faster than the log grows. Here another writer commits a blind
// append every 5 ms while a blind append that read version 1 commits
// with at most 50 attempts, more than twice the versions it is behind.
//
// Found by TestConcurrentWriters (seed 2: three appends gave up with
// ErrTooManyAttempts after 1000 attempts): the commit loop used to try
// the versions after its read version one at a time, sleeping a backoff
// of up to 100 ms before each next one from the third attempt on, so a
// writer that was behind advanced about 20 versions a second and never
// reached the head of a busy table. It now reads every commit that landed
// meanwhile and aims past the newest.
func TestCommitCatchesUpWhenBehind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := objstore.NewMem()
	createTable(t, st, false)
	stale, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var bgErr error
	progress := make(chan int64, 1000)
	wg.Add(1)
	go func() {
		defer wg.Done()
		snap := stale
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			tx := snap.NewTransaction()
			tx.Add(fakeAdd(fmt.Sprintf("bg-%d", i), "a"))
			res, err := tx.Commit(ctx)
			if errors.Is(err, context.Canceled) {
				return
			}
			if err != nil {
				bgErr = err
				return
			}
			if snap, err = res.Snapshot(); err != nil {
				bgErr = err
				return
			}
			select {
			case progress <- res.Version:
			default:
			}
		}
	}()
	// Let the table run 20 versions ahead of the stale snapshot.
	for v := range progress {
		if v >= 20 {
			break
		}
	}
	tx := stale.NewTransaction(deltalog.WithMaxAttempts(50))
	tx.Add(fakeAdd("straggler", "b"))
	start := time.Now()
	res, err := tx.Commit(ctx)
	cancel()
	wg.Wait()
	if bgErr != nil {
		t.Fatalf("background writer: %v", bgErr)
	}
	if err != nil {
		t.Fatalf("a blind append 20 versions behind a table growing 200 versions a second: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("landed at version %d after %d attempts in %v", res.Version, res.Attempts, time.Since(start).Round(time.Millisecond))
}

// fakeAdd is the add of a file that is never read (the log is all that is
// checked).
func fakeAdd(name, part string) actions.Action {
	return actions.Action{Add: &actions.Add{
		Path: fmt.Sprintf("p=%s/%s.parquet", part, name), PartitionValues: map[string]*string{"p": &part},
		Size: 1, ModificationTime: 1, DataChange: true,
	}}
}
