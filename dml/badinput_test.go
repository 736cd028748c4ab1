package dml_test

import (
	"context"
	"errors"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// storeKeys lists every key of the store.
func storeKeys(t *testing.T, store objstore.Store) []string {
	t.Helper()
	var keys []string
	for k, err := range store.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.Key)
	}
	slices.Sort(keys)
	return keys
}

// TestBadInputCommitsNothing checks that operations on bad input fail
// with an error naming the problem, commit nothing and leave no file
// behind, in copy-on-write and deletion-vector tables with the change
// data feed on.
func TestBadInputCommitsNothing(t *testing.T) {
	for _, dv := range []bool{false, true} {
		name := "copy-on-write"
		props := map[string]string{"delta.enableChangeDataFeed": "true"}
		if dv {
			name = "deletion vectors"
			props["delta.enableDeletionVectors"] = "true"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := objstore.NewMem()
			tabletest.Create(t, store, "id long not null, name string not null, v long", props)
			snap := tabletest.AppendTo(t, store, `[{"id":1,"name":"a","v":1},{"id":2,"name":"b","v":2},{"id":3,"name":"c","v":3}]`)
			before := storeKeys(t, store)
			srcSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String}, {Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
			cases := []struct {
				name string
				run  func() error
				want []string // substrings of the error
				is   error
			}{
				{"MERGE source with duplicate keys", func() error {
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, `[{"id":2,"name":"x","v":9},{"id":2,"name":"y","v":8},{"id":7,"name":"z","v":1}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"),
						[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)})
					return err
				}, []string{"matched by source rows 1 and 2"}, dml.ErrDuplicateMatch},
				{"UPDATE to a wrong type", func() error {
					_, err := dml.Update(ctx, snap, mustParse(t, "id = 1"), mustSet(t, "v = 'not a number'"))
					return err
				}, []string{"v"}, nil},
				{"predicate on an unknown column", func() error {
					_, err := dml.Delete(ctx, snap, mustParse(t, "nope = 1"))
					return err
				}, []string{"unknown column nope", "id, name, v"}, nil},
				{"UPDATE of a NOT NULL column to null", func() error {
					_, err := dml.Update(ctx, snap, mustParse(t, "id >= 2"), mustSet(t, "name = NULL"))
					return err
				}, []string{"name"}, writer.ErrSchemaMismatch},
				{"MERGE inserting null into a NOT NULL column", func() error {
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, `[{"id":1,"name":"x","v":9},{"id":9,"name":null,"v":8}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"),
						[]dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)})
					return err
				}, []string{"name"}, writer.ErrSchemaMismatch},
				{"MERGE with an ambiguous column", func() error {
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, `[{"id":1,"name":"x","v":9}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "id = source.id"),
						[]dml.Clause{dml.WhenMatchedDelete(nil)})
					return err
				}, []string{"ambiguous", "target.id"}, nil},
				{"MERGE INSERT * from a source without a column", func() error {
					small := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, small, `[{"id":5}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"),
						[]dml.Clause{dml.WhenNotMatchedInsertAll(nil)})
					return err
				}, []string{`no column "name"`}, nil},
				{"DELETE with a bad writer option", func() error {
					_, err := dml.Delete(ctx, snap, mustParse(t, "id = 1"), dml.WithWriterOptions(writer.WithCompression("brotli9")))
					return err
				}, []string{`unknown compression "brotli9"`}, nil},
				{"UPDATE with a bad writer option", func() error {
					_, err := dml.Update(ctx, snap, mustParse(t, "id = 1"), mustSet(t, "v = 2"), dml.WithWriterOptions(writer.WithTargetFileSize(-1)))
					return err
				}, []string{"target file size -1"}, nil},
				{"MERGE with a bad writer option", func() error {
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, `[{"id":1,"name":"x","v":9}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id = source.id"),
						[]dml.Clause{dml.WhenMatchedDelete(nil)}, dml.WithCommitOptions(deltalog.WithAppTransaction("", 1)))
					return err
				}, []string{"app transaction needs an app id"}, nil},
				{"MERGE without a join key", func() error {
					src := tabletest.RecordJSON(t, memory.DefaultAllocator, srcSchema, `[{"id":1,"name":"x","v":9}]`)
					_, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "target.id > source.id"),
						[]dml.Clause{dml.WhenMatchedDelete(nil)})
					return err
				}, []string{"needs an equality"}, nil},
			}
			for _, c := range cases {
				err := c.run()
				if err == nil {
					t.Errorf("%s: no error", c.name)
					continue
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q does not say %q", c.name, err, w)
					}
				}
				if c.is != nil && !errors.Is(err, c.is) {
					t.Errorf("%s: error %q is not %v", c.name, err, c.is)
				}
				t.Logf("%s: %v", c.name, err)
				if got := storeKeys(t, store); !slices.Equal(got, before) {
					t.Errorf("%s: the store changed:\n got %v\nwant %v", c.name, got, before)
				}
			}
			if v := tabletest.Open(t, store).Version(); v != snap.Version() {
				t.Errorf("version %d after failed operations, want %d", v, snap.Version())
			}
		})
	}
}
