// Command cdcingest is an example change-data-capture ingestor that lands
// every batch of a change feed in a Delta table exactly once, across
// crashes and restarts.
//
// The source (a simulated change feed, as Kafka or Debezium would deliver
// it) hands out numbered batches of change events and remembers the last
// batch the ingestor acknowledged. The ingestor appends each batch to the
// table with an idempotent transaction, writer.WithAppTransaction(app,
// batch): the commit records txn(app, batch) in the log, and a commit for
// a batch the table already holds is skipped and reported as already
// applied. Only after the commit does the ingestor acknowledge the batch
// to the source.
//
// Whatever point it dies at, a restart is safe:
//
//   - before the commit (data files written, no commit): the files are
//     orphans no snapshot references; the batch is not acknowledged, the
//     source delivers it again and it lands once;
//   - after the commit, before the acknowledgement: the source delivers
//     the batch again, the table already holds it (its app version), so
//     the append is skipped.
//
// On start the ingestor also reads the table's app version
// (Snapshot.TxnVersion) to say where the table is.
//
// Usage:
//
//	cdcingest -table DIR [-batches N] [-rows N] [-app ID] [-crash files:K|commit:K] [-check]
//
// -crash simulates a crash (exit status 75) while ingesting batch K:
// "files" just before the commit file is created, "commit" right after
// the commit, before the acknowledgement. -check verifies that every
// acknowledged batch is in the table exactly once and exits 1 if not.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// crashStatus is the exit status of a simulated crash.
const crashStatus = 75

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, func() { os.Exit(crashStatus) })
	stop()
	os.Exit(code)
}

// run is the command: it parses args, ingests, and returns the exit
// status. crash is called at the -crash point and must not return.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, crash func()) int {
	fs := flag.NewFlagSet("cdcingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "", "table folder (created when missing); the source keeps its acknowledgements in DIR.source")
	batches := fs.Int64("batches", 10, "number of batches the source has")
	rows := fs.Int("rows", 5, "change events per batch")
	app := fs.String("app", "cdcingest", "application id of the idempotent writes")
	crashAt := fs.String("crash", "", "simulate a crash in batch K: files:K (before the commit) or commit:K (after it, before the acknowledgement)")
	check := fs.Bool("check", false, "verify that every acknowledged batch is in the table exactly once, then exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *table == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "cdcingest: usage: cdcingest -table DIR [-batches N] [-rows N] [-app ID] [-crash files:K|commit:K] [-check]")
		return 2
	}
	src := &source{dir: filepath.Clean(*table) + ".source", batches: *batches, rows: *rows}
	store, err := objstore.NewLocal(*table)
	if err != nil {
		fmt.Fprintln(stderr, "cdcingest:", err)
		return 1
	}
	if *check {
		if err := checkTable(ctx, store, src, stdout); err != nil {
			fmt.Fprintln(stderr, "cdcingest:", err)
			return 1
		}
		return 0
	}
	in := &ingestor{store: store, app: *app, src: src, out: stdout}
	if *crashAt != "" {
		kind, k, ok := strings.Cut(*crashAt, ":")
		n, err := strconv.ParseInt(k, 10, 64)
		if !ok || err != nil || (kind != "files" && kind != "commit") {
			fmt.Fprintf(stderr, "cdcingest: -crash %q: want files:K or commit:K\n", *crashAt)
			return 2
		}
		in.crash = crashPoint{kind: kind, batch: n, do: crash}
	}
	if err := in.ingest(ctx); err != nil {
		fmt.Fprintln(stderr, "cdcingest:", err)
		return 1
	}
	return 0
}

// change is one change event of the feed, and one row of the table.
type change struct {
	Batch int64  `json:"batch"`
	Seq   int64  `json:"seq"`
	Op    string `json:"op"`
	Key   int64  `json:"key"`
	Value string `json:"value"`
}

// schemaDDL is the table's schema: the change events as they came.
const schemaDDL = "batch long not null, seq long not null, op string not null, key long not null, value string"

// source is the simulated change feed: batches 1..batches of rows events
// each, the same every time they are delivered, and the last batch the
// ingestor acknowledged, kept in a file of dir.
type source struct {
	dir     string
	batches int64
	rows    int
}

