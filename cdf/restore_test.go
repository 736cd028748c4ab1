package cdf_test

import (
	"context"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
)

// TestRestoreNarrowsWidenedColumn: a RESTORE to a version before a
// column was widened narrows it again and removes the files written
// under the wide type. A range that starts at the RESTORE reads those
// files' rows as deletes under the end version's narrow schema, which
// cannot hold them: the feed fails with ErrSchemaChange naming the
// version whose schema wrote them, as it does when the range starts
// before the RESTORE. (It failed with a conversion error while reading.)
// The range after the RESTORE reads.
func TestRestoreNarrowsWidenedColumn(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v int", map[string]string{
		"delta.enableChangeDataFeed": "true", "delta.enableTypeWidening": "true",
	})
	snap := tabletest.AppendTo(t, store, `[{"id":1,"v":7}]`)                             // 1
	if _, err := schema.ChangeColumnType(ctx, snap, "v", actions.TypeLong); err != nil { // 2
		t.Fatal(err)
	}
	tabletest.AppendTo(t, store, `[{"id":2,"v":5000000000}]`)                                // 3
	res, err := maintenance.Restore(ctx, tabletest.Open(t, store), maintenance.ToVersion(1)) // 4
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Commit.Version; v != 4 {
		t.Fatalf("RESTORE committed version %d, want 4", v)
	}
	tabletest.AppendTo(t, store, `[{"id":3,"v":9}]`) // 5

	_, err = mappedFeedLines(t, store, cdf.Versions(4, 5))
	wantErr(t, err, cdf.ErrSchemaChange, "version 4", "version 3", "column v")
	_, err = mappedFeedLines(t, store, cdf.Versions(3, 5))
	wantErr(t, err, cdf.ErrSchemaChange, "version 3", "column v")
	got, err := mappedFeedLines(t, store, cdf.Versions(5, 5))
	if err != nil {
		t.Fatal(err)
	}
	tabletest.DiffLines(t, "feed of version 5", got, []string{"id=3 v=9 _change_type=insert _commit_version=5"})
}
