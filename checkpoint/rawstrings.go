package checkpoint

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// A checkpoint's bulk is two string columns, add.path and add.stats: a
// path and a JSON document per file. Read through pqarrow, each batch of
// them grows an Arrow builder by doubling and is then copied out again,
// which made those two columns most of the bytes a snapshot load
// allocated. rawStrings reads such a column with Parquet's own column
// reader instead and copies each value once, into blocks sized from the
// chunk's uncompressed size, so a row group's values usually take one
// allocation. Values are strings over those blocks: a block is never
// written again once a string points into it.

// rawColumns are the leaves read by rawStrings, by dotted path.
var rawColumns = map[string]bool{"add.path": true, "add.stats": true}

// minRawBlock is the smallest block rawStrings allocates once its estimate
// is used up (dictionary-encoded chunks decode to more than their size).
const minRawBlock = 1 << 20

// rawStrings reads one top-level-struct string leaf of a row group.
type rawStrings struct {
	path   string // dotted column path, for errors and decoders
	cr     *file.ByteArrayColumnChunkReader
	maxDef int16
	left   int64 // bytes of the size estimate not yet allocated
	block  []byte
	vals   []parquet.ByteArray
	defs   []int16
	// chunkBytes and rows are the column chunk's uncompressed size and
	// its row group's rows, for estimating a batch's bytes.
	chunkBytes, rows int64
}

// splitRawLeaves separates from leaves those that rawStrings reads: string
// leaves named in rawColumns, outside lists and maps, whose struct keeps
// at least one other leaf (which carries the struct's validity to the
// Arrow batch).
func splitRawLeaves(md *metadata.FileMetaData, leaves []int) (arrowLeaves, raw []int) {
	eligible := func(leaf int) bool {
		c := md.Schema.Column(leaf)
		return c.MaxRepetitionLevel() == 0 && c.PhysicalType() == parquet.Types.ByteArray && rawColumns[c.ColumnPath().String()]
	}
	// Structs with no leaf left for Arrow keep their first eligible one.
	others := map[string]int{}
	for _, leaf := range leaves {
		if !eligible(leaf) {
			others[md.Schema.Column(leaf).ColumnPath()[0]]++
		}
	}
	for _, leaf := range leaves {
		top := md.Schema.Column(leaf).ColumnPath()[0]
		if !eligible(leaf) || others[top] == 0 {
			others[top]++
			arrowLeaves = append(arrowLeaves, leaf)
			continue
		}
		raw = append(raw, leaf)
	}
	return arrowLeaves, raw
}

// newRawStrings opens leaf of row group rg for raw reading.
func newRawStrings(rgr *file.RowGroupReader, rgmd *metadata.RowGroupMetaData, leaf int) (*rawStrings, error) {
	ccr, err := rgr.Column(leaf)
	if err != nil {
		return nil, err
	}
	cr, ok := ccr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return nil, fmt.Errorf("column %s is not a byte array column", ccr.Descriptor().Path())
	}
	r := &rawStrings{path: ccr.Descriptor().Path(), cr: cr, maxDef: ccr.Descriptor().MaxDefinitionLevel(), rows: rgmd.NumRows()}
	if cc, err := rgmd.ColumnChunk(leaf); err == nil {
		r.left = cc.TotalUncompressedSize()
		r.chunkBytes = r.left
	}
	return r, nil
}

// estimate guesses the bytes of the values of the next n rows: the
// chunk's share of them less the 4-byte lengths of plain encoding (a
// little over for page headers and levels, under for a dictionary).
func (r *rawStrings) estimate(n int) int {
	if r.rows <= 0 {
		return 0
	}
	return max(int(r.chunkBytes*int64(n)/r.rows)-4*n, 0)
}

// release returns the read buffers to the pool.
func (r *rawStrings) release() {
	if r.vals != nil {
		readBuffers.Put(&rawBuffers{r.vals, r.defs})
		r.vals, r.defs = nil, nil
	}
}

// rawBuffers are a rawStrings' read buffers, pooled: each row group
// needs them once.
type rawBuffers struct {
	vals []parquet.ByteArray
	defs []int16
}

var readBuffers sync.Pool

// buffers makes sure r has read buffers for n values.
func (r *rawStrings) buffers(n int) {
	if cap(r.vals) >= n {
		return
	}
	if b, ok := readBuffers.Get().(*rawBuffers); ok && cap(b.vals) >= n {
		r.vals, r.defs = b.vals[:cap(b.vals)], b.defs[:cap(b.defs)]
		return
	}
	r.vals = make([]parquet.ByteArray, n)
	r.defs = make([]int16, n)
}

// next reads the following n rows and returns them as a column.
func (r *rawStrings) next(n int) (strCol, error) {
	out := make([]string, n)
	valid := make([]bool, n)
	if cap(r.vals) < n {
		r.vals = make([]parquet.ByteArray, n)
		r.defs = make([]int16, n)
	}
	row := 0
	for row < n {
		levels, nvals, err := r.cr.ReadBatchInPage(int64(n-row), r.vals[:n-row], r.defs[:n-row], nil)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", r.path, err)
		}
		if levels == 0 {
			return nil, fmt.Errorf("column %s: %d rows, want %d", r.path, row, n)
		}
		v := 0
		for j := 0; j < int(levels); j++ {
			if r.maxDef > 0 && r.defs[j] < r.maxDef {
				row++
				continue
			}
			if v >= nvals {
				return nil, fmt.Errorf("column %s: fewer values than levels", r.path)
			}
			out[row], valid[row] = r.keep(r.vals[v]), true
			v++
			row++
		}
	}
	return func(i int) (string, bool) { return out[i], valid[i] }, nil
}

// keep copies b into the current block and returns it as a string.
func (r *rawStrings) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(r.block)-len(r.block) < len(b) {
		size := max(int64(len(b)), r.left, minRawBlock)
		r.left -= size
		r.block = make([]byte, 0, size)
	}
	start := len(r.block)
	r.block = append(r.block, b...)
	// The bytes at [start, len) are never written again: later values
	// are appended past them, or go to a new block.
	return unsafe.String(&r.block[start], len(b))
}

// each reads the following n rows and calls fn with each row's value, or
// with valid false for a null. The value is a view of the page being
// read, valid only during the call: fn copies what it keeps.
func (r *rawStrings) each(n int, fn func(row int, v []byte, valid bool)) error {
	r.buffers(n)
	row := 0
	for row < n {
		levels, nvals, err := r.cr.ReadBatchInPage(int64(n-row), r.vals[:n-row], r.defs[:n-row], nil)
		if err != nil {
			return fmt.Errorf("column %s: %w", r.path, err)
		}
		if levels == 0 {
			return fmt.Errorf("column %s: %d rows, want %d", r.path, row, n)
		}
		v := 0
		for j := 0; j < int(levels); j++ {
			if r.maxDef > 0 && r.defs[j] < r.maxDef {
				fn(row, nil, false)
				row++
				continue
			}
			if v >= nvals {
				return fmt.Errorf("column %s: fewer values than levels", r.path)
			}
			fn(row, r.vals[v], true)
			v++
			row++
		}
	}
	return nil
}
