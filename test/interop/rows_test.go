package interop

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// allTypesDDL has a column of every primitive type, decimals of several
// precisions (the 4-, 8- and 16-byte ranges and the largest), and nested
// structs, arrays and maps, nested in each other.
const allTypesDDL = `id long not null,
	flag boolean, i8 byte, i16 short, i32 int, i64 long,
	f32 float, f64 double,
	dec_1_1 decimal(1,1), dec_5_2 decimal(5,2), dec_9_0 decimal(9,0), dec_18_6 decimal(18,6), dec_38_10 decimal(38,10),
	s string, bin binary, d date, ts timestamp, ts_ntz timestamp_ntz,
	st struct<a:int, b:string not null, inner:struct<x:double, tags:array<string>>>,
	ints array<int>, pairs array<struct<k:string, v:long>>, nested array<array<long>>,
	m map<string,int>, m_arr map<int,array<string>>, m_st map<string,struct<ok:boolean, when:timestamp>>`

// Partition value pools. Strings hold the characters that paths escape
// (space, '/', '=', '%', '#', '?', ':', '\\', quotes), unicode, and the
// empty string (which reads as null); every pool has a null.
var (
	specialStrings = []any{
		"plain", "a b", "a/b", "a=b", "100%", "50%25", "ü€😀", "#?&+", " lead", "trail ", "colon:semi;",
		`back\slash`, `quote'"`, "{br}[ack]", "tab\tnewline", "null", "", nil,
	}
	partitionInts = []any{int32(0), int32(-1), int32(math.MaxInt32), int32(math.MinInt32), nil}
)

// tableSchema parses DDL into a Delta schema and its Arrow form.
func tableSchema(t testing.TB, ddl string) (*actions.StructType, *arrow.Schema) {
	t.Helper()
	st, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := actions.ToArrowSchema(st, false, "")
	if err != nil {
		t.Fatal(err)
	}
	return st, sc
}

// gen makes random rows full of edge cases: extreme and special values,
// empty and nested containers, and nulls (at rate nullRate) wherever the
// schema allows them.
type gen struct {
	rng      *rand.Rand
	nullRate float64
	// pools fixes the values of top-level columns (partition columns), so
	// that rows share partitions.
	pools map[string][]any
	// nextID numbers the column "id", when the schema has one.
	nextID int64
	// nestedNanos keeps timestamps inside structs, arrays and maps within
	// 1677..2262, the range of Arrow nanosecond timestamps (see
	// TestSparkNestedInt96Timestamps).
	nestedNanos bool
	depth       int // of the value being made: 0 for a column
}

func newGen(seed uint64) *gen {
	return &gen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), nullRate: 0.15, pools: map[string][]any{}}
}

// batch returns n rows of schema sc.
func (g *gen) batch(mem memory.Allocator, sc *arrow.Schema, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for range n {
		for i, f := range sc.Fields() {
			var v any
			switch pool := g.pools[f.Name]; {
			case f.Name == "id":
				v = g.id(f.Type)
			case pool != nil:
				v = pool[g.rng.IntN(len(pool))]
			default:
				v = g.value(f.Type, f.Nullable)
			}
			appendValue(b.Field(i), v)
		}
	}
	return b.NewRecordBatch()
}

func (g *gen) id(t arrow.DataType) any {
	g.nextID++
	switch t.ID() {
	case arrow.INT32:
		return int32(g.nextID)
	default:
		return g.nextID
	}
}

func (g *gen) pick(vs ...any) any { return vs[g.rng.IntN(len(vs))] }

