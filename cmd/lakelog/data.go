package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
	"github.com/lakelog/lakelog/writer/input"
)

const inputFormats = "FILE is .jsonl/.ndjson (one JSON object a line), .csv (a header row) or .parquet."

func init() {
	register(&verb{
		name: "append", section: sectionWrite,
		args:    []arg{{name: "TABLE"}, {name: "FILE", many: true}},
		summary: "add the rows of .jsonl, .csv or .parquet files in one commit; bad input names file, line and column and commits nothing",
		flags: []flagDef{
			{name: "mode", kind: choiceFlag, choices: []string{"append", "overwrite"}, help: "append, or overwrite to replace every row"},
			{name: "merge-schema", kind: boolFlag, help: "add the input's new columns (and struct fields) to the table schema; widen columns to wider input types where delta.enableTypeWidening=true"},
			{name: "overwrite-schema", kind: boolFlag, help: "with --mode overwrite: replace the table's schema and partitioning with the input's (its columns as inferred, partitioned by --partition-by)"},
			{name: "partition-by", kind: listFlag, help: "with --overwrite-schema: the new partition columns, comma-separated (default: none)"},
			{name: "delimiter", kind: textFlag, arg: "C", help: "the field delimiter of CSV files (default ,)"},
			{name: "no-header", kind: boolFlag, help: "CSV files have no header row: their columns are _c0, _c1, ... by position, as Spark names them"},
		},
		formats: allFormats, progress: true,
		more: inputFormats + ` With --merge-schema or --overwrite-schema a CSV file's new
columns get the types Spark's CSV inference (inferSchema) gives them:
integer, long, decimal, double, date, timestamp, boolean or string.`,
		run: runAppend,
	})
	register(&verb{
		name: "scan", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "print the table's rows; partitions and files the predicate rules out are not read",
		travel:  travelRead,
		flags: []flagDef{
			{name: "where", kind: textFlag, arg: "PRED", help: "keep the rows for which the predicate is true (lakelog help predicates)"},
			{name: "columns", kind: listFlag, help: "print these columns, comma-separated, in this order (also _metadata.row_id and _metadata.row_commit_version on a table with row tracking)"},
			{name: "limit", kind: countFlag, help: "print at most N rows (0 prints none; default: every row)"},
			{name: "sorted", kind: boolFlag, help: "sort the output lines by their bytes (holds the output in memory)"},
			{name: "explain", kind: boolFlag, help: "print what planning and reading did (files and bytes: total, pruned by partition, skipped by stats, planned; rows skipped by the page index, decoded and returned; deletion vectors) instead of the rows"},
		},
		formats: allFormats, progress: true,
		run: runScan,
	})
	register(&verb{
		name: "count", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "the number of rows (after deletion vectors), from the files' statistics where they tell",
		travel:  travelRead,
		flags: []flagDef{
			{name: "where", kind: textFlag, arg: "PRED", help: "count the rows for which the predicate is true"},
		},
		formats: allFormats,
		run:     runCount,
	})
}

// ---- append ----

