package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rivo/uniseg"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
)

// Output formats. Every verb that prints rows or metrics takes --format
// with all four; table is for people, the others for scripts.
const (
	formatTable = "table"
	formatJSONL = "jsonl"
	formatJSON  = "json"
	formatCSV   = "csv"
)

var allFormats = []string{formatTable, formatJSONL, formatJSON, formatCSV}

const formatsTopic = `Output formats (--format), on every command that prints rows or metrics:

  table   for people (the default): aligned columns, or the command's own
          lines for a result. A value is never cut: a column widens when
          a later value is wider than the first rows' (the header is then
          printed again), and text longer than 40 characters wraps onto
          the next lines within its column; widths count CJK characters
          and emoji as two columns. Control characters show as their
          control pictures (a newline as ␊, a tab as ␉, a carriage return
          as ␍), null as NULL, and a string that reads NULL or starts
          with a quote as a quoted literal ('NULL').
  jsonl   one JSON object a line: a row, or a result record
  json    one JSON document: an array of the rows or records, or one
          object for a command that reports one result
  csv     a header row, then one RFC 4180 record per row; null is an empty
          field, nested values are JSON text

Rows (scan, changes, SELECT) use the canonical row encoding: integers as
numbers, decimals as strings with their scale, timestamps in RFC 3339
(UTC), binary in base64, maps as JSON objects keyed by the keys' text. A
command's result (delete, merge, optimize, ...) holds the operation, the
version committed (null if none) and Spark's operationMetrics, as numbers;
a SQL statement that changes a table prints the same record with its
statement and the columns of the row Spark returns for it.
`

// ---- rows: Arrow record batches ----

// rowWriter prints scanned batches in one format.
type rowWriter interface {
	start(w *bufio.Writer, schema *arrow.Schema, sorted bool)
	write(rec arrow.RecordBatch) error
	finish() error
}

