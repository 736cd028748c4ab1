package reader_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer"
)

// TestDictionariesDifferential scans random tables with and without
// reader.WithDictionaries: string columns of few and of many distinct
// values, nulls, small row groups (a batch spanning two chunks'
// dictionaries) and a dictionary page limit small enough that chunks fall
// back to plain pages part way, read in the default batches and in small
// ones. Every batch must hold the same values,
// the dictionary arrays decoded by arrow-go's cast; dictionary arrays
// must appear, and no memory may leak.
func TestDictionariesDifferential(t *testing.T) {
	seed := testseed.From(t, "DICTOUT_SEED")
	rng := rand.New(rand.NewPCG(seed, 3))
	dictBatches := 0
	for round := range 8 {
		// Odd rounds read in small batches, most of them inside one row
		// group (one chunk's dictionary); even rounds in the default
		// batches, which span every row group of these files: only a
		// file of one row group gives dictionaries there.
		batch := 0
		if round%2 == 1 {
			batch = 1 + rng.IntN(3000)
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			dictBatches += dictionariesRound(t, rng, batch)
		})
	}
	if dictBatches == 0 {
		t.Fatal("no scan returned a dictionary array")
	}
}

func dictionariesRound(t *testing.T, rng *rand.Rand, batch int) int {
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long, few string, many string, b binary", nil)
	n := 1 + rng.IntN(40000)
	nullP := []float64{0, 0.1, 0.9}[rng.IntN(3)]
	few := make([]string, 1+rng.IntN(30))
	for i := range few {
		few[i] = fmt.Sprintf("v%d-%d", i, rng.IntN(1000))
	}
	ib, fb, mb, bb := array.NewInt64Builder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem), array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	for i := range n {
		ib.Append(int64(i))
		for _, b := range []*array.StringBuilder{fb, mb} {
			if rng.Float64() < nullP {
				b.AppendNull()
			} else if b == fb {
				b.Append(few[rng.IntN(len(few))])
			} else {
				b.Append(fmt.Sprintf("m%d", rng.IntN(1+n/2)))
			}
		}
		bb.Append([]byte(few[rng.IntN(len(few))]))
	}
	cols := []arrow.Array{ib.NewArray(), fb.NewArray(), mb.NewArray(), bb.NewArray()}
	for _, b := range []array.Builder{ib, fb, mb, bb} {
		b.Release()
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "few", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "many", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	props := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(500 + rng.IntN(20000)))}
	if rng.IntN(2) == 0 {
		props = append(props, parquet.WithDictionaryPageSizeLimit(int64(64+rng.IntN(4096))))
	}
	_, err := writer.Append(ctx, snap, seq(rec), writer.WithAllocator(mem), writer.WithParquetProperties(props...))
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	read := func(opts ...reader.Option) []arrow.RecordBatch {
		opts = append(opts, reader.WithAllocator(mem), reader.WithRowIndex())
		if batch > 0 {
			opts = append(opts, reader.WithBatchSize(batch))
		}
		sc := mustScan(t, snap, opts...)
		var out []arrow.RecordBatch
		for f, err := range sc.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for r, err := range sc.ReadFile(ctx, f) {
				if err != nil {
					t.Fatal(err)
				}
				r.Retain()
				out = append(out, r)
			}
		}
		return out
	}
	plain, dict := read(), read(reader.WithDictionaries())
	defer func() {
		for _, r := range append(plain, dict...) {
			r.Release()
		}
	}()
	if len(plain) != len(dict) {
		t.Fatalf("%d batches, %d with dictionaries", len(plain), len(dict))
	}
	dicts := 0
	for i := range plain {
		p, d := plain[i], dict[i]
		if p.NumRows() != d.NumRows() || p.NumCols() != d.NumCols() {
			t.Fatalf("batch %d: %dx%d, with dictionaries %dx%d", i, p.NumRows(), p.NumCols(), d.NumRows(), d.NumCols())
		}
		for c := range int(p.NumCols()) {
			col := d.Column(c)
			if !arrow.TypeEqual(col.DataType(), d.Schema().Field(c).Type) {
				t.Fatalf("batch %d column %d: type %s, schema says %s", i, c, col.DataType(), d.Schema().Field(c).Type)
			}
			if col.DataType().ID() == arrow.DICTIONARY {
				dicts++
				dense, err := compute.CastArray(compute.WithAllocator(ctx, memory.DefaultAllocator), col, compute.SafeCastOptions(p.Column(c).DataType()))
				if err != nil {
					t.Fatal(err)
				}
				col = dense
				defer dense.Release()
			}
			if !array.Equal(p.Column(c), col) {
				t.Fatalf("batch %d column %s differs:\nplain %v\ndict  %v", i, p.Schema().Field(c).Name, p.Column(c), col)
			}
		}
	}
	return dicts
}
