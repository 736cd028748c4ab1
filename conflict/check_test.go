package conflict_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/expr"
)

// A table partitioned by country, with id and v.
func partTable(t *testing.T) *actions.TableConfig {
	t.Helper()
	return layouts["part"].table()
}

func pred(t *testing.T, tbl *actions.TableConfig, text string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	e, err = expr.BindPredicate(e, tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func str(s string) *string { return &s }

func addIn(path, country string, dataChange bool, stats string) actions.Action {
	return actions.Action{Add: &actions.Add{Path: path, PartitionValues: map[string]*string{"country": str(country)}, DataChange: dataChange, Stats: stats}}
}

func removeOf(path, country string, dataChange bool) actions.Action {
	return actions.Action{Remove: &actions.Remove{Path: path, PartitionValues: map[string]*string{"country": str(country)}, DataChange: dataChange}}
}

func info(op string, blind bool) actions.Action {
	return actions.Action{CommitInfo: &actions.CommitInfo{Operation: op, IsBlindAppend: &blind}}
}

// deleteTx is DELETE WHERE country = 'nl' that read and rewrites a.
func deleteTx(t *testing.T, tbl *actions.TableConfig, iso conflict.Isolation) *conflict.Txn {
	return &conflict.Txn{
		ReadVersion:    10,
		Isolation:      iso,
		ReadPredicates: []expr.Expr{pred(t, tbl, "country = 'nl'")},
		ReadFiles:      []string{"country=nl/a.parquet"},
		ReadProtocol:   readProtocol,
		Actions: []actions.Action{
			removeOf("country=nl/a.parquet", "nl", true),
			addIn("country=nl/a2.parquet", "nl", true, ""),
		},
	}
}

func mustConflict(t *testing.T, err error, kind error) *conflict.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got rebase, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("got %v, want %v", err, kind)
	}
	if !errors.Is(err, conflict.ErrConflict) {
		t.Fatalf("%v does not wrap ErrConflict", err)
	}
	var ce *conflict.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%T is not a *conflict.Error", err)
	}
	return ce
}

