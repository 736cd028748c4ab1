package writer_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// TestSchemaEnforcement checks that input that does not fit the table is
// refused with an error naming the column (and the row, for nulls), and
// that nothing is committed.
func TestSchemaEnforcement(t *testing.T) {
	const ddl = `{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":false},
		{"name":"name","type":"string","nullable":true},
		{"name":"amount","type":"decimal(10,2)","nullable":true},
		{"name":"ts","type":"timestamp","nullable":true},
		{"name":"s","type":{"type":"struct","fields":[
			{"name":"a","type":"integer","nullable":false},
			{"name":"b","type":"string","nullable":true}]},"nullable":true},
		{"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true},
		{"name":"m","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":false},"nullable":true}]}`
	field := func(name string, dt arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: nullable}
	}
	i64 := arrow.PrimitiveTypes.Int64
	str := arrow.BinaryTypes.String
	for _, tc := range []struct {
		name   string
		fields []arrow.Field
		rows   []string // one JSON array per batch
		column string
		row    int64
		reason string
	}{
		{
			name:   "unknown column",
			fields: []arrow.Field{field("id", i64, false), field("extra", str, true)},
			rows:   []string{`[{"id": 1, "extra": "x"}]`},
			column: "extra", reason: "not in the table schema",
		},
		{
			name:   "missing non-nullable column",
			fields: []arrow.Field{field("name", str, true)},
			rows:   []string{`[{"name": "x"}]`},
			column: "id", reason: "missing from the input and is not nullable",
		},
		{
			name:   "wrong type",
			fields: []arrow.Field{field("id", str, true)},
			rows:   []string{`[{"id": "1"}]`},
			column: "id", reason: "cannot be written",
		},
		{
			name:   "narrowing integer",
			fields: []arrow.Field{field("id", i64, false), field("amount", arrow.PrimitiveTypes.Int64, true)},
			rows:   []string{`[{"id": 1, "amount": 5}]`},
			column: "amount", reason: "cannot be written",
		},
		{
			name:   "decimal that does not fit",
			fields: []arrow.Field{field("id", i64, false), field("amount", &arrow.Decimal128Type{Precision: 12, Scale: 2}, true)},
			rows:   []string{`[{"id": 1, "amount": "1.00"}]`},
			column: "amount", reason: "cannot be written",
		},
		{
			name:   "timestamp without zone",
			fields: []arrow.Field{field("id", i64, false), field("ts", &arrow.TimestampType{Unit: arrow.Microsecond}, true)},
			rows:   []string{`[{"id": 1, "ts": "2024-01-01T00:00:00"}]`},
			column: "ts", reason: "timestamp_ntz",
		},
		{
			name:   "null in non-nullable column, second batch",
			fields: []arrow.Field{field("id", i64, true)},
			rows:   []string{`[{"id": 1}, {"id": 2}]`, `[{"id": 3}, {"id": null}]`},
			column: "id", row: 4, reason: "null in a non-nullable column",
		},
		{
			name: "null in non-nullable struct field",
			fields: []arrow.Field{field("id", i64, false), field("s", arrow.StructOf(
				field("a", arrow.PrimitiveTypes.Int32, true), field("b", str, true)), true)},
			rows:   []string{`[{"id": 1, "s": null}, {"id": 2, "s": {"a": 1, "b": null}}, {"id": 3, "s": {"a": null, "b": "x"}}]`},
			column: "s.a", row: 3, reason: "null in a non-nullable column",
		},
		{
			name:   "missing non-nullable struct field",
			fields: []arrow.Field{field("id", i64, false), field("s", arrow.StructOf(field("b", str, true)), true)},
			rows:   []string{`[{"id": 1, "s": {"b": "x"}}]`},
			column: "s.a", reason: "missing from the input and is not nullable",
		},
		{
			name:   "unknown struct field",
			fields: []arrow.Field{field("id", i64, false), field("s", arrow.StructOf(field("a", arrow.PrimitiveTypes.Int32, false), field("zz", str, true)), true)},
			rows:   []string{`[{"id": 1, "s": {"a": 1, "zz": "x"}}]`},
			column: "s.zz", reason: "not in the table schema",
		},
		{
			name:   "null array element",
			fields: []arrow.Field{field("id", i64, false), field("tags", arrow.ListOf(str), true)},
			rows:   []string{`[{"id": 1, "tags": ["a"]}, {"id": 2, "tags": null}, {"id": 3, "tags": ["b", null]}]`},
			column: "tags.element", row: 3, reason: "null in a non-nullable column",
		},
		{
			name:   "null map value",
			fields: []arrow.Field{field("id", i64, false), field("m", arrow.MapOf(str, arrow.PrimitiveTypes.Int32), true)},
			rows:   []string{`[{"id": 1, "m": [{"key": "k", "value": 1}]}, {"id": 2, "m": [{"key": "k", "value": null}]}]`},
			column: "m.value", row: 2, reason: "null in a non-nullable column",
		},
		{
			name:   "same column twice",
			fields: []arrow.Field{field("id", i64, false), field("ID", i64, false)},
			rows:   []string{`[{"id": 1, "ID": 2}]`},
			column: "id", reason: "appears twice",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := tabletest.CheckedMem(t)
			store := objstore.NewMem()
			snap := tabletest.Create(t, store, ddl, nil)
			sc := arrow.NewSchema(tc.fields, nil)
			var recs []arrow.RecordBatch
			for _, r := range tc.rows {
				recs = append(recs, tabletest.RecordJSON(t, mem, sc, r))
			}
			_, err := writer.Append(ctx, snap, tabletest.Batches(t, recs...), writer.WithAllocator(mem))
			if err == nil {
				t.Fatal("append succeeded, want a schema error")
			}
			var se *writer.SchemaError
			if !errors.As(err, &se) || !errors.Is(err, writer.ErrSchemaMismatch) {
				t.Fatalf("error %v (%T), want a *SchemaError wrapping ErrSchemaMismatch", err, err)
			}
			if se.Column != tc.column || se.Row != tc.row || !strings.Contains(se.Reason, tc.reason) {
				t.Errorf("error %q: column %q row %d, want column %q row %d reason containing %q", err, se.Column, se.Row, tc.column, tc.row, tc.reason)
			}
			if !strings.Contains(err.Error(), `"`+tc.column+`"`) {
				t.Errorf("message %q does not name the column", err)
			}
			if v := tabletest.Open(t, store).Version(); v != 0 {
				t.Errorf("table at version %d after a failed append, want 0", v)
			}
			// Files still open when the write failed are discarded, not
			// left half-written.
			for info, err := range store.List(ctx, "tbl/", "") {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(info.Key, "tbl/_delta_log/") {
					t.Errorf("data object %s left after a failed append", info.Key)
				}
			}
		})
	}
}

