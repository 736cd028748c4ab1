package input

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// csvHeader reads the header row and matches its names to the table's
// columns (ignoring case). It returns, per CSV field, the column index.
// An unknown or repeated name, or a non-nullable column missing from the
// header, is an *Error on line 1.
func csvHeader(name string, cr *csv.Reader, table *actions.StructType, noHeader bool) (fields []string, first []string, cols []int, err error) {
	header, first, err := readCSVHeader(name, cr, noHeader)
	if err != nil {
		return nil, nil, nil, err
	}
	cols = make([]int, len(header))
	seen := make([]int, len(table.Fields))
	for i := range seen {
		seen[i] = -1
	}
	for j, h := range header {
		i := table.IndexFold(h)
		if i < 0 {
			return nil, nil, nil, &Error{File: name, Line: 1, Column: h, Msg: "is not in the table schema (columns: " + strings.Join(table.Names(), ", ") + ")", Err: ErrUnknownColumn}
		}
		if seen[i] >= 0 {
			return nil, nil, nil, &Error{File: name, Line: 1, Column: table.Fields[i].Name, Msg: fmt.Sprintf("appears twice in the header (fields %d and %d)", seen[i]+1, j+1)}
		}
		seen[i] = j
		cols[j] = i
	}
	for i, f := range table.Fields {
		if seen[i] < 0 && !f.Nullable {
			return nil, nil, nil, &Error{File: name, Line: 1, Column: f.Name, Msg: "is missing from the header, and the column is not nullable"}
		}
	}
	return header, first, cols, nil
}

// readCSVHeader reads the header row: names without surrounding spaces
// (and without a byte order mark). With noHeader the first row is data:
// the names are _c0, _c1, ... (Spark's), and first is that row. io.EOF
// means an empty file.
func readCSVHeader(name string, cr *csv.Reader, noHeader bool) (header, first []string, err error) {
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, io.EOF
	}
	if err != nil {
		return nil, nil, csvErr(name, err, 0)
	}
	if len(rec) > 0 {
		rec[0] = strings.TrimPrefix(rec[0], string(utf8BOM))
	}
	if noHeader {
		first = slices.Clone(rec) // the reader reuses its record
		header = make([]string, len(rec))
		for j := range rec {
			header[j] = "_c" + strconv.Itoa(j)
		}
		return header, first, nil
	}
	header = make([]string, len(rec))
	for j, h := range rec {
		header[j] = strings.TrimSpace(h)
		if header[j] == "" {
			return nil, nil, &Error{File: name, Line: 1, Msg: fmt.Sprintf("header field %d has no name", j+1)}
		}
	}
	return header, nil, nil
}

// csvErr turns an encoding/csv error into an *Error. fields is the
// header's length, for a wrong field count.
func csvErr(name string, err error, fields int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: name, Msg: "read: " + err.Error(), Err: err}
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return &Error{File: name, Line: int64(pe.StartLine), Msg: fmt.Sprintf("wrong number of fields, the header has %d", fields), Err: pe.Err}
	}
	line := pe.Line
	if line == 0 {
		line = pe.StartLine
	}
	return &Error{File: name, Line: int64(line), Msg: fmt.Sprintf("malformed CSV at column %d: %v", pe.Column, pe.Err), Err: pe.Err}
}

// csv decodes a CSV file whose first row names the columns. An empty
// field is null. Values are parsed by the column's type; a nested column
// (struct, array, map) holds its value as JSON text.
func (d *Decoder) csv(ctx context.Context, yield func(arrow.RecordBatch, error) bool) error {
	cr := csv.NewReader(bufio.NewReaderSize(d.r, 1<<20))
	cr.Comma = d.cfg.comma
	cr.ReuseRecord = true
	header, first, cols, err := csvHeader(d.name, cr, d.table, d.cfg.noHeader)
	if errors.Is(err, io.EOF) {
		return nil // an empty file has no rows
	}
	if err != nil {
		return err
	}
	cr.FieldsPerRecord = len(header)
	rb := array.NewRecordBuilder(d.cfg.mem, d.schema)
	defer rb.Release()
	nodes := make([]node, len(d.table.Fields))
	for i, f := range d.table.Fields {
		n, err := compile(f.Type, rb.Field(i), f.Name, f.Nullable)
		if err != nil {
			return err
		}
		nodes[i] = n
	}
	var missing []int
	inHeader := make([]bool, len(nodes))
	for _, i := range cols {
		inHeader[i] = true
	}
	for i, ok := range inHeader {
		if !ok {
			missing = append(missing, i)
		}
	}
	rows, batchBytes, lastOffset := 0, int64(0), cr.InputOffset()
	flush := func() bool {
		rec := rb.NewRecordBatch()
		defer rec.Release()
		rows, batchBytes = 0, 0
		return yield(rec, nil)
	}
	for {
		rec, err := first, error(nil)
		if first != nil {
			first = nil
		} else {
			rec, err = cr.Read()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return csvErr(d.name, err, len(header))
		}
		for j, cell := range rec {
			i := cols[j]
			var err error
			if cell == "" {
				err = nodes[i].null()
			} else {
				err = nodes[i].text(cell)
			}
			if err != nil {
				line, _ := cr.FieldPos(j)
				var ve *valueError
				if cell == "" && errors.As(err, &ve) && ve.Path == d.table.Fields[i].Name {
					ve.Msg = "empty (null) in a non-nullable column"
				}
				return errAt(d.name, int64(line), inCell(err, d.table.Fields[i].Name))
			}
		}
		for _, i := range missing {
			_ = nodes[i].null() // nullable: checked with the header
		}
		rows++
		off := cr.InputOffset()
		batchBytes += off - lastOffset
		lastOffset = off
		if rows >= d.cfg.batchSize || batchBytes >= d.cfg.batchBytes {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !flush() {
				return nil
			}
		}
	}
	if rows > 0 {
		flush()
	}
	return nil
}
