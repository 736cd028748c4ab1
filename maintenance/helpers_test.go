package maintenance_test

import (
	"context"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/golden"
	"github.com/lakelog/lakelog/writer"
)

// createTable creates an empty table at "tbl" with a DDL schema, properties
// and partition columns.
func createTable(t *testing.T, store objstore.Store, ddl string, props map[string]string, parts ...string) *deltalog.Snapshot {
	t.Helper()
	schema, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(store, "tbl", &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return openTable(t, store)
}

func openTable(t *testing.T, store objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "tbl", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// rows is a one-batch input of the table's schema from a JSON array.
func rows(t *testing.T, snap *deltalog.Snapshot, js string) iter.Seq2[arrow.RecordBatch, error] {
	t.Helper()
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer rec.Release()
		yield(rec, nil)
	}
}

// appendRows appends js (a JSON array of rows) and returns the new snapshot.
func appendRows(t *testing.T, snap *deltalog.Snapshot, js string, opts ...writer.Option) *deltalog.Snapshot {
	t.Helper()
	res, err := writer.Append(context.Background(), snap, rows(t, snap, js), opts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scanLines reads the snapshot's rows in canonical form, sorted.
func scanLines(t *testing.T, snap *deltalog.Snapshot, opts ...reader.Option) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rs, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines
}

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
