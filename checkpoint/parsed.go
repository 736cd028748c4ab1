package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/actions"
)

// This file writes add.stats_parsed and add.partitionValues_parsed, the
// typed forms of add.stats and add.partitionValues that the table property
// delta.checkpoint.writeStatsAsStruct asks for (PROTOCOL.md "Checkpoints").
// Columns are named by their physical names, as the stats JSON and the
// partition values are keyed under column mapping.

// WithStatsAsStruct adds add.stats_parsed and, for a partitioned table,
// add.partitionValues_parsed, built from the schema, partition columns and
// properties of md (the table's metaData at the checkpoint's version):
//
//   - minValues and maxValues hold the data columns whose types have
//     bounds (numbers, string, date, timestamp, timestamp_ntz, decimal),
//     nullCount every data column (as long; nested structs nest), and
//     tightBounds is there when deletion vectors are enabled;
//   - like Spark, only the first delta.dataSkippingNumIndexedCols leaf
//     columns (default 32, -1 for all) have stats, or the columns named
//     by delta.dataSkippingStatsColumns when it is set.
//
// A stats value that does not parse as its column's type is written as
// null: the JSON stats stay the reference.
func WithStatsAsStruct(table *actions.TableConfig) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.parsed = &parsedSpec{table: table} })
}

type parsedSpec struct {
	table *actions.TableConfig
}

// statsLeaf is one column of stats_parsed: the path of physical names into
// the stats JSON and the column's Delta type.
type statsField struct {
	name     string // physical name
	typ      actions.DataType
	children []*statsField // for structs
}

type parsedEncoder struct {
	pvFields   []*statsField // partition columns
	minMax     []*statsField // columns with bounds
	nullCounts []*statsField // every data column
	tight      bool

	pvField, statsField *arrow.Field

	// bound builders
	pv                           structB
	stats, mins, maxs, nullCount structB
}

func newParsedEncoder(spec *parsedSpec) (*parsedEncoder, error) {
	table := spec.table
	if table == nil {
		return nil, errors.New("stats as struct: no metaData")
	}
	md, schema, props := table.Metadata(), table.Schema(), table.Properties()
	mode := table.ColumnMappingMode()
	p := &parsedEncoder{}
	parts := map[string]bool{}
	for _, name := range md.PartitionColumns {
		f := schema.Field(name)
		if f == nil {
			f = schema.FieldFold(name)
		}
		if f == nil {
			return nil, fmt.Errorf("stats as struct: partition column %q is not in the schema", name)
		}
		parts[f.Name] = true
		p.pvFields = append(p.pvFields, &statsField{name: f.PhysicalName(mode), typ: f.Type})
	}

	numIndexed := props.DataSkippingNumIndexedCols
	var named map[string]bool
	if props.DataSkippingStatsColumns != nil {
		named = map[string]bool{}
		for _, path := range props.DataSkippingStatsColumns {
			named[statsPathKey(path)] = true
		}
	}
	budget := int(numIndexed)
	if numIndexed < 0 || named != nil {
		budget = -1
	}
	var data []*actions.StructField
	for _, f := range schema.Fields {
		if !parts[f.Name] {
			data = append(data, f)
		}
	}
	p.nullCounts = statsFields(data, mode, "", named, &budget, false)
	budget = int(numIndexed)
	if numIndexed < 0 || named != nil {
		budget = -1
	}
	p.minMax = statsFields(data, mode, "", named, &budget, true)
	p.tight = table.Needs(actions.FeatureDeletionVectors)

	if len(p.pvFields) > 0 {
		var fs []arrow.Field
		for _, f := range p.pvFields {
			t, err := actions.ArrowType(f.typ)
			if err != nil {
				return nil, fmt.Errorf("stats as struct: partition column %s: %w", f.name, err)
			}
			fs = append(fs, arrow.Field{Name: f.name, Type: t, Nullable: true})
		}
		fld := structOf("partitionValues_parsed", fs...)
		p.pvField = &fld
	}
	st := []arrow.Field{i64("numRecords")}
	if len(p.minMax) > 0 {
		mm, err := statsArrow(p.minMax, false)
		if err != nil {
			return nil, err
		}
		st = append(st, structOf("minValues", mm...), structOf("maxValues", mm...))
	}
	if len(p.nullCounts) > 0 {
		nc, err := statsArrow(p.nullCounts, true)
		if err != nil {
			return nil, err
		}
		st = append(st, structOf("nullCount", nc...))
	}
	if p.tight {
		st = append(st, boolean("tightBounds"))
	}
	fld := structOf("stats_parsed", st...)
	p.statsField = &fld
	return p, nil
}

