package deltalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// domainsOf is the snapshot's live domains as domain -> configuration.
func domainsOf(s *deltalog.Snapshot) map[string]string {
	out := map[string]string{}
	for k, d := range s.Domains() {
		out[k] = d.Configuration
	}
	return out
}

func TestDomainMetadataSetRemoveReplay(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	// A legacy protocol (1, 2): setting a domain upgrades it.
	createTable(t, st, map[string]string{"delta.checkpointInterval": "3"}, deltalog.WithPostCommit(deltalog.PostCommitSync))
	if p := open(t, st).Protocol(); p.MinWriterVersion != 2 {
		t.Fatalf("start protocol %+v", p)
	}
	commit := func(f func(tx *deltalog.Transaction) error) *deltalog.CommitResult {
		t.Helper()
		tx := open(t, st).NewTransaction(deltalog.WithPostCommit(deltalog.PostCommitSync))
		if err := f(tx); err != nil {
			t.Fatal(err)
		}
		res, err := tx.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := commit(func(tx *deltalog.Transaction) error {
		tx.Add(addFile("country=nl/a.parquet", "nl"))
		if err := tx.SetDomainMetadata("app.watermark", `{"offset":1}`); err != nil {
			return err
		}
		return tx.SetDomainMetadata("app.owner", `{"team":"ingest"}`)
	})
	s := open(t, st)
	p := s.Protocol()
	if p.MinWriterVersion != 7 || !p.HasWriterFeature(actions.FeatureDomainMetadata) || !p.HasWriterFeature(actions.FeatureAppendOnly) || !p.HasWriterFeature(actions.FeatureInvariants) {
		t.Fatalf("protocol after the first domain: %+v", p)
	}
	want := map[string]string{"app.watermark": `{"offset":1}`, "app.owner": `{"team":"ingest"}`}
	if got := domainsOf(s); !maps.Equal(got, want) {
		t.Fatalf("domains %v, want %v", got, want)
	}
	if post, err := res.Snapshot(); err != nil || !maps.Equal(domainsOf(post), want) {
		t.Fatalf("post-commit snapshot domains %v (%v), want %v", domainsOf(post), err, want)
	}
	// Replace one, remove the other; a checkpoint falls at version 3.
	res = commit(func(tx *deltalog.Transaction) error { return tx.SetDomainMetadata("app.watermark", `{"offset":2}`) })
	if post, _ := res.Snapshot(); domainsOf(post)["app.watermark"] != `{"offset":2}` {
		t.Fatalf("post-commit snapshot after replace: %v", domainsOf(post))
	}
	res = commit(func(tx *deltalog.Transaction) error { return tx.RemoveDomainMetadata("app.owner") })
	if err := res.WaitHooks(); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"app.watermark": `{"offset":2}`}
	for _, s := range []*deltalog.Snapshot{open(t, st), mustSnap(t, res)} {
		if got := domainsOf(s); !maps.Equal(got, want) {
			t.Fatalf("version %d domains %v, want %v", s.Version(), got, want)
		}
	}
	// The tombstone carries the last configuration, as Spark writes it.
	body, err := st.Get(ctx, "_delta_log/"+deltalog.CommitName(3))
	if err != nil {
		t.Fatal(err)
	}
	as, err := actions.ParseCommit(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var tomb *actions.DomainMetadata
	for _, a := range as {
		if a.DomainMetadata != nil {
			tomb = a.DomainMetadata
		}
	}
	if tomb == nil || !tomb.Removed || tomb.Configuration != `{"team":"ingest"}` {
		t.Fatalf("tombstone %+v", tomb)
	}
	// Time travel sees the old value.
	old, err := deltalog.Open(ctx, st, "", deltalog.AtVersion(1))
	if err != nil {
		t.Fatal(err)
	}
	if domainsOf(old)["app.watermark"] != `{"offset":1}` {
		t.Fatalf("version 1 domains %v", domainsOf(old))
	}
}

func mustSnap(t *testing.T, r *deltalog.CommitResult) *deltalog.Snapshot {
	t.Helper()
	s, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDomainMetadataRefusals(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	s := open(t, st)
	tx := s.NewTransaction()
	for _, d := range []string{"delta.rowTracking", "DELTA.clustering", "delta.mine"} {
		if err := tx.SetDomainMetadata(d, "{}"); !errors.Is(err, deltalog.ErrReservedDomain) {
			t.Errorf("set %q: got %v, want ErrReservedDomain", d, err)
		}
		if err := tx.RemoveDomainMetadata(d); !errors.Is(err, deltalog.ErrReservedDomain) {
			t.Errorf("remove %q: got %v, want ErrReservedDomain", d, err)
		}
	}
	if err := tx.SetDomainMetadata("", "{}"); err == nil {
		t.Error("empty domain name accepted")
	}
	if err := tx.RemoveDomainMetadata("app.absent"); !errors.Is(err, deltalog.ErrNoSuchDomain) {
		t.Errorf("remove of an absent domain: got %v", err)
	}
	if err := tx.SetDomainMetadata("deltaish", "1"); err != nil {
		t.Fatalf("a user domain that only looks like delta: %v", err)
	}
	if err := tx.SetDomainMetadata("deltaish", "2"); err == nil {
		t.Error("the same domain twice in one transaction accepted")
	}
	// Through Add: a system domain, a duplicate; nothing is committed.
	for i, bad := range [][]actions.Action{
		{{DomainMetadata: &actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":5}`}}},
		{{DomainMetadata: &actions.DomainMetadata{Domain: "x", Configuration: "1"}}, {DomainMetadata: &actions.DomainMetadata{Domain: "x", Configuration: "2"}}},
		{{DomainMetadata: &actions.DomainMetadata{Domain: "y", Configuration: "1"}}}, // the protocol lacks the feature
	} {
		tx := open(t, st).NewTransaction()
		tx.Add(bad...)
		if _, err := tx.Commit(ctx); err == nil || !strings.Contains(err.Error(), []string{"reserved for the system", "written twice", "lacks the domainMetadata writer feature"}[i]) {
			t.Errorf("case %d: got %v", i, err)
		}
	}
	if v := open(t, st).Version(); v != 0 {
		t.Fatalf("refused commits left version %d", v)
	}
}

// TestDomainMetadataConflicts: two writers of the same user domain
// conflict (the loser aborts with ConcurrentTransaction, nothing of it
// committed); writers of different domains, or of a domain and files,
// rebase.
func TestDomainMetadataConflicts(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	seed := open(t, st).NewTransaction()
	if err := seed.SetDomainMetadata("a", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	type write func(tx *deltalog.Transaction) error
	set := func(d, v string) write {
		return func(tx *deltalog.Transaction) error { return tx.SetDomainMetadata(d, v) }
	}
	remove := func(d string) write {
		return func(tx *deltalog.Transaction) error { return tx.RemoveDomainMetadata(d) }
	}
	files := func(tx *deltalog.Transaction) error { tx.Add(addFile(fmt.Sprintf("f%p", tx), "nl")); return nil }
	cases := []struct {
		name          string
		winner, loser write
		conflict      bool
	}{
		{"same domain set", set("a", "w"), set("a", "l"), true},
		{"set and remove", set("a", "w"), remove("a"), true},
		{"remove and set", remove("a"), set("a", "l"), true},
		{"different domains", set("a", "w"), set("b", "l"), false},
		{"domain and files", set("a", "w"), files, false},
		{"files and domain", files, set("a", "l"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, st)
			before := domainsOf(s)
			w, l := s.NewTransaction(), s.NewTransaction()
			if err := c.winner(w); err != nil {
				t.Fatal(err)
			}
			if err := c.loser(l); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			afterWinner := domainsOf(open(t, st))
			_, err := l.Commit(ctx)
			if c.conflict {
				var ce *conflict.Error
				if !errors.As(err, &ce) || !errors.Is(err, conflict.ErrConcurrentTransaction) {
					t.Fatalf("loser: got %v, want ConcurrentTransaction", err)
				}
				if got := domainsOf(open(t, st)); !maps.Equal(got, afterWinner) {
					t.Fatalf("domains after the aborted loser %v, want %v", got, afterWinner)
				}
			} else if err != nil {
				t.Fatalf("loser: %v", err)
			}
			// Put domain a back for the next case.
			if _, ok := open(t, st).Domain("a"); !ok || !maps.Equal(domainsOf(open(t, st)), before) {
				fix := open(t, st).NewTransaction()
				for _, d := range slices.Sorted(maps.Keys(domainsOf(open(t, st)))) {
					if d != "a" {
						_ = fix.RemoveDomainMetadata(d)
					}
				}
				_ = fix.SetDomainMetadata("a", "0")
				if _, err := fix.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
