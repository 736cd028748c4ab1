package model

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// Opening a table while another writer commits must not report a corrupt
// log. A listing is not a snapshot of the folder: objstore.Local.List
// says "objects written or removed during the listing may or may not be
// seen", and on Linux ext4 readdir does return a commit created during
// the listing (version n+1) while missing one created just before it
// (version n): a plain loop of create-by-link and os.ReadDir on this
// machine's ext4 showed such a gap in 67 of 913 listings. Commits are
// never removed out of order, so a gap below a listed commit comes from
// the listing, not from the log; Open has to look again (list once more,
// or read the missing commit by name, which is consistent) before it
// fails with ErrLogCorrupt.
//
// Found by TestConcurrentWriters (seed 4: "corrupt Delta log: version 332
// is missing from the store root (needed for version 333)"); a stress
// loop of one committer and two readers on local disk reproduced it in 2
// of 4026 opens ("versions not contiguous: version 729 is missing (latest
// 732)"). This test makes the first listing miss version 2 while it sees
// version 3, as that readdir did.
func TestOpenWithListingThatMissesACommit(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMem()
	createTable(t, mem, false)
	snap, err := deltalog.Open(ctx, mem, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		tx := snap.NewTransaction()
		tx.Add(fakeAdd(fmt.Sprintf("f%d", i), "a"))
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err = res.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	st := &racyListing{Store: mem, hide: deltalog.LogDir + deltalog.CommitName(2)}
	got, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatalf("open while the listing missed version 2 (created during it): %v", err)
	}
	if got.Version() != 3 || got.NumFiles() != 3 {
		t.Fatalf("open: version %d with %d files, want version 3 with 3", got.Version(), got.NumFiles())
	}
}

// racyListing hides one key from the first listing that would yield it,
// as a listing that ran while the object was created may.
type racyListing struct {
	objstore.Store
	hide   string
	hidden atomic.Bool
}

func (r *racyListing) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		for info, err := range r.Store.List(ctx, prefix, startAfter) {
			if err == nil && info.Key == r.hide && r.hidden.CompareAndSwap(false, true) {
				continue
			}
			if !yield(info, err) {
				return
			}
		}
	}
}
