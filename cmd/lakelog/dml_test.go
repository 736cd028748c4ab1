package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/objstore"
)

// newPeople creates a table of five people in two partitions, appended in
// one commit (version 1), with the given properties.
func newPeople(t *testing.T, props ...string) (dir, table string) {
	t.Helper()
	dir = t.TempDir()
	table = filepath.Join(dir, "people")
	args := []string{"create", table, "--schema", "id long not null, name string, amount decimal(10,2), country string", "--partition-by", "country"}
	for _, p := range props {
		args = append(args, "--property", p)
	}
	ok(t, args...)
	ok(t, "append", table, writeFile(t, dir, "people.jsonl", `{"id": 1, "name": "ann", "amount": "10.00", "country": "nl"}
{"id": 2, "name": "bob", "amount": "20.00", "country": "nl"}
{"id": 3, "name": "cat", "amount": "30.00", "country": "de"}
{"id": 4, "name": "dan", "amount": "40.00", "country": "de"}
{"id": 5, "name": "eve", "amount": "50.00", "country": "fr"}
`))
	return dir, table
}

// rowsOf is the table's rows, canonical JSONL, sorted.
func rowsOf(t *testing.T, table string) []string {
	t.Helper()
	return lines(ok(t, "scan", table, "--format", "jsonl", "--sorted"))
}

// metricsOf parses the table-format output of a DML verb: its first line
// and its "name value" lines.
func metricsOf(t *testing.T, out string) (string, map[string]string) {
	t.Helper()
	ls := lines(out)
	if len(ls) == 0 {
		t.Fatalf("no output")
	}
	m := map[string]string{}
	var names []string
	for _, l := range ls[1:] {
		k, v, found := strings.Cut(l, " ")
		if !found {
			t.Fatalf("metric line %q is not 'name value'", l)
		}
		m[k] = v
		names = append(names, k)
	}
	if !slices.IsSorted(names) {
		t.Errorf("metrics are not sorted: %v", names)
	}
	return ls[0], m
}

func wantMetrics(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q (all: %v)", what, k, got[k], v, got)
		}
	}
}

