// Command cdcingest keeps a Delta table in step with a source database's
// change feed, exactly once, across crashes and restarts.
//
// The feed is a folder of JSON Lines files, one per batch, named by the
// batch number (00000001.jsonl, 00000002.jsonl, ...), as a CDC tool or a
// Kafka consumer might drop them. Each line is one change event of a row
// of the source's customers table:
//
//	{"op": "update", "key": 7, "ts": "2026-03-01T10:00:02.5Z", "columns": {"name": "ann", "balance": 120}}
//
// op is insert, update or delete; key is the primary key; ts the source's
// commit timestamp; columns the row after the change (none for a delete).
//
// Each batch is applied with one MERGE (dml.Merge):
//
//  1. only the latest event of each key counts (by ts, then by line);
//  2. MERGE INTO customers AS target USING batch AS source
//     ON target.key = source.key
//     WHEN MATCHED AND source.op = 'delete' THEN DELETE
//     WHEN MATCHED THEN UPDATE SET name, balance, updated_at
//     WHEN NOT MATCHED AND source.op <> 'delete' THEN INSERT (...)
//
// An update of a key the table lacks is inserted, and an insert of a key
// it has updates it, so the table ends as the source's rows whatever was
// missed.
//
// Exactly once: the MERGE commits with deltalog.WithAppTransaction(app,
// batch), which records txn(app, batch) in the same commit. After the
// commit the ingestor saves its own progress (a file, as a consumer
// commits its offset). On start it resumes after the larger of its
// progress and the table's txn version for app (Snapshot.TxnVersion): a
// crash between the commit and the progress file cannot apply a batch
// twice, and a crash before the commit leaves only data files no snapshot
// references. A batch already in the table is skipped by the commit too
// (AlreadyApplied), which covers two ingestors racing.
//
// Usage:
//
//	cdcingest -table URI -events DIR [-app ID] [-progress FILE]
//	cdcingest -events DIR -generate N [-seed S]
//
// -generate writes N more batches of made-up events, for trying it out.
// -crash-step K simulates a crash (exit status 75) at the K-th step: each
// write to the table's store (data files, commits), the return of each
// commit, and each save of the progress file is a step.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
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
// status. crash is called at the -crash-step step and must not return.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, crash func()) int {
	fs := flag.NewFlagSet("cdcingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "", "the table (a path or URI); created when missing")
	events := fs.String("events", "", "the folder of batch files NNNNNNNN.jsonl")
	app := fs.String("app", "cdcingest", "application id of the idempotent commits")
	progress := fs.String("progress", "", "the file of the last batch applied (default EVENTS/.progress)")
	generate := fs.Int("generate", 0, "write N more batches of made-up events to EVENTS, then exit")
	seed := fs.Uint64("seed", 1, "seed of -generate")
	crashStep := fs.Int64("crash-step", 0, "simulate a crash (exit 75) at step K")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *events == "" || fs.NArg() > 0 || (*table == "" && *generate == 0) {
		fmt.Fprintln(stderr, "usage: cdcingest -table URI -events DIR [-app ID] [-progress FILE] | -events DIR -generate N [-seed S]")
		return 2
	}
	if *generate > 0 {
		if _, err := generateBatches(*events, *generate, *seed); err != nil {
			fmt.Fprintln(stderr, "cdcingest:", err)
			return 1
		}
		return 0
	}
	if *progress == "" {
		*progress = filepath.Join(*events, ".progress")
	}
	in := &ingestor{app: *app, events: *events, progress: *progress, out: stdout}
	in.crash = func(what string) {
		if in.steps.Add(1) == *crashStep {
			fmt.Fprintf(stderr, "cdcingest: simulated crash at step %d: %s\n", *crashStep, what)
			crash()
		}
	}
	store, err := objstore.Open(ctx, *table)
	if err != nil {
		fmt.Fprintln(stderr, "cdcingest:", err)
		return 1
	}
	defer objstore.Close(store)
	// Every write to the store is a step where the process may die.
	in.store = objstore.Faulty(store, objstore.Func(func(c objstore.Call) (error, error) {
		if c.Op == objstore.OpPut {
			in.crash("before writing " + c.Key)
		}
		return nil, nil
	}))
	if err := in.ingest(ctx); err != nil {
		fmt.Fprintln(stderr, "cdcingest:", err)
		return 1
	}
	return 0
}

// event is one change event of the feed.
type event struct {
	Op      string    `json:"op"`
	Key     *int64    `json:"key"`
	TS      time.Time `json:"ts"`
	Columns struct {
		Name    *string `json:"name,omitempty"`
		Balance *int64  `json:"balance,omitempty"`
	} `json:"columns"`
}