// Batch returns batch n's change events.
func (s *source) Batch(n int64) []change {
	out := make([]change, s.rows)
	for i := range out {
		seq := (n-1)*int64(s.rows) + int64(i) + 1
		key := (seq * 7919) % 97
		c := change{Batch: n, Seq: seq, Key: key, Op: "update", Value: fmt.Sprintf("v%d", seq)}
		switch seq % 5 {
		case 0:
			c.Op, c.Value = "delete", ""
		case 1, 2:
			c.Op = "insert"
		}
		out[i] = c
	}
	return out
}

// Acked returns the last acknowledged batch (0 when none).
func (s *source) Acked() (int64, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "acked"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("source: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("source: acknowledgement file: %w", err)
	}
	return n, nil
}

// Ack acknowledges batches up to n: they are not delivered again.
func (s *source) Ack(n int64) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	tmp := filepath.Join(s.dir, "acked.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(n, 10)), 0o644); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, "acked")); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	return nil
}

// crashPoint says where to simulate a crash.
type crashPoint struct {
	kind  string // "files" or "commit"; "" for none
	batch int64
	do    func()
}

// ingestor lands the source's batches in the table.
type ingestor struct {
	store   objstore.Store
	app     string
	src     *source
	out     io.Writer
	crash   crashPoint
	current atomic.Int64 // the batch being ingested
}

// ingest delivers every batch after the last acknowledged one to the
// table, then acknowledges it.
func (in *ingestor) ingest(ctx context.Context) error {
	snap, err := openOrCreate(ctx, in.store)
	if err != nil {
		return err
	}
	acked, err := in.src.Acked()
	if err != nil {
		return err
	}
	if v, ok := snap.TxnVersion(in.app); ok {
		fmt.Fprintf(in.out, "start: table version %d holds batches of %s up to %d; the source resumes after batch %d\n", snap.Version(), in.app, v, acked)
	} else {
		fmt.Fprintf(in.out, "start: table version %d holds no batch of %s; the source resumes after batch %d\n", snap.Version(), in.app, acked)
	}
	store := in.store
	if in.crash.kind == "files" {
		// Die when the commit of the crash batch is about to be created:
		// its data files are written, the commit never happens.
		store = objstore.Faulty(in.store, objstore.Func(func(c objstore.Call) (error, error) {
			if c.Op == objstore.OpPut && isCommit(c.Key) && in.crash.batch == in.current.Load() {
				in.crash.do()
			}
			return nil, nil
		}))
		if snap, err = deltalog.Open(ctx, store, ""); err != nil {
			return err
		}
	}
	for n := acked + 1; n <= in.src.batches; n++ {
		in.current.Store(n)
		events := in.src.Batch(n)
		res, err := writer.Append(ctx, snap, batchOf(events),
			writer.WithAppTransaction(in.app, n),
			writer.WithOperationParameters(map[string]any{"cdcBatch": strconv.FormatInt(n, 10)}))
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		if res.AlreadyApplied {
			fmt.Fprintf(in.out, "batch %d: already in the table (app version >= %d at version %d), skipped\n", n, n, res.Version)
		} else {
			fmt.Fprintf(in.out, "batch %d: committed at version %d (%d events)\n", n, res.Version, len(events))
		}
		if in.crash.kind == "commit" && in.crash.batch == n {
			in.crash.do()
		}
		if err := in.src.Ack(n); err != nil {
			return err
		}
		// Go on from the table as of this commit, or read it again when
		// the commit was skipped.
		if res.AlreadyApplied {
			snap, err = deltalog.Open(ctx, store, "")
		} else {
			snap, err = res.Snapshot()
		}
		if err != nil {
			return err
		}
		if err := res.WaitCheckpoint(); err != nil {
			fmt.Fprintf(in.out, "batch %d: checkpoint failed (the commit stands): %v\n", n, err)
		}
	}
	v, _ := snap.TxnVersion(in.app)
	fmt.Fprintf(in.out, "done: table version %d holds batches of %s up to %d\n", snap.Version(), in.app, v)
	return nil
}

