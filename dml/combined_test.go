package dml_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// renamedAndReadded is a column-mapped table where the column a was
// renamed to b and a new column a added: every row has b = 5 and a
// NULL, and the old column's physical name is "a" (mapping enabled on an
// existing table keeps names as physical names).
func renamedAndReadded(t *testing.T, mode string) objstore.Store {
	t.Helper()
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "a long, x long", nil)
	snap := tabletest.AppendTo(t, store, `[{"a":5,"x":1},{"a":5,"x":2}]`)
	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.columnMapping.mode": mode}); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.RenameColumn(ctx, tabletest.Open(t, store), "a", "b"); err != nil {
		t.Fatal(err)
	}
	col, err := schema.ParseColumn("a long")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.AddColumns(ctx, tabletest.Open(t, store), []schema.Column{col}); err != nil {
		t.Fatal(err)
	}
	tabletest.DiffLines(t, "table before", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(
		`{"b":5,"x":1,"a":null}`, `{"b":5,"x":2,"a":null}`))
	return store
}

// TestDMLMatchesLogicalColumnAfterRenameAndReadd: DELETE and UPDATE
// bind a predicate on a to the new column a, not to the data the old
// column (now b) left under the physical name "a": no row matches.
func TestDMLMatchesLogicalColumnAfterRenameAndReadd(t *testing.T) {
	ctx := context.Background()
	store := renamedAndReadded(t, "name")
	want := tabletest.ScanLines(t, tabletest.Open(t, store))
	res, err := dml.Delete(ctx, tabletest.Open(t, store), mustParse(t, "a = 5"))
	if err != nil {
		t.Fatal(err)
	}
	if res.CommitResult != nil || res.Metrics["numDeletedRows"] != 0 {
		t.Fatalf("DELETE WHERE a = 5 deleted %d rows; no row has a = 5", res.Metrics["numDeletedRows"])
	}
	res, err = dml.Update(ctx, tabletest.Open(t, store), mustParse(t, "a = 5"), mustSet(t, "x = 99"))
	if err != nil {
		t.Fatal(err)
	}
	if res.CommitResult != nil || res.Metrics["numUpdatedRows"] != 0 {
		t.Fatalf("UPDATE WHERE a = 5 updated %d rows; no row has a = 5", res.Metrics["numUpdatedRows"])
	}
	tabletest.DiffLines(t, "table after", tabletest.ScanLines(t, tabletest.Open(t, store)), want)

	// The same predicates on b match both rows, whole files included.
	res, err = dml.Update(ctx, tabletest.Open(t, store), mustParse(t, "b = 5"), mustSet(t, "x = 99"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numUpdatedRows"] != 2 {
		t.Fatalf("UPDATE WHERE b = 5 updated %d rows, want 2", res.Metrics["numUpdatedRows"])
	}
	res, err = dml.Delete(ctx, tabletest.Open(t, store), mustParse(t, "b = 5 AND x = 99"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["numDeletedRows"] != 2 {
		t.Fatalf("DELETE WHERE b = 5 deleted %d rows, want 2", res.Metrics["numDeletedRows"])
	}
	if snap := tabletest.Open(t, store); snap.NumFiles() != 0 {
		t.Fatalf("%d files left, want none", snap.NumFiles())
	}
}

// TestNewTimestampNTZColumnNeedsTheFeature: append with merge-schema and
// MERGE with schema evolution decide alike by the one protocol rule: a
// source column of type timestamp_ntz on a table without the
// timestampNtz feature is refused naming delta.feature.timestampNtz, and
// nothing is committed (Spark requires the feature to be enabled by
// hand); once it is enabled, both add the column.
func TestNewTimestampNTZColumnNeedsTheFeature(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	snap := tabletest.AppendTo(t, store, `[{"id":1}]`)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	rows := `[{"id":1,"at":"2026-01-02T03:04:05"},{"id":2,"at":null}]`
	batch := func() arrow.RecordBatch { return tabletest.RecordJSON(t, memory.DefaultAllocator, sc, rows) }
	on := mustParse(t, "target.id = source.id")
	clauses := []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}

	_, err := writer.Append(ctx, snap, tabletest.Batches(t, batch()), writer.WithMergeSchema())
	refusedNTZ(t, "append with merge-schema", err)
	_, err = dml.Merge(ctx, snap, tabletest.Batches(t, batch()), on, clauses, dml.WithSchemaEvolution())
	refusedNTZ(t, "MERGE with schema evolution", err)
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("a refused write committed version %d", v)
	}

	if _, err := maintenance.SetProperties(ctx, snap, map[string]string{"delta.feature.timestampNtz": "supported"}); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if !snap.Protocol().HasReaderFeature(actions.FeatureTimestampNTZ) {
		t.Fatalf("protocol %+v lacks timestampNtz after enabling it", snap.Protocol())
	}
	if _, ok := snap.Metadata().Configuration["delta.feature.timestampntz"]; ok {
		t.Fatal("delta.feature.timestampntz was stored as a property; it belongs to the protocol")
	}
	if _, err := dml.Merge(ctx, snap, tabletest.Batches(t, batch()), on, clauses, dml.WithSchemaEvolution()); err != nil {
		t.Fatal(err)
	}
	tabletest.DiffLines(t, "after MERGE", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(
		`{"id":1,"at":"2026-01-02T03:04:05.000000"}`, `{"id":2,"at":null}`))
}

func refusedNTZ(t *testing.T, what string, err error) {
	t.Helper()
	var fe *actions.FeatureNotEnabledError
	if !errors.As(err, &fe) || fe.Feature != actions.FeatureTimestampNTZ || !strings.Contains(err.Error(), "delta.feature.timestampNtz=supported") {
		t.Fatalf("%s of a timestamp_ntz column: %v, want a refusal naming delta.feature.timestampNtz=supported", what, err)
	}
}

// TestMergeKeepsRowIDsAcrossClauses: a MERGE whose rows in one file are
// updated by different clauses (here WHEN MATCHED and WHEN NOT MATCHED
// BY SOURCE, in the other order than the file's) keeps each row's ID.
// The updated rows came out grouped by clause and the IDs were attached
// by position, so two rows swapped IDs.
func TestMergeKeepsRowIDsAcrossClauses(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "k long, v string", map[string]string{"delta.enableRowTracking": "true"})
	snap := tabletest.AppendTo(t, store, `[{"k":1,"v":"a"},{"k":2,"v":"b"},{"k":3,"v":"c"}]`)
	before := tabletest.ScanLines(t, snap, reader.WithRowTracking())
	src := tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"k":3,"v":"C"}]`)
	if _, err := dml.Merge(ctx, snap, tabletest.Batches(t, src), mustParse(t, "t.k = s.k"), []dml.Clause{
		dml.WhenMatchedUpdate(nil, mustSet(t, "v = s.v")...),
		dml.WhenNotMatchedBySourceUpdate(mustParse(t, "t.k = 1"), mustSet(t, "v = 'A'")...),
	}, dml.WithAliases("t", "s")); err != nil {
		t.Fatal(err)
	}
	after := tabletest.ScanLines(t, tabletest.Open(t, store), reader.WithRowTracking())
	id := func(lines []string, k string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, `{"k":`+k+`,`) {
				return l[strings.Index(l, `"_row_id":`):strings.Index(l, `,"_row_commit_version"`)]
			}
		}
		t.Fatalf("no row k=%s in %v", k, lines)
		return ""
	}
	for _, k := range []string{"1", "2", "3"} {
		if id(before, k) != id(after, k) {
			t.Errorf("row k=%s: %s before the MERGE, %s after", k, id(before, k), id(after, k))
		}
	}
}
