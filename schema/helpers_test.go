package schema_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// createTable creates an empty table at the store's root with a DDL
// schema, properties and partition columns.
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
	tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return open(t, store)
}

func open(t *testing.T, store objstore.Store, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// batch is a batch of the Arrow schema of ddl from a JSON array.
func batch(t *testing.T, ddl, js string) arrow.RecordBatch {
	t.Helper()
	st, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := actions.ToArrowSchema(st, false, "")
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Release)
	return rec
}

func one(rec arrow.RecordBatch) func(func(arrow.RecordBatch, error) bool) {
	return func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
}

// appendRows appends rows (a JSON array) given in the columns of ddl.
func appendRows(t *testing.T, store objstore.Store, ddl, js string, opts ...writer.Option) {
	t.Helper()
	if _, err := writer.Append(context.Background(), open(t, store), one(batch(t, ddl, js)), opts...); err != nil {
		t.Fatal(err)
	}
}

// lines is the table's rows (canonical, sorted).
func lines(t *testing.T, snap *deltalog.Snapshot) []string {
	t.Helper()
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out = append(out, string(r))
		}
	}
	slices.Sort(out)
	return out
}

func sameLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// refused checks that err is refused with a message holding want and that
// the table did not move.
func refused(t *testing.T, store objstore.Store, before int64, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v; want an error holding %q", what, err, want)
	}
	if v := open(t, store).Version(); v != before {
		t.Errorf("%s: the refused change moved the table to version %d", what, v)
	}
}

// commitInfo is the latest commit's commitInfo.
func commitInfo(t *testing.T, store objstore.Store) *actions.CommitInfo {
	t.Helper()
	snap := open(t, store)
	for c, err := range deltalog.Commits(context.Background(), store, "", snap.Version(), snap.Version()) {
		if err != nil {
			t.Fatal(err)
		}
		return c.CommitInfo
	}
	t.Fatal("no commit")
	return nil
}

func setProps(t *testing.T, store objstore.Store, props map[string]string) {
	t.Helper()
	if _, err := maintenance.SetProperties(context.Background(), open(t, store), props); err != nil {
		t.Fatal(err)
	}
}

func addConstraint(ctx context.Context, snap *deltalog.Snapshot, name, text string) error {
	_, err := schema.AddConstraint(ctx, snap, name, text)
	return err
}
