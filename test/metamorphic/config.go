package metamorphic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// tableConfig is what a run's table is created with.
type tableConfig struct {
	feat  features
	cols  []*column
	parts []int // partition columns' uids
	props map[string]string
}

func (c *tableConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mapping=%s dv=%t cdf=%t rowTracking=%t uniform=%t widening=%t v2checkpoint=%t ntz=%t; columns: ",
		c.feat.mapping, c.feat.dv, c.feat.cdf, c.feat.rowTrack, c.feat.uniform, c.feat.widening, c.feat.v2cp, c.feat.ntz)
	b.WriteString(ddl(c.cols))
	if len(c.parts) > 0 {
		var names []string
		for _, p := range c.parts {
			for _, col := range c.cols {
				if col.uid == p {
					names = append(names, col.name)
				}
			}
		}
		fmt.Fprintf(&b, "; partitioned by %s", strings.Join(names, ", "))
	}
	return b.String()
}

// ddl is the columns in Spark's DDL, with identity and generated clauses.
func ddl(cols []*column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		s := quoteCol(c.name) + " " + ddlType(c.typ)
		switch c.kind {
		case keyCol:
			s += " NOT NULL"
		case identityCol:
			mode := "BY DEFAULT"
			if c.always {
				mode = "ALWAYS"
			}
			s += fmt.Sprintf(" GENERATED %s AS IDENTITY (START WITH %d INCREMENT BY %d)", mode, c.start, c.step)
		case generatedCol:
			s += " GENERATED ALWAYS AS (" + c.genSQL + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// ddlType is t as Spark's DDL writes it.
func ddlType(t actions.DataType) string {
	switch t := t.(type) {
	case *actions.StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = quoteCol(f.Name) + ": " + ddlType(f.Type)
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	case *actions.ArrayType:
		return "ARRAY<" + ddlType(t.ElementType) + ">"
	case *actions.MapType:
		return "MAP<" + ddlType(t.KeyType) + ", " + ddlType(t.ValueType) + ">"
	case *actions.DecimalType:
		return t.String()
	}
	switch t {
	case actions.TypeLong:
		return "BIGINT"
	case actions.TypeInteger:
		return "INT"
	case actions.TypeShort:
		return "SMALLINT"
	}
	return strings.ToUpper(t.String())
}

// dataTypes are the types of data columns, with the names a column of
// each gets.
var dataTypes = []struct {
	name string
	typ  func(r *rand.Rand) actions.DataType
}{
	{"amount", func(*rand.Rand) actions.DataType { return actions.TypeLong }},
	{"qty", func(*rand.Rand) actions.DataType { return actions.TypeInteger }},
	{"small", func(*rand.Rand) actions.DataType { return actions.TypeShort }},
	{"name", func(*rand.Rand) actions.DataType { return actions.TypeString }},
	{"score", func(*rand.Rand) actions.DataType { return actions.TypeDouble }},
	{"price", func(r *rand.Rand) actions.DataType {
		p := 5 + r.IntN(10)
		return &actions.DecimalType{Precision: p, Scale: r.IntN(min(p, 5))}
	}},
	{"day", func(*rand.Rand) actions.DataType { return actions.TypeDate }},
	{"at", func(*rand.Rand) actions.DataType { return actions.TypeTimestamp }},
	{"local_at", func(*rand.Rand) actions.DataType { return actions.TypeTimestampNTZ }},
	{"flag", func(*rand.Rand) actions.DataType { return actions.TypeBoolean }},
	{"payload", func(*rand.Rand) actions.DataType { return actions.TypeBinary }},
	{"info", func(*rand.Rand) actions.DataType {
		return &actions.StructType{Fields: []*actions.StructField{
			{Name: "a", Type: actions.TypeInteger, Nullable: true},
			{Name: "b", Type: actions.TypeString, Nullable: true},
		}}
	}},
	{"tags", func(*rand.Rand) actions.DataType {
		return &actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true}
	}},
	{"attrs", func(*rand.Rand) actions.DataType {
		return &actions.MapType{KeyType: actions.TypeString, ValueType: actions.TypeInteger, ValueContainsNull: true}
	}},
}

// drawConfig draws a table configuration and its columns.
func drawConfig(r *rand.Rand, g *generator) *tableConfig {
	c := &tableConfig{props: map[string]string{}}
	f := &c.feat
	f.mapping = []string{"none", "none", "name", "id"}[r.IntN(4)]
	f.uniform = r.IntN(6) == 0
	if f.uniform {
		f.mapping = "name"
	}
	f.dv = !f.uniform && r.IntN(2) == 0
	f.cdf = r.IntN(2) == 0
	// uniformRowTracking: on a UniForm table with row tracking, the files
	// DML and OPTIMIZE write carry materialized row ID columns without a
	// Parquet field id, and iceberg-go refuses them ("missing field_id"):
	// the two are not drawn together (the report lists it).
	f.rowTrack = !f.uniform && r.IntN(3) == 0
	f.rowTrackSupported = f.rowTrack
	f.widening = r.IntN(3) == 0
	f.v2cp = r.IntN(5) == 0
	f.ntz = r.IntN(2) == 0

	c.cols = append(c.cols, &column{uid: g.newUID(), name: "k", typ: actions.TypeLong, kind: keyCol})
	n := 2 + r.IntN(5)
	seen := map[string]int{}
	for range n {
		d := dataTypes[r.IntN(len(dataTypes))]
		t := d.typ(r)
		if t == actions.TypeTimestampNTZ && !f.ntz {
			t = actions.TypeTimestamp
		}
		if f.uniform && !uniformType(t) {
			continue
		}
		name := d.name
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s%d", name, seen[name])
		}
		if f.mapping != "none" && r.IntN(5) == 0 {
			name += " é-x" // column mapping allows any name
		}
		c.cols = append(c.cols, &column{uid: g.newUID(), name: name, typ: t})
	}
	// partition columns, low-cardinality
	for i := range r.IntN(3) {
		pc := []struct {
			name string
			typ  actions.DataType
		}{{"region", actions.TypeString}, {"bucket", actions.TypeInteger}, {"pday", actions.TypeDate}}[(i+r.IntN(3))%3]
		if c.colByName(pc.name) != nil {
			continue
		}
		col := &column{uid: g.newUID(), name: pc.name, typ: pc.typ}
		c.cols = append(c.cols, col)
		c.parts = append(c.parts, col.uid)
	}
	if r.IntN(3) == 0 {
		step := []int64{1, 1, 3, -1, -5}[r.IntN(5)]
		c.cols = append(c.cols, &column{uid: g.newUID(), name: "id", typ: actions.TypeLong, kind: identityCol,
			start: []int64{1, 100, -10, 0}[r.IntN(4)], step: step, always: r.IntN(2) == 0})
		f.identityOK = true
	}
	if r.IntN(3) == 0 {
		// a generated column over a date, timestamp or string column
		var srcs []*column
		for _, col := range c.cols {
			if col.kind == plainCol && !col.part && (col.typ == actions.TypeDate || col.typ == actions.TypeTimestamp || col.typ == actions.TypeString) && !c.isPart(col.uid) {
				srcs = append(srcs, col)
			}
		}
		if len(srcs) > 0 {
			src := srcs[r.IntN(len(srcs))]
			gc := &column{uid: g.newUID(), typ: actions.TypeInteger, kind: generatedCol, src: src.uid}
			switch src.typ {
			case actions.TypeString:
				gc.fn, gc.name = "length", "name_len"
			default:
				gc.fn = []string{"year", "month"}[r.IntN(2)]
				gc.name = src.name + "_" + gc.fn
				gc.srcIsDate = src.typ == actions.TypeDate
			}
			gc.name = strings.NewReplacer(" ", "_", "é", "e").Replace(gc.name)
			gc.genSQL = fmt.Sprintf("%s(%s)", gc.fn, quoteCol(src.name))
			c.cols = append(c.cols, gc)
		}
	}

	c.props[actions.PropColumnMappingMode] = f.mapping
	if f.mapping == "none" {
		delete(c.props, actions.PropColumnMappingMode)
	}
	for _, col := range c.cols {
		col.phys = physName(f.mapping, col)
	}
	set := func(on bool, k string) {
		if on {
			c.props[k] = "true"
		}
	}
	set(f.dv, "delta.enableDeletionVectors")
	set(f.cdf, "delta.enableChangeDataFeed")
	set(f.rowTrack, "delta.enableRowTracking")
	set(f.widening, "delta.enableTypeWidening")
	if f.v2cp {
		c.props["delta.checkpointPolicy"] = "v2"
	}
	if f.ntz {
		c.props["delta.feature.timestampNtz"] = "supported"
	}
	if f.uniform {
		c.props["delta.enableIcebergCompatV2"] = "true"
		c.props["delta.universalFormat.enabledFormats"] = "iceberg"
	}
	if r.IntN(2) == 0 {
		c.props["delta.checkpointInterval"] = fmt.Sprint(2 + r.IntN(6))
	}
	return c
}