// runAppend writes the rows of one or more files to the table in one
// commit: appended, or replacing every row with --mode overwrite. Bad
// input fails the whole command before anything is committed, with an
// error naming the file, line (or Parquet row) and column.
func runAppend(ctx context.Context, c *call) error {
	mode := c.text("mode")
	files := c.args[1:]
	for _, f := range files {
		if _, err := input.FormatOf(f); err != nil {
			return err
		}
		if _, err := os.Stat(f); err != nil {
			return &input.Error{File: f, Msg: "cannot read: " + errText(err), Err: err}
		}
	}
	var iopts []input.Option
	if d := c.text("delimiter"); d != "" {
		r := []rune(d)
		if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
			return usagef("--delimiter %q: want one character other than a quote or a line break", d)
		}
		iopts = append(iopts, input.WithComma(r[0]))
	}
	if c.on("no-header") {
		iopts = append(iopts, input.WithHeader(false))
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	schema := snap.Schema()
	var wopts []writer.Option
	if c.given("partition-by") && !c.on("overwrite-schema") {
		return usagef("--partition-by needs --overwrite-schema")
	}
	if c.on("overwrite-schema") {
		if mode != "overwrite" {
			return usagef("--overwrite-schema needs --mode overwrite")
		}
		// The input's own columns, inferred as merge-schema infers new
		// ones, become the table's.
		schema, err = input.MergeSchema(ctx, &actions.StructType{}, files, iopts...)
		if err != nil {
			return err
		}
		wopts = append(wopts, writer.WithOverwriteSchema(c.list("partition-by")...))
	} else if c.on("merge-schema") {
		schema, err = input.MergeSchema(ctx, schema, files, iopts...)
		if err != nil {
			return err
		}
		wopts = append(wopts, writer.WithMergeSchema())
	}
	src := newAppendSource(files, schema, iopts...)
	prog := c.startProgress(src, mode)
	var res *deltalog.CommitResult
	if mode == "overwrite" {
		res, err = writer.Overwrite(ctx, snap, src.batches(ctx), wopts...)
	} else {
		res, err = writer.Append(ctx, snap, src.batches(ctx), wopts...)
	}
	prog.stop()
	if errors.Is(err, writer.ErrEmptyInput) {
		return c.report(newOpResult("WRITE", nil, map[string]any{"numOutputRows": 0}), func(w io.Writer) {
			fmt.Fprintf(w, "nothing to append: %s holds no rows; no version was committed\n", strings.Join(files, ", "))
		})
	}
	if err != nil {
		err = src.explain(err)
		var ie *input.Error
		if !c.on("merge-schema") && errors.Is(err, input.ErrUnknownColumn) && errors.As(err, &ie) {
			ie.Msg += "; --merge-schema adds it"
		}
		return err
	}
	// The commit is done; a checkpoint it triggered finishes before the
	// process exits, and its failure is only a warning.
	defer c.waitHooks(res)
	return c.report(newOpResult("WRITE", res, map[string]any{"numOutputRows": src.rows.Load()}), func(w io.Writer) {
		done := "appended"
		if mode == "overwrite" {
			done = "overwrote the table with"
		}
		fmt.Fprintf(w, "%s %d rows from %d file(s): version %d\n", done, src.rows.Load(), len(files), res.Version)
	})
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// appendSource chains the input files into one sequence of batches and
// remembers where each file's rows start, to name the file and row of an
// error the writer finds.
type appendSource struct {
	files  []string
	schema *actions.StructType
	opts   []input.Option // how to read CSV files

	rows      atomic.Int64 // rows yielded so far
	doneBytes atomic.Int64 // sizes of the files finished
	total     int64        // sizes of all files (-1: unknown)
	cur       atomic.Pointer[input.Decoder]

	mu struct {
		sync.Mutex
		file   int     // index of the file being read
		starts []int64 // rows before each file
	}
}

func newAppendSource(files []string, schema *actions.StructType, opts ...input.Option) *appendSource {
	s := &appendSource{files: files, schema: schema, opts: opts}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			s.total = -1
			break
		}
		s.total += st.Size()
	}
	return s
}

func (s *appendSource) batches(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for i, path := range s.files {
			s.mu.Lock()
			s.mu.file = i
			s.mu.starts = append(s.mu.starts, s.rows.Load())
			s.mu.Unlock()
			if !s.file(ctx, path, yield) {
				return
			}
		}
	}
}

// file yields one file's batches; false means stop.
func (s *appendSource) file(ctx context.Context, path string, yield func(arrow.RecordBatch, error) bool) bool {
	d, err := input.Open(path, s.schema, s.opts...)
	if err != nil {
		yield(nil, err)
		return false
	}
	defer d.Close()
	s.cur.Store(d)
	defer s.cur.Store(nil)
	for rec, err := range d.Records(ctx) {
		if err != nil {
			yield(nil, err)
			return false
		}
		s.rows.Add(rec.NumRows())
		rec = omitUnsuppliedIdentity(s.schema, rec)
		ok := yield(rec, nil)
		rec.Release()
		if !ok {
			return false
		}
	}
	if n := d.Size(); n > 0 {
		s.doneBytes.Add(n)
	}
	return true
}