// hasBounds reports whether Spark keeps min and max values for t.
func hasBounds(t actions.DataType) bool {
	switch t := t.(type) {
	case *actions.DecimalType:
		return true
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong,
			actions.TypeFloat, actions.TypeDouble, actions.TypeDate, actions.TypeTimestamp,
			actions.TypeTimestampNTZ, actions.TypeString:
			return true
		}
	}
	return false
}

// statsPathKey is the key of a column path in statsFields' named set:
// its names, lower-cased, joined by NUL (names may hold dots).
func statsPathKey(path []string) string {
	return strings.ToLower(strings.Join(path, "\x00"))
}

// statsFields selects the stats columns of fields in schema order. budget
// counts the leaf columns still allowed (-1: no limit); named, when set,
// lists the logical paths that have stats (statsPathKey; a struct's path
// covers its fields). bounds selects only columns with min and max values.
func statsFields(fields []*actions.StructField, mode, prefix string, named map[string]bool, budget *int, bounds bool) []*statsField {
	var out []*statsField
	for _, f := range fields {
		path := prefix + strings.ToLower(f.Name)
		if st, ok := f.Type.(*actions.StructType); ok {
			sub := named
			if named != nil && named[path] {
				sub = nil // the whole struct is named
			}
			children := statsFields(st.Fields, mode, path+"\x00", sub, budget, bounds)
			if len(children) > 0 {
				out = append(out, &statsField{name: f.PhysicalName(mode), typ: f.Type, children: children})
			}
			continue
		}
		if named != nil && !named[path] {
			continue
		}
		if *budget == 0 {
			continue
		}
		if *budget > 0 {
			*budget--
		}
		if bounds && !hasBounds(f.Type) {
			continue
		}
		out = append(out, &statsField{name: f.PhysicalName(mode), typ: f.Type})
	}
	return out
}

// statsArrow returns the Arrow fields of stats columns; nullCount columns
// are long whatever the column's type.
func statsArrow(fs []*statsField, nullCount bool) ([]arrow.Field, error) {
	out := make([]arrow.Field, 0, len(fs))
	for _, f := range fs {
		if f.children != nil {
			sub, err := statsArrow(f.children, nullCount)
			if err != nil {
				return nil, err
			}
			out = append(out, structOf(f.name, sub...))
			continue
		}
		if nullCount {
			out = append(out, i64(f.name))
			continue
		}
		t, err := actions.ArrowType(f.typ)
		if err != nil {
			return nil, fmt.Errorf("stats as struct: column %s: %w", f.name, err)
		}
		out = append(out, arrow.Field{Name: f.name, Type: t, Nullable: true})
	}
	return out, nil
}

func (p *parsedEncoder) fields() (*arrow.Field, *arrow.Field) { return p.pvField, p.statsField }

func (p *parsedEncoder) bind(add structB) {
	if p.pvField != nil {
		p.pv = add.child("partitionValues_parsed")
	}
	p.stats = add.child("stats_parsed")
	if len(p.minMax) > 0 {
		p.mins, p.maxs = p.stats.child("minValues"), p.stats.child("maxValues")
	}
	if len(p.nullCounts) > 0 {
		p.nullCount = p.stats.child("nullCount")
	}
}

// appendAdd appends the typed partition values and stats of a.
func (p *parsedEncoder) appendAdd(a *actions.Add) error {
	if p.pvField != nil {
		p.pv.b.Append(true)
		for _, f := range p.pvFields {
			b := p.pv.fields[f.name]
			v, err := actions.ParsePartitionValue(f.typ, a.PartitionValues[f.name])
			if err != nil {
				return err
			}
			appendValue(b, v)
		}
	}
	if a.Stats == "" {
		p.stats.b.AppendNull()
		return nil
	}
	var st map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(a.Stats)))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		// Stats are optional: unreadable ones are left out here too.
		p.stats.b.AppendNull()
		return nil
	}
	p.stats.b.Append(true)
	appendInt(p.stats.i64("numRecords"), st["numRecords"])
	if len(p.minMax) > 0 {
		appendStats(p.mins, p.minMax, st["minValues"], false)
		appendStats(p.maxs, p.minMax, st["maxValues"], false)
	}
	if len(p.nullCounts) > 0 {
		appendStats(p.nullCount, p.nullCounts, st["nullCount"], true)
	}
	if p.tight {
		if b, ok := st["tightBounds"].(bool); ok {
			p.stats.boolean("tightBounds").Append(b)
		} else {
			p.stats.boolean("tightBounds").AppendNull()
		}
	}
	return nil
}