// schemaDDL is the table's schema: the source's columns and the time of
// the change that wrote each row.
const schemaDDL = "key long not null, name string, balance long, updated_at timestamp"

// ingestor applies the feed's batches to the table.
type ingestor struct {
	store    objstore.Store
	app      string
	events   string
	progress string
	out      io.Writer
	crash    func(step string) // a step where a crash may be simulated
	steps    atomic.Int64
}

// The MERGE of every batch: its ON condition and clauses.
var (
	mergeOn      = mustParse("target.key = source.key")
	mergeClauses = []dml.Clause{
		dml.WhenMatchedDelete(mustParse("source.op = 'delete'")),
		dml.WhenMatchedUpdate(nil, mustSet("name = source.name"), mustSet("balance = source.balance"), mustSet("updated_at = source.ts")),
		dml.WhenNotMatchedInsert(mustParse("source.op <> 'delete'"),
			mustSet("key = source.key"), mustSet("name = source.name"), mustSet("balance = source.balance"), mustSet("updated_at = source.ts")),
	}
)

// ingest applies every batch after the last one applied.
func (in *ingestor) ingest(ctx context.Context) error {
	snap, err := openOrCreate(ctx, in.store)
	if err != nil {
		return err
	}
	done, err := in.loadProgress()
	if err != nil {
		return err
	}
	if v, ok := snap.TxnVersion(in.app); ok && v > done {
		fmt.Fprintf(in.out, "start: the table holds batches up to %d (txn of %s at version %d), the progress file says %d: resuming after %d\n", v, in.app, snap.Version(), done, v)
		done = v
	} else {
		fmt.Fprintf(in.out, "start: resuming after batch %d (table version %d)\n", done, snap.Version())
	}
	batches, err := listBatches(in.events)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if b.n <= done {
			continue
		}
		events, err := readEvents(b.path)
		if err != nil {
			return err
		}
		if snap, err = in.apply(ctx, snap, b.n, events); err != nil {
			return fmt.Errorf("batch %d (%s): %w", b.n, b.path, err)
		}
		in.crash(fmt.Sprintf("batch %d committed, progress not saved", b.n))
		if err := in.saveProgress(b.n); err != nil {
			return err
		}
		in.crash(fmt.Sprintf("progress %d saved", b.n))
	}
	v, _ := snap.TxnVersion(in.app)
	fmt.Fprintf(in.out, "done: table version %d holds batches up to %d\n", snap.Version(), v)
	return nil
}

// apply lands batch n with one idempotent MERGE and returns the table
// after it. A conflict with another writer is retried on the new
// version, where a batch another ingestor landed meanwhile is skipped.
func (in *ingestor) apply(ctx context.Context, snap *deltalog.Snapshot, n int64, events []event) (*deltalog.Snapshot, error) {
	latest := latestPerKey(events)
	for attempt := 1; ; attempt++ {
		res, err := dml.Merge(ctx, snap, sourceOf(latest), mergeOn, mergeClauses,
			dml.WithCommitOptions(deltalog.WithAppTransaction(in.app, n)))
		if errors.Is(err, conflict.ErrConflict) && attempt < 5 {
			fmt.Fprintf(in.out, "batch %d: %v; retrying\n", n, err)
			if snap, err = deltalog.Open(ctx, in.store, ""); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		m := res.Metrics
		switch {
		case res.CommitResult == nil:
			fmt.Fprintf(in.out, "batch %d: %d events changed nothing\n", n, len(events))
			return snap, nil
		case res.AlreadyApplied:
			fmt.Fprintf(in.out, "batch %d: already in the table (version %d), skipped\n", n, res.Version)
			return deltalog.Open(ctx, in.store, "")
		}
		fmt.Fprintf(in.out, "batch %d: %d events, %d keys: version %d (%d inserted, %d updated, %d deleted)\n",
			n, len(events), len(latest), res.Version, m["numTargetRowsInserted"], m["numTargetRowsUpdated"], m["numTargetRowsDeleted"])
		if err := res.WaitHooks(); err != nil {
			fmt.Fprintf(in.out, "batch %d: checkpoint failed (the commit stands): %v\n", n, err)
		}
		return res.Snapshot()
	}
}

// latestPerKey keeps the last event of each key, by source timestamp and
// then by position in the batch.
func latestPerKey(events []event) []event {
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return events[a].TS.Compare(events[b].TS) })
	last := map[int64]event{}
	for _, i := range order {
		last[*events[i].Key] = events[i]
	}
	out := make([]event, 0, len(last))
	for _, k := range slices.Sorted(maps.Keys(last)) {
		out = append(out, last[k])
	}
	return out
}

