package maintenance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

func TestSetAndUnsetProperties(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, s string", nil)
	for _, bad := range []map[string]string{
		{"delta.deletedFileRetentionDuration": "2 fortnights"},
		{"delta.appendOnly": "maybe"},
		{"delta.isolationLevel": "Snapshot"},
		{"delta.appendOnyl": "true"},
		{"delta.columnMapping.mode": "id"}, // Spark enables only mode name on an existing table
		{"delta.feature.noSuchFeature": "supported"},
		{"delta.feature.deletionVectors": "yes"},
		{"delta.appendOnly": " true"},
		{"delta.appendOnly": "true", "delta.APPENDONLY": "false"},
	} {
		if _, err := maintenance.SetProperties(ctx, snap, bad); err == nil {
			t.Errorf("SetProperties(%v) succeeded", bad)
		}
	}
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused property change committed version %d", v)
	}

	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.deletedFileRetentionDuration": "interval 2 days", "owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if v := snap.Metadata().Configuration["delta.deletedFileRetentionDuration"]; v != "interval 2 days" {
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
	snap = tabletest.Open(t, store)
	if p := snap.Protocol(); !p.HasReaderFeature("deletionVectors") || !p.HasWriterFeature("deletionVectors") {
		t.Fatalf("protocol %+v lacks deletionVectors", p)
	}

	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"owner", "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unset of a property the table does not set: %v", err)
	}
	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"owner"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if _, ok := snap.Metadata().Configuration["owner"]; ok {
		t.Fatal("owner is still set")
	}
	if ci := commitInfo(t, snap); ci.Operation != "UNSET TBLPROPERTIES" {
		t.Fatalf("operation %s", ci.Operation)
	}
	// Keys of Delta's properties in any case are their canonical key, as
	// Spark normalises them; values parse in any case.
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"DELTA.DELETEDFILERETENTIONDURATION": "INTERVAL 3 DAYS"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if v := snap.Metadata().Configuration["delta.deletedFileRetentionDuration"]; v != "INTERVAL 3 DAYS" || snap.Properties().DeletedFileRetention != 72*time.Hour {
		t.Fatalf("property %q: retention %v", v, snap.Properties().DeletedFileRetention)
	}
	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"delta.DeletedFileRetentionDuration"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if _, ok := snap.Metadata().Configuration["delta.deletedFileRetentionDuration"]; ok {
		t.Fatal("the retention is still set")
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
	snap := tabletest.Create(t, store, "id long", map[string]string{"team": "ops"})
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
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused change committed version %d", v)
	}
	res, err := maintenance.AlterProperties(ctx, snap, map[string]string{"owner": "x"}, []string{"team"})
	if err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
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

// TestAlterMendsInvalidProperty: a table whose log holds a value that does
// not parse refuses writes, but ALTER TABLE may set the property right
// (and only that: leaving it invalid is refused naming it).
func TestAlterMendsInvalidProperty(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":4}}` + "\n" +
		`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{"delta.enableChangeDataFeed":"yes"}}}` + "\n"
	if err := store.Put(ctx, "tbl/_delta_log/00000000000000000000.json", strings.NewReader(commit), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := tabletest.Open(t, store)
	if err := snap.Supports(deltalog.OpAppend); !errors.Is(err, deltalog.ErrInvalidProperty) {
		t.Fatalf("append to a table with an invalid property: %v", err)
	}
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"owner": "ops"}); err == nil || !strings.Contains(err.Error(), "delta.enableChangeDataFeed") {
		t.Fatalf("an ALTER that leaves the property invalid: %v", err)
	}
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.enableChangeDataFeed": "TRUE"}); err != nil {
		t.Fatal(err)
	}
	if snap = tabletest.Open(t, store); !snap.Properties().EnableChangeDataFeed || snap.Supports(deltalog.OpAppend) != nil {
		t.Fatalf("after the ALTER: %+v, %v", snap.Properties(), snap.Supports(deltalog.OpAppend))
	}
}