func TestErrorValues(t *testing.T) {
	tbl := partTable(t)
	tx := deleteTx(t, tbl, conflict.Serializable)
	w := conflict.Winner{Version: 11, Actions: []actions.Action{
		info("WRITE", true),
		addIn("country=nl/new%20file.parquet", "nl", true, ""),
		addIn("country=de/other.parquet", "de", true, ""),
	}}
	err := conflict.Check(tx, tbl, w)
	ce := mustConflict(t, err, conflict.ErrConcurrentAppend)
	if ce.WinningVersion != 11 {
		t.Errorf("WinningVersion = %d, want 11", ce.WinningVersion)
	}
	if want := []string{"country=nl/new file.parquet"}; !slices.Equal(ce.Paths, want) {
		t.Errorf("Paths = %q, want %q", ce.Paths, want)
	}
	if want := []string{"country=nl"}; !slices.Equal(ce.Partitions, want) {
		t.Errorf("Partitions = %q, want %q", ce.Partitions, want)
	}
	for _, other := range []error{conflict.ErrConcurrentDeleteRead, conflict.ErrMetadataChanged, conflict.ErrProtocolChanged, conflict.ErrConcurrentDeleteDelete, conflict.ErrConcurrentTransaction} {
		if errors.Is(err, other) {
			t.Errorf("errors.Is(err, %v) holds for a ConcurrentAppend", other)
		}
	}
	msg := err.Error()
	for _, want := range []string{"conflict: concurrent append with version 11", "WRITE", "country = 'nl'", "Serializable", "country=nl", "new file.parquet"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestCheckDoesNotModifyItsArguments(t *testing.T) {
	tbl := partTable(t)
	tx := deleteTx(t, tbl, conflict.WriteSerializable)
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/a.parquet", "nl", true)}}
	before := deleteTx(t, tbl, conflict.WriteSerializable)
	wBefore := conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/a.parquet", "nl", true)}}
	_ = conflict.Check(tx, tbl, w)
	if !reflect.DeepEqual(tx, before) || !reflect.DeepEqual(w, wBefore) {
		t.Error("Check modified the transaction or the winner")
	}
}

func TestNilTransaction(t *testing.T) {
	err := conflict.Check(nil, partTable(t))
	if err == nil || errors.Is(err, conflict.ErrConflict) {
		t.Fatalf("Check(nil) = %v, want a plain error", err)
	}
}

func TestNoWinnersRebase(t *testing.T) {
	tbl := partTable(t)
	if err := conflict.Check(deleteTx(t, tbl, conflict.Serializable), tbl); err != nil {
		t.Fatal(err)
	}
}

func TestFirstConflictingWinnerIsReported(t *testing.T) {
	tbl := partTable(t)
	tx := deleteTx(t, tbl, conflict.WriteSerializable)
	ok := conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/x.parquet", "nl", true, "")}}
	bad := conflict.Winner{Version: 12, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/a.parquet", "nl", true)}}
	worse := conflict.Winner{Version: 13, Actions: []actions.Action{info("SET TBLPROPERTIES", true), {Metadata: metadataFor(layouts["part"], nil)}}}
	ce := mustConflict(t, conflict.Check(tx, tbl, ok, bad, worse), conflict.ErrConcurrentDeleteRead)
	if ce.WinningVersion != 12 {
		t.Errorf("WinningVersion = %d, want 12", ce.WinningVersion)
	}
}

func TestNewChecker(t *testing.T) {
	tbl := partTable(t)
	check := conflict.NewChecker(tbl)
	tx := deleteTx(t, tbl, conflict.WriteSerializable)
	if err := check(tx, nil); err != nil {
		t.Errorf("nil winner: %v", err)
	}
	w := &conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/x.parquet", "nl", true, "")}}
	if err := check(tx, w); err != nil {
		t.Errorf("blind append winner: %v", err)
	}
	w = &conflict.Winner{Version: 12, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/a.parquet", "nl", true)}}
	ce := mustConflict(t, check(tx, w), conflict.ErrConcurrentDeleteRead)
	if ce.WinningVersion != 12 {
		t.Errorf("WinningVersion = %d, want 12", ce.WinningVersion)
	}
}

func TestProtocolRule(t *testing.T) {
	tbl := partTable(t)
	dv := &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"appendOnly", "invariants", "deletionVectors"}}
	same := &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"invariants", "appendOnly"}}
	v1 := &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 1}
	blindTx := func(read *actions.Protocol, own ...actions.Action) *conflict.Txn {
		return &conflict.Txn{ReadVersion: 10, ReadProtocol: read, Actions: append([]actions.Action{addIn("country=nl/o.parquet", "nl", true, "")}, own...), IsBlindAppend: true}
	}
	winner := func(p *actions.Protocol) conflict.Winner {
		return conflict.Winner{Version: 11, Actions: []actions.Action{info("UPGRADE PROTOCOL", true), {Protocol: p}}}
	}
	cases := []struct {
		name   string
		tx     *conflict.Txn
		winner conflict.Winner
		want   error
		detail string
	}{
		{"winner adds a feature", blindTx(readProtocol), winner(dv), conflict.ErrProtocolChanged, "added table features deletionVectors"},
		{"winner drops a feature", blindTx(readProtocol), winner(v1), conflict.ErrProtocolChanged, "dropped table features appendOnly, invariants"},
		{"winner keeps the features", blindTx(readProtocol), winner(same), nil, ""},
		{"both change the protocol", blindTx(readProtocol, actions.Action{Protocol: same}), winner(same), conflict.ErrProtocolChanged, "changes it too"},
		{"read protocol unknown", blindTx(nil), winner(same), conflict.ErrProtocolChanged, "not known"},
		{"we upgrade, winner appends", blindTx(readProtocol, actions.Action{Protocol: dv}),
			conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/w.parquet", "nl", true, "")}}, nil, ""},
		{"we drop a feature, winner appends", blindTx(dv, actions.Action{Protocol: readProtocol}),
			conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/w.parquet", "nl", true, "")}}, conflict.ErrProtocolChanged, "drops table features deletionVectors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := conflict.Check(c.tx, tbl, c.winner)
			if c.want == nil {
				if err != nil {
					t.Fatalf("got %v, want rebase", err)
				}
				return
			}
			ce := mustConflict(t, err, c.want)
			if !strings.Contains(ce.Detail, c.detail) {
				t.Errorf("Detail %q lacks %q", ce.Detail, c.detail)
			}
		})
	}
}