// DELETE, UPDATE and MERGE end to end on a local table: the rows, the
// metrics, the versions, and history's operations.
func TestDeleteUpdateMergeVerbs(t *testing.T) {
	dir, table := newPeople(t)

	head, m := metricsOf(t, ok(t, "delete", table, "--where", "amount > 35 AND country = 'de'"))
	if head != "DELETE: version 2" {
		t.Errorf("delete: %q", head)
	}
	wantMetrics(t, "delete", m, map[string]string{"numDeletedRows": "1", "numCopiedRows": "1", "numRemovedFiles": "1", "numAddedFiles": "1"})

	out := ok(t, "update", table, "--set", "amount = amount * 2", "--set", "name = 'BOB'", "--where", "id = 2", "--format", "jsonl")
	var res struct {
		Operation string           `json:"operation"`
		Version   *int64           `json:"version"`
		Metrics   map[string]int64 `json:"operationMetrics"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(lines(out)) != 1 {
		t.Fatalf("update --format jsonl: %v: %q", err, out)
	}
	if res.Operation != "UPDATE" || res.Version == nil || *res.Version != 3 || res.Metrics["numUpdatedRows"] != 1 || res.Metrics["numCopiedRows"] != 1 {
		t.Errorf("update: %+v", res)
	}

	// A CDC-style source: deletes, updates, inserts, and a column the
	// table lacks (op), in JSONL with columns in another order.
	src := writeFile(t, dir, "changes.jsonl", `{"op": "delete", "id": 1, "name": null, "amount": null, "country": "nl"}
{"op": "update", "id": 3, "name": "CAT", "amount": 33, "country": "de"}
{"op": "insert", "country": "es", "id": 6, "name": "fay", "amount": "60.5"}
{"op": "delete", "id": 9, "name": null, "amount": null, "country": "xx"}
`)
	head, m = metricsOf(t, ok(t, "merge", table, src, "--on", "target.id = source.id",
		"--when-matched-delete", "--matched-condition", "source.op = 'delete'", "--when-matched-update-all",
		"--when-not-matched-insert-all", "--not-matched-condition", "source.op <> 'delete'"))
	if head != "MERGE: version 4" {
		t.Errorf("merge: %q", head)
	}
	wantMetrics(t, "merge", m, map[string]string{"numSourceRows": "4", "numTargetRowsDeleted": "1", "numTargetRowsMatchedDeleted": "1",
		"numTargetRowsUpdated": "1", "numTargetRowsInserted": "1", "numTargetRowsNotMatchedBySourceDeleted": "0"})
	wantOutput(t, "rows after merge", strings.Join(rowsOf(t, table), "\n"),
		`{"id":2,"name":"BOB","amount":"40.00","country":"nl"}`,
		`{"id":3,"name":"CAT","amount":"33.00","country":"de"}`,
		`{"id":5,"name":"eve","amount":"50.00","country":"fr"}`,
		`{"id":6,"name":"fay","amount":"60.50","country":"es"}`,
	)

	// WHEN NOT MATCHED BY SOURCE AND cond THEN DELETE, from CSV, with
	// only the key column.
	csvSrc := writeFile(t, dir, "keep.csv", "id\n2\n6\n")
	head, m = metricsOf(t, ok(t, "merge", table, csvSrc, "--on", "target.id = source.id",
		"--when-not-matched-by-source-delete", "--not-matched-by-source-condition", "target.country <> 'fr'"))
	if head != "MERGE: version 5" {
		t.Errorf("merge by source: %q", head)
	}
	wantMetrics(t, "merge by source", m, map[string]string{"numTargetRowsNotMatchedBySourceDeleted": "1", "numTargetRowsDeleted": "1", "numSourceRows": "2"})
	wantOutput(t, "rows after merge by source", strings.Join(rowsOf(t, table), "\n"),
		`{"id":2,"name":"BOB","amount":"40.00","country":"nl"}`,
		`{"id":5,"name":"eve","amount":"50.00","country":"fr"}`,
		`{"id":6,"name":"fay","amount":"60.50","country":"es"}`,
	)

	// A Parquet source keeps its own types (int32 id, double amount): they
	// are converted to the table's on the way in.
	pq := parquetFile(t, filepath.Join(dir, "up.parquet"),
		[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "name", Type: arrow.BinaryTypes.String}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64}, {Name: "country", Type: arrow.BinaryTypes.String}},
		int32s(5, 7), strs("EVE", "gus"), float64s(5.5, 7.25), strs("fr", "nl"))
	head, m = metricsOf(t, ok(t, "merge", table, pq, "--on", "target.id = source.id", "--when-matched-update-all", "--when-not-matched-insert-all"))
	if head != "MERGE: version 6" {
		t.Errorf("merge parquet: %q", head)
	}
	wantMetrics(t, "merge parquet", m, map[string]string{"numTargetRowsUpdated": "1", "numTargetRowsInserted": "1"})
	wantOutput(t, "rows after parquet merge", strings.Join(rowsOf(t, table), "\n"),
		`{"id":2,"name":"BOB","amount":"40.00","country":"nl"}`,
		`{"id":5,"name":"EVE","amount":"5.50","country":"fr"}`,
		`{"id":6,"name":"fay","amount":"60.50","country":"es"}`,
		`{"id":7,"name":"gus","amount":"7.25","country":"nl"}`,
	)

	hist := lines(ok(t, "history", table, "--format", "jsonl"))
	var ops []string
	for _, l := range hist {
		var h struct{ Operation string }
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, h.Operation)
	}
	if want := []string{"MERGE", "MERGE", "MERGE", "UPDATE", "DELETE", "WRITE", "CREATE TABLE"}; !slices.Equal(ops, want) {
		t.Errorf("history operations %v, want %v", ops, want)
	}
}

func int32s(v ...int32) arrow.Array {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func float64s(v ...float64) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

// Nothing matched: exit 0, says so, commits nothing.
func TestDMLNothingMatched(t *testing.T) {
	dir, table := newPeople(t)
	for _, args := range [][]string{
		{"delete", table, "--where", "id = 99"},
		{"update", table, "--set", "name = 'x'", "--where", "country = 'zz'"},
		{"merge", table, writeFile(t, dir, "none.jsonl", `{"id": 99}`+"\n"), "--on", "target.id = source.id", "--when-matched-delete"},
	} {
		out := ok(t, args...)
		if !strings.HasSuffix(lines(out)[0], ": nothing matched; no version was committed") {
			t.Errorf("%v: %q", args[0], out)
		}
		if v := tableVersion(t, table); v != 1 {
			t.Errorf("%v committed version %d", args[0], v)
		}
	}
	out := ok(t, "delete", table, "--where", "id = 99", "--format", "jsonl")
	if !strings.Contains(out, `"version":null`) || !strings.Contains(out, `"numDeletedRows":0`) {
		t.Errorf("delete --format jsonl of nothing: %s", out)
	}
}

// On a table with deletion vectors, DELETE and UPDATE mark rows instead
// of rewriting files; --no-deletion-vectors rewrites them. (The reader
// does not apply deletion vectors yet, so the rows are checked by count,
// which subtracts each vector's cardinality, and by a scan of the file
// that has none.)
func TestDMLDeletionVectors(t *testing.T) {
	dir, table := newPeople(t, "delta.enableDeletionVectors=true")
	ok(t, "append", table, writeFile(t, dir, "es.jsonl", `{"id": 6, "name": "fay", "amount": "60.00", "country": "es"}
{"id": 7, "name": "gus", "amount": "70.00", "country": "es"}
`))
	_, m := metricsOf(t, ok(t, "delete", table, "--where", "id = 1"))
	wantMetrics(t, "delete with DVs", m, map[string]string{"numDeletedRows": "1", "numDeletionVectorsAdded": "1", "numAddedFiles": "0", "numCopiedRows": "0", "numRemovedFiles": "0"})
	_, m = metricsOf(t, ok(t, "update", table, "--set", "amount = 0", "--where", "id = 3"))
	wantMetrics(t, "update with DVs", m, map[string]string{"numUpdatedRows": "1", "numDeletionVectorsAdded": "1", "numAddedFiles": "1", "numCopiedRows": "0"})
	_, m = metricsOf(t, ok(t, "delete", table, "--where", "id = 6", "--no-deletion-vectors"))
	wantMetrics(t, "delete --no-deletion-vectors", m, map[string]string{"numDeletedRows": "1", "numDeletionVectorsAdded": "0", "numAddedFiles": "1", "numCopiedRows": "1", "numRemovedFiles": "1"})
	if n := strings.TrimSpace(ok(t, "count", table)); n != "5" {
		t.Errorf("count %s, want 5", n)
	}
	wantOutput(t, "rows of es", ok(t, "scan", table, "--where", "country = 'es'", "--format", "jsonl"),
		`{"id":7,"name":"gus","amount":"70.00","country":"es"}`)
}

// dataFiles lists the table's files outside _delta_log, relative.
func dataFiles(t *testing.T, table string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(table, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(table, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Bad input: a clear error naming what is wrong, exit 1 (2 for a bad
// command line), no new version and no file left behind.
func TestDMLBadInput(t *testing.T) {
	dir, table := newPeople(t, "delta.enableDeletionVectors=true")
	dup := writeFile(t, dir, "dup.jsonl", `{"id": 2, "name": "x", "amount": 1, "country": "nl"}
{"id": 1, "name": "y", "amount": 1, "country": "nl"}
{"id": 2, "name": "z", "amount": 1, "country": "nl"}
`)
	badValue := writeFile(t, dir, "bad.jsonl", `{"id": 2, "amount": 1}
{"id": 3, "amount": "1,5"}
`)
	badCSV := writeFile(t, dir, "bad.csv", "id,amount\n1,2\n2\n")
	keysOnly := writeFile(t, dir, "keys.jsonl", `{"id": 2}`+"\n")
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"delete", table, "--where", "nope = 1"}, exitError, []string{"--where", "unknown column nope"}},
		{[]string{"delete", table, "--where", "id = = 1"}, exitError, []string{"--where", "column 6"}},
		{[]string{"delete", table}, exitUsage, []string{"--where is required"}},
		{[]string{"update", table, "--set", "amount = 'abc'"}, exitError, []string{"SET amount", "'abc' is not a number"}},
		{[]string{"update", table, "--set", "amount = name"}, exitError, []string{"SET amount", "cannot assign a value of type string to a column of type decimal(10,2)"}},
		{[]string{"update", table, "--set", "id = NULL", "--where", "id = 2"}, exitError, []string{`column "id"`, "null in a non-nullable column"}},
		{[]string{"update", table, "--set", "nope = 1"}, exitError, []string{"unknown column nope"}},
		{[]string{"update", table, "--set", "amount 3"}, exitError, []string{`--set "amount 3"`}},
		{[]string{"update", table, "--set", "amount = 1", "--where", "nope > 1"}, exitError, []string{"--where", "unknown column nope"}},
		{[]string{"update", table}, exitUsage, []string{"--set"}},
		{[]string{"merge", table, dup, "--on", "target.id = source.id", "--when-matched-update-all"}, exitError, []string{"dup.jsonl", "matched by source rows 1 and 3", "deduplicate"}},
		{[]string{"merge", table, badValue, "--on", "target.id = source.id", "--when-matched-delete"}, exitError, []string{"bad.jsonl:2", `column "amount"`, "decimal(10,2)"}},
		{[]string{"merge", table, badCSV, "--on", "target.id = source.id", "--when-matched-delete"}, exitError, []string{"bad.csv:3"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id", "--when-matched-update-all"}, exitError, []string{`no column "name"`, "UPDATE SET *"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.nope", "--when-matched-delete"}, exitError, []string{"ON", "source.nope"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id", "--when-matched-delete", "--matched-condition", "source.op = 'x'"}, exitError, []string{"condition", "source.op"}},
		{[]string{"merge", table, filepath.Join(dir, "missing.jsonl"), "--on", "target.id = source.id", "--when-matched-delete"}, exitError, []string{"missing.jsonl", "cannot read"}},
		{[]string{"merge", table, filepath.Join(dir, "x.txt"), "--on", "target.id = source.id", "--when-matched-delete"}, exitError, []string{"x.txt", "unknown input format"}},
		{[]string{"merge", table, keysOnly, "--when-matched-delete"}, exitUsage, []string{"--on is required"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id"}, exitUsage, []string{"at least one clause"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id", "--when-matched-delete", "--when-matched-update-all"}, exitUsage, []string{"needs --matched-condition"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id", "--when-matched-delete", "--not-matched-condition", "true"}, exitUsage, []string{"--not-matched-condition without"}},
		{[]string{"merge", table, keysOnly, "--on", "target.id = source.id", "--when-matched-delete", "--not-matched-by-source-condition", "true"}, exitUsage, []string{"--not-matched-by-source-condition without"}},
		{[]string{"merge", table}, exitUsage, []string{"want TABLE and SOURCE_FILE"}},
		{[]string{"delete", table, "--where", "id = 1", "--format", "xml"}, exitUsage, []string{`--format "xml": want table, jsonl, json or csv`}},
	} {
		before := dataFiles(t, table)
		code, _, errOut := lakelog(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errOut, w)
			}
		}
		if strings.Contains(errOut, "panic") {
			t.Errorf("%v panicked: %s", c.args, errOut)
		}
		if v := tableVersion(t, table); v != 1 {
			t.Fatalf("%v committed version %d", c.args, v)
		}
		if after := dataFiles(t, table); !slices.Equal(before, after) {
			t.Errorf("%v left files behind: %v, before %v", c.args, after, before)
		}
	}
}

// raceStores are the tables of the racetest:// scheme: before the first
// commit file a verb tries to create, winner runs (another writer
// committing first).
var raceStores struct {
	once   sync.Once
	mu     sync.Mutex
	winner func()
}

func registerRaceScheme() {
	raceStores.once.Do(func() {
		objstore.Register("racetest", func(_ context.Context, u *url.URL, _ objstore.Options) (objstore.Store, error) {
			st, err := objstore.NewLocal(u.Path)
			if err != nil {
				return nil, err
			}
			var fired sync.Once
			return objstore.Faulty(st, objstore.Func(func(c objstore.Call) (error, error) {
				if c.Op == objstore.OpPut && strings.HasPrefix(c.Key, "_delta_log/") && strings.HasSuffix(c.Key, ".json") {
					raceStores.mu.Lock()
					w := raceStores.winner
					raceStores.mu.Unlock()
					if w != nil {
						fired.Do(w)
					}
				}
				return nil, nil
			})), nil
		})
	})
}

// A DML transaction that loses to a concurrent commit it conflicts with
// exits 3 and names the conflict; one that does not conflict rebases.
func TestDMLConflictExitCode(t *testing.T) {
	registerRaceScheme()
	_, table := newPeople(t)
	setWinner := func(f func()) {
		raceStores.mu.Lock()
		raceStores.winner = f
		raceStores.mu.Unlock()
	}
	defer setWinner(nil)

	// Both delete from the nl file: the loser's removed file is gone.
	setWinner(func() { ok(t, "delete", table, "--where", "id = 2") })
	code, out, errOut := lakelog(t, "delete", "racetest://"+table, "--where", "id = 1")
	if code != exitConflict || !strings.Contains(errOut, "version 2") {
		t.Fatalf("conflicting delete: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if v := tableVersion(t, table); v != 2 {
		t.Errorf("version %d after the conflict, want 2 (the winner's)", v)
	}

	// An update of another partition rebases over the winner.
	setWinner(func() { ok(t, "delete", table, "--where", "id = 1") })
	code, out, errOut = lakelog(t, "update", "racetest://"+table, "--set", "name = 'X'", "--where", "country = 'fr'")
	if code != exitOK || !strings.HasPrefix(out, "UPDATE: version 4") {
		t.Fatalf("rebased update: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	wantOutput(t, "rows", strings.Join(rowsOf(t, table), "\n"),
		`{"id":3,"name":"cat","amount":"30.00","country":"de"}`,
		`{"id":4,"name":"dan","amount":"40.00","country":"de"}`,
		`{"id":5,"name":"X","amount":"50.00","country":"fr"}`,
	)
}

// delete, update and merge --help list every flag with its sentence.
func TestDMLHelp(t *testing.T) {
	for verb, flags := range map[string][]string{
		"delete": {"--where", "--no-deletion-vectors", "--format"},
		"update": {"--set", "--where", "--no-deletion-vectors", "--format"},
		"merge": {"--on", "--when-matched-update-all", "--when-matched-delete", "--when-not-matched-insert-all", "--when-not-matched-by-source-delete",
			"--matched-condition", "--not-matched-condition", "--not-matched-by-source-condition", "--no-deletion-vectors", "--format"},
	} {
		out := ok(t, verb, "--help")
		for _, f := range append(flags, "usage: lakelog "+verb, "3 transaction aborted by a conflict") {
			if !strings.Contains(out, f) {
				t.Errorf("%s --help lacks %q:\n%s", verb, f, out)
			}
		}
	}
}
