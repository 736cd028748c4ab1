package deltalog_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/golden"
)

// Log replay against the corpus: the live files at every version the corpus
// lists, by (path, deletion vector) with Spark's path canonicalisation.
func TestGoldenActiveFiles(t *testing.T) {
	cases, err := golden.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if len(c.ActiveFiles) == 0 {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			st, err := objstore.NewLocal(c.Dir)
			if err != nil {
				t.Fatal(err)
			}
			for vs, want := range c.ActiveFiles {
				v, err := strconv.ParseInt(vs, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				s, err := deltalog.Open(context.Background(), st, "", deltalog.AtVersion(v))
				if err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				var got []string
				for f := range s.Files() {
					got = append(got, actions.CanonicalPath(f.Path))
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("version %d: files %v, want %v", v, got, want)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no corpus case lists active files")
	}
}
