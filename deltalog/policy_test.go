package deltalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestCheckpointPolicyV2: delta.checkpointPolicy=v2 adds the v2Checkpoint
// feature to an existing table's protocol (as Spark does), and the next
// checkpoint is a V2 one (UUID-named, with checkpointMetadata), which the
// table opens from.
func TestCheckpointPolicyV2(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.checkpointPolicy": "v2"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.AppendTo(t, store, `[{"id":1},{"id":2}]`)
	if !snap.Protocol().HasReaderFeature(actions.FeatureV2Checkpoint) || !snap.Config().V2Checkpoints() {
		t.Fatalf("protocol %+v: want v2Checkpoint", snap.Protocol())
	}
	if _, err := snap.Checkpoint(ctx, snap.Timestamp()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for o, err := range store.List(ctx, "tbl/_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := deltalog.ParseLogPath(strings.TrimPrefix(o.Key, "tbl/_delta_log/")); ok && p.Type == deltalog.UUIDCheckpoint {
			names = append(names, o.Key)
		}
	}
	if len(names) != 1 {
		t.Fatalf("V2 checkpoints %v, want one", names)
	}
	tabletest.DiffLines(t, "rows from the V2 checkpoint", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(`{"id":1}`, `{"id":2}`))
}

// TestSymlinkManifestEveryCommit: with
// delta.compatibility.symlinkFormatManifest.enabled every commit leaves a
// manifest per partition listing exactly its live files, and a partition
// left without files loses its manifest.
func TestSymlinkManifestEveryCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Create(t, store, "id long, p string", map[string]string{"delta.compatibility.symlinkFormatManifest.enabled": "true"}, "p")
	res := appendWait(t, snap, `[{"id":1,"p":"a"},{"id":2,"p":"b"}]`)
	checkManifests(t, store, res)
	res = appendWait(t, tabletest.Open(t, store), `[{"id":3,"p":"a"}]`)
	checkManifests(t, store, res)
	// Overwrite with rows of partition a only: b's manifest goes.
	res, err = overwrite(t, tabletest.Open(t, store), `[{"id":4,"p":"a"}]`)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	checkManifests(t, store, res)
	if _, err := store.Head(ctx, "tbl/"+deltalog.ManifestDir+"p=b/manifest"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("the manifest of the emptied partition p=b: %v, want it gone", err)
	}
}

// checkManifests: the manifests list exactly the live files of the
// commit's version, by absolute URI, per partition.
func checkManifests(t *testing.T, store objstore.Store, res *deltalog.CommitResult) {
	t.Helper()
	ctx := context.Background()
	snap := tabletest.Open(t, store)
	base, err := objstore.RootURI(store)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for f := range snap.Files() {
		dir := "p=" + *f.PartitionValues["p"] + "/"
		want[dir] = append(want[dir], base+"/tbl/"+actions.CanonicalPath(f.Path))
	}
	for dir, files := range want {
		b, err := store.Get(ctx, "tbl/"+deltalog.ManifestDir+dir+"manifest")
		if err != nil {
			t.Fatalf("version %d: manifest of %s: %v", res.Version, dir, err)
		}
		got := strings.Fields(string(b))
		slices.Sort(files)
		if !slices.Equal(got, files) {
			t.Fatalf("version %d: manifest of %s lists %v, want %v", res.Version, dir, got, files)
		}
	}
}

func appendWait(t *testing.T, snap *deltalog.Snapshot, rows string) *deltalog.CommitResult {
	t.Helper()
	res, err := writer.Append(context.Background(), snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, rows)))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	return res
}

func overwrite(t *testing.T, snap *deltalog.Snapshot, rows string) (*deltalog.CommitResult, error) {
	t.Helper()
	return writer.Overwrite(context.Background(), snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, rows)))
}
