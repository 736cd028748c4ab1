package deltalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// checkpointProtection: cleanup keeps the checkpoints before
// delta.requireCheckpointProtectionBeforeVersion until one cleanup can
// remove all the history before it, and then removes commits before
// checkpoints.
func TestLogCleanupCheckpointProtection(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: ordersSchema, PartitionColumns: []string{"country"}, Configuration: map[string]string{
		"delta.logRetentionDuration":                     "interval 30 days",
		"delta.requireCheckpointProtectionBeforeVersion": "15",
	}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetProtocol(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{actions.FeatureCheckpointProtection}})
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	commitN(t, st, 0, 30, deltalog.WithPostCommit("off"))
	for _, v := range []int64{10, 20} {
		if _, err := open(t, st, deltalog.AtVersion(v)).Checkpoint(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v := int64(0); v <= 30; v++ {
		ts := base.Add(time.Duration(v) * 24 * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, "_delta_log", deltalog.CommitName(v)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, st)
	// Day 45: without protection checkpoint 10 would be kept and 0-9
	// removed; that is a partial truncation before version 15.
	res, err := s.CleanupLog(ctx, base.Add(45*24*time.Hour))
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("cleanup before the boundary: %+v %v", res, err)
	}
	// Day 55: the oldest kept version is 25, checkpoint 20 reconstructs
	// it, and everything before 15 goes at once: commits first.
	res, err = s.CleanupLog(ctx, base.Add(55*24*time.Hour))
	if err != nil || res.KeptFrom != 20 {
		t.Fatalf("cleanup past the boundary: %+v %v", res, err)
	}
	sawCheckpoint := false
	for _, k := range res.Deleted {
		isCP := strings.Contains(k, ".checkpoint.")
		if sawCheckpoint && !isCP {
			t.Fatalf("commit %s removed after a checkpoint: %v", k, res.Deleted)
		}
		sawCheckpoint = sawCheckpoint || isCP
	}
	if !sawCheckpoint || len(res.Deleted) != 21 {
		t.Fatalf("deleted %v", res.Deleted)
	}
	if got := open(t, st, deltalog.AtVersion(20)); got.NumFiles() != 20 {
		t.Fatalf("version 20: %d files", got.NumFiles())
	}
}

// A checkpoint of a protected table is written only for a protocol
// lakelog writes.
func TestCheckpointProtectionNeedsWriteSupport(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: ordersSchema, PartitionColumns: []string{"country"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetProtocol(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{actions.FeatureCheckpointProtection, "someFutureWriterFeature"}})
	if _, err := tx.Commit(ctx); err == nil {
		// Commit refuses the unknown feature itself; write the log by hand.
		t.Fatal("commit with an unknown writer feature succeeded")
	}
	body, err := actions.MarshalCommit([]actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{actions.FeatureCheckpointProtection, "someFutureWriterFeature"}}},
		{Metadata: &actions.Metadata{ID: "x", SchemaString: ordersSchema, PartitionColumns: []string{"country"}, Format: actions.Format{Provider: "parquet"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "_delta_log/"+deltalog.CommitName(0), strings.NewReader(string(body)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = open(t, st).Checkpoint(ctx, time.Now())
	if !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "someFutureWriterFeature") {
		t.Fatalf("checkpoint: %v", err)
	}
}
