package maintenance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
)

func TestSetAndUnsetProperties(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := createTable(t, store, "id long, s string", nil)
	for _, bad := range []map[string]string{
		{"delta.deletedFileRetentionDuration": "2 fortnights"},
		{"delta.appendOnly": "maybe"},
		{"delta.isolationLevel": "Snapshot"},
		{"delta.appendOnyl": "true"},
		{"delta.columnMapping.mode": "name"},
		{"delta.feature.deletionVectors": "supported"},
		{"delta.enableInCommitTimestamps": "true"},
	} {
		if _, err := maintenance.SetProperties(ctx, snap, bad); err == nil {
			t.Errorf("SetProperties(%v) succeeded", bad)
		}
	}
	if v := openTable(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused property change committed version %d", v)
	}

	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.deletedFileRetentionDuration": "interval 2 days", "owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	snap = openTable(t, store)
	if v, _ := snap.Metadata().Prop("delta.deletedFileRetentionDuration"); v != "interval 2 days" {
		t.Fatalf("property %q", v)
	}
	ci := commitInfo(t, snap)
	if ci.Operation != "SET TBLPROPERTIES" || !strings.Contains(ci.OperationParameters["properties"].(string), `"owner":"ops"`) {
		t.Fatalf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
	if p := snap.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 2 {
		t.Fatalf("protocol changed to %+v", p)
	}

	// Deletion vectors need their feature: the protocol is upgraded.
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableDeletionVectors": "true"}); err != nil {
		t.Fatal(err)
	}
	snap = openTable(t, store)
	if p := snap.Protocol(); !p.HasReaderFeature("deletionVectors") || !p.HasWriterFeature("deletionVectors") {
		t.Fatalf("protocol %+v lacks deletionVectors", p)
	}

	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"owner", "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unset of a property the table does not set: %v", err)
	}
	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"owner"}); err != nil {
		t.Fatal(err)
	}
	snap = openTable(t, store)
	if _, ok := snap.Metadata().Prop("owner"); ok {
		t.Fatal("owner is still set")
	}
	if ci := commitInfo(t, snap); ci.Operation != "UNSET TBLPROPERTIES" {
		t.Fatalf("operation %s", ci.Operation)
	}
	// The protocol is never downgraded.
	if p := snap.Protocol(); !p.HasReaderFeature("deletionVectors") {
		t.Fatalf("protocol %+v", p)
	}
}

// AlterProperties sets and unsets in one commit, or commits nothing.
func TestAlterPropertiesIsOneCommit(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := createTable(t, store, "id long", map[string]string{"team": "ops"})
	for _, c := range []struct {
		set   map[string]string
		unset []string
		want  string
	}{
		{map[string]string{"owner": "x"}, []string{"nosuch"}, `maintenance: ALTER TABLE: the table does not set "nosuch"; nothing was committed`},
		{map[string]string{"team": "x"}, []string{"team"}, `maintenance: ALTER TABLE: "team" is both set and unset; nothing was committed`},
		{map[string]string{"delta.appendOnyl": "true"}, []string{"team"}, "delta.appendOnyl"},
	} {
		if _, err := maintenance.AlterProperties(ctx, snap, c.set, c.unset); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AlterProperties(%v, %v): %v, want %q", c.set, c.unset, err, c.want)
		}
	}
	if v := openTable(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused change committed version %d", v)
	}
	res, err := maintenance.AlterProperties(ctx, snap, map[string]string{"owner": "x"}, []string{"team"})
	if err != nil {
		t.Fatal(err)
	}
	snap = openTable(t, store)
	if snap.Version() != res.Version || res.Version != 1 {
		t.Fatalf("versions %d, %d; want one commit", snap.Version(), res.Version)
	}
	if conf := snap.Metadata().Configuration; len(conf) != 1 || conf["owner"] != "x" {
		t.Fatalf("configuration %v", conf)
	}
	if ci := commitInfo(t, snap); ci.Operation != "SET TBLPROPERTIES" || ci.OperationParameters["unsetProperties"] != `["team"]` {
		t.Fatalf("commitInfo %s %v", ci.Operation, ci.OperationParameters)
	}
}