func TestMetadataRule(t *testing.T) {
	tbl := partTable(t)
	md := metadataFor(layouts["part"], nil)
	// Any winner metadata aborts, even for a transaction that read nothing.
	tx := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, IsBlindAppend: true, Actions: []actions.Action{addIn("country=nl/o.parquet", "nl", true, "")}}
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("CHANGE COLUMN", false), {Metadata: md}}}
	ce := mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrMetadataChanged)
	if !strings.Contains(ce.Detail, "CHANGE COLUMN") {
		t.Errorf("Detail %q does not name the operation", ce.Detail)
	}
	// Our metadata change rebases over a winner that changed none, when
	// we read nothing.
	ours := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, IsBlindAppend: true, Actions: []actions.Action{{Metadata: md}}}
	w = conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/a.parquet", "nl", true), addIn("country=nl/a2.parquet", "nl", true, "")}}
	if err := conflict.Check(ours, tbl, w); err != nil {
		t.Fatalf("metadata-only transaction vs DELETE: %v", err)
	}
}

// A winner whose only metadata change is identity high-water marks
// (Spark's tag) does not abort a transaction that changes no metadata;
// it aborts one that does, such as another identity-generating append.
func TestIdentityOnlyMetadataRule(t *testing.T) {
	tbl := partTable(t)
	md := metadataFor(layouts["part"], nil)
	wi := info("WRITE", true)
	wi.CommitInfo.Tags = map[string]string{"delta.identity.schemaUpdate": "true"}
	w := conflict.Winner{Version: 11, Actions: []actions.Action{wi, {Metadata: md}, addIn("country=nl/w.parquet", "nl", true, "")}}
	if err := conflict.Check(deleteTx(t, tbl, conflict.WriteSerializable), tbl, w); err != nil {
		t.Fatalf("DELETE vs an identity-only metadata update: %v", err)
	}
	plain := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, IsBlindAppend: true, Actions: []actions.Action{addIn("country=nl/o.parquet", "nl", true, "")}}
	if err := conflict.Check(plain, tbl, w); err != nil {
		t.Fatalf("append without identity values vs an identity-only update: %v", err)
	}
	ours := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, IsBlindAppend: true, Actions: []actions.Action{{Metadata: md}, addIn("country=nl/o.parquet", "nl", true, "")}}
	mustConflict(t, conflict.Check(ours, tbl, w), conflict.ErrMetadataChanged)
	// Without the tag, the same winner aborts both.
	w.Actions[0] = info("WRITE", true)
	mustConflict(t, conflict.Check(plain, tbl, w), conflict.ErrMetadataChanged)
}

func TestMetadataChangeCountsBlindAppends(t *testing.T) {
	tbl := partTable(t)
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/w.parquet", "nl", true, "")}}
	tx := deleteTx(t, tbl, conflict.WriteSerializable)
	if err := conflict.Check(tx, tbl, w); err != nil {
		t.Fatalf("without a metadata change a blind append does not count: %v", err)
	}
	tx.Actions = append(tx.Actions, actions.Action{Metadata: metadataFor(layouts["part"], nil)})
	mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrConcurrentAppend)
}

func TestAppTransactionRule(t *testing.T) {
	tbl := partTable(t)
	tx := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, ReadAppIDs: []string{"app-1"}, IsBlindAppend: true,
		Actions: []actions.Action{{Txn: &actions.Txn{AppID: "app-1", Version: 7}}, addIn("country=nl/o.parquet", "nl", true, "")}}
	other := conflict.Winner{Version: 11, Actions: []actions.Action{info("STREAMING UPDATE", true), {Txn: &actions.Txn{AppID: "app-2", Version: 7}}}}
	if err := conflict.Check(tx, tbl, other); err != nil {
		t.Fatalf("another application: %v", err)
	}
	same := conflict.Winner{Version: 12, Actions: []actions.Action{info("STREAMING UPDATE", true), {Txn: &actions.Txn{AppID: "app-1", Version: 6}}}}
	ce := mustConflict(t, conflict.Check(tx, tbl, other, same), conflict.ErrConcurrentTransaction)
	if ce.AppID != "app-1" || ce.WinningVersion != 12 {
		t.Errorf("AppID %q WinningVersion %d, want app-1 and 12", ce.AppID, ce.WinningVersion)
	}
	if !strings.Contains(ce.Error(), `appId "app-1"`) {
		t.Errorf("message %q does not name the appId", ce.Error())
	}
}

