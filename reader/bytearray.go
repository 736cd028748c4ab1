package reader

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// byteArrayColumn decodes a top-level string or binary column straight
// into Arrow arrays, in step with the batches pqarrow decodes for the
// other columns. pqarrow appends value by value to a builder that grows
// its buffers as it goes; here each batch's data buffer is sized from the
// values before they are copied, once. String columns are most of the
// decoding time of a typical table.
type byteArrayColumn struct {
	pf     *file.Reader
	col    int
	dtype  arrow.DataType // arrow.BinaryTypes.String or Binary
	maxDef int16
	rg     int // next row group to open
	rdr    *file.ByteArrayColumnChunkReader
	avg    float64 // bytes per value in the current chunk, an estimate
	vals   []parquet.ByteArray
	defs   []int16
}

// directByteArray reports whether column col of pf, read as the table
// type dt, can be decoded by byteArrayColumn: a top-level byte array leaf
// holding strings or bytes (not decimals, not JSON or BSON documents).
func directByteArray(pf *file.Reader, col int, dt arrow.DataType) bool {
	c := pf.MetaData().Schema.Column(col)
	if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
		return false
	}
	width, ok := flatWidth(c, dt)
	return ok && width == 0
}

func newByteArrayColumn(pf *file.Reader, col int, dt arrow.DataType) *byteArrayColumn {
	return &byteArrayColumn{pf: pf, col: col, dtype: dt, maxDef: pf.MetaData().Schema.Column(col).MaxDefinitionLevel()}
}

// next decodes the next n values. Its offsets and data are written in
// full, so they come from the pool without being zeroed first.
func (c *byteArrayColumn) next(mem memory.Allocator, n int) (arrow.Array, error) {
	if cap(c.vals) < n {
		c.vals, c.defs = make([]parquet.ByteArray, n), make([]int16, n)
	}
	offBytes := allocUninit(mem, (n+1)*arrow.Int32SizeBytes)
	offs := arrow.Int32Traits.CastFromBytes(offBytes)
	offs[0] = 0
	var data []byte
	if c.avg > 0 { // the chunk under way predicts the size
		data = allocUninit(mem, int(c.avg*float64(n))+64)
	}
	var valid *memory.Buffer
	ok := false
	defer func() {
		if !ok {
			mem.Free(offBytes)
			if data != nil {
				mem.Free(data)
			}
			if valid != nil {
				valid.Release()
			}
		}
	}()
	nulls, pos, row := 0, 0, 0
	for row < n {
		if c.rdr == nil || !c.rdr.HasNext() {
			if err := c.openNext(); err != nil {
				return nil, err
			}
			if data == nil {
				data = allocUninit(mem, int(c.avg*float64(n))+64)
			}
			continue
		}
		// Values of one page at a time: they point into the page, and are
		// copied before the next call.
		levels, nvals, err := c.rdr.ReadBatchInPage(int64(n-row), c.vals[:n-row], c.defs[:n-row], nil)
		if err != nil {
			return nil, err
		}
		if levels == 0 {
			c.close() // the chunk is exhausted
			continue
		}
		need := 0
		for _, v := range c.vals[:nvals] {
			need += len(v)
		}
		if pos+need > math.MaxInt32 {
			return nil, fmt.Errorf("column %d: a batch of %d values holds over 2 GiB", c.col, n)
		}
		if pos+need > len(data) {
			grown := allocUninit(mem, max(pos+need, 2*len(data)))
			copy(grown, data[:pos])
			mem.Free(data)
			data = grown
		}
		v := 0
		for i := 0; i < int(levels); i++ {
			if c.maxDef > 0 && c.defs[i] < c.maxDef {
				if valid == nil {
					valid = memory.NewResizableBuffer(mem)
					valid.Resize(int(bitutil.BytesForBits(int64(n))))
					bitutil.SetBitsTo(valid.Bytes(), 0, int64(n), true)
				}
				bitutil.ClearBit(valid.Bytes(), row)
				nulls++
			} else {
				if v >= nvals {
					return nil, fmt.Errorf("column %d: fewer values than levels", c.col)
				}
				pos += copy(data[pos:], c.vals[v])
				v++
			}
			row++
			offs[row] = int32(pos)
		}
	}
	ok = true
	offsets := memory.NewBufferWithAllocator(offBytes, mem)
	defer offsets.Release()
	dataBuf := memory.NewBufferWithAllocator(data, mem) // freed whole, as allocated
	dataBuf.ResizeNoShrink(pos)
	defer dataBuf.Release()
	if valid != nil {
		defer valid.Release()
	}
	d := array.NewData(c.dtype, n, []*memory.Buffer{valid, offsets, dataBuf}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// openNext opens the column chunk of the next row group.
func (c *byteArrayColumn) openNext() error {
	c.close()
	if c.rg >= c.pf.NumRowGroups() {
		return fmt.Errorf("column %d ends before the file's rows", c.col)
	}
	rg := c.pf.RowGroup(c.rg)
	cr, err := rg.Column(c.col)
	if err != nil {
		return err
	}
	c.rg++
	r, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return fmt.Errorf("column %d is not a byte array column", c.col)
	}
	c.rdr = r
	c.avg = 0
	if md, err := rg.MetaData().ColumnChunk(c.col); err == nil && md.NumValues() > 0 {
		c.avg = float64(md.TotalUncompressedSize()) / float64(md.NumValues())
	}
	return nil
}

// close releases the current column chunk's pages.
func (c *byteArrayColumn) close() {
	if c.rdr != nil {
		c.rdr.Close()
		c.rdr = nil
	}
}
