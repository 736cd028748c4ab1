package maintenance_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
		{"DELTA.enableInCommitTimestamps": "TRUE"},
		{"delta.appendOnly": " true"},
		{"delta.appendOnly": "true", "delta.APPENDONLY": "false"},
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
	snap = openTable(t, store)
	if v := snap.Metadata().Configuration["delta.deletedFileRetentionDuration"]; v != "INTERVAL 3 DAYS" || snap.Properties().DeletedFileRetention != 72*time.Hour {
		t.Fatalf("property %q: retention %v", v, snap.Properties().DeletedFileRetention)
	}
	if _, err := maintenance.UnsetProperties(ctx, snap, []string{"delta.DeletedFileRetentionDuration"}); err != nil {
		t.Fatal(err)
	}
	snap = openTable(t, store)
	if _, ok := snap.Metadata().Configuration["delta.deletedFileRetentionDuration"]; ok {
		t.Fatal("the retention is still set")
	}
	// The protocol is never downgraded.
	if p := snap.Protocol(); !p.HasReaderFeature("deletionVectors") {
		t.Fatalf("protocol %+v", p)
	}
}
