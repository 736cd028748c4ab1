package reader_test

import (
	"bytes"
	"context"
	"iter"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
)

// collect scans and returns the canonical rows in scan order.
func collect(t *testing.T, sc *reader.Scan) []string {
	t.Helper()
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Schema().Equal(sc.Schema()) {
			t.Fatalf("batch schema %s, want %s", rec.Schema(), sc.Schema())
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	return lines
}

func seq(recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func mustScan(t *testing.T, snap *deltalog.Snapshot, opts ...reader.Option) *reader.Scan {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// mapColumns makes the table column-mapped as Spark does when mapping is
// turned on for an existing table and columns are then renamed: it
// commits a protocol that supports columnMapping and a metaData whose
// every field (nested ones too) keeps its current name as its physical
// name (delta.columnMapping.physicalName), gets an id
// (delta.columnMapping.id, in depth-first order from 1) and is renamed to
// logical[name] when the map has it. Partition columns are renamed too.
// The log is written directly: lakelog does not write column-mapped
// tables.
func mapColumns(t *testing.T, store objstore.Store, snap *deltalog.Snapshot, mode string, logical map[string]string) *deltalog.Snapshot {
	t.Helper()
	md := *snap.Metadata()
	schema, err := actions.ParseSchema(md.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	id := int64(0)
	var walk func(dt actions.DataType)
	walk = func(dt actions.DataType) {
		switch dt := dt.(type) {
		case *actions.StructType:
			for _, f := range dt.Fields {
				id++
				if f.Metadata == nil {
					f.Metadata = map[string]any{}
				}
				f.Metadata[actions.MetaColumnMappingPhysical] = f.Name
				f.Metadata[actions.MetaColumnMappingID] = id
				if l, ok := logical[f.Name]; ok {
					f.Name = l
				}
				walk(f.Type)
			}
		case *actions.ArrayType:
			walk(dt.ElementType)
		case *actions.MapType:
			walk(dt.KeyType)
			walk(dt.ValueType)
		}
	}
	walk(schema)
	if md.SchemaString, err = actions.SchemaString(schema); err != nil {
		t.Fatal(err)
	}
	md.PartitionColumns = slices.Clone(md.PartitionColumns)
	for i, p := range md.PartitionColumns {
		if l, ok := logical[p]; ok {
			md.PartitionColumns[i] = l
		}
	}
	md.Configuration = map[string]string{actions.PropColumnMappingMode: mode, actions.PropColumnMappingMaxColumnID: strconv.FormatInt(id, 10)}
	p := &actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	if mode == actions.ColumnMappingID {
		p = &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"}, WriterFeatures: []string{"columnMapping"}}
	}
	commitRaw(t, store, snap.Version()+1, actions.Action{Protocol: p}, actions.Action{Metadata: &md})
	return tabletest.Open(t, store)
}

// commitRaw writes a commit file of the table "tbl" directly.
func commitRaw(t *testing.T, store objstore.Store, version int64, as ...actions.Action) {
	t.Helper()
	b, err := actions.MarshalCommit(as)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), "tbl/_delta_log/"+actions.CommitName(version), bytes.NewReader(b), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
}