// newRowWriter is the row output of --format.
func newRowWriter(format string) rowWriter {
	switch format {
	case formatJSONL:
		return &jsonlWriter{}
	case formatJSON:
		return &jsonlWriter{array: true}
	case formatCSV:
		return &csvWriter{}
	}
	return &tableWriter{}
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

func (l *sortedLines) sort() {
	slices.SortFunc(l.spans, func(a, b [2]int) int { return bytes.Compare(l.data[a[0]:a[1]], l.data[b[0]:b[1]]) })
}

// all is the lines in their order.
func (l *sortedLines) all() [][]byte {
	out := make([][]byte, len(l.spans))
	for i, s := range l.spans {
		out[i] = l.data[s[0]:s[1]]
	}
	return out
}

func (l *sortedLines) writeTo(w io.Writer) error {
	l.sort()
	for _, line := range l.all() {
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// jsonlWriter prints the canonical row encoding, one object a line, or
// as one JSON array.
type jsonlWriter struct {
	w      *bufio.Writer
	sorted bool
	array  bool
	n      int
	lines  sortedLines
	buf    []byte
}

func (j *jsonlWriter) start(w *bufio.Writer, _ *arrow.Schema, sorted bool) {
	j.w, j.sorted = w, sorted
}

func (j *jsonlWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		j.buf, err = reader.AppendJSONRow(j.buf[:0], rec, i)
		if err != nil {
			return err
		}
		j.buf = append(j.buf, '\n')
		if j.sorted {
			j.lines.add(j.buf)
			continue
		}
		j.separate()
		line := j.buf
		if j.array {
			line = line[:len(line)-1] // the separator ends the line
		}
		if _, err := j.w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// separate writes what goes before a row of a JSON array.
func (j *jsonlWriter) separate() {
	switch {
	case !j.array:
	case j.n == 0:
		j.w.WriteString("[\n")
	default:
		j.w.WriteString(",\n")
	}
	j.n++
}

func (j *jsonlWriter) finish() error {
	if j.sorted {
		j.lines.sort()
		for _, line := range j.lines.all() {
			j.separate()
			if !j.array {
				j.w.Write(line)
				continue
			}
			j.w.Write(line[:len(line)-1]) // the separator ends the line
		}
	}
	if !j.array {
		return nil
	}
	if j.n == 0 {
		_, err := j.w.WriteString("[]\n")
		return err
	}
	_, err := j.w.WriteString("\n]\n")
	return err
}

// csvWriter prints a header and RFC 4180 records: each value as its
// canonical text (strings as they are, decimals with their scale,
// timestamps in RFC 3339, binary in base64, nested values as canonical
// JSON), null as an empty field.
type csvWriter struct {
	// noHeader leaves out the header line (a followed feed prints it
	// once per change of columns).
	noHeader bool
	w        *bufio.Writer
	cw       *csv.Writer
	sorted   bool
	ncols    int
	lines    sortedLines
	rec      bytes.Buffer
	rcw      *csv.Writer
	row      []byte
	fields   []string
}

func (c *csvWriter) start(w *bufio.Writer, schema *arrow.Schema, sorted bool) {
	c.w, c.sorted, c.ncols = w, sorted, schema.NumFields()
	c.cw = csv.NewWriter(w)
	c.rcw = csv.NewWriter(&c.rec)
	header := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		header[i] = f.Name
	}
	if !c.noHeader {
		c.cw.Write(header)
	}
	c.fields = make([]string, c.ncols)
}

func (c *csvWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		c.row, err = reader.AppendJSONRow(c.row[:0], rec, i)
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

// tableWriter prints rows as an aligned text table (textTable) with a
// last line giving the row count.
type tableWriter struct {
	t     *textTable
	ncols int
	row   []byte
}

func (t *tableWriter) start(w *bufio.Writer, schema *arrow.Schema, sorted bool) {
	var names []string
	var kinds []cellKind
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
		kinds = append(kinds, cellKindOf(f.Type))
	}
	t.ncols = len(names)
	t.t = newTextTable(w, names, kinds, sorted)
}

// cellKindOf is how a column of the Arrow type is laid out.
func cellKindOf(dt arrow.DataType) cellKind {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return numberCell
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW,
		arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.FIXED_SIZE_BINARY:
		return textCell
	}
	return wordCell
}

func (t *tableWriter) write(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		var err error
		t.row, err = reader.AppendJSONRow(t.row[:0], rec, i)
		if err != nil {
			return err
		}
		vals, err := splitCanonical(t.row, t.ncols)
		if err != nil {
			return err
		}
		cells := make([]string, len(vals))
		for k, v := range vals {
			cells[k] = tableCell(v)
		}
		t.t.add(cells)
	}
	return nil
}

func (t *tableWriter) finish() error { return t.t.finish(true) }

// tableCell is a canonical JSON value as a table shows it: null as NULL,
// and a string that would read as NULL (in any case) or that starts with
// a quote as a quoted SQL literal ('NULL', '\'x'), so that a null and the
// string "NULL" never look alike.
func tableCell(v []byte) string {
	s, isNull := cellText(v)
	switch {
	case isNull:
		return "NULL"
	case v[0] == '"' && (strings.EqualFold(s, "NULL") || strings.HasPrefix(s, "'")):
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	return s
}

// ---- the text table ----

// cellKind is how a column's values are laid out.
type cellKind uint8

const (
	wordCell   cellKind = iota // left-aligned, never broken (dates, booleans)
	numberCell                 // right-aligned, never broken
	textCell                   // left-aligned, wrapped past wrapWidth
)

// A textTable prints aligned columns for people and never cuts a value.
// Widths come from the header and the first tableSample rows (all rows
// when sorted). A later value wider than its column widens the column
// from that row on, and the header is printed again with the new widths;
// text wider than wrapWidth wraps onto continuation lines within its
// column. Only the first tableSample rows are held in memory (all of them
// when sorted).
type textTable struct {
	w       *bufio.Writer
	names   []string
	kinds   []cellKind
	sorted  bool
	pending [][]string
	widths  []int
	rows    int64
	widened int // times the header was printed again
}

const (
	tableSample = 1000
	wrapWidth   = 40
)

func newTextTable(w *bufio.Writer, names []string, kinds []cellKind, sorted bool) *textTable {
	return &textTable{w: w, names: names, kinds: kinds, sorted: sorted}
}

// add prints (or holds) one row.
func (t *textTable) add(cells []string) {
	for k, c := range cells {
		cells[k] = printable(c)
	}
	t.rows++
	if t.widths == nil {
		t.pending = append(t.pending, cells)
		if !t.sorted && len(t.pending) >= tableSample {
			t.flushPending()
		}
		return
	}
	if t.widen(cells) {
		t.widened++
		t.header()
	}
	t.line(cells)
}

// wraps reports whether column k wraps its long values: text columns
// do, but not the last, which nothing follows.
func (t *textTable) wraps(k int) bool {
	return t.kinds[k] == textCell && k < len(t.kinds)-1
}

// widen makes each column at least as wide as the row needs; it reports
// whether any column grew. The last column's width only pads its header
// rule, so it does not print the header again.
func (t *textTable) widen(cells []string) bool {
	grew := false
	for k, c := range cells {
		need := displayWidth(c)
		if t.wraps(k) {
			need = min(need, wrapWidth)
		}
		if need > t.widths[k] && k == len(cells)-1 && t.rows > 0 && t.pending == nil {
			continue
		}
		if need > t.widths[k] {
			t.widths[k] = need
			grew = true
		}
	}
	return grew
}

func (t *textTable) flushPending() {
	if t.sorted {
		slices.SortFunc(t.pending, func(a, b []string) int { return slices.Compare(a, b) })
	}
	t.widths = make([]int, len(t.names))
	t.widen(t.names)
	for _, cells := range t.pending {
		t.widen(cells)
	}
	t.header()
	for _, cells := range t.pending {
		t.line(cells)
	}
	t.pending = nil
}

func (t *textTable) header() {
	t.line(t.names)
	seps := make([]string, len(t.names))
	for k, w := range t.widths {
		seps[k] = strings.Repeat("-", w)
	}
	t.line(seps)
}

// line prints a row: a line, and continuation lines for wrapped text.
func (t *textTable) line(cells []string) {
	parts := make([][]string, len(cells))
	n := 1
	for k, c := range cells {
		parts[k] = []string{c}
		if t.wraps(k) && displayWidth(c) > t.widths[k] {
			parts[k] = wrap(c, t.widths[k])
		}
		n = max(n, len(parts[k]))
	}
	for i := range n {
		var b strings.Builder
		for k := range cells {
			c := ""
			if i < len(parts[k]) {
				c = parts[k][i]
			}
			if k > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", max(0, t.widths[k]-displayWidth(c)))
			switch {
			case t.kinds[k] == numberCell:
				b.WriteString(pad + c)
			case k == len(cells)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
		}
		t.w.WriteString(strings.TrimRight(b.String(), " "))
		t.w.WriteByte('\n')
	}
}

// wrap cuts s into pieces at most width columns wide on a terminal,
// never inside a character (a grapheme cluster: an emoji with its
// modifiers, a letter with its accents). A character wider than width
// is a piece of its own.
func wrap(s string, width int) []string {
	var out []string
	start, w := 0, 0
	state := -1
	rest := s
	pos := 0
	for len(rest) > 0 {
		var cluster string
		var cw int
		cluster, rest, cw, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if w+cw > width && pos > start {
			out = append(out, s[start:pos])
			start, w = pos, 0
		}
		w += cw
		pos += len(cluster)
	}
	return append(out, s[start:])
}

// displayWidth is how many columns s takes on a terminal: CJK characters
// and emoji take two, combining marks none.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return uniseg.StringWidth(s)
		}
	}
	return len(s)
}

