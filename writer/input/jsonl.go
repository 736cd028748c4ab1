package input

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lineReader yields the lines of a text stream without their line ends,
// each at most max bytes, with their 1-based numbers. A line is valid until
// the next call.
type lineReader struct {
	br   *bufio.Reader
	buf  []byte
	max  int
	line int64
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<20), max: max}
}

// next returns the next line, or io.EOF after the last.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.buf = append(lr.buf[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(lr.buf) > lr.max {
				lr.line++
				return nil, &Error{Line: lr.line, Msg: fmt.Sprintf("line longer than %d bytes", lr.max)}
			}
			b, err = lr.br.ReadSlice('\n')
			lr.buf = append(lr.buf, b...)
		}
		b = lr.buf
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Line: lr.line + 1, Msg: "read: " + err.Error(), Err: err}
	}
	if len(b) == 0 && err != nil {
		return nil, io.EOF
	}
	if len(b) > lr.max {
		return nil, &Error{Line: lr.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", lr.max)}
	}
	lr.line++
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return b, nil
}

// jsonl decodes JSON Lines: each non-blank line one object whose keys are
// column names (matched ignoring case).
func (d *Decoder) jsonl(ctx context.Context, yield func(arrow.RecordBatch, error) bool) error {
	rb := array.NewRecordBuilder(d.cfg.mem, d.schema)
	defer rb.Release()
	root := &structNode{}
	if err := root.init(d.table, rb.Field); err != nil {
		return err
	}
	lr := newLineReader(d.r, d.cfg.maxLine)
	var sc scanner
	rows, batchBytes := 0, int64(0)
	flush := func() bool {
		rec := rb.NewRecordBatch()
		defer rec.Release()
		rows, batchBytes = 0, 0
		return yield(rec, nil)
	}
	for {
		b, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var ie *Error
			if errors.As(err, &ie) {
				ie.File = d.name
			}
			return err
		}
		sc.reset(b)
		if sc.blank() {
			continue
		}
		switch c := sc.peek(); c {
		case '{':
		default:
			if err := sc.skip(0); err != nil {
				return errAt(d.name, lr.line, err)
			}
			return &Error{File: d.name, Line: lr.line, Msg: fmt.Sprintf("want a JSON object, got %s", kind(c))}
		}
		if err := root.members(&sc); err != nil {
			return errAt(d.name, lr.line, err)
		}
		if err := sc.end(); err != nil {
			return errAt(d.name, lr.line, err)
		}
		rows++
		batchBytes += int64(len(b))
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
