package cdc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// mergeStats are the MERGE commits of a table after version from that
// updated or deleted rows: how many, how many copied rows they did not
// change (copy-on-write) and how many deletion vectors they wrote.
type mergeStats struct{ merges, copied, dvs int64 }

func silverMerges(t *testing.T, store objstore.Store, from int64) mergeStats {
	t.Helper()
	hist, err := deltalog.History(context.Background(), store, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	metric := func(h deltalog.CommitEntry, name string) int64 {
		v, ok := h.Info.OperationMetrics[name]
		if !ok {
			t.Fatalf("version %d: MERGE without %s: %v", h.Version, name, h.Info.OperationMetrics)
		}
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if err != nil {
			t.Fatalf("version %d: %s: %v", h.Version, name, err)
		}
		return n
	}
	var st mergeStats
	for _, h := range hist {
		if h.Version <= from || h.Info == nil || h.Info.Operation != "MERGE" {
			continue
		}
		if metric(h, "numTargetRowsUpdated")+metric(h, "numTargetRowsDeleted") == 0 {
			continue
		}
		st.merges++
		st.copied += metric(h, "numTargetRowsCopied")
		st.dvs += metric(h, "numTargetDeletionVectorsAdded") + metric(h, "numTargetDeletionVectorsUpdated")
	}
	return st
}

// TestSilverDeletionVectors: a new silver table has deletion vectors and
// its MERGEs mark the rows they update or delete instead of copying the
// rest of the files they touch; a silver table created without them
// (Properties false) keeps working copy-on-write under a Silver that says
// nothing, and gets them (protocol raised) when Properties says true.
// Both equal the source after each step.
func TestSilverDeletionVectors(t *testing.T) {
	ctx := context.Background()
	b := newBronze(t)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	newStore := func() objstore.Store {
		st, err := objstore.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	mor, cow := newStore(), newStore()
	sMOR := &Silver{Bronze: b.Store, Silver: mor, Log: log}
	sCOW := &Silver{Bronze: b.Store, Silver: cow, Properties: map[string]string{actions.PropEnableDeletionVectors: "false"}, Log: log}
	var recs []*kgo.Record
	for _, r := range fixtureRecords(t) {
		if r.Topic == "pg.public.cdc_types" && r.Offset > 18 || r.Topic == "pg.transaction" && r.Offset > 19 {
			continue // before the truncate
		}
		recs = append(recs, r)
	}
	half := len(recs) / 2
	var cowHalf int64 // cow's version at the switch to deletion vectors
	for i, r := range recs {
		if i == half {
			// The existing copy-on-write table under a Silver that
			// does not say: unchanged.
			snap, err := deltalog.Open(ctx, cow, "")
			if err != nil {
				t.Fatal(err)
			}
			cowHalf = snap.Version()
			sCOW = &Silver{Bronze: b.Store, Silver: cow, Log: log}
		}
		if i == half+half/2 {
			sCOW = &Silver{Bronze: b.Store, Silver: cow, Properties: map[string]string{actions.PropEnableDeletionVectors: "true"}, Log: log}
		}
		if err := b.Land(ctx, []*kgo.Record{r}); err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Silver{sMOR, sCOW} {
			if err := s.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if i == half+half/2-1 {
			snap, err := deltalog.Open(ctx, cow, "")
			if err != nil {
				t.Fatal(err)
			}
			if snap.Config().Supports(actions.FeatureDeletionVectors) {
				t.Fatal("a Silver without Properties enabled deletion vectors on an existing table")
			}
			if st := silverMerges(t, cow, cowHalf); st.merges == 0 || st.dvs != 0 {
				t.Fatalf("existing table without deletion vectors after the switch: %+v", st)
			}
			cowHalf = snap.Version()
		}
	}
	cols := []string{"id", "small", "amount", "code", "flag", "title"}
	want := beforeTruncate
	for name, store := range map[string]objstore.Store{"new": mor, "switched": cow} {
		if got := silverRows(t, store, cols...); !slices.Equal(got, want) {
			t.Fatalf("%s silver:\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		snap, err := deltalog.Open(ctx, store, "")
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Config().DeletionVectors() || snap.Protocol().MinReaderVersion != 3 || snap.Protocol().MinWriterVersion != 7 {
			t.Fatalf("%s silver: deletion vectors %v, protocol %+v", name, snap.Config().DeletionVectors(), snap.Protocol())
		}
	}
	// The MERGEs that updated or deleted rows copied nothing: they wrote
	// deletion vectors (or removed a file all of whose rows went).
	if st := silverMerges(t, mor, -1); st.merges < 3 || st.copied != 0 || st.dvs < 3 {
		t.Fatalf("new silver's MERGEs: %+v", st)
	} else {
		t.Logf("new silver: %d MERGEs updating or deleting rows, %d deletion vectors written, %d rows copied", st.merges, st.dvs, st.copied)
	}
	if st := silverMerges(t, cow, cowHalf); st.merges == 0 || st.copied != 0 || st.dvs == 0 {
		t.Fatalf("switched silver's MERGEs after the switch: %+v", st)
	}
	if st := silverMerges(t, cow, -1); st.copied == 0 {
		t.Fatalf("copy-on-write silver's MERGEs copied no row: %+v", st)
	}
}