// TestInputConversion checks the safe conversions: narrower integers and
// decimals, other string encodings, other timestamp units, missing
// nullable columns, and names that differ in case.
func TestInputConversion(t *testing.T) {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, f double, d decimal(10,2), s string, l string, ts timestamp, ntz timestamp_ntz, extra int", nil)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ID", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 5, Scale: 1}, Nullable: true},
		{Name: "s", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "l", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}, Nullable: true},
		{Name: "ntz", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	b.Field(1).(*array.Float32Builder).AppendValues([]float32{0.5, -2}, nil)
	b.Field(2).(*array.Decimal128Builder).AppendValues(nil, nil)
	b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(12345))
	b.Field(2).(*array.Decimal128Builder).AppendNull()
	db := b.Field(3).(*array.BinaryDictionaryBuilder)
	if err := db.AppendString("x"); err != nil {
		t.Fatal(err)
	}
	if err := db.AppendString("x"); err != nil {
		t.Fatal(err)
	}
	b.Field(4).(*array.LargeStringBuilder).AppendValues([]string{"large", ""}, []bool{true, false})
	b.Field(5).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_000, -1}, nil)
	b.Field(6).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1_999, 1_000_000_000}, nil)
	rec := b.NewRecordBatch()
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	got := tabletest.ScanLines(t, tabletest.Open(t, store), reader.WithAllocator(mem))
	tabletest.DiffLines(t, "rows", got, tabletest.Sorted(
		`{"id":1,"f":0.5,"d":"1234.50","s":"x","l":"large","ts":"1970-01-01T00:00:01.000000Z","ntz":"1970-01-01T00:00:00.000001","extra":null}`,
		`{"id":2,"f":-2,"d":null,"s":"x","l":null,"ts":"1969-12-31T23:59:59.999000Z","ntz":"1970-01-01T00:00:01.000000","extra":null}`,
	))
}

// TestFailedWriteCommitsNothing checks that an error from the input or
// from the store leaves the table as it was.
func TestFailedWriteCommitsNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("input error", func(t *testing.T) {
		mem := tabletest.CheckedMem(t)
		store := objstore.NewMem()
		snap := tabletest.Create(t, store, "id long", nil)
		rec := tabletest.Batch(t, mem, snap, `[{"id": 1}]`)
		defer rec.Release()
		boom := errors.New("boom")
		in := func(yield func(arrow.RecordBatch, error) bool) {
			if !yield(rec, nil) {
				return
			}
			yield(nil, boom)
		}
		_, err := writer.Append(ctx, snap, in, writer.WithAllocator(mem))
		if !errors.Is(err, boom) {
			t.Fatalf("error %v, want the input's", err)
		}
		if v := tabletest.Open(t, store).Version(); v != 0 {
			t.Errorf("version %d, want 0", v)
		}
	})
	t.Run("store error", func(t *testing.T) {
		mem := tabletest.CheckedMem(t)
		inner := objstore.NewMem()
		tabletest.Create(t, inner, "id long, p int", nil, "p")
		faulty := objstore.Faulty(inner, objstore.FailMatching(objstore.OpPut, "tbl/p=2/*", nil))
		snap := tabletest.Open(t, faulty)
		rec := tabletest.Batch(t, mem, snap, `[{"id": 1, "p": 1}, {"id": 2, "p": 2}, {"id": 3, "p": 3}]`)
		_, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem))
		if !errors.Is(err, objstore.ErrInjected) {
			t.Fatalf("error %v, want the injected store error", err)
		}
		if v := tabletest.Open(t, inner).Version(); v != 0 {
			t.Errorf("version %d, want 0", v)
		}
	})
}