// value returns a random value of Arrow type t, as appendValue takes it;
// nil is null.
func (g *gen) value(t arrow.DataType, nullable bool) any {
	if nullable && g.rng.Float64() < g.nullRate {
		return nil
	}
	edge := g.rng.IntN(3) == 0 // a third of the values are edge cases
	switch t := t.(type) {
	case *arrow.BooleanType:
		return g.rng.IntN(2) == 0
	case *arrow.Int8Type:
		if edge {
			return g.pick(int8(0), int8(-1), int8(math.MinInt8), int8(math.MaxInt8)).(int8)
		}
		return int8(g.rng.IntN(256) - 128)
	case *arrow.Int16Type:
		if edge {
			return g.pick(int16(0), int16(math.MinInt16), int16(math.MaxInt16)).(int16)
		}
		return int16(g.rng.IntN(1<<16) - 1<<15)
	case *arrow.Int32Type:
		if edge {
			return g.pick(int32(0), int32(math.MinInt32), int32(math.MaxInt32)).(int32)
		}
		return g.rng.Int32() - 1<<30
	case *arrow.Int64Type:
		if edge {
			return g.pick(int64(0), int64(math.MinInt64), int64(math.MaxInt64)).(int64)
		}
		return g.rng.Int64() - 1<<62
	case *arrow.Float32Type:
		if edge {
			return g.pick(float32(0), float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
				float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32), float32(-1.5)).(float32)
		}
		return (g.rng.Float32() - 0.5) * 1e6
	case *arrow.Float64Type:
		if edge {
			return g.pick(0.0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
				math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21, 0.1).(float64)
		}
		return (g.rng.Float64() - 0.5) * math.Pow(10, float64(g.rng.IntN(30)-15))
	case *arrow.Decimal128Type:
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil)
		var u *big.Int
		if edge {
			u = g.pick(new(big.Int).Sub(limit, big.NewInt(1)), new(big.Int).Sub(big.NewInt(1), limit), big.NewInt(0), big.NewInt(-1)).(*big.Int)
		} else {
			digits := make([]byte, 1+g.rng.IntN(int(t.Precision)))
			for i := range digits {
				digits[i] = byte('0' + g.rng.IntN(10))
			}
			u, _ = new(big.Int).SetString(string(digits), 10)
			if g.rng.IntN(2) == 0 {
				u.Neg(u)
			}
		}
		return decimal128.FromBigInt(u)
	case *arrow.StringType:
		return g.text(edge)
	case *arrow.BinaryType:
		if edge {
			return g.pick([]byte{}, []byte{0}, []byte{0xff, 0xfe, 0x00, 0x80}, []byte("\x00text\x00")).([]byte)
		}
		b := make([]byte, g.rng.IntN(24))
		for i := range b {
			b[i] = byte(g.rng.IntN(256))
		}
		return b
	case *arrow.Date32Type:
		if edge {
			return g.pick(day("1970-01-01"), day("1969-12-31"), day("2000-02-29"), day("1900-01-01"),
				day("1600-06-15"), day("9999-12-31"), day("0001-01-01")).(arrow.Date32)
		}
		return arrow.Date32(g.rng.IntN(80_000) - 20_000)
	case *arrow.TimestampType:
		if g.nestedNanos && g.depth > 0 {
			if edge {
				return g.pick(micros("1970-01-01T00:00:00Z"), micros("1969-12-31T23:59:59.999999Z"), micros("2024-02-29T12:34:56.789012Z"),
					micros("1678-01-01T00:00:00Z"), micros("2261-12-31T23:59:59.999999Z")).(arrow.Timestamp)
			}
			return arrow.Timestamp(g.rng.Int64N(4_000_000_000_000_000) - 1_000_000_000_000_000)
		}
		if edge {
			return g.pick(micros("1970-01-01T00:00:00Z"), micros("1969-12-31T23:59:59.999999Z"), micros("2024-02-29T12:34:56.789012Z"),
				micros("1900-01-01T00:00:00Z"), micros("1600-06-15T01:02:03.000004Z"), micros("9999-12-31T23:59:59.999999Z"),
				micros("0001-01-01T00:00:00Z")).(arrow.Timestamp)
		}
		return arrow.Timestamp(g.rng.Int64N(4_000_000_000_000_000) - 1_000_000_000_000_000)
	case *arrow.ListType:
		g.depth++
		defer func() { g.depth-- }()
		n := g.rng.IntN(4)
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(t.Elem(), t.ElemField().Nullable)
		}
		return out
	case *arrow.MapType:
		g.depth++
		defer func() { g.depth-- }()
		n := g.rng.IntN(4)
		var out [][2]any
		seen := map[string]bool{}
		for range n {
			k := g.value(t.KeyType(), false)
			ks := fmt.Sprint(k)
			if seen[ks] {
				continue
			}
			seen[ks] = true
			out = append(out, [2]any{k, g.value(t.ItemType(), t.ItemField().Nullable)})
		}
		return out
	case *arrow.StructType:
		g.depth++
		defer func() { g.depth-- }()
		out := make([]any, t.NumFields())
		for i, f := range t.Fields() {
			out[i] = g.value(f.Type, f.Nullable)
		}
		return out
	}
	panic(fmt.Sprintf("interop: no generator for %s", t))
}

