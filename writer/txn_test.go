package writer_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// lastCommit returns the newest commitInfo and the commit's actions.
func lastCommit(t *testing.T, store objstore.Store) (*actions.CommitInfo, []actions.Action) {
	t.Helper()
	ctx := context.Background()
	snap := tabletest.Open(t, store)
	b, err := store.Get(ctx, "tbl/_delta_log/"+deltalog.CommitName(snap.Version()))
	if err != nil {
		t.Fatal(err)
	}
	as, err := actions.ParseCommit(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.CommitInfo != nil {
			return a.CommitInfo, as
		}
	}
	t.Fatal("no commitInfo")
	return nil, nil
}

func TestAppendCommitInfo(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, p string", nil, "p")
	tabletest.AppendTo(t, store, `[{"id": 1, "p": "a"}, {"id": 2, "p": "b"}, {"id": 3, "p": "a"}]`,
		writer.WithCommitOptions(deltalog.WithOperationParameters(map[string]any{"userKey": "v"})))
	info, as := lastCommit(t, store)
	var adds int
	var bytes int64
	for _, a := range as {
		if a.Add != nil {
			adds++
			bytes += a.Add.Size
			if !a.Add.DataChange || a.Add.Stats == "" {
				t.Errorf("add %+v: want dataChange and stats", a.Add)
			}
		}
	}
	if info.Operation != "WRITE" || info.OperationParameters["mode"] != "Append" ||
		info.OperationParameters["partitionBy"] != `["p"]` || info.OperationParameters["userKey"] != "v" {
		t.Errorf("commitInfo operation %q parameters %v", info.Operation, info.OperationParameters)
	}
	want := map[string]any{"numFiles": "2", "numOutputRows": "3", "numOutputBytes": fmt.Sprint(bytes)}
	for k, v := range want {
		if info.OperationMetrics[k] != v {
			t.Errorf("operationMetrics[%s] = %v, want %v (all: %v)", k, info.OperationMetrics[k], v, info.OperationMetrics)
		}
	}
	if adds != 2 {
		t.Errorf("%d adds, want 2", adds)
	}
	if info.IsBlindAppend == nil || !*info.IsBlindAppend {
		t.Errorf("isBlindAppend %v, want true", info.IsBlindAppend)
	}
}

func TestOverwrite(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	tabletest.AppendTo(t, store, `[{"id": 1}, {"id": 2}]`)
	tabletest.AppendTo(t, store, `[{"id": 3}]`)
	snap := tabletest.Open(t, store)
	rec := tabletest.Batch(t, mem, snap, `[{"id": 10}]`)
	res, err := writer.Overwrite(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 3 {
		t.Errorf("version %d, want 3", res.Version)
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store)), []string{`{"id":10}`})
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store, deltalog.AtVersion(2))), tabletest.Sorted(`{"id":1}`, `{"id":2}`, `{"id":3}`))
	info, as := lastCommit(t, store)
	if info.OperationParameters["mode"] != "Overwrite" || info.OperationMetrics["numRemovedFiles"] != "2" {
		t.Errorf("commitInfo %v %v", info.OperationParameters, info.OperationMetrics)
	}
	if info.IsBlindAppend == nil || *info.IsBlindAppend {
		t.Errorf("isBlindAppend %v, want false", info.IsBlindAppend)
	}
	removes := 0
	for _, a := range as {
		if r := a.Remove; r != nil {
			removes++
			if !r.DataChange || r.DeletionTimestamp == nil || r.ExtendedFileMetadata == nil || !*r.ExtendedFileMetadata || r.Size == nil {
				t.Errorf("remove %+v: want dataChange, deletionTimestamp, extendedFileMetadata and size", r)
			}
		}
	}
	if removes != 2 {
		t.Errorf("%d removes, want 2", removes)
	}
}

