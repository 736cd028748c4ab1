package deltalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// TestMinimalProtocol: a new table gets the protocol Spark would give it:
// legacy versions while every feature needed has one, else reader 3 /
// writer 7 listing exactly the features needed, each once.
func TestMinimalProtocol(t *testing.T) {
	for _, c := range []struct {
		ddl            string
		props          map[string]string
		reader, writer int
		rf, wf         []string
	}{
		{"id long", nil, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.appendOnly": "true"}, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.appendOnly": "false"}, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.enableChangeDataFeed": "true"}, 1, 4, nil, nil},
		{"id long", map[string]string{"delta.appendOnly": "true", "delta.enableChangeDataFeed": "true"}, 1, 4, nil, nil},
		{"id long", map[string]string{"delta.enableDeletionVectors": "true"}, 3, 7, []string{"deletionVectors"}, []string{"deletionVectors"}},
		{"id long", map[string]string{"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}, 3, 7,
			[]string{"deletionVectors"}, []string{"changeDataFeed", "deletionVectors"}},
		{"id long", map[string]string{"delta.appendOnly": "true", "delta.enableInCommitTimestamps": "true"}, 1, 7,
			nil, []string{"appendOnly", "inCommitTimestamp"}},
		{"id long, t timestamp_ntz", map[string]string{"delta.appendOnly": "true"}, 3, 7,
			[]string{"timestampNtz"}, []string{"appendOnly", "timestampNtz"}},
		// Spark counts NOT NULL columns (through structs) as invariants.
		{"id long not null, t timestamp_ntz", nil, 3, 7, []string{"timestampNtz"}, []string{"invariants", "timestampNtz"}},
		{"s struct<a: long not null>", map[string]string{"delta.enableDeletionVectors": "true"}, 3, 7,
			[]string{"deletionVectors"}, []string{"deletionVectors", "invariants"}},
		{"l array<long> not null", nil, 1, 2, nil, nil},
	} {
		schema, err := actions.ParseDDL(c.ddl)
		if err != nil {
			t.Fatal(err)
		}
		p := deltalog.MinimalProtocol(&actions.Metadata{Configuration: c.props}, schema)
		rf, wf := slices.Sorted(slices.Values(p.ReaderFeatures)), slices.Sorted(slices.Values(p.WriterFeatures))
		if p.MinReaderVersion != c.reader || p.MinWriterVersion != c.writer || !slices.Equal(rf, c.rf) || !slices.Equal(wf, c.wf) {
			t.Errorf("%s %v: protocol (%d, %d) %v %v, want (%d, %d) %v %v", c.ddl, c.props,
				p.MinReaderVersion, p.MinWriterVersion, rf, wf, c.reader, c.writer, c.rf, c.wf)
		}
	}
}

// TestCreateRefuses: properties Spark refuses, features lakelog cannot
// write yet, and a table without a data column are errors at create.
func TestCreateRefuses(t *testing.T) {
	for _, c := range []struct {
		ddl   string
		parts []string
		props map[string]string
		want  string
		is    error
	}{
		{"id long", nil, map[string]string{"delta.appendOnyl": "true"}, `unknown table property "delta.appendOnyl"`, nil},
		{"id long", nil, map[string]string{"delta.columnMapping.mode": "name"}, "does not write column-mapped tables", deltalog.ErrUnsupportedFeature},
		{"id long", nil, map[string]string{"delta.feature.deletionVectors": "supported"}, "delta.feature.*", deltalog.ErrUnsupportedFeature},
		{"id long", nil, map[string]string{"delta.constraints.positive": "id > 0"}, "CHECK constraints", deltalog.ErrUnsupportedFeature},
		{"id long", nil, map[string]string{"delta.checkpointInterval": "often"}, "delta.checkpointInterval", nil},
		{"p string, q int", []string{"p", "q"}, nil, "every column is a partition column", nil},
	} {
		schema, err := actions.ParseDDL(c.ddl)
		if err != nil {
			t.Fatal(err)
		}
		s, err := actions.SchemaString(schema)
		if err != nil {
			t.Fatal(err)
		}
		_, err = deltalog.Create(objstore.NewMem(), "t", &actions.Metadata{SchemaString: s, PartitionColumns: c.parts, Configuration: c.props})
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("create %s %v %v: %v; want an error mentioning %q", c.ddl, c.parts, c.props, err, c.want)
		}
	}
	// User properties outside delta. are kept as given.
	s, _ := actions.SchemaString(&actions.StructType{Fields: []*actions.StructField{{Name: "id", Type: actions.TypeLong, Nullable: true}}})
	if _, err := deltalog.Create(objstore.NewMem(), "t", &actions.Metadata{SchemaString: s, Configuration: map[string]string{"owner": "me", "delta.appendOnly": "true"}}); err != nil {
		t.Errorf("create with a user property: %v", err)
	}
}

