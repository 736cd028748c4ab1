package workload

import (
	"fmt"
	"iter"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// BatchSize is the number of rows per generated batch (the last batch of a
// table may hold fewer).
const BatchSize = 64 * 1024

// SchemaString is the Delta schema of the data-path table.
const SchemaString = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
	`{"name":"p","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"v","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"s","type":"string","nullable":true,"metadata":{}}]}`

// PartitionColumns are the data-path table's partition columns.
var PartitionColumns = []string{"p"}

// NumPartitions is the number of distinct values of p.
const NumPartitions = 10

// Metadata returns a fresh metaData action for the data-path table
// (deltalog.Create fills in its id and creation time).
func Metadata() *actions.Metadata {
	return &actions.Metadata{
		SchemaString:     SchemaString,
		PartitionColumns: append([]string(nil), PartitionColumns...),
		Format:           actions.Format{Provider: "parquet", Options: map[string]string{}},
		Configuration:    map[string]string{},
	}
}

// ArrowSchema is the Arrow schema of the generated batches.
var ArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// bytesPerRow estimates a written row's share of the data files (snappy
// Parquet; p lives in the folder names).
const bytesPerRow = 20

// TargetFileSize is the data file target size the benchmarks give both
// writers for a table of rows rows: about 150 files, so that a 1% range of
// the sorted id can skip most of them by statistics.
func TargetFileSize(rows int64) int64 { return max(1, rows*bytesPerRow/150) }

// P is the value of column p in row i.
func P(i int64) string { return "p" + strconv.FormatInt(i%NumPartitions, 10) }

// V is the value of column v in row i.
func V(i int64) float64 {
	return float64((uint64(i)*2654435761)%(1<<32)) / (1 << 32)
}

// S is the value of column s in row i.
func S(i int64) string { return fmt.Sprintf("s%06d", (i*7919)%100000) }

// sValues holds S for every residue, so generation does not format.
var sValues = func() []string {
	out := make([]string, 100000)
	for k := range out {
		out[k] = fmt.Sprintf("s%06d", k)
	}
	return out
}()

var pValues = func() []string {
	out := make([]string, NumPartitions)
	for k := range out {
		out[k] = "p" + strconv.Itoa(k)
	}
	return out
}()

// Batches yields rows [0, n) of the data-path table in batches of
// BatchSize, allocated from mem (memory.DefaultAllocator when nil). Each
// batch is released when the loop body returns; Retain it to keep it.
func Batches(mem memory.Allocator, n int64) iter.Seq2[arrow.RecordBatch, error] {
	return Range(mem, 0, n)
}

// Range yields rows [from, to) of the data-path table, as Batches does.
func Range(mem memory.Allocator, from, to int64) iter.Seq2[arrow.RecordBatch, error] {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		for start := from; start < to; start += BatchSize {
			rec := Batch(mem, start, min(to, start+BatchSize))
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				return
			}
		}
	}
}

// Batch builds one batch holding rows [from, to). The caller releases it.
// It fills the Arrow buffers directly, so that generating the input costs
// little next to writing it.
func Batch(mem memory.Allocator, from, to int64) arrow.RecordBatch {
	n := int(to - from)
	idBuf := newBuffer(mem, 8*n)
	vBuf := newBuffer(mem, 8*n)
	ids := arrow.Int64Traits.CastFromBytes(idBuf.Bytes())
	vs := arrow.Float64Traits.CastFromBytes(vBuf.Bytes())
	pOff, pData := newBuffer(mem, 4*(n+1)), newBuffer(mem, 2*n)
	sOff, sData := newBuffer(mem, 4*(n+1)), newBuffer(mem, 7*n)
	po, pd := arrow.Int32Traits.CastFromBytes(pOff.Bytes()), pData.Bytes()[:0]
	so, sd := arrow.Int32Traits.CastFromBytes(sOff.Bytes()), sData.Bytes()[:0]
	for k := range n {
		i := from + int64(k)
		ids[k] = i
		vs[k] = V(i)
		po[k] = int32(len(pd))
		pd = append(pd, pValues[i%NumPartitions]...)
		so[k] = int32(len(sd))
		sd = append(sd, sValues[(i*7919)%100000]...)
	}
	po[n], so[n] = int32(len(pd)), int32(len(sd))
	pData.Resize(len(pd))
	sData.Resize(len(sd))
	data := []arrow.ArrayData{
		array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, idBuf}, nil, 0, 0),
		array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, pOff, pData}, nil, 0, 0),
		array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, vBuf}, nil, 0, 0),
		array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, sOff, sData}, nil, 0, 0),
	}
	cols := make([]arrow.Array, len(data))
	for c, d := range data {
		cols[c] = array.MakeFromData(d)
		d.Release()
	}
	for _, b := range []*memory.Buffer{idBuf, vBuf, pOff, pData, sOff, sData} {
		b.Release()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(ArrowSchema, cols, int64(n))
}

// newBuffer allocates a buffer of size bytes from mem.
func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	return b
}

// Checksum summarises rows so that two engines' scans can be compared
// exactly: the row count, the sum of id, and the total bytes of the string
// columns p and s (which makes a scan decode every column but v; V is
// summed too, though float sums depend on order and are only reported).
type Checksum struct {
	Rows     int64   `json:"rows"`
	SumID    int64   `json:"sum_id"`
	StrBytes int64   `json:"str_bytes"`
	SumV     float64 `json:"sum_v"`
}

// Add folds a batch holding the data-path columns (any order, found by
// name; strings plain or as views) into c. Columns it lacks are skipped.
func (c *Checksum) Add(rec arrow.RecordBatch) {
	c.Rows += rec.NumRows()
	for i, f := range rec.Schema().Fields() {
		switch col := rec.Column(i).(type) {
		case *array.Int64:
			if f.Name == "id" {
				for _, x := range col.Int64Values() {
					c.SumID += x
				}
			}
		case *array.Float64:
			for _, x := range col.Float64Values() {
				c.SumV += x
			}
		case *array.String:
			if offs := col.ValueOffsets(); len(offs) > 0 {
				c.StrBytes += int64(offs[len(offs)-1] - offs[0])
			}
		case *array.StringView:
			for i := range col.Len() {
				c.StrBytes += int64(col.ValueLen(i))
			}
		}
	}
}

// Expect is the Checksum of rows [from, to), computed without generating
// batches, for checking scans.
func Expect(from, to int64) Checksum {
	var c Checksum
	for i := from; i < to; i++ {
		c.Rows++
		c.SumID += i
		c.StrBytes += int64(len(pValues[i%NumPartitions]) + 7)
		c.SumV += V(i)
	}
	return c
}