// finish prints the rows held and, with count, the row count.
func (t *textTable) finish(count bool) error {
	if t.widths == nil {
		t.flushPending()
	}
	if !count {
		return nil
	}
	noun := "rows"
	if t.rows == 1 {
		noun = "row"
	}
	fmt.Fprintf(t.w, "(%d %s", t.rows, noun)
	if t.widened > 0 {
		fmt.Fprintf(t.w, "; the header was printed again %d times where later values were wider than the first rows'", t.widened)
	}
	fmt.Fprintln(t.w, ")")
	return nil
}

// printable shows control characters, which would break the layout, as
// their Unicode control pictures, each its own: a newline as ␊, a tab as
// ␉, a carriage return as ␍, NUL as ␀, DEL as ␡.
func printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r < 0x20:
			return 0x2400 + r
		case r == 0x7f:
			return 0x2421
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// ---- records: a verb's results ----

// recordWriter prints the records of a command that lists things
// (history, files, vacuum's dry run) or reports one result: JSON objects
// of the records' json tags, CSV with a header of those tags, or a text
// table of cells the verb chooses.
type recordWriter struct {
	w      *bufio.Writer
	format string
	single bool // json: one object, not an array
	n      int
	keys   []string // csv: the header
	csv    *csv.Writer
	table  *textTable
	cells  func(v any) []string
}