// physName is the physical name a column added under mode gets.
func physName(mode string, c *column) string {
	if mode == "none" {
		return c.name
	}
	return fmt.Sprintf("col-%d", c.uid)
}

// uniformType reports whether a UniForm table can have a column of type
// t: lakelog refuses arrays and maps under IcebergCompatV2 (it does not
// write the nested field ids yet).
func uniformType(t actions.DataType) bool {
	switch t.(type) {
	case *actions.MapType, *actions.ArrayType:
		return false
	}
	return true
}

func (c *tableConfig) colByName(name string) *column {
	for _, col := range c.cols {
		if col.name == name {
			return col
		}
	}
	return nil
}

func (c *tableConfig) isPart(uid int) bool {
	for _, p := range c.parts {
		if p == uid {
			return true
		}
	}
	return false
}

// ---- values

var (
	edgeStrings = []string{"", "a", "A", "héllo wörld", "日本語テキスト", "🙂👍🏽", "O'Brien", `back\slash`, "line\nbreak\ttab",
		"NULL", "  padded  ", "%_", strings.Repeat("long-", 300)}
	edgeDates = []string{"1970-01-01", "2024-02-29", "0001-01-01", "9999-12-31", "1582-10-15", "1969-12-31", "2038-01-19"}
	edgeTimes = []string{"1970-01-01 00:00:00", "2024-02-29 23:59:59.999999", "1900-01-01 00:00:00.000001",
		"9999-12-31 23:59:59.999999", "1969-12-31 23:59:59.5", "2038-01-19 03:14:08"}
	edgeDoubles = []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1.5, -2.25, 1e300, -1e-300,
		math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1}
	regions = []string{"eu", "us", "日本", "a b/c=d%", "x'y"}
)