func TestReplaceWherePartitions(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, p string", nil, "p")
	tabletest.AppendTo(t, store, `[{"id": 1, "p": "a"}, {"id": 2, "p": "b"}, {"id": 3, "p": "c"}, {"id": 4, "p": "b"}]`)
	pred := mustParse(t, "p = 'b'")

	t.Run("rows outside the predicate are refused", func(t *testing.T) {
		mem := tabletest.CheckedMem(t)
		snap := tabletest.Open(t, store)
		rec := tabletest.Batch(t, mem, snap, `[{"id": 20, "p": "b"}, {"id": 30, "p": "c"}]`)
		_, err := dml.ReplaceWhere(ctx, snap, pred, tabletest.Batches(t, rec), dml.WithWriterOptions(writer.WithAllocator(mem)))
		var se *writer.SchemaError
		if !errors.As(err, &se) || se.Row != 2 || !strings.Contains(se.Reason, "replaceWhere") {
			t.Fatalf("error %v, want a *SchemaError for input row 2", err)
		}
		if v := tabletest.Open(t, store).Version(); v != 1 {
			t.Errorf("version %d after a refused replaceWhere, want 1", v)
		}
	})
	t.Run("matching partitions are replaced", func(t *testing.T) {
		mem := tabletest.CheckedMem(t)
		snap := tabletest.Open(t, store)
		rec := tabletest.Batch(t, mem, snap, `[{"id": 20, "p": "b"}]`)
		if _, err := dml.ReplaceWhere(ctx, snap, pred, tabletest.Batches(t, rec), dml.WithWriterOptions(writer.WithAllocator(mem))); err != nil {
			t.Fatal(err)
		}
		tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(`{"id":1,"p":"a"}`, `{"id":3,"p":"c"}`, `{"id":20,"p":"b"}`))
		info, as := lastCommit(t, store)
		if info.OperationParameters["predicate"] != `["p = 'b'"]` || info.OperationMetrics["numRemovedFiles"] != "1" {
			t.Errorf("commitInfo %v %v", info.OperationParameters, info.OperationMetrics)
		}
		for _, a := range as {
			if a.Remove != nil && !strings.HasPrefix(a.Remove.Path, "p=b/") {
				t.Errorf("removed %s, outside the predicate", a.Remove.Path)
			}
		}
	})
}

func TestReplaceWhereDataColumns(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v string", nil)
	tabletest.AppendTo(t, store, `[{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]`)
	tabletest.AppendTo(t, store, `[{"id": 5, "v": "e"}, {"id": 6, "v": "f"}, {"id": null, "v": "n"}]`)
	snap := tabletest.Open(t, store)
	rec := tabletest.Batch(t, mem, snap, `[{"id": 7, "v": "new"}]`)
	if _, err := dml.ReplaceWhere(ctx, snap, mustParse(t, "id > 5"), tabletest.Batches(t, rec), dml.WithWriterOptions(writer.WithAllocator(mem))); err != nil {
		t.Fatal(err)
	}
	// id 6 is deleted; the rows of its file for which the predicate is
	// FALSE or NULL are kept; the first file (max id 2) is not touched.
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store)), tabletest.Sorted(
		`{"id":1,"v":"a"}`, `{"id":2,"v":"b"}`, `{"id":5,"v":"e"}`, `{"id":null,"v":"n"}`, `{"id":7,"v":"new"}`))
	info, _ := lastCommit(t, store)
	if info.OperationMetrics["numRemovedFiles"] != "1" || info.OperationMetrics["numCopiedRows"] != "2" {
		t.Errorf("operationMetrics %v, want 1 removed file and 2 copied rows", info.OperationMetrics)
	}
}

func TestAppTransaction(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	appendTxn := func(rows string, version int64) *deltalog.CommitResult {
		t.Helper()
		snap := tabletest.Open(t, store)
		res, err := writer.Append(context.Background(), snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, rows)), writer.WithCommitOptions(deltalog.WithAppTransaction("ingest", version)))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1 := appendTxn(`[{"id": 1}]`, 7)
	r2 := appendTxn(`[{"id": 1}]`, 7)
	if r1.AlreadyApplied || !r2.AlreadyApplied || r2.Version != r1.Version {
		t.Errorf("results %+v then %+v: want the second already applied at the same version", r1, r2)
	}
	snap := tabletest.Open(t, store)
	if v, ok := snap.TxnVersion("ingest"); !ok || v != 7 {
		t.Errorf("txn version %d %v, want 7", v, ok)
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), []string{`{"id":1}`})
	if r := appendTxn(`[{"id": 2}]`, 8); r.AlreadyApplied {
		t.Error("version 8 reported as already applied")
	}
}

