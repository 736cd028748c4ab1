package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// OPTIMIZE's row is Spark's: the path and the metrics struct, filled
// from the files the commit added and removed.
func TestSQLOptimizeRow(t *testing.T) {
	dir, table := newPeople(t)
	ok(t, "append", table, writeFile(t, dir, "more.jsonl", `{"id": 6, "name": "fay", "amount": "60.00", "country": "nl"}
{"id": 7, "name": "gus", "amount": "70.00", "country": "de"}
{"id": 8, "name": "hal", "amount": "80.00", "country": "fr"}
`))
	var before int64
	for _, l := range lines(ok(t, "files", table, "--format", "jsonl")) {
		var f struct{ Size int64 }
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		before += f.Size
	}
	type sizes struct {
		Min, Max              *int64
		Avg                   float64
		TotalFiles, TotalSize int64
	}
	// The record of a statement that changes a table holds Spark's row's
	// columns beside the version and the commit's metrics.
	var rows [1]struct {
		Version *int64
		Path    string
		Metrics struct {
			NumFilesAdded, NumFilesRemoved int64
			FilesAdded, FilesRemoved       sizes
			PartitionsOptimized            int64
			ZOrderStats                    *struct {
				StrategyName   string
				MergedFiles    struct{ Num, Size int64 }
				NumOutputCubes int64
			}
			ClusteringStats          any
			NumBins, NumBatches      int64
			TotalConsideredFiles     int64
			StartTimeMs, EndTimeMs   int64
			DeletionVectorStats      struct{ NumDeletionVectorsRemoved int64 }
			NumTableColumns          int64
			NumTableColumnsWithStats int64
		}
	}
	out := ok(t, "sql", "OPTIMIZE delta.`"+table+"` ZORDER BY (id)", "--format", "json")
	if err := json.Unmarshal([]byte(out), &rows[0]); err != nil || rows[0].Version == nil {
		t.Fatalf("%v: %s", err, out)
	}
	m := rows[0].Metrics
	if rows[0].Path != table || m.NumFilesAdded != 3 || m.NumFilesRemoved != 6 || m.FilesRemoved.TotalFiles != 6 || m.FilesRemoved.TotalSize != before ||
		m.FilesAdded.TotalFiles != 3 || m.FilesAdded.Min == nil || *m.FilesAdded.Min > *m.FilesAdded.Max || m.PartitionsOptimized != 3 ||
		m.NumBins != 3 || m.NumBatches != 1 || m.TotalConsideredFiles != 6 || m.EndTimeMs < m.StartTimeMs || m.StartTimeMs == 0 ||
		m.ZOrderStats == nil || m.ZOrderStats.StrategyName != "all" || m.ZOrderStats.MergedFiles.Num != 6 || m.ZOrderStats.MergedFiles.Size != before ||
		m.ClusteringStats != nil || m.NumTableColumns != 4 || m.NumTableColumnsWithStats != 4 {
		t.Errorf("OPTIMIZE's row: %s", out)
	}
	// Nothing to do: no file added or removed, min and max null.
	out = ok(t, "sql", "OPTIMIZE delta.`"+table+"`", "--format", "json")
	if !strings.Contains(out, `"filesAdded":{"min":null,"max":null,"avg":0,"totalFiles":0,"totalSize":0}`) || !strings.Contains(out, `"zOrderStats":null`) ||
		!strings.Contains(out, `"deletionVectorStats":null`) {
		t.Errorf("OPTIMIZE with nothing to do: %s", out)
	}
}