// drawValue draws a value of type t: edge values often, NULL sometimes.
func drawValue(r *rand.Rand, t actions.DataType, nullable bool) any {
	if nullable && r.IntN(8) == 0 {
		return nil
	}
	edge := r.IntN(4) == 0
	switch t := t.(type) {
	case *actions.DecimalType:
		max := int64(math.Pow10(t.Precision)) - 1
		if edge {
			return []int64{0, max, -max, 1, -1}[r.IntN(5)]
		}
		return r.Int64N(2*max+1) - max
	case *actions.StructType:
		out := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			out[i] = drawValue(r, f.Type, true)
		}
		return out
	case *actions.ArrayType:
		out := []any{}
		for range r.IntN(4) {
			out = append(out, drawValue(r, t.ElementType, true))
		}
		return out
	case *actions.MapType:
		out := []kv{}
		seen := map[string]bool{}
		for range r.IntN(4) {
			k := drawValue(r, t.KeyType, false)
			if seen[k.(string)] {
				continue
			}
			seen[k.(string)] = true
			out = append(out, kv{k, drawValue(r, t.ValueType, true)})
		}
		return out
	}
	switch t {
	case actions.TypeLong:
		if edge {
			return []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40}[r.IntN(6)]
		}
		return r.Int64N(2_000_000) - 1_000_000
	case actions.TypeInteger:
		if edge {
			return []int64{0, 1, -1, math.MaxInt32, math.MinInt32}[r.IntN(5)]
		}
		return r.Int64N(20_000) - 10_000
	case actions.TypeShort:
		if edge {
			return []int64{0, 1, -1, math.MaxInt16, math.MinInt16}[r.IntN(5)]
		}
		return r.Int64N(2_000) - 1_000
	case actions.TypeString:
		if edge {
			return edgeStrings[r.IntN(len(edgeStrings))]
		}
		return fmt.Sprintf("s%d", r.IntN(50))
	case actions.TypeDouble:
		if edge {
			return edgeDoubles[r.IntN(len(edgeDoubles))]
		}
		return float64(r.IntN(20000)-10000) / 8
	case actions.TypeDate:
		if edge {
			return mustDate(edgeDates[r.IntN(len(edgeDates))])
		}
		return int64(19000 + r.IntN(1000))
	case actions.TypeTimestamp, actions.TypeTimestampNTZ:
		if edge {
			return mustMicros(edgeTimes[r.IntN(len(edgeTimes))])
		}
		return 1_700_000_000_000_000 + r.Int64N(100_000_000_000)
	case actions.TypeBoolean:
		return r.IntN(2) == 0
	case actions.TypeBinary:
		if edge {
			return [][]byte{{}, {0}, {0xff, 0, 0x7f}, []byte(strings.Repeat("\x01\x02", 200))}[r.IntN(4)]
		}
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	panic("metamorphic: no values of type " + t.String())
}

// drawPartValue draws a partition column's value from a small set.
func drawPartValue(r *rand.Rand, c *column) any {
	if r.IntN(6) == 0 {
		return nil
	}
	switch c.typ {
	case actions.TypeString:
		return regions[r.IntN(len(regions))]
	case actions.TypeDate:
		return []int64{19000, 19001, 0}[r.IntN(3)]
	}
	return int64(r.IntN(4))
}