// TestAppendOfNoRows: an empty input commits nothing (ErrEmptyInput),
// except that an app transaction is still recorded, so that an ingestor's
// empty batch counts as applied.
func TestAppendOfNoRows(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	snap := tabletest.Open(t, store)
	_, err := writer.Append(ctx, snap, tabletest.Batches(t))
	if !errors.Is(err, writer.ErrEmptyInput) {
		t.Fatalf("append of no rows: %v, want ErrEmptyInput", err)
	}
	if v := tabletest.Open(t, store).Version(); v != snap.Version() {
		t.Fatalf("append of no rows committed version %d", v)
	}
	res, err := writer.Append(ctx, snap, tabletest.Batches(t), writer.WithCommitOptions(deltalog.WithAppTransaction("ingest", 3)))
	if err != nil {
		t.Fatalf("append of no rows with an app transaction: %v", err)
	}
	if v, ok := tabletest.Open(t, store).TxnVersion("ingest"); !ok || v != 3 || res.Version != snap.Version()+1 {
		t.Errorf("after an empty batch with txn (ingest, 3): version %d, txn %d %v", res.Version, v, ok)
	}
}

func TestMergeSchema(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, s struct<a: int>", nil)
	tabletest.AppendTo(t, store, `[{"id": 1, "s": {"a": 1}}]`)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: false}), Nullable: true},
		{Name: "extra", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: false},
	}, nil)
	rows := `[{"id": 2, "s": {"a": 2, "b": "x"}, "extra": [1, 2]}]`

	snap := tabletest.Open(t, store)
	_, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.RecordJSON(t, mem, sc, rows)), writer.WithAllocator(mem))
	if !errors.Is(err, writer.ErrSchemaMismatch) {
		t.Fatalf("append without merge: %v, want a schema mismatch", err)
	}
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, tabletest.RecordJSON(t, mem, sc, rows)), writer.WithAllocator(mem), writer.WithMergeSchema()); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if got := actions.FormatDDL(snap.Schema()); !strings.Contains(got, "extra") || !strings.Contains(got, "b") {
		t.Errorf("schema %s, want s.b and extra added", got)
	}
	for _, f := range []string{"extra"} {
		if fld := snap.Schema().Field(f); fld == nil || !fld.Nullable {
			t.Errorf("new column %s: %+v, want nullable", f, fld)
		}
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(
		`{"id":1,"s":{"a":1,"b":null},"extra":null}`,
		`{"id":2,"s":{"a":2,"b":"x"},"extra":[1,2]}`))
	_, as := lastCommit(t, store)
	hasMD := false
	for _, a := range as {
		hasMD = hasMD || a.Metadata != nil
	}
	if !hasMD {
		t.Error("the merge commit carries no metaData action")
	}
}

func TestFileRollover(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, s string", nil)
	sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
	b := array.NewRecordBuilder(mem, sc)
	const n = 50_000
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d of a table with some text to make it larger", i*7919%n))
	}
	rec := b.NewRecordBatch()
	b.Release()
	const target = 128 << 10
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithTargetFileSize(target)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if snap.NumFiles() < 3 {
		t.Fatalf("%d files, want the input rolled over into several", snap.NumFiles())
	}
	var total int64
	for f := range snap.Files() {
		st, err := actions.ParseStats(f.Stats)
		if err != nil || st == nil {
			t.Fatal(err)
		}
		total += st.NumRecords
		if f.Size > 2*target {
			t.Errorf("file %s has %d bytes, far above the target %d", f.Path, f.Size, target)
		}
	}
	if total != n {
		t.Errorf("numRecords total %d, want %d", total, n)
	}
	sc2, err := reader.NewScan(snap, reader.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for r, err := range sc2.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rows += r.NumRows()
	}
	if rows != n {
		t.Errorf("read %d rows, want %d", rows, n)
	}
}