// TestSupports: the snapshot answers, per operation, whether lakelog can
// do it on the table, with ErrUnsupportedFeature naming what is in the way.
func TestSupports(t *testing.T) {
	ctx := context.Background()
	open := func(props map[string]string) *deltalog.Snapshot {
		t.Helper()
		st := objstore.NewMem()
		createTable(t, st, props)
		s, err := deltalog.Open(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	plain := open(nil)
	for _, op := range []deltalog.Operation{deltalog.OpScan, deltalog.OpAppend, deltalog.OpOverwrite, deltalog.OpReplaceWhere, deltalog.OpDelete, deltalog.OpOptimize, deltalog.OpVacuum, deltalog.OpRestore} {
		if err := plain.Supports(op); err != nil {
			t.Errorf("plain table, %s: %v", op, err)
		}
	}
	appendOnly := open(map[string]string{"delta.appendOnly": "true"})
	for op, ok := range map[deltalog.Operation]bool{deltalog.OpScan: true, deltalog.OpAppend: true, deltalog.OpOptimize: true,
		deltalog.OpOverwrite: false, deltalog.OpDelete: false, deltalog.OpMerge: false, deltalog.OpRestore: false} {
		err := appendOnly.Supports(op)
		if ok != (err == nil) || (err != nil && (!errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "append-only"))) {
			t.Errorf("append-only table, %s: %v", op, err)
		}
	}
}

// TestTransactionHelpers: RemoveFile writes Spark's remove with the
// transaction's clock and records the file as read; an unknown checkpoint
// mode fails the commit before anything is written.
func TestTransactionHelpers(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	createTable(t, st, nil)
	appendFiles(t, st, "a", "b")
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tx := snap.NewTransaction(deltalog.WithClock(func() time.Time { return at }))
	for f := range snap.Files() {
		if f.Path == "a" {
			tx.RemoveFile(f, false)
		}
	}
	tx.SetOperation("OPTIMIZE", nil, nil)
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for vc, err := range deltalog.Commits(ctx, st, "", res.Version, res.Version) {
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range vc.Actions {
			if r := a.Remove; r != nil {
				found = true
				if r.Path != "a" || r.DataChange || r.DeletionTimestamp == nil || *r.DeletionTimestamp != at.UnixMilli() || r.Size == nil || *r.Size != 100 {
					t.Errorf("remove %+v: want path a, dataChange false, the transaction's clock and the add's size", r)
				}
			}
		}
		if ci := vc.CommitInfo; ci == nil || ci.Timestamp == nil || *ci.Timestamp != at.UnixMilli() {
			t.Errorf("commitInfo %+v: want the transaction's clock", ci)
		}
	}
	if !found {
		t.Fatal("no remove in the commit")
	}

	snap, err = deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	bad := snap.NewTransaction(deltalog.WithCheckpoints("of"))
	bad.SetOperation("WRITE", nil, nil)
	if _, err := bad.Commit(ctx); err == nil || !strings.Contains(err.Error(), `unknown checkpoint mode "of"`) {
		t.Errorf("commit with checkpoint mode \"of\": %v", err)
	}
	if s, _ := deltalog.Open(ctx, st, ""); s.Version() != snap.Version() {
		t.Errorf("the refused commit landed")
	}
}
