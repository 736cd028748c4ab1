package input

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// MergeSchema returns schema widened by the top-level columns that the
// files have and schema lacks, for an append that may add columns
// (Spark's mergeSchema; pass writer.WithMergeSchema to the write). New
// columns are nullable and come after the existing ones, in order of first
// appearance; names match existing columns ignoring case. When no file
// adds a column the result is schema itself.
//
// A new column's type is inferred as Spark infers it:
//
//   - JSONL: the file is read once to see every value. JSON integers
//     that fit 64 bits are long, other numbers double (long and double
//     together give double), strings string, true and false boolean. A
//     column that holds only nulls is string. An object or array cannot
//     be inferred: add such a column with its type before appending.
//   - CSV: only the header is read; the values are text, so the column is
//     string unless another file gives it a type.
//   - Parquet: the footer's type (actions.FromArrowType).
//
// Types that disagree across rows or files (a boolean and a number, say)
// are an *Error naming both places. Only the file name's extension (or
// WithFormat) selects the format.
func MergeSchema(ctx context.Context, schema *actions.StructType, paths []string, opts ...Option) (*actions.StructType, error) {
	m := &merger{table: schema, byName: map[string]*newColumn{}, typeNew: true}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := m.file(ctx, p, opts); err != nil {
			return nil, err
		}
	}
	if len(m.cols) == 0 {
		return schema, nil
	}
	out := &actions.StructType{Fields: append([]*actions.StructField(nil), schema.Fields...)}
	for _, c := range m.cols {
		t := c.typ
		if t == nil {
			t = actions.TypeString
		}
		out.Fields = append(out.Fields, &actions.StructField{Name: c.name, Type: t, Nullable: true, Metadata: map[string]any{}})
	}
	return out, nil
}

// newColumn is a column the table lacks, as inferred so far.
type newColumn struct {
	name  string
	typ   actions.DataType // nil: no typed value seen yet
	where string           // where typ was first seen ("a.jsonl:3")
}

type merger struct {
	table  *actions.StructType
	cols   []*newColumn
	byName map[string]*newColumn // by lower-case name
	// allNames collects every top-level name, the table's too (Columns,
	// OpenSource); otherwise only those the table lacks (MergeSchema).
	allNames bool
	// typeNew infers the types of the columns the table lacks
	// (MergeSchema, OpenSource); otherwise values are only checked for
	// JSON syntax (Columns).
	typeNew bool
}

func (m *merger) column(name string) *newColumn {
	key := strings.ToLower(name)
	if c, ok := m.byName[key]; ok {
		return c
	}
	c := &newColumn{name: name}
	m.byName[key] = c
	m.cols = append(m.cols, c)
	return c
}

// observe records that a value of type t (nil for null or untyped text)
// was seen at where.
func (m *merger) observe(c *newColumn, t actions.DataType, file string, line int64, where string) error {
	if t == nil {
		return nil
	}
	if c.typ == nil {
		c.typ, c.where = t, where
		return nil
	}
	u, ok := unify(c.typ, t)
	if !ok {
		return &Error{File: file, Line: line, Column: c.name, Msg: fmt.Sprintf("has %s here but %s at %s; cannot infer one type for the new column (add it with its type first)", withArticle(t.String()), withArticle(c.typ.String()), c.where)}
	}
	c.typ = u
	return nil
}

// unify is the type that holds values of a and b, as Spark's schema
// inference widens: integers to the wider integer, integers and floats
// to double.
func unify(a, b actions.DataType) (actions.DataType, bool) {
	if a.String() == b.String() {
		return a, true
	}
	rank := map[actions.DataType]int{actions.TypeByte: 1, actions.TypeShort: 2, actions.TypeInteger: 3, actions.TypeLong: 4, actions.TypeFloat: 5, actions.TypeDouble: 6}
	ra, aok := rank[a]
	rb, bok := rank[b]
	if !aok || !bok {
		return nil, false
	}
	if ra <= 4 && rb <= 4 { // both integers
		if ra > rb {
			return a, true
		}
		return b, true
	}
	return actions.TypeDouble, true
}

func (m *merger) file(ctx context.Context, path string, opts []Option) error {
	d, err := Open(path, m.table, opts...)
	if err != nil {
		return err
	}
	defer d.Close()
	return m.decoder(ctx, d)
}

// decoder reads the columns (and, with typeNew, the types) of the input
// of d, which it reads from its start.
func (m *merger) decoder(ctx context.Context, d *Decoder) error {
	path := d.name
	switch d.Format() {
	case Parquet:
		s, err := d.pq.deltaSchema()
		if err != nil {
			return err
		}
		for _, f := range s.Fields {
			inTable := m.table.FieldFold(f.Name) != nil
			if m.allNames || !inTable {
				c := m.column(f.Name)
				if !inTable {
					if err := m.observe(c, f.Type, path, 0, path); err != nil {
						return err
					}
				}
			}
		}
	case CSV:
		cr := csv.NewReader(d.r)
		cr.Comma = d.cfg.comma
		header, err := readCSVHeader(path, cr)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, h := range header {
			if m.allNames || m.table.FieldFold(h) == nil {
				m.column(h)
			}
		}
	case JSONL:
		return m.jsonl(ctx, d)
	}
	return nil
}

// jsonl reads every line of a JSONL file, typing the values of keys the
// table lacks and checking the grammar of the rest.
func (m *merger) jsonl(ctx context.Context, d *Decoder) error {
	lr := newLineReader(d.r, d.cfg.maxLine)
	var sc scanner
	for {
		b, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var ie *Error
			if errors.As(err, &ie) {
				ie.File = d.name
			}
			return err
		}
		if lr.line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
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
		if err := m.object(&sc, d.name, lr.line); err != nil {
			return errAt(d.name, lr.line, err)
		}
	}
}

func (m *merger) object(sc *scanner, file string, line int64) error {
	sc.i++ // '{'
	if sc.peek() == '}' {
		sc.i++
		return sc.end()
	}
	for {
		if sc.peek() != '"' {
			return sc.unexpected("where an object key should be")
		}
		key, err := sc.str()
		if err != nil {
			return err
		}
		name := string(key)
		if err := sc.expect(':', "after an object key"); err != nil {
			return err
		}
		inTable := m.table.FieldFold(name) != nil
		if m.allNames {
			m.column(name)
		}
		if !m.typeNew || inTable {
			if err := sc.skip(1); err != nil {
				return err
			}
		} else {
			t, err := inferJSON(sc, name)
			if err != nil {
				return err
			}
			if err := m.observe(m.column(name), t, file, line, file+":"+strconv.FormatInt(line, 10)); err != nil {
				return err
			}
		}
		more, err := sc.next('}', "object")
		if err != nil {
			return err
		}
		if !more {
			return sc.end()
		}
	}
}

// inferJSON reads a value and returns its inferred type, nil for null.
func inferJSON(sc *scanner, name string) (actions.DataType, error) {
	switch c := sc.peek(); c {
	case '{', '[':
		return nil, &valueError{Path: name, Msg: fmt.Sprintf("cannot infer a type from %s for the new column; add the column with its type first", kind(c))}
	case '"':
		_, err := sc.str()
		return actions.TypeString, err
	case 't':
		return actions.TypeBoolean, sc.literal("true")
	case 'f':
		return actions.TypeBoolean, sc.literal("false")
	case 'n':
		return nil, sc.literal("null")
	}
	t, integral, err := sc.number()
	if err != nil {
		return nil, err
	}
	if integral {
		if _, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return actions.TypeLong, nil
		}
	}
	return actions.TypeDouble, nil
}