// TestMaxOpenFiles writes rows of many partitions, interleaved, with a
// limit of two open files: every row arrives, in more files.
func TestMaxOpenFiles(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, p int", nil, "p")
	var recs []arrow.RecordBatch
	var want []string
	for r := range 3 {
		var rows []string
		for p := range 6 {
			id := r*10 + p
			rows = append(rows, fmt.Sprintf(`{"id": %d, "p": %d}`, id, p))
			want = append(want, fmt.Sprintf(`{"id":%d,"p":%d}`, id, p))
		}
		recs = append(recs, tabletest.Batch(t, mem, snap, "["+strings.Join(rows, ",")+"]"))
	}
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, recs...), writer.WithAllocator(mem), writer.WithMaxOpenFiles(2)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(want...))
	if snap.NumFiles() <= 6 {
		t.Errorf("%d files: want more than one per partition when files are closed early", snap.NumFiles())
	}
}

func TestCreateTable(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	schema, err := actions.ParseDDL("id long, p string")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := actions.SchemaString(schema)
	md := &actions.Metadata{SchemaString: s, PartitionColumns: []string{"p"}}
	sc, _ := actions.ToArrowSchema(schema, false, "")
	rec := tabletest.RecordJSON(t, mem, sc, `[{"id": 1, "p": "x"}]`)
	res, err := writer.CreateTable(ctx, store, "tbl", md, tabletest.Batches(t, rec), writer.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 0 {
		t.Errorf("version %d, want 0", res.Version)
	}
	tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, tabletest.Open(t, store)), []string{`{"id":1,"p":"x"}`})
	info, _ := lastCommit(t, store)
	if info.Operation != "CREATE TABLE AS SELECT" {
		t.Errorf("operation %q", info.Operation)
	}
	_, err = writer.CreateTable(ctx, store, "tbl", md, tabletest.Batches(t))
	if !errors.Is(err, deltalog.ErrTableExists) {
		t.Errorf("second create: %v, want ErrTableExists", err)
	}
}

func TestWriteFilesDataChange(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	rec := tabletest.Batch(t, mem, snap, `[{"id": 1}]`)
	res, err := writer.WriteFiles(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithDataChange(false))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adds) != 1 || res.Adds[0].DataChange || res.NumRows != 1 || res.NumBytes != res.Adds[0].Size {
		t.Errorf("result %+v", res)
	}
	if tabletest.Open(t, store).Version() != 0 {
		t.Error("WriteFiles committed")
	}
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMergeSchemaNeedsFeature refuses to add a timestamp_ntz column to a
// table whose protocol lacks the timestampNtz feature.
func TestMergeSchemaNeedsFeature(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	rec := tabletest.RecordJSON(t, mem, sc, `[{"id": 1, "at": "2024-01-01T00:00:00"}]`)
	_, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem), writer.WithMergeSchema())
	if !errors.Is(err, writer.ErrSchemaMismatch) || !strings.Contains(err.Error(), "timestampNtz") {
		t.Fatalf("error %v, want a refusal naming timestampNtz", err)
	}
	if v := tabletest.Open(t, store).Version(); v != 0 {
		t.Errorf("version %d, want 0", v)
	}
}