// newRecordWriter starts the output of records like proto, a struct with
// json tags. In the table format each record prints as the cells give
// it, under header.
func newRecordWriter(w io.Writer, format string, proto any, header []string, kinds []cellKind, cells func(v any) []string) *recordWriter {
	r := &recordWriter{w: bufio.NewWriterSize(w, 1<<16), format: format, cells: cells}
	switch format {
	case formatCSV:
		r.keys = jsonKeys(reflect.TypeOf(proto))
		r.csv = csv.NewWriter(r.w)
		r.csv.Write(r.keys)
	case formatTable:
		r.table = newTextTable(r.w, header, kinds, false)
	}
	return r
}

// jsonKeys are the JSON names of a struct type's fields, in order.
func jsonKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			keys = append(keys, f.Name)
		default:
			keys = append(keys, name)
		}
	}
	return keys
}

// marshalRecord is v as JSON, without HTML escaping, on one line.
func marshalRecord(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func (r *recordWriter) write(v any) error {
	switch r.format {
	case formatTable:
		r.table.add(r.cells(v))
		return nil
	case formatCSV:
		b, err := marshalRecord(v)
		if err != nil {
			return err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		fields := make([]string, len(r.keys))
		for i, k := range r.keys {
			if raw, ok := m[k]; ok {
				fields[i], _ = cellText(raw)
			}
		}
		return r.csv.Write(fields)
	}
	b, err := marshalRecord(v)
	if err != nil {
		return err
	}
	if r.format == formatJSON && !r.single {
		if r.n == 0 {
			r.w.WriteString("[\n")
		} else {
			r.w.WriteString(",\n")
		}
		r.w.Write(b)
	} else {
		r.w.Write(b)
		r.w.WriteByte('\n')
	}
	r.n++
	return nil
}

// finish ends the output (the count line of a table if count).
func (r *recordWriter) finish(count bool) error {
	switch r.format {
	case formatTable:
		r.table.finish(count)
	case formatCSV:
		r.csv.Flush()
		if err := r.csv.Error(); err != nil {
			return err
		}
	case formatJSON:
		switch {
		case r.single:
		case r.n == 0:
			r.w.WriteString("[]\n")
		default:
			r.w.WriteString("\n]\n")
		}
	}
	return r.w.Flush()
}

// report prints a verb's one result: human's text for --format table,
// else the record v.
func (c *call) report(v any, human func(w io.Writer)) error {
	if c.format == formatTable {
		human(c.stdout)
		return nil
	}
	r := newRecordWriter(c.stdout, c.format, v, nil, nil, nil)
	r.single = true
	if err := r.write(v); err != nil {
		return err
	}
	return r.finish(false)
}

// opResult is the record of a command that commits (or reports what it
// would commit): the operation as commitInfo names it, the version
// committed (null when none was) and Spark's operationMetrics.
type opResult struct {
	Operation string         `json:"operation"`
	Version   *int64         `json:"version"`
	Metrics   map[string]any `json:"operationMetrics"`
}

// newOpResult is an opResult; res nil means nothing was committed.
func newOpResult(op string, res *deltalog.CommitResult, metrics map[string]any) opResult {
	r := opResult{Operation: op, Metrics: metrics}
	if res != nil {
		v := res.Version
		r.Version = &v
	}
	r.Metrics = numericMetrics(metrics)
	return r
}

// numericMetrics is operation metrics with every count, size and time as
// a JSON number: Delta's log keeps them as strings ("numFiles": "3"),
// some operations report them as numbers; a script gets numbers from
// every command. A value that is not a number stays as it is.
func numericMetrics(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				v = n
			} else if s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && json.Valid([]byte(s)) {
				v = json.Number(s) // a JSON number: 1.5, 2e3
			}
		}
		out[k] = v
	}
	return out
}