func TestDomainMetadataRule(t *testing.T) {
	tbl := partTable(t)
	dm := func(d string) actions.Action {
		return actions.Action{DomainMetadata: &actions.DomainMetadata{Domain: d, Configuration: "{}"}}
	}
	tx := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, Actions: []actions.Action{dm("delta.clustering")}}
	if err := conflict.Check(tx, tbl, conflict.Winner{Version: 11, Actions: []actions.Action{dm("user.x")}}); err != nil {
		t.Fatalf("different domains: %v", err)
	}
	ce := mustConflict(t, conflict.Check(tx, tbl, conflict.Winner{Version: 11, Actions: []actions.Action{dm("delta.clustering")}}), conflict.ErrConcurrentTransaction)
	if !strings.Contains(ce.Detail, "delta.clustering") {
		t.Errorf("Detail %q does not name the domain", ce.Detail)
	}
}

func TestAddedFilesByIsolation(t *testing.T) {
	tbl := partTable(t)
	blindW := conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), addIn("country=nl/w.parquet", "nl", true, "")}}
	dataW := conflict.Winner{Version: 11, Actions: []actions.Action{info("MERGE", false), addIn("country=nl/w.parquet", "nl", true, "")}}
	optW := conflict.Winner{Version: 11, Actions: []actions.Action{info("OPTIMIZE", false), removeOf("country=nl/b.parquet", "nl", false), addIn("country=nl/w.parquet", "nl", false, "")}}
	cases := []struct {
		iso    conflict.Isolation
		winner conflict.Winner
		want   error
	}{
		{conflict.Serializable, blindW, conflict.ErrConcurrentAppend},
		{conflict.WriteSerializable, blindW, nil},
		{"", blindW, nil}, // empty is WriteSerializable
		{conflict.SnapshotIsolation, blindW, nil},
		{conflict.Serializable, dataW, conflict.ErrConcurrentAppend},
		{conflict.WriteSerializable, dataW, conflict.ErrConcurrentAppend},
		{conflict.SnapshotIsolation, dataW, nil},
		// OPTIMIZE's adds have dataChange=false but the commit is not a
		// blind append, so they count, as in Spark.
		{conflict.WriteSerializable, optW, conflict.ErrConcurrentAppend},
		{conflict.SnapshotIsolation, optW, nil},
	}
	for _, c := range cases {
		err := conflict.Check(deleteTx(t, tbl, c.iso), tbl, c.winner)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s vs %s: got %v, want rebase", c.iso, winnerOp(c.winner), err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s vs %s: got %v, want %v", c.iso, winnerOp(c.winner), err, c.want)
		}
	}
}

func winnerOp(w conflict.Winner) string { return w.Actions[0].CommitInfo.Operation }