// appendStats appends one stats object (minValues, maxValues or
// nullCount) to a struct builder laid out as fs.
func appendStats(s structB, fs []*statsField, v any, nullCount bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		s.b.AppendNull()
		return
	}
	s.b.Append(true)
	for _, f := range fs {
		b := s.fields[f.name]
		if f.children != nil {
			appendStats(newStructB(b), f.children, obj[f.name], nullCount)
			continue
		}
		if nullCount {
			appendInt(b.(*array.Int64Builder), obj[f.name])
			continue
		}
		tv, err := actions.ParseStatValue(f.typ, obj[f.name])
		if err != nil {
			tv = nil
		}
		appendValue(b, tv)
	}
}

func appendInt(b *array.Int64Builder, v any) {
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			b.Append(i)
			return
		}
	}
	b.AppendNull()
}

// appendValue appends a typed value (see actions' value types) to the
// builder of its column, or null when v is nil or does not fit.
func appendValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	ok := true
	switch b := b.(type) {
	case *array.Int8Builder:
		x, k := v.(int8)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Int16Builder:
		x, k := v.(int16)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Int32Builder:
		x, k := v.(int32)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Int64Builder:
		x, k := v.(int64)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Float32Builder:
		x, k := v.(float32)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Float64Builder:
		x, k := v.(float64)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.BooleanBuilder:
		x, k := v.(bool)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.StringBuilder:
		x, k := v.(string)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.BinaryBuilder:
		x, k := v.([]byte)
		ok = k && appendOK(func() { b.Append(x) })
	case *array.Date32Builder:
		x, k := v.(actions.Date)
		ok = k && appendOK(func() { b.Append(arrow.Date32(x)) })
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case actions.Timestamp:
			b.Append(arrow.Timestamp(x))
		case actions.TimestampNTZ:
			b.Append(arrow.Timestamp(x))
		default:
			ok = false
		}
	case *array.Decimal128Builder:
		x, k := v.(actions.Decimal)
		dt := b.Type().(*arrow.Decimal128Type)
		ok = k && x.Unscaled != nil && x.Scale == int(dt.Scale) && x.Unscaled.BitLen() < 127
		if ok {
			b.Append(decimal128.FromBigInt(x.Unscaled))
		}
	default:
		ok = false
	}
	if !ok {
		b.AppendNull()
	}
}

func appendOK(f func()) bool { f(); return true }

// appendFile appends the typed partition values and stats of row i of
// c, from its columns.
func (p *parsedEncoder) appendFile(c *FileColumns, i int) error {
	if p.pvField != nil {
		pv := c.PartitionValues(i)
		p.pv.b.Append(true)
		for _, f := range p.pvFields {
			v, err := actions.ParsePartitionValue(f.typ, pv[f.name])
			if err != nil {
				return err
			}
			appendValue(p.pv.fields[f.name], v)
		}
	}
	st := c.Stats()
	if st == nil || !st.present.Value(i) {
		p.stats.b.AppendNull()
		return nil
	}
	p.stats.b.Append(true)
	nr := p.stats.i64("numRecords")
	if st.numRecords != nil && st.numRecords.IsValid(i) {
		nr.Append(st.numRecords.Value(i))
	} else {
		nr.AppendNull()
	}
	if len(p.minMax) > 0 {
		appendStatsColumns(p.mins, p.minMax, nil, c.layout, st.mins, i)
		appendStatsColumns(p.maxs, p.minMax, nil, c.layout, st.maxs, i)
	}
	if len(p.nullCounts) > 0 {
		counts := make([]arrow.Array, len(st.nulls))
		for j, a := range st.nulls {
			if a != nil {
				counts[j] = a
			}
		}
		appendStatsColumns(p.nullCount, p.nullCounts, nil, c.layout, counts, i)
	}
	if p.tight {
		b := p.stats.boolean("tightBounds")
		if st.tightBounds != nil && st.tightBounds.IsValid(i) {
			b.Append(st.tightBounds.Value(i))
		} else {
			b.AppendNull()
		}
	}
	return nil
}

// appendStatsColumns appends row i of the stats columns cols (by layout
// l's stats columns) to a struct builder laid out as fs under prefix.
func appendStatsColumns(s structB, fs []*statsField, prefix []string, l *FileLayout, cols []arrow.Array, i int) {
	s.b.Append(true)
	for _, f := range fs {
		b := s.fields[f.name]
		path := append(slices.Clip(prefix), f.name)
		if f.children != nil {
			appendStatsColumns(newStructB(b), f.children, path, l, cols, i)
			continue
		}
		var v any
		if j := l.StatsColumnIndex(path); j >= 0 && cols[j] != nil {
			v, _ = actions.ArrowValue(cols[j], i)
		}
		appendValue(b, v)
	}
}