// isCommit reports whether key is a commit file of the log.
func isCommit(key string) bool {
	ok, _ := path.Match(deltalog.LogDir+"*.json", key)
	return ok
}

// openOrCreate opens the table, creating it when the folder has none.
func openOrCreate(ctx context.Context, store objstore.Store) (*deltalog.Snapshot, error) {
	snap, err := deltalog.Open(ctx, store, "")
	if !errors.Is(err, deltalog.ErrNotTable) {
		return snap, err
	}
	schema, err := actions.ParseDDL(schemaDDL)
	if err != nil {
		return nil, err
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		return nil, err
	}
	tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: s})
	if err != nil {
		return nil, err
	}
	res, err := tx.Commit(ctx)
	if errors.Is(err, deltalog.ErrTableExists) {
		return deltalog.Open(ctx, store, "") // another ingestor created it first
	}
	if err != nil {
		return nil, err
	}
	return res.Snapshot()
}

// checkTable verifies that the table holds every acknowledged batch
// exactly once, event for event, and nothing else.
func checkTable(ctx context.Context, store objstore.Store, src *source, out io.Writer) error {
	snap, err := deltalog.Open(ctx, store, "")
	if err != nil {
		return err
	}
	rows, err := readChanges(ctx, snap)
	if err != nil {
		return err
	}
	acked, err := src.Acked()
	if err != nil {
		return err
	}
	bySeq := map[int64]change{}
	for _, c := range rows {
		if _, dup := bySeq[c.Seq]; dup {
			return fmt.Errorf("check: event %d of batch %d is in the table twice", c.Seq, c.Batch)
		}
		bySeq[c.Seq] = c
	}
	for n := int64(1); n <= acked; n++ {
		for _, want := range src.Batch(n) {
			got, ok := bySeq[want.Seq]
			if !ok {
				return fmt.Errorf("check: event %d of acknowledged batch %d is missing", want.Seq, n)
			}
			if got != want {
				return fmt.Errorf("check: event %d is %+v, want %+v", want.Seq, got, want)
			}
			delete(bySeq, want.Seq)
		}
	}
	// A batch committed but not yet acknowledged (a crash in between) is
	// in the table too, whole.
	if len(bySeq) > 0 {
		next := src.Batch(acked + 1)
		for _, want := range next {
			if got, ok := bySeq[want.Seq]; ok && got == want {
				delete(bySeq, want.Seq)
			}
		}
		if len(bySeq) > 0 || len(rows) != int(acked+1)*src.rows {
			return fmt.Errorf("check: the table holds %d events that are not acknowledged batches 1..%d nor the whole of batch %d", len(bySeq), acked, acked+1)
		}
		fmt.Fprintf(out, "check: %d events; batches 1..%d each exactly once, and batch %d (committed, not acknowledged)\n", len(rows), acked, acked+1)
		return nil
	}
	fmt.Fprintf(out, "check: %d events; batches 1..%d each exactly once\n", len(rows), acked)
	return nil
}

// readChanges scans the whole table.
func readChanges(ctx context.Context, snap *deltalog.Snapshot) ([]change, error) {
	sc, err := reader.NewScan(snap)
	if err != nil {
		return nil, err
	}
	var out []change
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return nil, err
		}
		lines, err := reader.CanonicalRows(rec)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			var c change
			if err := json.Unmarshal(l, &c); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// batchOf turns change events into one Arrow batch of the table's schema.
func batchOf(events []change) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
		defer b.Release()
		for _, c := range events {
			b.Field(0).(*array.Int64Builder).Append(c.Batch)
			b.Field(1).(*array.Int64Builder).Append(c.Seq)
			b.Field(2).(*array.StringBuilder).Append(c.Op)
			b.Field(3).(*array.Int64Builder).Append(c.Key)
			if c.Op == "delete" {
				b.Field(4).AppendNull()
			} else {
				b.Field(4).(*array.StringBuilder).Append(c.Value)
			}
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		yield(rec, nil)
	}
}

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "batch", Type: arrow.PrimitiveTypes.Int64},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "op", Type: arrow.BinaryTypes.String},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
	{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)