// TestParallelPartitions writes batches that each hold rows of eight
// partitions, which the writer encodes on several goroutines, with a
// target size small enough that files roll over inside a batch: every row
// arrives once, in its partition, and the files are listed in the order
// they were started (their part- numbers), whatever order they finished
// in.
func TestParallelPartitions(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, p int, s string", nil, "p")
	sc, _ := actions.ToArrowSchema(snap.Schema(), false, "")
	const parts, perBatch, numBatches = 8, 2000, 12
	var recs []arrow.RecordBatch
	for k := range numBatches {
		b := array.NewRecordBuilder(mem, sc)
		for i := range perBatch {
			id := int64(k*perBatch + i)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.Int32Builder).Append(int32(id % parts))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d with text that takes room %x", id, uint64(id)*0x9e3779b97f4a7c15))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	res, err := writer.WriteFiles(ctx, snap, tabletest.Batches(t, recs...), writer.WithAllocator(mem), writer.WithTargetFileSize(8<<10))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Adds) < 3*parts {
		t.Fatalf("%d files, want several per partition", len(res.Adds))
	}
	rows := map[string]int64{}
	prev := -1
	for _, a := range res.Adds {
		name := a.Path[strings.LastIndex(a.Path, "/")+1:]
		var seq int
		if _, err := fmt.Sscanf(name, "part-%05d-", &seq); err != nil {
			t.Fatalf("%s: %v", a.Path, err)
		}
		if seq <= prev {
			t.Errorf("file %s listed after part %d", name, prev)
		}
		prev = seq
		st, err := actions.ParseStats(a.Stats)
		if err != nil || st == nil {
			t.Fatalf("%s: stats %v", a.Path, err)
		}
		rows[*a.PartitionValues["p"]] += st.NumRecords
	}
	for p := range parts {
		if got := rows[fmt.Sprint(p)]; got != perBatch*numBatches/parts {
			t.Errorf("partition %d: %d rows, want %d", p, got, perBatch*numBatches/parts)
		}
	}
	if res.NumRows != perBatch*numBatches {
		t.Errorf("NumRows %d, want %d", res.NumRows, perBatch*numBatches)
	}
	tx := snap.NewTransaction()
	for _, a := range res.Adds {
		tx.Add(actions.Action{Add: a})
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	lines := tabletest.ScanLines(t, tabletest.Open(t, store), reader.WithAllocator(mem))
	if len(lines) != perBatch*numBatches {
		t.Errorf("scanned %d rows, want %d", len(lines), perBatch*numBatches)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("row %s twice", l)
		}
		seen[l] = true
	}
}

// TestWritersAskBeforeUploading: on a table lakelog cannot write (its
// protocol lists a writer feature lakelog does not know), Append,
// Overwrite and ReplaceWhere fail before any data file is written, with
// ErrUnsupportedFeature; on an append-only table, Overwrite does.
func TestWritersAskBeforeUploading(t *testing.T) {
	ctx := context.Background()
	st := objstore.NewMem()
	tabletest.Create(t, st, "byte_long long", nil)
	tabletest.AppendTo(t, st, `[{"byte_long":1}]`)
	// A later writer raised the protocol to a feature lakelog lacks.
	commit := `{"commitInfo":{"timestamp":1,"operation":"UPGRADE PROTOCOL"}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","invariants","someFutureWriterFeature"]}}
`
	if err := st.Put(ctx, "tbl/_delta_log/"+deltalog.CommitName(2), strings.NewReader(commit), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	countFiles := func() int {
		n := 0
		for _, err := range st.List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	before := countFiles()
	snap, err := deltalog.Open(ctx, st, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(yield func(arrow.RecordBatch, error) bool) {
		t.Fatal("the writer read its input before asking whether it may write")
	}
	pred, err := expr.Parse("byte_long = 1")
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func() error{
		"append":       func() error { _, err := writer.Append(ctx, snap, rows); return err },
		"overwrite":    func() error { _, err := writer.Overwrite(ctx, snap, rows); return err },
		"replaceWhere": func() error { _, err := dml.ReplaceWhere(ctx, snap, pred, rows); return err },
		"write files":  func() error { _, err := writer.WriteFiles(ctx, snap, rows); return err },
	} {
		if err := write(); !errors.Is(err, deltalog.ErrUnsupportedFeature) || !strings.Contains(err.Error(), "someFutureWriterFeature") {
			t.Errorf("%s on a table with an unknown writer feature: %v, want ErrUnsupportedFeature naming it", name, err)
		}
	}
	if after := countFiles(); after != before {
		t.Errorf("the refused writes left %d new files", after-before)
	}

	mem := objstore.NewMem()
	tabletest.Create(t, mem, "id long", map[string]string{"delta.appendOnly": "true"})
	if _, err := writer.Overwrite(ctx, tabletest.Open(t, mem), rows); !errors.Is(err, deltalog.ErrUnsupportedFeature) {
		t.Errorf("overwrite of an append-only table: %v", err)
	}
}
