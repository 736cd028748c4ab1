package cdc

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
)

// TestAutoCompactAndVacuum: with the pipeline's table properties, the
// small files of bronze's appends and silver's MERGEs are compacted by
// the commits themselves (OPTIMIZE commits tagged auto), silver still
// equals the source; the vacuumer then deletes the files silver no longer
// reads, and keeps bronze's: silver rebuilt from bronze's version 0 is
// the same table.
func TestAutoCompactAndVacuum(t *testing.T) {
	// Spark's threshold is 50 small files; the fixture has 30 records.
	deltalog.RegisterHook(maintenance.AutoCompactHook(maintenance.AutoCompactMinFiles(3)))
	t.Cleanup(func() { deltalog.RegisterHook(maintenance.AutoCompactHook()) })
	ctx := context.Background()
	cfg := &Config{Properties: map[string]string{actions.PropDeletedFileRetentionDuration: "interval 0 seconds"}, Vacuum: VacuumConfig{Bronze: true}}
	b := newBronze(t)
	b.Properties = cfg.TableProperties()
	st, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	s := &Silver{Bronze: b.Store, Silver: st, Properties: cfg.SilverProperties(), Log: log}
	landed := 0
	for _, r := range fixtureRecords(t) {
		if r.Topic == "pg.public.cdc_types" && r.Offset > 18 || r.Topic == "pg.transaction" && r.Offset > 19 {
			continue // before the truncate
		}
		if err := b.Land(ctx, []*kgo.Record{r}); err != nil {
			t.Fatal(err)
		}
		landed++
		if err := s.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cols := []string{"id", "small", "amount", "code", "flag", "title"}
	want := beforeTruncate
	if got := silverRows(t, st, cols...); !slices.Equal(got, want) {
		t.Fatalf("silver:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for name, store := range map[string]objstore.Store{"bronze": b.Store, "silver": st} {
		snap, err := deltalog.Open(ctx, store, "")
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Config().AutoCompact() {
			t.Fatalf("%s lacks %s", name, actions.PropAutoCompact)
		}
		hist, err := deltalog.History(ctx, store, "", -1)
		if err != nil {
			t.Fatal(err)
		}
		auto := 0
		for _, h := range hist {
			if h.Info != nil && h.Info.Operation == "OPTIMIZE" && h.Info.OperationParameters["auto"] == "true" {
				auto++
			}
		}
		if name == "silver" && !snap.Config().DeletionVectors() {
			t.Fatal("silver lacks deletion vectors")
		}
		if auto == 0 || snap.NumFiles() >= 3 {
			t.Fatalf("%s: %d auto compactions, %d live files", name, auto, snap.NumFiles())
		}
		t.Logf("%s: %d versions, %d auto compactions, %d live files", name, snap.Version()+1, auto, snap.NumFiles())
	}

	v := &vacuumer{cfg: cfg.Vacuum, silver: s, log: log}
	bronzeBefore := dataKeys(t, b.Store)
	v.once(ctx)
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	// What VACUUM left is the live files and, at most, one deletion
	// vector file per live file with one (silver still reads the same
	// rows below: none that a live file needs was deleted).
	var live []string
	liveDVs := 0
	for f := range snap.Files() {
		live = append(live, f.Path)
		if f.DeletionVector != nil && f.DeletionVector.StorageType != "i" {
			liveDVs++
		}
	}
	slices.Sort(live)
	var data, dvFiles []string
	for _, k := range dataKeys(t, st) {
		if strings.HasPrefix(k, "deletion_vector_") {
			dvFiles = append(dvFiles, k)
		} else {
			data = append(data, k)
		}
	}
	if !slices.Equal(data, live) || len(dvFiles) > liveDVs {
		t.Fatalf("silver after VACUUM holds %v and deletion vectors %v, its live files are %v (%d with a deletion vector file)", data, dvFiles, live, liveDVs)
	}
	if got := silverRows(t, st, cols...); !slices.Equal(got, want) {
		t.Fatalf("silver after VACUUM:\n%s", strings.Join(got, "\n"))
	}
	if got := dataKeys(t, b.Store); !slices.Equal(got, bronzeBefore) {
		t.Fatalf("VACUUM deleted bronze files silver's rebuild reads: %d of %d left", len(got), len(bronzeBefore))
	}
	st2, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Silver{Bronze: b.Store, Silver: st2}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := silverRows(t, st2, cols...); !slices.Equal(got, want) {
		t.Fatalf("silver rebuilt from bronze:\n%s", strings.Join(got, "\n"))
	}
}

// dataKeys are the table's keys outside _delta_log, sorted.
func dataKeys(t *testing.T, store objstore.Store) []string {
	t.Helper()
	var out []string
	for o, err := range store.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(o.Key, "_delta_log/") {
			out = append(out, o.Key)
		}
	}
	slices.Sort(out)
	return out
}
