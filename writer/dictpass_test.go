package writer

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestDictionaryPassThroughDifferential writes the same random batches
// twice: with string and binary columns as dictionary arrays (several
// dictionaries, repeated, with unreferenced and empty entries, nulls; a
// partition column too) and decoded to plain arrays (the path without
// pass-through). Read back by arrow-go's reader, the files must hold the
// same rows in the same order and carry the same stats; and some column
// chunk of the dictionary write must be dictionary-encoded.
func TestDictionaryPassThroughDifferential(t *testing.T) {
	seed := testseed.From(t, "DICTPASS_SEED")
	rng := rand.New(rand.NewPCG(seed, seed>>3))
	for round := range 10 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { dictPassRound(t, rng) })
	}
}

func dictPassRound(t *testing.T, rng *rand.Rand) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := &randArrays{rng: rng, mem: mem, nullP: []float64{0, 0.1, 0.6}[rng.IntN(3)], longP: []float64{0, 0.05}[rng.IntN(2)]}
	parts := []string{}
	if rng.IntN(3) == 0 {
		parts = []string{"p"}
	}
	st, err := actions.ParseDDL("id long, few string, bin binary, many string, p string")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := actions.ToArrowSchema(st, true, actions.ColumnMappingNone)
	if err != nil {
		t.Fatal(err)
	}
	// A few dictionaries, shared by batches as a reader's chunk shares one.
	dicts := make([]arrow.Array, 1+rng.IntN(3))
	for i := range dicts {
		b := array.NewStringBuilder(mem)
		for range 1 + rng.IntN(40) {
			b.Append(g.str())
		}
		dicts[i] = b.NewArray()
		b.Release()
	}
	defer func() {
		for _, d := range dicts {
			d.Release()
		}
	}()
	dictOf := func(n int) arrow.Array {
		d := dicts[rng.IntN(len(dicts))]
		ib := array.NewInt32Builder(mem)
		defer ib.Release()
		for range n {
			if g.null() {
				ib.AppendNull()
			} else {
				ib.Append(int32(rng.IntN(d.Len())))
			}
		}
		idx := ib.NewArray()
		defer idx.Release()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: d.DataType()}, idx, d)
	}
	var withDict, plain []arrow.RecordBatch
	defer func() {
		for _, b := range append(withDict, plain...) {
			b.Release()
		}
	}()
	var id int64
	for range 1 + rng.IntN(8) {
		n := 1 + rng.IntN(4000)
		cols := make([]arrow.Array, sc.NumFields())
		for i, f := range sc.Fields() {
			switch {
			case f.Name == "id":
				b := array.NewInt64Builder(mem)
				for range n {
					b.Append(id)
					id++
				}
				cols[i] = b.NewArray()
				b.Release()
			case f.Name == "bin" && rng.IntN(2) == 0:
				d := dictOf(n)
				ctx := compute.WithAllocator(ctx, mem)
				casted, err := compute.CastArray(ctx, d.(*array.Dictionary).Dictionary(), compute.SafeCastOptions(arrow.BinaryTypes.Binary))
				if err != nil {
					t.Fatal(err)
				}
				cols[i] = array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.Binary}, d.(*array.Dictionary).Indices(), casted)
				casted.Release()
				d.Release()
			case f.Type.ID() == arrow.STRING && (f.Name != "many" || rng.IntN(2) == 0):
				cols[i] = dictOf(n)
			default:
				cols[i] = g.array(f.Type, n)
			}
		}
		fields := append([]arrow.Field(nil), sc.Fields()...)
		dense := make([]arrow.Array, len(cols))
		for i := range fields {
			fields[i].Type = cols[i].DataType()
			if d, ok := cols[i].(*array.Dictionary); ok {
				dense[i], err = compute.TakeArray(compute.WithAllocator(ctx, mem), d.Dictionary(), d.Indices())
				if err != nil {
					t.Fatal(err)
				}
			} else {
				dense[i] = cols[i]
				dense[i].Retain()
			}
		}
		withDict = append(withDict, array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n)))
		plain = append(plain, array.NewRecordBatch(sc, dense, int64(n)))
		for i := range cols {
			cols[i].Release()
			dense[i].Release()
		}
	}
	var opts []Option
	if rng.IntN(2) == 0 {
		opts = append(opts, WithParquetProperties(parquet.WithMaxRowGroupLength(int64(200+rng.IntN(3000)))))
	}
	write := func(batches []arrow.RecordBatch) (objstore.Store, *WriteResult) {
		store := objstore.NewMem()
		ss, err := actions.SchemaString(st)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: ss, PartitionColumns: parts})
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
		seq := func(yield func(arrow.RecordBatch, error) bool) {
			for _, b := range batches {
				if !yield(b, nil) {
					return
				}
			}
		}
		wr, err := WriteFiles(ctx, snap, seq, append(opts, WithAllocator(mem), WithTargetFileSize(1<<40), WithBufferSize(1<<40), WithMaxOpenFiles(1000))...)
		if err != nil {
			t.Fatal(err)
		}
		return store, wr
	}
	dStore, dRes := write(withDict)
	pStore, pRes := write(plain)
	if len(dRes.Adds) != len(pRes.Adds) {
		t.Fatalf("%d files with dictionaries, %d without", len(dRes.Adds), len(pRes.Adds))
	}
	dictChunks := 0
	for i := range dRes.Adds {
		da, pa := dRes.Adds[i], pRes.Adds[i]
		if partText(da.PartitionValues) != partText(pa.PartitionValues) {
			t.Fatalf("file %d: partition %v, without dictionaries %v", i, da.PartitionValues, pa.PartitionValues)
		}
		if !sameStats(t, da.Stats, pa.Stats) {
			t.Fatalf("file %d stats:\nwith dictionaries %s\nwithout           %s", i, da.Stats, pa.Stats)
		}
		dTbl, dMeta := readBack(t, dStore, da.Path, mem)
		pTbl, _ := readBack(t, pStore, pa.Path, mem)
		if !array.TableEqual(dTbl, pTbl) {
			for c := range int(dTbl.NumCols()) {
				dc, pc := dTbl.Column(c).Data(), pTbl.Column(c).Data()
				if !array.ChunkedEqual(dc, pc) {
					dv, _ := array.Concatenate(dc.Chunks(), mem)
					pv, _ := array.Concatenate(pc.Chunks(), mem)
					for r := range dv.Len() {
						if dv.ValueStr(r) != pv.ValueStr(r) {
							t.Fatalf("file %d (%d rows): column %s row %d: %q, without dictionaries %q", i, dv.Len(), dTbl.Schema().Field(c).Name, r, dv.ValueStr(r), pv.ValueStr(r))
						}
					}
				}
			}
			t.Fatalf("file %d: rows differ", i)
		}
		dTbl.Release()
		pTbl.Release()
		for rg := range dMeta.NumRowGroups() {
			for c := range dMeta.Schema.NumColumns() {
				cc, err := dMeta.RowGroup(rg).ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				if cc.HasDictionaryPage() {
					dictChunks++
				}
			}
		}
	}
	if dictChunks == 0 && id > 0 && len(parts) == 0 {
		t.Fatal("no dictionary-encoded chunk")
	}
}

func readBack(t *testing.T, store objstore.Store, path string, mem memory.Allocator) (arrow.Table, *metadataT) {
	t.Helper()
	key, err := actions.UnescapePath(path)
	if err != nil {
		t.Fatal(err)
	}
	body, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := pqFileReader(body)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(body), nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, rdr
}

type metadataT = metadata.FileMetaData

func pqFileReader(body []byte) (*metadata.FileMetaData, error) {
	r, err := file.NewParquetReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.MetaData(), nil
}

func partText(m map[string]*string) string {
	var b bytes.Buffer
	for k, v := range m {
		if v == nil {
			fmt.Fprintf(&b, "%s=null;", k)
		} else {
			fmt.Fprintf(&b, "%s=%q;", k, *v)
		}
	}
	return b.String()
}
