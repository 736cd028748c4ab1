package deltalog_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// TestMinimalProtocol: a new table gets the protocol Spark 4.4 gives it.
// Spark starts from appendOnly and invariants (what (1, 2) implies) and adds
// the features the table needs; legacy versions remain only while that set
// is exactly what a legacy protocol implies, else writer 7 lists the whole
// set and reader 3 lists the features readers need (reader 2 when that is
// column mapping alone).
func TestMinimalProtocol(t *testing.T) {
	legacy := []string{"appendOnly", "invariants"}
	with := func(names ...string) []string { return slices.Sorted(slices.Values(append(names, legacy...))) }
	for _, c := range []struct {
		ddl            string
		props          map[string]string
		reader, writer int
		rf, wf         []string
	}{
		{"id long", nil, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.appendOnly": "true"}, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.appendOnly": "false"}, 1, 2, nil, nil},
		{"id long", map[string]string{"delta.enableChangeDataFeed": "true"}, 1, 7, nil, with("changeDataFeed")},
		{"id long", map[string]string{"delta.appendOnly": "true", "delta.enableChangeDataFeed": "true"}, 1, 7, nil, with("changeDataFeed")},
		{"id long", map[string]string{"delta.enableDeletionVectors": "true"}, 3, 7, []string{"deletionVectors"}, with("deletionVectors")},
		{"id long", map[string]string{"delta.enableDeletionVectors": "true", "delta.enableChangeDataFeed": "true"}, 3, 7,
			[]string{"deletionVectors"}, with("changeDataFeed", "deletionVectors")},
		{"id long", map[string]string{"delta.appendOnly": "true", "delta.enableInCommitTimestamps": "true"}, 1, 7,
			nil, with("inCommitTimestamp")},
		{"id long, t timestamp_ntz", map[string]string{"delta.appendOnly": "true"}, 3, 7,
			[]string{"timestampNtz"}, with("timestampNtz")},
		{"id long not null, t timestamp_ntz", nil, 3, 7, []string{"timestampNtz"}, with("timestampNtz")},
		{"s struct<a: long not null>", map[string]string{"delta.enableDeletionVectors": "true"}, 3, 7,
			[]string{"deletionVectors"}, with("deletionVectors")},
		{"l array<long> not null", nil, 1, 2, nil, nil},
		// Column mapping alone: reader 2, writer 7 listing it.
		{"id long", map[string]string{"delta.columnMapping.mode": "name"}, 2, 7, nil, with("columnMapping")},
		{"id long", map[string]string{"delta.columnMapping.mode": "id", "delta.enableChangeDataFeed": "true"}, 2, 7, nil,
			with("changeDataFeed", "columnMapping")},
		{"id long", map[string]string{"delta.columnMapping.mode": "name", "delta.enableDeletionVectors": "true"}, 3, 7,
			[]string{"columnMapping", "deletionVectors"}, with("columnMapping", "deletionVectors")},
	} {
		schema, err := actions.ParseDDL(c.ddl)
		if err != nil {
			t.Fatal(err)
		}
		text, err := actions.SchemaString(schema)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := actions.NewTableConfig(nil, &actions.Metadata{SchemaString: text, Configuration: c.props})
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.MinimalProtocol()
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
		{"id long", nil, map[string]string{"delta.columnMapping.mode": "position"}, "delta.columnMapping.mode", nil},
		{"id long", nil, map[string]string{"delta.feature.noSuchFeature": "supported"}, `table feature "nosuchfeature"`, deltalog.ErrUnsupportedFeature},
		{"id long", nil, map[string]string{"delta.feature.deletionVectors": "yes"}, `delta.feature.deletionvectors="yes"`, nil},
		// Spark refuses the two together: a manifest's readers would read
		// the rows deletion vectors delete.
		{"id long", nil, map[string]string{"delta.compatibility.symlinkFormatManifest.enabled": "true", "delta.enableDeletionVectors": "true"}, "cannot be set together", nil},
		{"id long", nil, map[string]string{"delta.constraints.positive": "id > 0"}, "CHECK constraints are added to an existing table", nil},
		{"id long", nil, map[string]string{"delta.checkpointInterval": "often"}, "delta.checkpointInterval", nil},
		// Spark's booleans are not padded; its intervals have no months.
		{"id long", nil, map[string]string{"delta.enableChangeDataFeed": " true"}, `delta.enableChangeDataFeed = " true": needs to be a boolean`, nil},
		{"id long", nil, map[string]string{"delta.logRetentionDuration": "interval 1 month"}, "delta.logRetentionDuration", nil},
		{"id long", nil, map[string]string{"delta.appendOnly": "true", "DELTA.APPENDONLY": "true"}, `"DELTA.APPENDONLY" and "delta.appendOnly" are the same property`, nil},
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

// TestCreateNormalizesKeys: property keys of Delta's own properties are
// stored in their canonical spelling whatever their case, as Spark stores
// them, and their values parsed in any case.
func TestCreateNormalizesKeys(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	s, _ := actions.SchemaString(&actions.StructType{Fields: []*actions.StructField{{Name: "id", Type: actions.TypeLong, Nullable: true}}})
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: s, Configuration: map[string]string{
		"DELTA.enablechangedatafeed": "tRUE", "delta.CHECKPOINTINTERVAL": "+05", "Owner": "me"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"delta.enableChangeDataFeed": "tRUE", "delta.checkpointInterval": "+05", "Owner": "me"}
	if got := snap.Metadata().Configuration; !maps.Equal(got, want) {
		t.Errorf("configuration %v, want %v", got, want)
	}
	if p := snap.Properties(); !p.EnableChangeDataFeed || p.CheckpointInterval != 5 || !slices.Contains(snap.Protocol().WriterFeatures, "changeDataFeed") {
		t.Errorf("properties %+v, protocol %+v", p, snap.Protocol())
	}
}

// TestSupportsInvalidProperty: a table whose log holds a value of a known
// property that does not parse (a foreign writer's) is read, but every
// write is refused with ErrInvalidProperty naming the property, as Spark
// fails them: a write reading it as its default could leave a change
// feed unrecorded.
func TestSupportsInvalidProperty(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":4}}` + "\n" +
		`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{"delta.enableChangeDataFeed":"yes"}}}` + "\n"
	if err := st.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader(commit), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Supports(deltalog.OpScan); err != nil {
		t.Errorf("scan: %v", err)
	}
	for _, op := range []deltalog.Operation{deltalog.OpAppend, deltalog.OpUpdate, deltalog.OpOptimize} {
		err := snap.Supports(op)
		var pe *actions.PropertyError
		if !errors.Is(err, deltalog.ErrInvalidProperty) || !errors.As(err, &pe) || pe.Key != "delta.enableChangeDataFeed" || !strings.Contains(err.Error(), `delta.enableChangeDataFeed = "yes"`) {
			t.Errorf("%s: %v", op, err)
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
	bad := snap.NewTransaction(deltalog.WithPostCommit("of"))
	bad.SetOperation("WRITE", nil, nil)
	if _, err := bad.Commit(ctx); err == nil || !strings.Contains(err.Error(), `unknown post-commit mode "of"`) {
		t.Errorf("commit with post-commit mode \"of\": %v", err)
	}
	if s, _ := deltalog.Open(ctx, st, ""); s.Version() != snap.Version() {
		t.Errorf("the refused commit landed")
	}
}

// TestSupportsColumnMapping: a column-mapped table can be scanned and
// written; its change data feed is refused with ErrUnsupportedFeature;
// the property means nothing to a protocol without the columnMapping
// feature (readers ignore it, writers refuse the table), and an unknown
// mode is refused.
func TestSupportsColumnMapping(t *testing.T) {
	ctx := context.Background()
	open := func(protocol, mode string) *deltalog.Snapshot {
		t.Helper()
		st := objstore.NewMem()
		schema := `{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":1,\"delta.columnMapping.physicalName\":\"col-1\"}}]}`
		commit := `{"protocol":` + protocol + "}\n" +
			`{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"` + schema + `","partitionColumns":[],"configuration":{"delta.columnMapping.mode":"` + mode + `"}}}` + "\n"
		if err := st.Put(ctx, "_delta_log/00000000000000000000.json", strings.NewReader(commit), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := deltalog.Open(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	writes := []deltalog.Operation{deltalog.OpAppend, deltalog.OpOverwrite, deltalog.OpReplaceWhere, deltalog.OpDelete, deltalog.OpUpdate, deltalog.OpMerge, deltalog.OpOptimize, deltalog.OpVacuum, deltalog.OpRestore}
	for _, tc := range []struct{ protocol, mode string }{
		{`{"minReaderVersion":2,"minWriterVersion":5}`, "name"},
		{`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping"]}`, "id"},
		{`{"minReaderVersion":2,"minWriterVersion":5}`, "Name"},
	} {
		s := open(tc.protocol, tc.mode)
		if got, want := s.Config().ColumnMappingMode(), strings.ToLower(tc.mode); got != want {
			t.Errorf("%s: ColumnMappingMode %q, want %q", tc.protocol, got, want)
		}
		if err := s.Supports(deltalog.OpScan); err != nil {
			t.Errorf("mode %s, scan: %v", tc.mode, err)
		}
		if err := s.Supports(deltalog.OpChangeDataFeed); err != nil {
			t.Errorf("mode %s, change data feed: %v", tc.mode, err)
		}
		for _, op := range writes {
			if err := s.Supports(op); err != nil {
				t.Errorf("mode %s, %s: %v", tc.mode, op, err)
			}
		}
	}
	// Without the feature in the protocol the property is not honoured
	// by readers: the table reads by display names.
	legacy := open(`{"minReaderVersion":1,"minWriterVersion":2}`, "name")
	if m := legacy.Config().ColumnMappingMode(); m != "none" {
		t.Errorf("reader version 1: ColumnMappingMode %q, want none", m)
	}
	if err := legacy.Supports(deltalog.OpScan); err != nil {
		t.Errorf("reader version 1, scan: %v", err)
	}
	if err := legacy.Supports(deltalog.OpAppend); !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "does not support the columnMapping feature") {
		t.Errorf("reader version 1 with the property set, append: %v", err)
	}
	bad := open(`{"minReaderVersion":2,"minWriterVersion":5}`, "position")
	if err := bad.Supports(deltalog.OpScan); !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"position"`) {
		t.Errorf("unknown mode, scan: %v", err)
	}
}

// TestCreateWithTableFeatures: WithTableFeatures on the transaction that
// creates a table enables the feature in version 0's protocol, as
// delta.feature.NAME=supported among the properties does (it failed with
// "no metadata": the option was applied before Create set the metadata).
func TestCreateWithTableFeatures(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	text, err := actions.SchemaString(&actions.StructType{Fields: []*actions.StructField{{Name: "id", Type: actions.TypeLong, Nullable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(store, "t", &actions.Metadata{SchemaString: text}, deltalog.WithTableFeatures(actions.FeatureTimestampNTZ))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Open(ctx, store, "t")
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.Protocol(); !p.HasReaderFeature(actions.FeatureTimestampNTZ) || !p.HasWriterFeature(actions.FeatureTimestampNTZ) {
		t.Fatalf("protocol %+v lacks timestampNtz", p)
	}
	if _, err := deltalog.Create(objstore.NewMem(), "t", &actions.Metadata{SchemaString: text}, deltalog.WithTableFeatures("noSuchFeature")); !errors.Is(err, deltalog.ErrUnsupportedFeature) {
		t.Fatalf("create with an unknown feature: %v, want ErrUnsupportedFeature", err)
	}
}
