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
//     together give double), strings string, true and false boolean, an
//     object a struct of its keys (in order of first appearance, each
//     field's type unified over the rows), an array an array of its
//     elements' type. A column (or field, or element) that holds only
//     nulls is string.
//   - CSV: the file is read once and each new column's values give its
//     type as Spark's CSV inference (inferSchema) does: integer, long,
//     decimal(p,0) for integers past long, double, date (yyyy-MM-dd),
//     timestamp, boolean, else string, folded over the values in order
//     (see inferCSVField). WithInferSchema(false) makes them strings;
//     WithHeader(false) names the columns _c0, _c1, ...
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
		t := finalType(c.typ)
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
// to double, integers and decimals to a decimal that holds both, dates
// and timestamps to timestamp; structs to the union of their fields
// (each field unified), arrays to arrays of the unified element. A
// string and anything else have none.
func unify(a, b actions.DataType) (actions.DataType, bool) {
	switch {
	case a == nil:
		return b, true
	case b == nil:
		return a, true
	}
	switch x := a.(type) {
	case *actions.StructType:
		y, ok := b.(*actions.StructType)
		if !ok {
			return nil, false
		}
		out := &actions.StructType{}
		for _, f := range x.Fields {
			g := *f
			out.Fields = append(out.Fields, &g)
		}
		for _, f := range y.Fields {
			g := out.FieldFold(f.Name)
			if g == nil {
				h := *f
				out.Fields = append(out.Fields, &h)
				continue
			}
			t, ok := unify(g.Type, f.Type)
			if !ok {
				return nil, false
			}
			g.Type = t
		}
		return out, true
	case *actions.ArrayType:
		y, ok := b.(*actions.ArrayType)
		if !ok {
			return nil, false
		}
		t, ok := unify(x.ElementType, y.ElementType)
		if !ok {
			return nil, false
		}
		return &actions.ArrayType{ElementType: t, ContainsNull: true}, true
	}
	if a.String() != b.String() && (a == actions.TypeString || b == actions.TypeString) {
		return nil, false
	}
	return csvCompatible(a, b)
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
		return m.csv(ctx, d)
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

// inferJSON reads a value and returns its inferred type, nil for null
// (and for an empty object or array, whose types other values give). An
// object is a struct of its keys in order of first appearance, an array
// an array of its elements' unified type.
func inferJSON(sc *scanner, name string) (actions.DataType, error) {
	switch c := sc.peek(); c {
	case '{':
		sc.i++
		if sc.peek() == '}' {
			sc.i++
			return nil, nil
		}
		st := &actions.StructType{}
		for {
			if sc.peek() != '"' {
				return nil, sc.unexpected("where an object key should be")
			}
			key, err := sc.str()
			if err != nil {
				return nil, err
			}
			if err := sc.expect(':', "after an object key"); err != nil {
				return nil, err
			}
			path := name + "." + string(key)
			t, err := inferJSON(sc, path)
			if err != nil {
				return nil, err
			}
			if f := st.FieldFold(string(key)); f != nil {
				u, ok := unify(f.Type, t)
				if !ok {
					return nil, &valueError{Path: path, Msg: "appears twice with different types"}
				}
				f.Type = u
			} else {
				st.Fields = append(st.Fields, &actions.StructField{Name: string(key), Type: t, Nullable: true, Metadata: map[string]any{}})
			}
			more, err := sc.next('}', "object")
			if err != nil {
				return nil, err
			}
			if !more {
				return st, nil
			}
		}
	case '[':
		sc.i++
		if sc.peek() == ']' {
			sc.i++
			return &actions.ArrayType{ContainsNull: true}, nil
		}
		var elem actions.DataType
		for {
			t, err := inferJSON(sc, name+"[]")
			if err != nil {
				return nil, err
			}
			u, ok := unify(elem, t)
			if !ok {
				return nil, &valueError{Path: name, Msg: fmt.Sprintf("holds both %s and %s; cannot infer one element type", withArticle(elem.String()), withArticle(t.String()))}
			}
			elem = u
			more, err := sc.next(']', "array")
			if err != nil {
				return nil, err
			}
			if !more {
				return &actions.ArrayType{ElementType: elem, ContainsNull: true}, nil
			}
		}
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

// csv reads a CSV file's columns and, with typeNew, folds the values of
// the columns the table lacks into their types as Spark's CSV inference
// does (inferCSVField), reading the whole file.
func (m *merger) csv(ctx context.Context, d *Decoder) error {
	path := d.name
	cr := csv.NewReader(bufio.NewReaderSize(d.r, 1<<20))
	cr.Comma = d.cfg.comma
	cr.ReuseRecord = true
	header, first, err := readCSVHeader(path, cr, d.cfg.noHeader)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	infer := make([]bool, len(header)) // columns whose values are typed
	cols := make([]*newColumn, len(header))
	for j, h := range header {
		inTable := m.table.FieldFold(h) != nil
		if m.allNames || !inTable {
			cols[j] = m.column(h)
		}
		infer[j] = !inTable && m.typeNew && !d.cfg.stringsOnly
	}
	if !slices.Contains(infer, true) {
		return nil
	}
	cr.FieldsPerRecord = len(header)
	types := make([]actions.DataType, len(header))
	for n := 0; ; n++ {
		rec := first
		if first != nil {
			first = nil
		} else if rec, err = cr.Read(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return csvErr(path, err, len(header))
		}
		for j, f := range rec {
			if infer[j] {
				types[j] = inferCSVField(types[j], f)
			}
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	for j, t := range types {
		if infer[j] && t != nil {
			if err := m.observe(cols[j], t, path, 0, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// finalType is an inferred type with what only nulls gave a type (a
// field or element nil) made string, as Spark makes a column of nulls.
func finalType(t actions.DataType) actions.DataType {
	switch x := t.(type) {
	case nil:
		return actions.TypeString
	case *actions.StructType:
		for _, f := range x.Fields {
			f.Type = finalType(f.Type)
		}
	case *actions.ArrayType:
		x.ElementType = finalType(x.ElementType)
	}
	return t
}