// texts are strings that are hard to carry: unicode of every width,
// escapes, HTML characters, control characters.
var texts = []string{
	"", " ", "a", "héllo wörld", "日本語テキスト", "😀 emoji 🎉", "Ελληνικά", "עברית", "quote\" back\\slash",
	"tab\tnew\nline\r", "<html>&amp;</html>", "\u0001\u001f", "\u2028\u2029", "null", "NaN", strings.Repeat("long-", 60),
}

func (g *gen) text(edge bool) string {
	if edge {
		return texts[g.rng.IntN(len(texts))]
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.ñü中"
	r := []rune(alphabet)
	out := make([]rune, g.rng.IntN(20))
	for i := range out {
		out[i] = r[g.rng.IntN(len(r))]
	}
	return string(out)
}

func day(s string) arrow.Date32 {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return arrow.Date32(t.Unix() / 86400)
}

func micros(s string) arrow.Timestamp {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return arrow.Timestamp(t.UnixMicro())
}

// appendValue appends a value made by gen.value (nil for null).
func appendValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNulls(1) // a null struct gets nulls in its children too
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(v.(int8))
	case *array.Int16Builder:
		b.Append(v.(int16))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.Date32Builder:
		b.Append(v.(arrow.Date32))
	case *array.TimestampBuilder:
		b.Append(v.(arrow.Timestamp))
	case *array.MapBuilder:
		b.Append(true)
		for _, kv := range v.([][2]any) {
			appendValue(b.KeyBuilder(), kv[0])
			appendValue(b.ItemBuilder(), kv[1])
		}
	case *array.ListBuilder:
		b.Append(true)
		for _, e := range v.([]any) {
			appendValue(b.ValueBuilder(), e)
		}
	case *array.StructBuilder:
		b.Append(true)
		for i, e := range v.([]any) {
			appendValue(b.FieldBuilder(i), e)
		}
	default:
		panic(fmt.Sprintf("interop: no appender for %T", b))
	}
}

// seq yields recs, as the writer takes its input.
func seq(recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// canonical returns the rows of recs as sorted canonical lines.
func canonical(t testing.TB, recs ...arrow.RecordBatch) []string {
	t.Helper()
	var lines []string
	for _, rec := range recs {
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines
}

// lakelogLines reads a snapshot with lakelog and returns its sorted
// canonical lines.
func lakelogLines(t testing.TB, snap *deltalog.Snapshot, opts ...reader.Option) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatalf("lakelog scan of version %d: %v", snap.Version(), err)
	}
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatalf("lakelog read of version %d: %v", snap.Version(), err)
		}
		lines = append(lines, canonical(t, rec)...)
	}
	slices.Sort(lines)
	return lines
}

// openLines opens the table at root in store (at a version, when given)
// and returns lakelog's sorted canonical lines.
func openLines(t testing.TB, store objstore.Store, root string, opts ...deltalog.Option) []string {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, root, opts...)
	if err != nil {
		t.Fatalf("lakelog open: %v", err)
	}
	return lakelogLines(t, snap)
}

