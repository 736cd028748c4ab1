package interop

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
)

// TestSparkWritesLakelogReads has Spark build a partitioned table of every
// type (CREATE TABLE AS SELECT, INSERT, a DataFrame append, a DELETE and an
// UPDATE that rewrite files since deletion vectors are off, with a
// checkpoint every two commits) and checks that lakelog reads every
// version as Spark does, and the latest one again from Spark's last
// checkpoint alone.
func TestSparkWritesLakelogReads(t *testing.T) {
	sp := requirePeer(t, spark)
	l := layouts[1] // partitioned-strings: every type, escaped partition values
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, sc := tableSchema(t, l.ddl)
	g := newGen(600)
	// Fewer partitions than the layout's: Spark takes a while per file.
	g.pools = map[string][]any{
		"p_str": {"a b", "a/b", "100%", "ü€😀", "#?&+", `back\slash`, "", nil},
		"p_int": {int32(0), int32(math.MinInt32), nil},
	}
	g.nestedNanos = true // Spark writes INT96; see TestSparkNestedInt96Timestamps
	inputs := parquetInputs(t, g, mem, sc, 3, 40)
	store, dir := newLocal(t)
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table + " USING delta PARTITIONED BY (p_str, p_int) " +
			"TBLPROPERTIES ('delta.checkpointInterval' = '2', 'delta.enableDeletionVectors' = 'false') " +
			"AS SELECT * FROM parquet.`" + inputs[0] + "`",
		"INSERT INTO " + table + " SELECT * FROM parquet.`" + inputs[1] + "`",
	}})
	sp.call(t, request{Op: "write", Path: dir, Input: inputs[2], Mode: "append"})
	sp.call(t, request{Op: "sql", Statements: []string{
		"DELETE FROM " + table + " WHERE i32 > 0 OR p_int IS NULL",
		"UPDATE " + table + " SET s = 'updated by spark', m = map('k', 1) WHERE id % 3 = 0",
	}})
	latest := sp.call(t, request{Op: "version", Path: dir}).Version
	if latest != 4 {
		t.Fatalf("spark made version %d, want 4", latest)
	}

	snap := open(t, store, "")
	p := snap.Protocol()
	t.Logf("spark's table: protocol (%d, %d) reader features %v writer features %v, %d files",
		p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures, snap.NumFiles())
	var spark [][]string
	for v := range latest + 1 {
		got, _ := peerRead(t, sp, request{Path: dir, Version: &v})
		spark = append(spark, got)
		sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, store, "", deltalog.AtVersion(v)), got)
	}
	if len(spark[latest]) == 0 || len(spark[latest]) == len(spark[latest-2]) {
		t.Fatalf("the DELETE left %d of %d rows: it tests nothing", len(spark[latest]), len(spark[latest-2]))
	}

	// The last checkpoint alone, with the commits before it gone.
	var cp int64 = -1
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if lp, ok := deltalog.ParseLogPath(e.Name()); ok && strings.Contains(e.Name(), ".checkpoint") {
			cp = max(cp, lp.Version)
		}
	}
	if cp < 2 {
		t.Fatalf("spark wrote no checkpoint (newest %d) with delta.checkpointInterval = 2", cp)
	}
	for u := range cp {
		if err := os.Remove(filepath.Join(dir, "_delta_log", deltalog.CommitName(u))); err != nil {
			t.Fatal(err)
		}
	}
	sameRows(t, fmt.Sprintf("lakelog from spark's checkpoint %d", cp), openLines(t, store, ""), spark[latest])
}

// TestSparkNestedInt96Timestamps reads a Spark table whose timestamps,
// top-level and nested in a struct, an array and a map, lie outside
// 1677..2262. Spark writes timestamps as Parquet INT96 by default. lakelog
// decodes top-level INT96 columns itself, but nested ones go through
// arrow-go, which converts INT96 to nanoseconds and fails outside that
// range. Until the reader decodes nested INT96 itself, lakelog must refuse
// such a table with exactly that error, never return other rows: the test
// accepts identical rows or that refusal, and fails on anything else.
func TestSparkNestedInt96Timestamps(t *testing.T) {
	sp := requirePeer(t, spark)
	store, dir := newLocal(t)
	table := "delta.`" + dir + "`"
	sp.call(t, request{Op: "sql", Statements: []string{
		"CREATE TABLE " + table + " (id INT, ts TIMESTAMP, st STRUCT<ts: TIMESTAMP>, arr ARRAY<TIMESTAMP>, m MAP<STRING, TIMESTAMP>) USING delta",
		"INSERT INTO " + table + " VALUES " +
			"(1, TIMESTAMP'9999-12-31 23:59:59.999999', named_struct('ts', TIMESTAMP'9999-12-31 23:59:59.999999'), " +
			"array(TIMESTAMP'0001-01-01 00:00:00'), map('k', TIMESTAMP'2500-01-01 00:00:00')), " +
			"(2, TIMESTAMP'2024-01-01 00:00:00', named_struct('ts', TIMESTAMP'2024-01-01 00:00:00'), array(), map())",
	}})
	want, _ := peerRead(t, sp, request{Path: dir})
	snap := open(t, store, "")
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			if strings.Contains(err.Error(), "INT96 timestamp is outside the Arrow nanosecond range") {
				t.Logf("known limitation: nested INT96 timestamps outside 1677..2262 are refused: %v", err)
				return
			}
			t.Fatal(err)
		}
		got = append(got, canonical(t, rec)...)
	}
	slices.Sort(got)
	sameRows(t, "lakelog", got, want)
}