func TestNoDataChangeIsSnapshotIsolation(t *testing.T) {
	tbl := partTable(t)
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("MERGE", false), addIn("country=nl/w.parquet", "nl", true, "")}}
	optimize := func(iso conflict.Isolation, extra ...actions.Action) *conflict.Txn {
		return &conflict.Txn{
			ReadVersion: 10, Isolation: iso, ReadProtocol: readProtocol,
			ReadPredicates: []expr.Expr{pred(t, tbl, "country = 'nl'")},
			ReadFiles:      []string{"country=nl/a.parquet"},
			Actions: append([]actions.Action{
				removeOf("country=nl/a.parquet", "nl", false),
				addIn("country=nl/big.parquet", "nl", false, ""),
			}, extra...),
		}
	}
	for _, iso := range []conflict.Isolation{conflict.Serializable, conflict.WriteSerializable} {
		if err := conflict.Check(optimize(iso), tbl, w); err != nil {
			t.Errorf("OPTIMIZE at %s: %v", iso, err)
		}
		if err := conflict.Check(optimize(iso, actions.Action{CDC: &actions.AddCDCFile{Path: "_change_data/x.parquet"}}), tbl, w); err != nil {
			t.Errorf("dataChange=false with a cdc file at %s: %v", iso, err)
		}
		// A data-changing action, or any action that is not a file
		// action, keeps the table's level.
		if err := conflict.Check(optimize(iso, addIn("country=nl/new.parquet", "nl", true, "")), tbl, w); !errors.Is(err, conflict.ErrConcurrentAppend) {
			t.Errorf("with a dataChange add at %s: got %v", iso, err)
		}
		if err := conflict.Check(optimize(iso, actions.Action{Txn: &actions.Txn{AppID: "a", Version: 1}}), tbl, w); !errors.Is(err, conflict.ErrConcurrentAppend) {
			t.Errorf("with a txn at %s: got %v", iso, err)
		}
	}
	// An empty transaction that read something: Spark lowers it only at
	// Serializable (at WriteSerializable only when the operation changes
	// no data, which we cannot tell).
	empty := func(iso conflict.Isolation) *conflict.Txn {
		return &conflict.Txn{ReadVersion: 10, Isolation: iso, ReadPredicates: []expr.Expr{pred(t, tbl, "country = 'nl'")}}
	}
	if err := conflict.Check(empty(conflict.Serializable), tbl, w); err != nil {
		t.Errorf("empty at Serializable: %v", err)
	}
	if err := conflict.Check(empty(conflict.WriteSerializable), tbl, w); !errors.Is(err, conflict.ErrConcurrentAppend) {
		t.Errorf("empty at WriteSerializable: got %v", err)
	}
}

func TestAddedFilesByStats(t *testing.T) {
	tbl := layouts["flat"].table()
	tx := &conflict.Txn{
		ReadVersion: 10, Isolation: conflict.Serializable, ReadProtocol: readProtocol,
		ReadPredicates: []expr.Expr{pred(t, tbl, "id > 500")},
		ReadFiles:      []string{"x.parquet"},
		// (An empty transaction would be checked at snapshot isolation.)
		Actions: []actions.Action{{Remove: &actions.Remove{Path: "x.parquet", DataChange: true}}},
	}
	flatAdd := func(path, stats string) actions.Action {
		return actions.Action{Add: &actions.Add{Path: path, PartitionValues: map[string]*string{}, DataChange: true, Stats: stats}}
	}
	w := func(a actions.Action) conflict.Winner {
		return conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true), a}}
	}
	if err := conflict.Check(tx, tbl, w(flatAdd("low.parquet", `{"numRecords":10,"minValues":{"id":1},"maxValues":{"id":100},"nullCount":{"id":0}}`))); err != nil {
		t.Errorf("stats exclude the predicate: %v", err)
	}
	mustConflict(t, conflict.Check(tx, tbl, w(flatAdd("high.parquet", `{"numRecords":10,"minValues":{"id":400},"maxValues":{"id":600},"nullCount":{"id":0}}`))), conflict.ErrConcurrentAppend)
	mustConflict(t, conflict.Check(tx, tbl, w(flatAdd("nostats.parquet", ""))), conflict.ErrConcurrentAppend)
	// Stats that do not parse prove nothing.
	mustConflict(t, conflict.Check(tx, tbl, w(flatAdd("bad.parquet", `{"numRecords":`))), conflict.ErrConcurrentAppend)
	// A second predicate that may match is enough.
	tx.ReadPredicates = append(tx.ReadPredicates, pred(t, tbl, "id < 5"))
	mustConflict(t, conflict.Check(tx, tbl, w(flatAdd("low.parquet", `{"numRecords":10,"minValues":{"id":1},"maxValues":{"id":100},"nullCount":{"id":0}}`))), conflict.ErrConcurrentAppend)
}

func TestReadFilesWithoutPredicatesMatchEverything(t *testing.T) {
	tbl := partTable(t)
	tx := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol, ReadFiles: []string{"country=nl/a.parquet"}}
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("MERGE", false), addIn("country=de/w.parquet", "de", true, "")}}
	ce := mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrConcurrentAppend)
	if !strings.Contains(ce.Detail, "unknown predicate") {
		t.Errorf("Detail %q does not say why", ce.Detail)
	}
	// Read nothing: nothing to miss.
	tx.ReadFiles = nil
	if err := conflict.Check(tx, tbl, w); err != nil {
		t.Errorf("read nothing: %v", err)
	}
}

