package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
	"github.com/lakelog/lakelog/writer/input"
)

func init() {
	registerVerb("append", "append TABLE FILE... [--mode append|overwrite] [--merge-schema]   (FILE: .jsonl/.ndjson, .csv with a header row, .parquet)", runAppend)
	registerVerb("scan", "scan TABLE [--version N | --timestamp T] [--where PRED] [--columns a,b] [--limit N] [--format table|jsonl|csv] [--sorted]", runScan)
	registerVerb("count", "count TABLE [--version N | --timestamp T] [--where PRED]", runCount)
}

// ---- append ----

// runAppend writes the rows of one or more files to the table in one
// commit: appended, or replacing every row with --mode overwrite. Bad
// input fails the whole command before anything is committed, with an
// error naming the file, line (or Parquet row) and column.
func runAppend(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	mode := fs.String("mode", "append", "append, or overwrite to replace every row")
	merge := fs.Bool("merge-schema", false, "add the input's new columns to the table schema")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("want TABLE and at least one FILE, got %d arguments", len(pos))
	}
	if *mode != "append" && *mode != "overwrite" {
		return usagef("--mode %q: want append or overwrite", *mode)
	}
	files := pos[1:]
	for _, f := range files {
		if _, err := input.FormatOf(f); err != nil {
			return err
		}
		if _, err := os.Stat(f); err != nil {
			return &input.Error{File: f, Msg: "cannot read: " + errText(err), Err: err}
		}
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	schema := snap.Schema()
	var wopts []writer.Option
	if *merge {
		schema, err = input.MergeSchema(ctx, schema, files)
		if err != nil {
			return err
		}
		wopts = append(wopts, writer.WithMergeSchema())
	}
	src := newAppendSource(files, schema)
	prog := startProgress(e.stderr, src, *mode)
	var res *deltalog.CommitResult
	if *mode == "overwrite" {
		res, err = writer.Overwrite(ctx, snap, src.batches(ctx), wopts...)
	} else {
		res, err = writer.Append(ctx, snap, src.batches(ctx), wopts...)
	}
	prog.stop()
	if errors.Is(err, writer.ErrEmptyInput) {
		fmt.Fprintf(e.stdout, "nothing to append: %s holds no rows; no version was committed\n", strings.Join(files, ", "))
		return nil
	}
	if err != nil {
		err = src.explain(err)
		var ie *input.Error
		if !*merge && errors.Is(err, input.ErrUnknownColumn) && errors.As(err, &ie) {
			ie.Msg += "; --merge-schema adds it"
		}
		return err
	}
	done := "appended"
	if *mode == "overwrite" {
		done = "overwrote the table with"
	}
	fmt.Fprintf(e.stdout, "%s %d rows from %d file(s): version %d\n", done, src.rows.Load(), len(files), res.Version)
	// The commit is done; a checkpoint it triggered finishes before the
	// process exits, and its failure is only a warning.
	if err := res.WaitCheckpoint(); err != nil {
		fmt.Fprintf(e.stderr, "lakelog append: warning: checkpoint after version %d failed (the commit stands): %v\n", res.Version, err)
	}
	return nil
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

func newAppendSource(files []string, schema *actions.StructType) *appendSource {
	s := &appendSource{files: files, schema: schema}
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
	d, err := input.Open(path, s.schema)
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
		if !yield(rec, nil) {
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
// run for progressAfter is still going, updated in place.
type progress struct {
	stopc chan struct{}
	done  chan struct{}
}

const (
	progressAfter = 2 * time.Second
	progressEvery = 250 * time.Millisecond
)

func startProgress(w io.Writer, src *appendSource, mode string) *progress {
	if !isTerminal(w) {
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
				if el < progressAfter {
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

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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
// one of three formats: table (aligned, for people), jsonl (the canonical
// row encoding) or csv.
func runScan(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	tt := timeTravelFlags(fs)
	where := fs.String("where", "", "keep the rows for which the predicate is true")
	columns := fs.String("columns", "", "print these columns, comma-separated, in this order")
	limit := fs.Int64("limit", -1, "print at most N rows (0 prints none; default: every row)")
	format := fs.String("format", "table", "table, jsonl or csv")
	sorted := fs.Bool("sorted", false, "sort the output lines by their bytes (holds the output in memory)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	out, err := newRowWriter(*format)
	if err != nil {
		return err
	}
	if *limit < -1 {
		return usagef("--limit %d: want a count of rows", *limit)
	}
	opts, err := tt()
	if err != nil {
		return err
	}
	snap, err := e.openSnapshot(ctx, pos[0], opts...)
	if err != nil {
		return err
	}
	var ropts []reader.Option
	if *where != "" {
		pred, err := parseWhere(*where, snap.Schema())
		if err != nil {
			return err
		}
		ropts = append(ropts, reader.WithFilter(pred))
	}
	if *columns != "" {
		cols := splitList(*columns)
		if len(cols) == 0 {
			return usagef("--columns %q: name at least one column", *columns)
		}
		ropts = append(ropts, reader.WithColumns(cols...))
	}
	if *limit >= 0 {
		ropts = append(ropts, reader.WithLimit(*limit))
	}
	sc, err := reader.NewScan(snap, ropts...)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	out.start(w, sc.Schema(), *sorted)
	for rec, err := range sc.Records(ctx) {
		if err != nil {
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
func runCount(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("count", flag.ContinueOnError)
	tt := timeTravelFlags(fs)
	where := fs.String("where", "", "count the rows for which the predicate is true")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	opts, err := tt()
	if err != nil {
		return err
	}
	snap, err := e.openSnapshot(ctx, pos[0], opts...)
	if err != nil {
		return err
	}
	var sopts []reader.Option
	if *where != "" {
		pred, err := parseWhere(*where, snap.Schema())
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
	fmt.Fprintln(e.stdout, n)
	return nil
}

// ---- output formats ----

// rowWriter prints scanned batches in one format.
type rowWriter interface {
	start(w *bufio.Writer, schema *arrow.Schema, sorted bool)
	write(rec arrow.RecordBatch) error
	finish() error
}

// sortedLines holds output lines in one buffer until they are written
// sorted by their bytes.
type sortedLines struct {
	data  []byte
	spans [][2]int
}

func (l *sortedLines) add(line []byte) {
	l.spans = append(l.spans, [2]int{len(l.data), len(l.data) + len(line)})
	l.data = append(l.data, line...)
}

func (l *sortedLines) writeTo(w io.Writer) error {
	slices.SortFunc(l.spans, func(a, b [2]int) int { return bytes.Compare(l.data[a[0]:a[1]], l.data[b[0]:b[1]]) })
	for _, s := range l.spans {
		if _, err := w.Write(l.data[s[0]:s[1]]); err != nil {
			return err
		}
	}
	return nil
}

// jsonlWriter prints the canonical row encoding, one object a line.
type jsonlWriter struct {
	w      *bufio.Writer
	sorted bool
	lines  sortedLines
	buf    []byte
}

func (j *jsonlWriter) start(w *bufio.Writer, _ *arrow.Schema, sorted bool) {
	j.w, j.sorted = w, sorted
}

func (j *jsonlWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		j.buf, err = reader.AppendCanonicalRow(j.buf[:0], rec, i)
		if err != nil {
			return err
		}
		j.buf = append(j.buf, '\n')
		if j.sorted {
			j.lines.add(j.buf)
			continue
		}
		if _, err := j.w.Write(j.buf); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlWriter) finish() error { return j.lines.writeTo(j.w) }

// csvWriter prints a header and RFC 4180 records: each value as its
// canonical text (strings as they are, decimals with their scale,
// timestamps in RFC 3339, binary in base64, nested values as canonical
// JSON), null as an empty field.
type csvWriter struct {
	w      *bufio.Writer
	cw     *csv.Writer
	sorted bool
	ncols  int
	lines  sortedLines
	rec    bytes.Buffer
	rcw    *csv.Writer
	row    []byte
	fields []string
}

func (c *csvWriter) start(w *bufio.Writer, schema *arrow.Schema, sorted bool) {
	c.w, c.sorted, c.ncols = w, sorted, schema.NumFields()
	c.cw = csv.NewWriter(w)
	c.rcw = csv.NewWriter(&c.rec)
	header := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		header[i] = f.Name
	}
	c.cw.Write(header)
	c.fields = make([]string, c.ncols)
}

func (c *csvWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		c.row, err = reader.AppendCanonicalRow(c.row[:0], rec, i)
		if err != nil {
			return err
		}
		vals, err := splitCanonical(c.row, c.ncols)
		if err != nil {
			return err
		}
		for k, v := range vals {
			c.fields[k], _ = cellText(v)
		}
		if !c.sorted {
			if err := c.cw.Write(c.fields); err != nil {
				return err
			}
			continue
		}
		c.rec.Reset()
		if err := c.rcw.Write(c.fields); err != nil {
			return err
		}
		c.rcw.Flush()
		c.lines.add(c.rec.Bytes())
	}
	return nil
}

func (c *csvWriter) finish() error {
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return err
	}
	return c.lines.writeTo(c.w)
}

// splitCanonical splits a canonical row, {"name":value,...} with n
// columns, into the values' JSON texts.
func splitCanonical(row []byte, n int) ([][]byte, error) {
	vals := make([][]byte, 0, n)
	bad := func() error { return fmt.Errorf("scan: cannot split canonical row %q", row) }
	if len(row) < 2 || row[0] != '{' {
		return nil, bad()
	}
	i := 1
	for len(vals) < n {
		end, ok := jsonValueEnd(row, i) // the key
		if !ok || end >= len(row) || row[end] != ':' {
			return nil, bad()
		}
		i = end + 1
		end, ok = jsonValueEnd(row, i)
		if !ok || end >= len(row) {
			return nil, bad()
		}
		vals = append(vals, row[i:end])
		i = end + 1 // past ',' or '}'
	}
	return vals, nil
}

// jsonValueEnd returns the index just past the compact JSON value that
// starts at row[i].
func jsonValueEnd(row []byte, i int) (int, bool) {
	depth := 0
	inStr := false
	for j := i; j < len(row); j++ {
		c := row[j]
		switch {
		case inStr:
			switch c {
			case '\\':
				j++
			case '"':
				inStr = false
				if depth == 0 {
					return j + 1, true
				}
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return j, true // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return j + 1, true
			}
		case c == ',' || c == ':':
			if depth == 0 {
				return j, true
			}
		}
	}
	return 0, false
}

// cellText is a canonical JSON value as text: strings unquoted, null as
// "" (isNull set), anything else as its JSON.
func cellText(v []byte) (text string, isNull bool) {
	switch {
	case string(v) == "null":
		return "", true
	case len(v) >= 2 && v[0] == '"':
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), false
		}
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s, false
		}
	}
	return string(v), false
}

// tableWriter prints aligned columns for people. Widths come from the
// header and the first tableSample rows, each at most tableMaxWidth
// characters; longer cells are cut with "…". Numbers are right-aligned,
// null shows as NULL, and a last line gives the row count. Only the first
// tableSample rows are held in memory (all of them with --sorted).
type tableWriter struct {
	w       *bufio.Writer
	sorted  bool
	names   []string
	numeric []bool
	pending [][]string
	widths  []int
	rows    int64
	row     []byte
}

const (
	tableSample   = 1000
	tableMaxWidth = 40
)

func (t *tableWriter) start(w *bufio.Writer, schema *arrow.Schema, sorted bool) {
	t.w, t.sorted = w, sorted
	for _, f := range schema.Fields() {
		t.names = append(t.names, f.Name)
		t.numeric = append(t.numeric, isNumeric(f.Type))
	}
}

func isNumeric(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

func (t *tableWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		t.row, err = reader.AppendCanonicalRow(t.row[:0], rec, i)
		if err != nil {
			return err
		}
		vals, err := splitCanonical(t.row, len(t.names))
		if err != nil {
			return err
		}
		cells := make([]string, len(vals))
		for k, v := range vals {
			s, isNull := cellText(v)
			if isNull {
				s = "NULL"
			}
			cells[k] = printable(s)
		}
		t.rows++
		if t.widths == nil {
			t.pending = append(t.pending, cells)
			if !t.sorted && len(t.pending) >= tableSample {
				t.flushPending()
			}
			continue
		}
		t.line(cells)
	}
	return nil
}

// printable replaces control characters, which would break the layout.
func printable(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '␤'
		}
		return r
	}, s)
}

func (t *tableWriter) flushPending() {
	if t.sorted {
		slices.SortFunc(t.pending, func(a, b []string) int { return slices.Compare(a, b) })
	}
	t.widths = make([]int, len(t.names))
	for k, n := range t.names {
		t.widths[k] = min(tableMaxWidth, max(t.widths[k], utf8.RuneCountInString(n)))
	}
	for _, cells := range t.pending {
		for k, c := range cells {
			t.widths[k] = min(tableMaxWidth, max(t.widths[k], utf8.RuneCountInString(c)))
		}
	}
	t.line(t.names)
	seps := make([]string, len(t.names))
	for k, w := range t.widths {
		seps[k] = strings.Repeat("-", w)
	}
	t.line(seps)
	for _, cells := range t.pending {
		t.line(cells)
	}
	t.pending = nil
}

func (t *tableWriter) line(cells []string) {
	for k, c := range cells {
		if k > 0 {
			t.w.WriteString("  ")
		}
		w := t.widths[k]
		n := utf8.RuneCountInString(c)
		if n > w {
			c = string([]rune(c)[:max(0, w-1)]) + "…"
			n = w
		}
		pad := strings.Repeat(" ", w-n)
		last := k == len(cells)-1
		switch {
		case t.numeric[k]:
			t.w.WriteString(pad + c)
		case last:
			t.w.WriteString(c)
		default:
			t.w.WriteString(c + pad)
		}
	}
	t.w.WriteByte('\n')
}

func (t *tableWriter) finish() error {
	if t.widths == nil {
		t.flushPending()
	}
	noun := "rows"
	if t.rows == 1 {
		noun = "row"
	}
	fmt.Fprintf(t.w, "(%d %s)\n", t.rows, noun)
	return nil
}

// newRowWriter is the row output of --format: table, jsonl or csv.
func newRowWriter(format string) (rowWriter, error) {
	switch format {
	case "jsonl":
		return &jsonlWriter{}, nil
	case "csv":
		return &csvWriter{}, nil
	case "table":
		return &tableWriter{}, nil
	}
	return nil, usagef("--format %q: want table, jsonl or csv", format)
}
