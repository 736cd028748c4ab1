package maintenance_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/golden"
)

// fileKeys are the snapshot's live files as "path|dv id", sorted.
func fileKeys(snap *deltalog.Snapshot) []string {
	var out []string
	for f := range snap.Files() {
		out = append(out, f.Path+"|"+f.DeletionVector.UniqueID())
	}
	slices.Sort(out)
	return out
}

// storeKeys lists every key in store under prefix.
func storeKeys(t *testing.T, store objstore.Store, prefix string) []string {
	t.Helper()
	var out []string
	for o, err := range store.List(context.Background(), prefix, "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o.Key)
	}
	return out
}

// copyCase copies a golden case's table into a fresh directory and
// returns a local store rooted at it.
func copyCase(t *testing.T, name string) objstore.Store {
	t.Helper()
	c, err := golden.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.Dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(dst)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// lastCommit reads the actions of the snapshot's latest commit.
func lastCommit(t *testing.T, snap *deltalog.Snapshot) []actions.Action {
	t.Helper()
	b, err := snap.Store().Get(context.Background(), snap.Root()+"_delta_log/"+deltalog.CommitName(snap.Version()))
	if err != nil {
		t.Fatal(err)
	}
	as, err := actions.ParseCommitBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func commitInfo(t *testing.T, snap *deltalog.Snapshot) *actions.CommitInfo {
	t.Helper()
	for _, a := range lastCommit(t, snap) {
		if a.CommitInfo != nil {
			return a.CommitInfo
		}
	}
	t.Fatalf("version %d has no commitInfo", snap.Version())
	return nil
}