// sourceSchema is the MERGE source: the event's op, key and timestamp,
// and the row's columns.
var sourceSchema = arrow.NewSchema([]arrow.Field{
	{Name: "op", Type: arrow.BinaryTypes.String},
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "balance", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// sourceOf is events as one Arrow batch.
func sourceOf(events []event) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sourceSchema)
		defer b.Release()
		for _, e := range events {
			b.Field(0).(*array.StringBuilder).Append(e.Op)
			b.Field(1).(*array.Int64Builder).Append(*e.Key)
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(e.TS.UnixMicro()))
			if e.Columns.Name != nil {
				b.Field(3).(*array.StringBuilder).Append(*e.Columns.Name)
			} else {
				b.Field(3).AppendNull()
			}
			if e.Columns.Balance != nil {
				b.Field(4).(*array.Int64Builder).Append(*e.Columns.Balance)
			} else {
				b.Field(4).AppendNull()
			}
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		yield(rec, nil)
	}
}

// batchFile is one batch of the feed.
type batchFile struct {
	n    int64
	path string
}

// listBatches lists the folder's batch files in batch order.
func listBatches(dir string) ([]batchFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []batchFile
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.ParseInt(name, 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: a batch file is named by its number (00000001.jsonl)", filepath.Join(dir, e.Name()))
		}
		out = append(out, batchFile{n, filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(out, func(a, b batchFile) int { return int(a.n - b.n) })
	return out, nil
}

// readEvents reads a batch file; a bad event is an error naming its line.
func readEvents(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var e event
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		err := dec.Decode(&e)
		switch {
		case err != nil:
		case e.Op != "insert" && e.Op != "update" && e.Op != "delete":
			err = fmt.Errorf("op %q: want insert, update or delete", e.Op)
		case e.Key == nil:
			err = errors.New("no key")
		case e.TS.IsZero():
			err = errors.New("no ts (the source's commit time)")
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// loadProgress is the last batch the ingestor applied (0 when none).
func (in *ingestor) loadProgress() (int64, error) {
	b, err := os.ReadFile(in.progress)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("progress file %s: %w", in.progress, err)
	}
	return n, nil
}

// saveProgress records batch n as applied, atomically.
func (in *ingestor) saveProgress(n int64) error {
	tmp := in.progress + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(n, 10)+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, in.progress)
}

// openOrCreate opens the table, creating it when there is none.
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

// generateBatches writes n more batches of made-up events to dir, after
// the last one there, and returns them. Keys repeat within and across
// batches, timestamps tie and arrive out of order, and some events
// update keys the source never inserted or delete keys it does not have.
func generateBatches(dir string, n int, seed uint64) ([][]event, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	existing, err := listBatches(dir)
	if err != nil {
		return nil, err
	}
	first := int64(1)
	if len(existing) > 0 {
		first = existing[len(existing)-1].n + 1
	}
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var out [][]event
	for b := first; b < first+int64(n); b++ {
		r := rand.New(rand.NewPCG(seed, uint64(b)))
		var lines []byte
		var batch []event
		for i := range 12 {
			var e event
			key := r.Int64N(20) + 1
			e.Key = &key
			e.Op = []string{"insert", "update", "update", "delete"}[r.IntN(4)]
			// Seconds into the batch's minute: ties and disorder.
			e.TS = base.Add(time.Duration(b)*time.Minute + time.Duration(r.IntN(8))*time.Second + time.Duration(r.IntN(2))*time.Microsecond)
			if e.Op != "delete" {
				name := fmt.Sprintf("customer-%d-b%d-%d", key, b, i)
				balance := r.Int64N(10_000) - 1_000
				e.Columns.Name, e.Columns.Balance = &name, &balance
			}
			line, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			lines = append(append(lines, line...), '\n')
			batch = append(batch, e)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%08d.jsonl", b)), lines, 0o644); err != nil {
			return nil, err
		}
		out = append(out, batch)
	}
	return out, nil
}

func mustParse(text string) expr.Expr {
	e, err := expr.Parse(text)
	if err != nil {
		panic(err)
	}
	return e
}

func mustSet(text string) *expr.Assignment {
	a, err := expr.ParseAssignment(text)
	if err != nil {
		panic(err)
	}
	return a
}