// filtered returns lakelog's lines of snap for a predicate in lakelog's
// expression syntax.
func filtered(t testing.TB, snap *deltalog.Snapshot, pred string) []string {
	t.Helper()
	e, err := expr.Parse(pred)
	if err != nil {
		t.Fatal(err)
	}
	return lakelogLines(t, snap, reader.WithFilter(e))
}

// parquetLines reads a Parquet file a peer wrote and returns its sorted
// canonical lines. The file carries its Arrow schema, so types come back
// as the peer had them.
func parquetLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 4096)
	defer tr.Release()
	var lines []string
	for tr.Next() {
		lines = append(lines, canonical(t, tr.RecordBatch())...)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// writeParquet writes recs to a Parquet file (with their Arrow schema, so
// that pyarrow reads back the same types) for a peer to load.
func writeParquet(t testing.TB, path string, recs ...arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(recs[0].Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// peerRead asks p to read a table and returns the rows as sorted canonical
// lines, with the response.
func peerRead(t testing.TB, p *peer, req request) ([]string, *response) {
	t.Helper()
	req.Op = "read"
	req.Out = filepath.Join(t.TempDir(), "rows.parquet")
	resp := p.call(t, req)
	lines := parquetLines(t, req.Out)
	if int64(len(lines)) != resp.Rows {
		t.Fatalf("%s read %d rows, but the file holds %d", p.engine, resp.Rows, len(lines))
	}
	return lines, resp
}

// sameRows fails the test when got and want (sorted canonical lines)
// differ, showing the first differing lines of each side.
func sameRows(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	onlyGot, onlyWant := diffSorted(got, want)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows, want %d; %d lines only in got, %d only in want", what, len(got), len(want), len(onlyGot), len(onlyWant))
	for i, l := range onlyGot {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ... %d more", len(onlyGot)-5)
			break
		}
		fmt.Fprintf(&b, "\n  got:  %s", l)
	}
	for i, l := range onlyWant {
		if i == 5 {
			fmt.Fprintf(&b, "\n  ... %d more", len(onlyWant)-5)
			break
		}
		fmt.Fprintf(&b, "\n  want: %s", l)
	}
	t.Error(b.String())
}

// diffSorted returns the lines (with multiplicity) only in a and only in b.
func diffSorted(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch strings.Compare(a[i], b[j]) {
		case 0:
			i++
			j++
		case -1:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	return append(onlyA, a[i:]...), append(onlyB, b[j:]...)
}

// newLocal returns a store over a fresh folder and the folder.
func newLocal(t testing.TB) (objstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// createTable creates a table with lakelog at root of store with the
// schema, partition columns and properties, holding recs as version 0.
func createTable(t testing.TB, store objstore.Store, root string, schema *actions.StructType, parts []string, props map[string]string, recs ...arrow.RecordBatch) {
	t.Helper()
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	md := &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props}
	if _, err := writer.CreateTable(context.Background(), store, root, md, seq(recs...), writer.WithCommitOptions(deltalog.WithPostCommit("off"))); err != nil {
		t.Fatalf("lakelog create table: %v", err)
	}
}

// open opens the latest snapshot with lakelog.
func open(t testing.TB, store objstore.Store, root string, opts ...deltalog.Option) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, root, opts...)
	if err != nil {
		t.Fatalf("lakelog open: %v", err)
	}
	return snap
}

// noHooks keeps lakelog's commits from checkpointing on their own, so
// that the tests decide where checkpoints are.
var noHooks = deltalog.WithPostCommit(deltalog.PostCommitOff)

func ptr[T any](v T) *T { return &v }

// decimalOf is the decimal written s ("-0.01"), as an unscaled value for a
// column whose scale is the number of digits after s's point.
func decimalOf(s string) decimal128.Num {
	u, ok := new(big.Int).SetString(strings.Replace(s, ".", "", 1), 10)
	if !ok {
		panic("interop: bad decimal " + s)
	}
	return decimal128.FromBigInt(u)
}
