package writer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/testseed"
)

// footerStatsSchema covers every type the stats treat differently: all
// widths of integers, floats (NaN, -0.0, infinities), strings (long,
// beyond U+FFFD, longer than the footer's limit), dates and timestamps,
// narrow and wide decimals, booleans and binary (null counts only),
// nested structs with nulls at every level, arrays and maps.
const footerStatsSchema = "b byte, sh short, i int, l long, f float, d double, s string, " +
	"day date, ts timestamp, tsn timestamp_ntz, dec decimal(9,2), wide decimal(30,5), " +
	"bo boolean, bin binary, st struct<x: int, y: string, z: struct<w: double, v: string>>, " +
	"arr array<int>, m map<string, long>, dict string"

// TestFooterStatsDifferential writes random data through the writer
// (whose bounds and null counts come from the Parquet footer) and checks
// every file's stats against the row-by-row collector run over the same
// file read back by arrow-go's own Parquet reader: equal up to the sign
// of a zero bound.
func TestFooterStatsDifferential(t *testing.T) {
	seed := testseed.From(t, "FOOTERSTATS_SEED")
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			footerStatsRound(t, rng)
		})
	}
}

func footerStatsRound(t *testing.T, rng *rand.Rand) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store := objstore.NewMem()
	st, err := actions.ParseDDL(footerStatsSchema)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := actions.SchemaString(st)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{"delta.dataSkippingNumIndexedCols": "-1"}
	if rng.IntN(3) == 0 {
		props["delta.dataSkippingNumIndexedCols"] = fmt.Sprint(rng.IntN(20))
	}
	tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: ss, PartitionColumns: []string{}, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := actions.ToArrowSchema(st, true, actions.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	g := &randArrays{rng: rng, mem: mem, nullP: []float64{0, 0.05, 0.5, 1}[rng.IntN(4)], longP: []float64{0, 0.01, 0.2}[rng.IntN(3)]}
	var batches []arrow.RecordBatch
	for range 1 + rng.IntN(6) {
		n := 1 + rng.IntN(3000)
		cols := make([]arrow.Array, sc.NumFields())
		for i, f := range sc.Fields() {
			if f.Name == "dict" && rng.IntN(2) == 0 {
				cols[i] = g.dictionary(n) // a reader's dictionary-encoded chunk
				continue
			}
			cols[i] = g.array(f.Type, n)
		}
		fields := append([]arrow.Field(nil), sc.Fields()...)
		for i := range fields {
			fields[i].Type = cols[i].DataType()
		}
		batches = append(batches, array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	opts := []Option{WithAllocator(mem), WithTargetFileSize(int64(16<<10 + rng.IntN(1<<20)))}
	if rng.IntN(2) == 0 {
		// Small row groups: a file's bounds merge several chunks'.
		opts = append(opts, WithParquetProperties(parquet.WithMaxRowGroupLength(int64(100+rng.IntN(2000)))))
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range batches {
			if !yield(b, nil) {
				return
			}
		}
	}
	wr, err := WriteFiles(ctx, snap, seq, opts...)
	if err != nil {
		t.Fatal(err)
	}
	dataSt := st // no partition columns
	for _, add := range wr.Adds {
		body, err := store.Get(ctx, add.Path)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := pqarrow.ReadTable(ctx, bytes.NewReader(body), nil, pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		leaves, err := statsColumns(snap.Properties(), dataSt)
		if err != nil {
			t.Fatal(err)
		}
		slow := newStatsCollector(leaves) // every leaf observed row by row
		tr := array.NewTableReader(tbl, 1000+int64(rng.IntN(5000)))
		for tr.Next() {
			slow.update(tr.RecordBatch())
		}
		tr.Release()
		tbl.Release()
		want, err := slow.json()
		if err != nil {
			t.Fatal(err)
		}
		if !sameStats(t, add.Stats, want) {
			t.Fatalf("file %s:\nfooter stats %s\nrow stats    %s", add.Path, add.Stats, want)
		}
	}
}

// sameStats compares two stats objects, numbers by value (a zero bound
// may be -0 in one and 0 in the other; both are bounds).
func sameStats(t *testing.T, a, b string) bool {
	t.Helper()
	decode := func(s string) any {
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	return sameJSON(decode(a), decode(b))
}

func sameJSON(x, y any) bool {
	switch x := x.(type) {
	case map[string]any:
		ym, ok := y.(map[string]any)
		if !ok || len(x) != len(ym) {
			return false
		}
		for k, v := range x {
			if w, ok := ym[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case json.Number:
		yn, ok := y.(json.Number)
		if !ok {
			return false
		}
		if x == yn {
			return true
		}
		fx, err1 := x.Float64()
		fy, err2 := yn.Float64()
		return err1 == nil && err2 == nil && fx == fy
	}
	return reflect.DeepEqual(x, y)
}

// randArrays makes random Arrow arrays of the table's types.
type randArrays struct {
	rng          *rand.Rand
	mem          memory.Allocator
	nullP, longP float64
}

func (g *randArrays) null() bool { return g.nullP > 0 && g.rng.Float64() < g.nullP }

func (g *randArrays) str() string {
	alphabet := []string{"a", "b", "z", "é", "\u4e16", "\ufffd", "\uffff", "\U0001F600", " "}
	n := g.rng.IntN(6)
	if g.rng.Float64() < g.longP {
		n = 30 + g.rng.IntN(10)
		if g.rng.IntN(8) == 0 {
			n = 4100 + g.rng.IntN(200) // beyond the footer's limit
		}
	}
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[g.rng.IntN(len(alphabet))])
	}
	return b.String()
}

func (g *randArrays) float() float64 {
	switch k := g.rng.IntN(2000); {
	case k < 2: // rare, as an infinite bound drops both bounds
		return math.Inf(1 - 2*g.rng.IntN(2))
	case k < 30:
		return math.NaN()
	case k < 200:
		return math.Copysign(0, -1)
	case k < 300:
		return 0
	}
	return (g.rng.Float64() - 0.5) * math.Pow(10, float64(g.rng.IntN(12)))
}

func (g *randArrays) dictionary(n int) arrow.Array {
	b := array.NewDictionaryBuilder(g.mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	vals := make([]string, 1+g.rng.IntN(20))
	for i := range vals {
		vals[i] = g.str()
	}
	for range n {
		if g.null() {
			b.AppendNull()
			continue
		}
		_ = b.AppendString(vals[g.rng.IntN(len(vals))])
	}
	return b.NewArray()
}

func (g *randArrays) array(t arrow.DataType, n int) arrow.Array {
	b := array.NewBuilder(g.mem, t)
	defer b.Release()
	for range n {
		g.appendValue(b)
	}
	return b.NewArray()
}

func (g *randArrays) appendValue(b array.Builder) {
	if g.null() {
		b.AppendNull()
		return
	}
	r := g.rng
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(r.IntN(256) - 128))
	case *array.Int16Builder:
		b.Append(int16(r.IntN(65536) - 32768))
	case *array.Int32Builder:
		b.Append(int32(r.Uint32()))
	case *array.Int64Builder:
		b.Append(int64(r.Uint64()) >> r.IntN(64))
	case *array.Float32Builder:
		b.Append(float32(g.float()))
	case *array.Float64Builder:
		b.Append(g.float())
	case *array.StringBuilder:
		b.Append(g.str())
	case *array.BinaryBuilder:
		b.Append([]byte(g.str()))
	case *array.BooleanBuilder:
		b.Append(r.IntN(2) == 0)
	case *array.Date32Builder:
		b.Append(arrow.Date32(r.IntN(200000) - 100000))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(r.Int64N(1<<52) - 1<<51))
	case *array.Decimal128Builder:
		p := b.Type().(*arrow.Decimal128Type).Precision
		lim := math.Pow(10, float64(min(p, 18)))
		v := decimal128.FromI64(int64((r.Float64()*2 - 1) * lim))
		if p > 18 && r.IntN(2) == 0 {
			v = v.Mul(decimal128.FromI64(int64(r.IntN(1_000_000_000))))
		}
		b.Append(v)
	case *array.StructBuilder:
		b.Append(true)
		for i := range b.NumField() {
			g.appendValue(b.FieldBuilder(i))
		}
	case *array.ListBuilder:
		b.Append(true)
		for range r.IntN(4) {
			g.appendValue(b.ValueBuilder())
		}
	case *array.MapBuilder:
		b.Append(true)
		for k := range r.IntN(4) {
			b.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint(k))
			g.appendValue(b.ItemBuilder())
		}
	default:
		panic(fmt.Sprintf("randArrays: builder %T", b))
	}
}