// bytesRead is the input read so far.
func (s *appendSource) bytesRead() int64 {
	n := s.doneBytes.Load()
	if d := s.cur.Load(); d != nil {
		n += d.BytesRead()
	}
	return n
}

// explain turns a write error about the input into an *input.Error naming
// the file (and, for a row, its number within the file): the writer
// counts rows over all files.
func (s *appendSource) explain(err error) error {
	var ie *input.Error
	if errors.As(err, &ie) {
		return ie
	}
	var se *writer.SchemaError
	if !errors.As(err, &se) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.mu.file
	if se.Row > 0 {
		for j, start := range s.mu.starts {
			if se.Row > start {
				i = j
			}
		}
	}
	out := &input.Error{File: s.files[i], Column: se.Column, Msg: se.Reason, Err: err}
	if se.Row > 0 {
		out.Row = se.Row - s.mu.starts[i]
	}
	return out
}

// progress prints a line on a terminal's stderr while an append that has
// run for progressDelay is still going, updated in place.
type progress struct {
	stopc chan struct{}
	done  chan struct{}
}

func (c *call) startProgress(src *appendSource, mode string) *progress {
	w := c.stderr
	if c.on("quiet") || !isTerminal(w) {
		return nil
	}
	p := &progress{stopc: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		printed := false
		for {
			select {
			case <-p.stopc:
				if printed {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-t.C:
				el := time.Since(start)
				if el < progressDelay {
					continue
				}
				fmt.Fprint(w, "\r"+progressLine(mode, src.rows.Load(), src.bytesRead(), src.total, el)+"\x1b[K")
				printed = true
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.stopc)
	<-p.done
}

// progressLine is the text of the progress line:
//
//	appending: 1200000 rows (117.7 MiB of 435.0 MiB, 27%), 12s
func progressLine(mode string, rows, read, total int64, elapsed time.Duration) string {
	verb := "appending"
	if mode == "overwrite" {
		verb = "overwriting"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows (%s", verb, rows, humanBytes(read))
	if total > 0 {
		fmt.Fprintf(&b, " of %s, %d%%", humanBytes(total), min(100, read*100/total))
	}
	fmt.Fprintf(&b, "), %s", elapsed.Round(time.Second))
	return b.String()
}

// ---- scan and count ----

// parseWhere parses and binds a --where predicate to the table's schema.
// A syntax error names its column in the predicate text.
func parseWhere(text string, schema *actions.StructType) (expr.Expr, error) {
	e, err := expr.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("--where: %w", err)
	}
	if _, err := expr.BindPredicate(e, schema); err != nil {
		return nil, fmt.Errorf("--where: %w", err)
	}
	return e, nil
}

// runScan prints the table's rows (after --where, --columns, --limit) in
// the format asked.
func runScan(ctx context.Context, c *call) error {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	var ropts []reader.Option
	if where := c.text("where"); where != "" {
		pred, err := parseWhere(where, snap.Schema())
		if err != nil {
			return err
		}
		ropts = append(ropts, reader.WithFilter(pred))
	}
	cols := c.list("columns")
	tableCols, meta := splitMetadataColumns(cols)
	if cols != nil {
		ropts = append(ropts, reader.WithColumns(tableCols...))
	}
	if meta {
		ropts = append(ropts, reader.WithRowTracking())
	}
	if n, ok := c.number("limit"); ok {
		ropts = append(ropts, reader.WithLimit(n))
	}
	sc, err := reader.NewScan(snap, ropts...)
	if err != nil {
		return err
	}
	if c.on("explain") {
		return c.explain(ctx, snap.NumFiles(), snap.SizeInBytes(), sc)
	}
	// Rows going to a file or a pipe, stderr a terminal: a progress line
	// (scanProgress).
	var m *meter
	if !isTerminal(c.stdout) {
		m = c.meter()
	}
	stop := m.watch(func() {
		done, total, unit, extra := scanProgress(sc.Metrics(), int64(snap.NumFiles()))
		m.set("scan", done, total, unit, extra)
	})
	defer stop()
	if meta {
		out, recs := orderColumns(sc.Schema(), cols, sc.Records(ctx))
		return c.printRows(ctx, out, recs)
	}
	return c.printRows(ctx, sc.Schema(), sc.Records(ctx))
}

// scanProgress is a scan's progress line: once planning has kept its
// files and their row counts are known (statistics, or the footers of
// the files opened), the rows read of the rows planned, so that a scan of
// one large file moves as its rows are decoded; until then the files read
// of those planning may keep (it converges as planning rules files out).
// Either way the rows written and the bytes fetched follow.
func scanProgress(sm reader.ScanMetrics, numFiles int64) (done, total int64, unit, extra string) {
	extra = fmt.Sprintf("%d rows out", sm.RowsReturned)
	if sm.BytesFetched > 0 {
		extra += ", " + humanBytes(sm.BytesFetched) + " fetched"
	}
	planned := sm.FilesConsidered >= numFiles
	if planned && sm.RowsUnknown == 0 && sm.RowsPlanned > 0 {
		return sm.RowsRead + sm.RowsSkippedByPageIndex, sm.RowsPlanned, "rows", fmt.Sprintf("%d of %d files, %s", sm.FilesRead, sm.FilesPlanned, extra)
	}
	return sm.FilesRead, numFiles - sm.FilesPrunedByPartition - sm.FilesSkippedByStats, "files", extra
}

// explanation is scan --explain's record.
type explanation struct {
	FilesTotal             int64 `json:"filesTotal"`
	BytesTotal             int64 `json:"bytesTotal"`
	FilesPrunedByPartition int64 `json:"filesPrunedByPartition"`
	FilesSkippedByStats    int64 `json:"filesSkippedByStats"`
	FilesPlanned           int64 `json:"filesPlanned"`
	BytesPlanned           int64 `json:"bytesPlanned"`
	FilesRead              int64 `json:"filesRead"`
	FilesUsingPageIndex    int64 `json:"filesUsingPageIndex"`
	RowsSkippedByPageIndex int64 `json:"rowsSkippedByPageIndex"`
	RowsDecoded            int64 `json:"rowsDecoded"`
	RowsReturned           int64 `json:"rowsReturned"`
	FilesWithDVs           int64 `json:"filesWithDeletionVectors"`
	RowsDeletedByDVs       int64 `json:"rowsDeletedByDeletionVectors"`
	Requests               int64 `json:"requests"`
	BytesFetched           int64 `json:"bytesFetched"`
}

// explain plans the scan (which files, and why the others are not read),
// then reads it without printing the rows, and prints what it did: the
// rows the page index rules out are not decoded (rowsSkippedByPageIndex,
// not in rowsDecoded).
func (c *call) explain(ctx context.Context, files int, bytes int64, sc *reader.Scan) error {
	e := explanation{FilesTotal: int64(files), BytesTotal: bytes}
	for f, err := range sc.Files(ctx) {
		if err != nil {
			return err
		}
		e.FilesPlanned++
		e.BytesPlanned += f.Add.Size
		if dv := f.Add.DeletionVector; dv != nil {
			e.FilesWithDVs++
			e.RowsDeletedByDVs += dv.Cardinality
		}
	}
	pm := sc.Metrics()
	e.FilesPrunedByPartition, e.FilesSkippedByStats = pm.FilesPrunedByPartition, pm.FilesSkippedByStats
	for _, err := range sc.Records(ctx) {
		if err != nil {
			return err
		}
	}
	m := sc.Metrics()
	e.FilesRead, e.RowsDecoded, e.RowsReturned = m.FilesRead, m.RowsRead, m.RowsReturned
	e.FilesUsingPageIndex, e.RowsSkippedByPageIndex = m.FilesUsingPageIndex, m.RowsSkippedByPageIndex
	e.Requests, e.BytesFetched = m.Requests, m.BytesFetched
	return c.report(e, func(w io.Writer) {
		fmt.Fprintf(w, "files: %d (%s) in the version\n", e.FilesTotal, humanBytes(e.BytesTotal))
		fmt.Fprintf(w, "  pruned by partition values: %d\n", e.FilesPrunedByPartition)
		fmt.Fprintf(w, "  skipped by statistics: %d\n", e.FilesSkippedByStats)
		fmt.Fprintf(w, "  planned: %d (%s), %d with deletion vectors deleting %d rows\n", e.FilesPlanned, humanBytes(e.BytesPlanned), e.FilesWithDVs, e.RowsDeletedByDVs)
		fmt.Fprintf(w, "read: %d files; page index: %d rows skipped in %d files; %d rows decoded, %d returned\n", e.FilesRead, e.RowsSkippedByPageIndex, e.FilesUsingPageIndex, e.RowsDecoded, e.RowsReturned)
		if e.Requests > 0 {
			fmt.Fprintf(w, "object store: %d requests, %s fetched\n", e.Requests, humanBytes(e.BytesFetched))
		}
	})
}

// printRows prints batches in the format asked.
func (c *call) printRows(ctx context.Context, schema *arrow.Schema, batches iter.Seq2[arrow.RecordBatch, error]) error {
	out := newRowWriter(c.format)
	w := bufio.NewWriterSize(c.stdout, 1<<16)
	sorted := false
	if c.verb.hasFlag("sorted") {
		sorted = c.on("sorted")
	}
	out.start(w, schema, sorted)
	for rec, err := range batches {
		if err != nil {
			w.Flush()
			return err
		}
		if err := out.write(rec); err != nil {
			return err
		}
	}
	if err := out.finish(); err != nil {
		return err
	}
	return w.Flush()
}

// runCount prints the number of rows, matching --where if given.
func runCount(ctx context.Context, c *call) error {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	var sopts []reader.Option
	if where := c.text("where"); where != "" {
		pred, err := parseWhere(where, snap.Schema())
		if err != nil {
			return err
		}
		sopts = append(sopts, reader.WithFilter(pred))
	}
	sc, err := reader.NewScan(snap, sopts...)
	if err != nil {
		return err
	}
	n, err := sc.Count(ctx)
	if err != nil {
		return err
	}
	return c.report(struct {
		Count int64 `json:"count"`
	}{n}, func(w io.Writer) { fmt.Fprintln(w, n) })
}

// omitUnsuppliedIdentity is rec without the identity columns the input
// gave no value for (all null in the batch: the decoder fills absent
// fields with nulls), so that the writer generates them; a column with
// values stays, and the writer keeps them (BY DEFAULT) or refuses them
// (ALWAYS). rec is retained or replaced; the caller releases the result.
func omitUnsuppliedIdentity(schema *actions.StructType, rec arrow.RecordBatch) arrow.RecordBatch {
	var keep []int
	for i, f := range rec.Schema().Fields() {
		j := schema.IndexFold(f.Name)
		if j >= 0 && actions.IsIdentity(schema.Fields[j]) && rec.Column(i).NullN() == int(rec.NumRows()) {
			continue
		}
		keep = append(keep, i)
	}
	if len(keep) == int(rec.NumCols()) {
		rec.Retain()
		return rec
	}
	fields := make([]arrow.Field, len(keep))
	cols := make([]arrow.Array, len(keep))
	for k, i := range keep {
		fields[k], cols[k] = rec.Schema().Field(i), rec.Column(i)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}