func TestDeletedReadFiles(t *testing.T) {
	tbl := partTable(t)
	tx := &conflict.Txn{
		ReadVersion: 10, ReadProtocol: readProtocol,
		ReadPredicates: []expr.Expr{pred(t, tbl, "country = 'a b'")},
		ReadFiles:      []string{"country=a b/x.parquet", "/data/t/country=a b/y.parquet"},
	}
	for _, path := range []string{"country=a%20b/x.parquet", "file:///data/t/country=a%20b/y.parquet", "file:/data/t/country=a%20b/y.parquet"} {
		w := conflict.Winner{Version: 11, Actions: []actions.Action{info("OPTIMIZE", false), removeOf(path, "a b", false)}}
		ce := mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrConcurrentDeleteRead)
		if len(ce.Paths) != 1 || !strings.Contains(ce.Paths[0], "a b/") {
			t.Errorf("%s: Paths = %q", path, ce.Paths)
		}
		if want := []string{"country=a b"}; !slices.Equal(ce.Partitions, want) {
			t.Errorf("%s: Partitions = %q, want %q", path, ce.Partitions, want)
		}
	}
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false), removeOf("country=a%20b/z.parquet", "a b", true)}}
	if err := conflict.Check(tx, tbl, w); err != nil {
		t.Errorf("a file we did not read: %v", err)
	}
	tx.ReadWholeTable = true
	ce := mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrConcurrentDeleteRead)
	if !strings.Contains(ce.Detail, "whole") {
		t.Errorf("Detail %q", ce.Detail)
	}
}

func TestDeletedDeletedFiles(t *testing.T) {
	tbl := partTable(t)
	tx := &conflict.Txn{ReadVersion: 10, ReadProtocol: readProtocol,
		Actions: []actions.Action{removeOf("country=nl/a.parquet", "nl", true), removeOf("country=de/c.parquet", "de", true)}}
	w := conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false),
		removeOf("country=nl/a.parquet", "nl", true), removeOf("country=nl/b.parquet", "nl", true), removeOf("country=de/c.parquet", "de", true)}}
	ce := mustConflict(t, conflict.Check(tx, tbl, w), conflict.ErrConcurrentDeleteDelete)
	if want := []string{"country=nl/a.parquet", "country=de/c.parquet"}; !slices.Equal(ce.Paths, want) {
		t.Errorf("Paths = %q, want %q", ce.Paths, want)
	}
	if want := []string{"country=nl", "country=de"}; !slices.Equal(ce.Partitions, want) {
		t.Errorf("Partitions = %q, want %q", ce.Partitions, want)
	}
	w = conflict.Winner{Version: 11, Actions: []actions.Action{info("DELETE", false), removeOf("country=nl/b.parquet", "nl", true)}}
	if err := conflict.Check(tx, tbl, w); err != nil {
		t.Errorf("different files: %v", err)
	}
}

func TestColumnMappingPartitions(t *testing.T) {
	schema, err := actions.ParseSchema(`{"type":"struct","fields":[
		{"name":"country","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1a2b"}},
		{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-3c4d"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	tbl := tableConfig(schema, []string{"country"}, map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "2"})
	tx := &conflict.Txn{ReadVersion: 10, Isolation: conflict.Serializable, ReadProtocol: readProtocol,
		ReadPredicates: []expr.Expr{pred(t, tbl, "country = 'nl'")},
		Actions:        []actions.Action{{Remove: &actions.Remove{Path: "x/old.parquet", DataChange: true}}}}
	add := func(country string) conflict.Winner {
		return conflict.Winner{Version: 11, Actions: []actions.Action{info("WRITE", true),
			{Add: &actions.Add{Path: "x/" + country + ".parquet", PartitionValues: map[string]*string{"col-1a2b": str(country)}, DataChange: true}}}}
	}
	if err := conflict.Check(tx, tbl, add("de")); err != nil {
		t.Errorf("other partition: %v", err)
	}
	ce := mustConflict(t, conflict.Check(tx, tbl, add("nl")), conflict.ErrConcurrentAppend)
	if want := []string{"country=nl"}; !slices.Equal(ce.Partitions, want) {
		t.Errorf("Partitions = %q, want %q (logical names)", ce.Partitions, want)
	}
}
