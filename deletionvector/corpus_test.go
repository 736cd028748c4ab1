package deletionvector_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/golden"
)

// TestCorpusVectors loads every deletion vector of every version of the
// corpus's deletion-vector cases, inline and file-based: each decodes,
// holds the descriptor's cardinality and only row indexes below the file's
// numRecords, and the live rows (numRecords less cardinality) of each
// version add up to the rows the case expects.
func TestCorpusVectors(t *testing.T) {
	cases, err := golden.Load()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	checked := 0
	for _, c := range cases {
		if !c.Has("deletion-vectors") || c.ExpectError {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			store, err := objstore.NewLocal(c.Dir)
			if err != nil {
				t.Fatal(err)
			}
			versions := map[int64]int64{}
			for v, n := range c.Versions {
				vv, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				versions[vv] = n
			}
			if len(versions) == 0 && c.LatestVersion != nil && c.NumRows != nil {
				versions[*c.LatestVersion] = *c.NumRows
			}
			for v, wantRows := range versions {
				snap, err := deltalog.Open(ctx, store, "", deltalog.AtVersion(v))
				if err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				if err := snap.LoadStats(ctx); err != nil {
					t.Fatal(err)
				}
				var live int64
				for add := range snap.Files() {
					st, err := actions.ParseStats(add.Stats)
					if err != nil || st.NumRecords < 0 {
						t.Fatalf("version %d: %s: no numRecords (%v)", v, add.Path, err)
					}
					live += st.NumRecords
					if add.DeletionVector == nil {
						continue
					}
					bm, err := deletionvector.Load(ctx, store, "", add.DeletionVector)
					if err != nil {
						t.Fatalf("version %d: %s: %v", v, add.Path, err)
					}
					checked++
					if !bm.IsEmpty() && bm.Maximum() >= uint64(st.NumRecords) {
						t.Errorf("version %d: %s: row %d deleted of %d", v, add.Path, bm.Maximum(), st.NumRecords)
					}
					live -= int64(bm.GetCardinality())
					if c.Name == "table-with-dv-small" && v == 1 {
						if got := bm.ToArray(); !slices.Equal(got, []uint64{0, 9}) {
							t.Errorf("table-with-dv-small deletes rows %v, want [0 9] (values 0 and 9)", got)
						}
					}
				}
				if live != wantRows {
					t.Errorf("version %d: %d live rows, expected.json says %d", v, live, wantRows)
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no deletion vector in the corpus was checked")
	}
	t.Logf("%d deletion vectors checked", checked)
}
