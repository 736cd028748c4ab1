package reader

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// pageColumn decodes a flat column (a top-level leaf, at most one
// definition level) page by page, straight into Arrow arrays: fixed-width
// numbers, dates and timestamps, strings and binary, in PLAIN or
// dictionary encoding, in V1 or V2 data pages. That covers what Spark,
// delta-rs and lakelog write for such columns, and skips two costs of the
// generic path: arrow-go's dictionary decoder, which decodes a dictionary
// lazily and grows it batch by batch (a fifth of the time of a scan of a
// delta-rs table, whose unique id and value columns are
// dictionary-encoded), and its value-by-value builders. Columns with any
// other encoding are left to pqarrow (pageColumnFor).
type pageColumn struct {
	pf     *file.Reader
	col    int
	dtype  arrow.DataType
	width  int // bytes per value; 0 for byte arrays
	maxDef int16
	rg     int // next row group to open
	pages  file.PageReader
	pos    int64   // file row index of the next row next or skipTo reads
	rgEnd  int64   // file row index after the open row group
	avg    float64 // bytes per value in the current chunk, an estimate

	// The current chunk's dictionary: fixed-width values, or byte arrays
	// as offsets into dictData.
	hasDict  bool
	dictMem  []byte // dictData's buffer, as allocated from mem
	offMem   []byte // dictOffs's buffer
	mem      memory.Allocator
	dictLen  int
	dictData []byte
	dictOffs []int32

	// Decoding to views (view): the dictionary's values in a buffer of
	// their own, which batches reference, and a view of each entry;
	// dictLong says whether any is too long to be inlined, dictIdx the
	// index of the buffer in the batch dictViews were made for.
	view      bool
	dictBuf   *memory.Buffer
	dictViews []arrow.ViewHeader
	dictLong  bool
	dictIdx   int32

	// Decoding to dictionary arrays (dictOut, WithDictionaries): the
	// current chunk's dictionary as an Arrow array that batches share,
	// made when a batch first needs it.
	dictOut bool
	dictArr arrow.Array

	// The current data page.
	left  int    // levels not yet read
	defs  hybrid // definition levels, when maxDef > 0
	dict  bool   // values are dictionary indices (in idx) rather than plain
	idx   hybrid
	plain []byte // plain values not yet read

	defBuf []uint32
	idxBuf []uint32
}

// disablePageColumns turns pageColumn off, for tests that compare it with
// the generic path; pageColumnsUsed counts the columns it decoded.
var (
	disablePageColumns = false
	pageColumnsUsed    atomic.Int64
)

// supportedEncodings are the column chunk encodings pageColumn reads.
// BIT_PACKED is listed by parquet-mr for the repetition levels that flat
// columns do not have; a column with definition levels so encoded is
// refused at the page.
var supportedEncodings = map[parquet.Encoding]bool{
	parquet.Encodings.Plain:     true,
	parquet.Encodings.RLE:       true,
	parquet.Encodings.RLEDict:   true,
	parquet.Encodings.PlainDict: true,
	parquet.Encodings.BitPacked: true,
}

// pageColumnFor returns a pageColumn for column col of pf read as the
// table type dt, or nil when pageColumn cannot decode it.
func pageColumnFor(pf *file.Reader, col int, dt arrow.DataType, mem memory.Allocator) *pageColumn {
	md := pf.MetaData()
	c := md.Schema.Column(col)
	if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
		return nil
	}
	width, ok := flatWidth(c, dt)
	if !ok {
		return nil
	}
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil {
			return nil
		}

		if cc.CryptoMetadata() != nil {
			return nil
		}
		for _, e := range cc.Encodings() {
			if !supportedEncodings[e] {
				return nil
			}
			if e == parquet.Encodings.BitPacked && c.MaxDefinitionLevel() > 0 {
				return nil
			}
		}
	}
	return &pageColumn{pf: pf, col: col, dtype: dt, width: width, maxDef: c.MaxDefinitionLevel(), mem: mem, view: isView(dt)}
}

// isView reports whether dt is a string or binary view type.
func isView(dt arrow.DataType) bool {
	return dt.ID() == arrow.STRING_VIEW || dt.ID() == arrow.BINARY_VIEW
}

// flatWidth says whether the Parquet column c holds the values of the
// Arrow type dt bit for bit, and their width (0 for byte arrays).
func flatWidth(c *schema.Column, dt arrow.DataType) (int, bool) {
	lt := c.LogicalType()
	plainInt := func(bitWidth int8) bool {
		if lt == nil {
			return true
		}
		switch l := lt.(type) {
		case schema.NoLogicalType, *schema.NoLogicalType:
			return true
		case schema.IntLogicalType:
			return l.BitWidth() == bitWidth && l.IsSigned()
		case *schema.IntLogicalType:
			return l.BitWidth() == bitWidth && l.IsSigned()
		}
		return false
	}
	switch c.PhysicalType() {
	case parquet.Types.Int32:
		switch dt.ID() {
		case arrow.INT32:
			return 4, plainInt(32)
		case arrow.DATE32:
			return 4, isLogical[schema.DateLogicalType](lt)
		}
	case parquet.Types.Int64:
		switch dt.ID() {
		case arrow.INT64:
			return 8, plainInt(64)
		case arrow.TIMESTAMP:
			if dt.(*arrow.TimestampType).Unit != arrow.Microsecond {
				return 0, false
			}
			switch l := lt.(type) {
			case schema.TimestampLogicalType:
				return 8, l.TimeUnit() == schema.TimeUnitMicros
			case *schema.TimestampLogicalType:
				return 8, l.TimeUnit() == schema.TimeUnitMicros
			}
		}
	case parquet.Types.Float:
		return 4, dt.ID() == arrow.FLOAT32 && plainInt(0)
	case parquet.Types.Double:
		return 8, dt.ID() == arrow.FLOAT64 && plainInt(0)
	case parquet.Types.ByteArray:
		switch dt.ID() {
		case arrow.STRING, arrow.BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		default:
			return 0, false
		}
		switch lt.(type) {
		case nil, schema.NoLogicalType, *schema.NoLogicalType, schema.StringLogicalType, *schema.StringLogicalType,
			schema.EnumLogicalType, *schema.EnumLogicalType:
			return 0, true
		}
	}
	return 0, false
}

func isLogical[T any](lt schema.LogicalType) bool {
	if _, ok := lt.(T); ok {
		return true
	}
	_, ok := any(lt).(*T)
	return ok
}

// next decodes the next n values.
func (c *pageColumn) next(mem memory.Allocator, n int) (arrow.Array, error) {
	c.scratch(n)
	out := &columnOut{mem: mem, width: c.width, n: n, view: c.view, dictMode: c.dictOut}
	defer out.free()
	out.start(c.avg)
	for row := 0; row < n; {
		if c.left == 0 {
			if err := c.nextPage(); err != nil {
				return nil, fmt.Errorf("column %d: %w", c.col, err)
			}
			continue
		}
		k := min(n-row, c.left)
		defs, nonNull, err := c.levels(k)
		if err != nil {
			return nil, fmt.Errorf("column %d: definition levels: %w", c.col, err)
		}
		if nonNull < k {
			err = c.readSpaced(out, row, defs, nonNull)
		} else {
			err = c.readDense(out, row, k)
		}
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", c.col, err)
		}
		row += k
		c.left -= k
		c.pos += int64(k)
	}
	return out.array(c.dtype)
}

// scratchPool holds the level and index buffers of closed pageColumns:
// a scan of many small files would otherwise make two of a batch's
// length per column and file.
var scratchPool sync.Pool // *[]uint32

// scratch makes defBuf and idxBuf hold at least n values.
func (c *pageColumn) scratch(n int) {
	if cap(c.defBuf) >= n && cap(c.idxBuf) >= n {
		return
	}
	c.freeScratch()
	get := func() []uint32 {
		if v, ok := scratchPool.Get().(*[]uint32); ok && cap(*v) >= n {
			return (*v)[:n]
		}
		return make([]uint32, n)
	}
	c.defBuf, c.idxBuf = get(), get()
}

// freeScratch gives defBuf and idxBuf back to scratchPool.
func (c *pageColumn) freeScratch() {
	for _, b := range []*[]uint32{&c.defBuf, &c.idxBuf} {
		if *b != nil {
			v := *b
			scratchPool.Put(&v)
			*b = nil
		}
	}
}

// levels decodes the definition levels of the next k rows of the page
// (all valid when the column has none) and counts the non-null ones;
// when all k are non-null, defs may be left undecoded.
func (c *pageColumn) levels(k int) (defs []uint32, nonNull int, err error) {
	defs = c.defBuf[:k]
	if c.maxDef == 0 {
		return defs, k, nil
	}
	// A run of k or more rows all present (how writers encode a page
	// without nulls) needs no level decoded; defs are then not filled.
	if c.defs.rle == 0 && c.defs.packed == 0 && c.defs.pos < len(c.defs.data) {
		if err := c.defs.header(); err != nil {
			return nil, 0, err
		}
	}
	if c.defs.rle >= k && c.defs.rleVal == uint32(c.maxDef) {
		c.defs.rle -= k
		return defs, k, nil
	}
	if err := c.defs.decode(defs); err != nil {
		return nil, 0, err
	}
	for _, d := range defs {
		if d == uint32(c.maxDef) {
			nonNull++
		}
	}
	return defs, nonNull, nil
}

// readDense reads k non-null values into rows [row, row+k).
func (c *pageColumn) readDense(out *columnOut, row, k int) error {
	if c.dict {
		idx := c.idxBuf[:k]
		if err := c.idx.decode(idx); err != nil {
			return err
		}
		if c.takeDictionary(out, row) {
			return out.putIndices(row, idx, c.dictLen)
		}
		switch {
		case c.width == 8:
			return gather(arrow.Uint64Traits.CastFromBytes(out.data)[row:row+k], arrow.Uint64Traits.CastFromBytes(c.dictData[:c.dictLen*8]), idx)
		case c.width == 4:
			return gather(arrow.Uint32Traits.CastFromBytes(out.data)[row:row+k], arrow.Uint32Traits.CastFromBytes(c.dictData[:c.dictLen*4]), idx)
		case c.view:
			c.useDictionary(out)
			return gather(out.views[row:row+k], c.dictViews, idx)
		}
		for i, j := range idx {
			if err := c.putDict(out, row+i, j); err != nil {
				return err
			}
		}
		return nil
	}
	if out.dictMode {
		out.demote(row)
	}
	if c.width > 0 {
		nb := k * c.width
		if len(c.plain) < nb {
			return errors.New("page holds fewer values than its header says")
		}
		copy(out.data[row*c.width:], c.plain[:nb])
		c.plain = c.plain[nb:]
		return nil
	}
	for i := 0; i < k; i++ {
		v, err := c.plainBytes()
		if err != nil {
			return err
		}
		out.putValue(row+i, v)
	}
	return nil
}

// readSpaced reads the rows whose levels are defs, nonNull of them valid.
func (c *pageColumn) readSpaced(out *columnOut, row int, defs []uint32, nonNull int) error {
	var idx []uint32
	if c.dict {
		idx = c.idxBuf[:nonNull]
		if err := c.idx.decode(idx); err != nil {
			return err
		}
		if c.takeDictionary(out, row) {
			v := 0
			for i, d := range defs {
				if d != uint32(c.maxDef) {
					out.putNull(row + i)
					continue
				}
				if err := out.putIndices(row+i, idx[v:v+1], c.dictLen); err != nil {
					return err
				}
				v++
			}
			return nil
		}
	} else if out.dictMode {
		out.demote(row)
	}
	v := 0
	for i, d := range defs {
		r := row + i
		if d != uint32(c.maxDef) {
			out.putNull(r)
			continue
		}
		switch {
		case c.dict:
			if err := c.putDict(out, r, idx[v]); err != nil {
				return err
			}
		case c.width > 0:
			if len(c.plain) < c.width {
				return errors.New("page holds fewer values than its header says")
			}
			copy(out.data[r*c.width:(r+1)*c.width], c.plain[:c.width])
			c.plain = c.plain[c.width:]
		default:
			b, err := c.plainBytes()
			if err != nil {
				return err
			}
			out.putValue(r, b)
		}
		v++
	}
	return nil
}

// gather sets out[i] to dict[idx[i]].
func gather[T uint32 | uint64 | arrow.ViewHeader](out, dict []T, idx []uint32) error {
	for i, j := range idx {
		if int(j) >= len(dict) {
			return fmt.Errorf("dictionary index %d out of range (%d entries)", j, len(dict))
		}
		out[i] = dict[j]
	}
	return nil
}

// putDict writes dictionary entry j as row r.
func (c *pageColumn) putDict(out *columnOut, r int, j uint32) error {
	if int(j) >= c.dictLen {
		return fmt.Errorf("dictionary index %d out of range (%d entries)", j, c.dictLen)
	}
	switch {
	case c.width > 0:
		copy(out.data[r*c.width:(r+1)*c.width], c.dictData[int(j)*c.width:])
	case c.view:
		c.useDictionary(out)
		out.views[r] = c.dictViews[j]
	default:
		out.putBytes(r, c.dictData[c.dictOffs[j]:c.dictOffs[j+1]])
	}
	return nil
}

// useDictionary makes the batch out hold the dictionary's buffer when
// its views reference it, and the views reference it at its index in
// out (re-made when a batch holds two dictionaries, at a row group's
// start).
func (c *pageColumn) useDictionary(out *columnOut) {
	if !c.dictLong {
		return
	}
	i := out.holdBuffer(c.dictBuf)
	if i == c.dictIdx {
		return
	}
	c.dictIdx = i
	for k := range c.dictViews {
		if v := &c.dictViews[k]; !v.IsInline() {
			v.SetIndexOffset(i, c.dictOffs[k])
		}
	}
}

// plainBytes takes the next PLAIN byte array of the page.
func (c *pageColumn) plainBytes() ([]byte, error) {
	if len(c.plain) < 4 {
		return nil, errors.New("page holds fewer values than its header says")
	}
	l := binary.LittleEndian.Uint32(c.plain)
	if uint64(l) > uint64(len(c.plain)-4) {
		return nil, errors.New("byte array longer than its page")
	}
	v := c.plain[4 : 4+l]
	c.plain = c.plain[4+l:]
	return v, nil
}

// nextPage moves to the next data page, reading dictionary pages and
// opening row groups on the way.
func (c *pageColumn) nextPage() error {
	c.releasePage()
	for {
		if c.pages == nil {
			if c.rg >= c.pf.NumRowGroups() {
				return errors.New("column ends before the file's rows")
			}
			pr, err := c.pf.RowGroup(c.rg).GetColumnPageReader(c.col)
			if err != nil {
				return err
			}
			c.rgEnd = c.pos + c.pf.MetaData().RowGroup(c.rg).NumRows()
			c.rg++
			c.pages, c.hasDict, c.dictLen = pr, false, 0
			c.avg = 0
			if md, err := c.pf.MetaData().RowGroup(c.rg - 1).ColumnChunk(c.col); err == nil && md.NumValues() > 0 {
				c.avg = float64(md.TotalUncompressedSize()) / float64(md.NumValues())
			}
		}
		if !c.pages.Next() {
			if err := c.pages.Err(); err != nil {
				return err
			}
			c.pages.Close()
			c.pages = nil
			continue
		}
		if data, err := c.startPage(c.pages.Page()); data || err != nil {
			return err
		}
	}
}

// startPage takes in page, the page reader's current one: a dictionary is
// kept, a data page becomes the page being read (data is true).
func (c *pageColumn) startPage(page file.Page) (data bool, err error) {
	switch p := page.(type) {
	case *file.DictionaryPage:
		return false, c.readDictionary(p)
	case *file.DataPageV1:
		return true, c.startData(p.Data(), int(p.NumValues()), parquet.Encoding(p.Encoding()), 4, 0, p.DefinitionLevelEncoding())
	case *file.DataPageV2:
		data := p.Data()
		rep, def := int(p.RepetitionLevelByteLen()), int(p.DefinitionLevelByteLen())
		if rep < 0 || def < 0 || rep+def > len(data) {
			return true, errors.New("data page too small for its levels")
		}
		return true, c.startData(data[rep:], int(p.NumValues()), parquet.Encoding(p.Encoding()), 0, def, parquet.Encodings.RLE)
	}
	return false, nil // an index page: nothing to decode
}

// skipTo moves the column to file row target (at or after where it is):
// row groups before target's are not opened, pages before target's are
// not read when the row group has an offset index, and the rows of
// target's page before it are decoded and dropped.
func (c *pageColumn) skipTo(target int64) error {
	for c.pos < target {
		if c.left > 0 {
			k := int(min(int64(c.left), target-c.pos))
			if err := c.discard(k); err != nil {
				return fmt.Errorf("column %d: %w", c.col, err)
			}
			c.left -= k
			c.pos += int64(k)
			continue
		}
		md := c.pf.MetaData()
		// A later row group: jump to it.
		if c.pages == nil || target >= c.rgEnd {
			rgStart := c.rgEnd
			if c.pages == nil {
				rgStart = c.pos
			}
			for c.rg < md.NumRowGroups() && rgStart+md.RowGroup(c.rg).NumRows() <= target {
				rgStart += md.RowGroup(c.rg).NumRows()
				c.rg++
			}
			if c.pages != nil {
				c.pages.Close()
				c.pages = nil
			}
			c.pos = rgStart
			if c.pos >= target {
				return nil
			}
		}
		if err := c.nextPage(); err != nil {
			return fmt.Errorf("column %d: %w", c.col, err)
		}
		// Past the page just started: seek by the offset index.
		if c.pos+int64(c.left) <= target {
			if err := c.seek(target); err != nil {
				return fmt.Errorf("column %d: %w", c.col, err)
			}
		}
	}
	return nil
}

// seek moves the page reader to the page holding file row target, in the
// current row group, when its offset index says where that is; else the
// pages are read in turn by skipTo.
func (c *pageColumn) seek(target int64) error {
	pir := c.pf.GetPageIndexReader()
	if pir == nil {
		return nil
	}
	rgIdx, err := pir.RowGroup(c.rg - 1)
	if err != nil || rgIdx == nil {
		return nil
	}
	oi, err := rgIdx.GetOffsetIndex(c.col)
	if err != nil || oi == nil {
		return nil
	}
	rgStart := c.rgEnd - c.pf.MetaData().RowGroup(c.rg-1).NumRows()
	locs := oi.GetPageLocations()
	i, _ := slices.BinarySearchFunc(locs, target-rgStart, func(l *metadata.PageLocation, r int64) int { return cmp.Compare(l.FirstRowIndex, r) })
	if i == len(locs) || locs[i].FirstRowIndex > target-rgStart {
		i--
	}
	if i < 0 || rgStart+locs[i].FirstRowIndex <= c.pos {
		return nil // target is in the page under way, or the index is no help
	}
	if err := c.pages.SeekToPageWithRow(target - rgStart); err != nil {
		return err
	}
	c.releasePage()
	data, err := c.startPage(c.pages.Page())
	if err != nil {
		return err
	}
	if !data {
		return errors.New("offset index points at a page that holds no data")
	}
	c.pos = rgStart + locs[i].FirstRowIndex
	return nil
}

// discard decodes the next k rows of the current page and drops them.
func (c *pageColumn) discard(k int) error {
	c.scratch(k)
	_, nonNull, err := c.levels(k)
	if err != nil {
		return err
	}
	switch {
	case c.dict:
		return c.idx.decode(c.idxBuf[:nonNull])
	case c.width > 0:
		if len(c.plain) < nonNull*c.width {
			return errors.New("page holds fewer values than its header says")
		}
		c.plain = c.plain[nonNull*c.width:]
	default:
		for range nonNull {
			if _, err := c.plainBytes(); err != nil {
				return err
			}
		}
	}
	return nil
}

// startData sets up a data page of levels levels whose definition levels
// start data: after a 4-byte length (lenPrefix 4, V1) or defLen bytes
// long (V2).
func (c *pageColumn) startData(data []byte, levels int, enc parquet.Encoding, lenPrefix, defLen int, defEnc parquet.Encoding) error {
	if levels < 0 {
		return errors.New("negative value count in a page header")
	}
	if c.maxDef > 0 {
		if defEnc != parquet.Encodings.RLE {
			return fmt.Errorf("definition levels in %s encoding", defEnc)
		}
		if lenPrefix > 0 {
			if len(data) < 4 {
				return errors.New("data page too small for its levels")
			}
			defLen = int(binary.LittleEndian.Uint32(data))
			data = data[4:]
		}
		if defLen < 0 || defLen > len(data) {
			return errors.New("data page too small for its levels")
		}
		c.defs.init(data[:defLen], bits.Len(uint(c.maxDef)))
		data = data[defLen:]
	}
	c.left = levels
	switch enc {
	case parquet.Encodings.Plain:
		c.dict, c.plain = false, data
	case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		if !c.hasDict {
			return errors.New("dictionary-encoded page without a dictionary page")
		}
		if len(data) < 1 || data[0] > 32 {
			return errors.New("bad dictionary index bit width")
		}
		c.dict = true
		c.idx.init(data[1:], int(data[0]))
	default:
		return fmt.Errorf("values in %s encoding", enc)
	}
	return nil
}

// readDictionary keeps a copy of a PLAIN dictionary page: the page's
// buffer is reused for the next page.
func (c *pageColumn) readDictionary(p *file.DictionaryPage) error {
	enc := parquet.Encoding(p.Encoding())
	if enc != parquet.Encodings.Plain && enc != parquet.Encodings.PlainDict {
		return fmt.Errorf("dictionary in %s encoding", enc)
	}
	data, n := p.Data(), int(p.NumValues())
	if n < 0 {
		return errors.New("negative dictionary size")
	}
	if c.width > 0 {
		if len(data) < n*c.width {
			return errors.New("dictionary page holds fewer values than its header says")
		}
		c.dictData = c.scratchBytes(&c.dictMem, n*c.width)
		copy(c.dictData, data)
		c.dictLen, c.hasDict = n, true
		return nil
	}
	if len(data) > math.MaxInt32 || n > len(data)/4 {
		return errors.New("dictionary page holds fewer values than its header says")
	}
	c.releaseDictArr()
	c.dictOffs = arrow.Int32Traits.CastFromBytes(c.scratchBytes(&c.offMem, (n+1)*arrow.Int32SizeBytes))
	c.dictOffs[0] = 0
	var buf []byte
	if c.view {
		// A buffer of its own, which batches referencing its values keep.
		c.releaseDictionary()
		c.dictBuf = memory.NewResizableBuffer(c.mem)
		c.dictBuf.Resize(len(data))
		buf = c.dictBuf.Bytes()
	} else {
		buf = c.scratchBytes(&c.dictMem, len(data)) // the values without their lengths fit
	}
	pos := 0
	for i := range n {
		if len(data) < 4 {
			return errors.New("dictionary page holds fewer values than its header says")
		}
		l := binary.LittleEndian.Uint32(data)
		if uint64(l) > uint64(len(data)-4) {
			return errors.New("dictionary byte array longer than its page")
		}
		pos += copy(buf[pos:], data[4:4+l])
		c.dictOffs[i+1] = int32(pos)
		data = data[4+l:]
	}
	c.dictData = buf[:pos]
	c.dictLen, c.hasDict = n, true
	if c.view {
		c.makeDictViews()
	}
	return nil
}

// makeDictViews makes a view of each dictionary entry, inlined or at its
// offset in dictBuf (as buffer 0 of a batch, until useDictionary says).
func (c *pageColumn) makeDictViews() {
	if cap(c.dictViews) < c.dictLen {
		c.dictViews = make([]arrow.ViewHeader, c.dictLen)
	}
	c.dictViews = c.dictViews[:c.dictLen]
	c.dictLong, c.dictIdx = false, 0
	for k := range c.dictViews {
		v := &c.dictViews[k]
		*v = arrow.ViewHeader{}
		v.SetBytes(c.dictData[c.dictOffs[k]:c.dictOffs[k+1]])
		if !v.IsInline() {
			v.SetIndexOffset(0, c.dictOffs[k])
			c.dictLong = true
		}
	}
}

// takeDictionary reports whether the batch out, whose rows before row are
// written, takes the values from row on as indices into the current
// chunk's dictionary: it does while it is in dictionary mode and holds no
// other dictionary; otherwise it is (or is made) plain.
func (c *pageColumn) takeDictionary(out *columnOut, row int) bool {
	if !out.dictMode {
		return false
	}
	if c.dictArr == nil {
		offs := memory.NewResizableBuffer(c.mem)
		offs.Resize((c.dictLen + 1) * arrow.Int32SizeBytes)
		copy(offs.Bytes(), arrow.Int32Traits.CastToBytes(c.dictOffs[:c.dictLen+1]))
		data := memory.NewResizableBuffer(c.mem)
		data.Resize(len(c.dictData))
		copy(data.Bytes(), c.dictData)
		d := array.NewData(c.dtype, c.dictLen, []*memory.Buffer{nil, offs, data}, nil, 0, 0)
		offs.Release()
		data.Release()
		c.dictArr = array.MakeFromData(d)
		d.Release()
	}
	switch out.dict {
	case nil:
		c.dictArr.Retain()
		out.dict = c.dictArr
		return true
	case c.dictArr:
		return true
	}
	out.demote(row) // a second chunk's dictionary
	return false
}

// releaseDictArr lets go of the chunk's dictionary array (batches that
// reference it hold their own reference).
func (c *pageColumn) releaseDictArr() {
	if c.dictArr != nil {
		c.dictArr.Release()
		c.dictArr = nil
	}
}

// releaseDictionary lets go of the views' dictionary buffer (batches
// that reference it hold their own reference).
func (c *pageColumn) releaseDictionary() {
	if c.dictBuf != nil {
		c.dictBuf.Release()
		c.dictBuf = nil
	}
}

// scratchBytes returns size bytes of *mem, which it first grows when
// needed: the dictionaries of a file's chunks share one buffer from the
// scan's pool, unzeroed (they are written before they are read).
func (c *pageColumn) scratchBytes(mem *[]byte, size int) []byte {
	if len(*mem) < size {
		if *mem != nil {
			c.mem.Free(*mem)
		}
		*mem = allocUninit(c.mem, size)
	}
	return (*mem)[:size]
}

// releasePage forgets the current page (the page reader owns and reuses
// its buffer).
func (c *pageColumn) releasePage() {
	c.left, c.plain = 0, nil
}

// close releases the current page and page reader, and the dictionary.
func (c *pageColumn) close() {
	for _, b := range []*[]byte{&c.dictMem, &c.offMem} {
		if *b != nil {
			c.mem.Free(*b)
			*b = nil
		}
	}
	c.dictData, c.dictOffs, c.hasDict = nil, nil, false
	c.releaseDictionary()
	c.releaseDictArr()
	c.freeScratch()
	c.releasePage()
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// columnOut is one batch of a pageColumn being built.
type columnOut struct {
	mem   memory.Allocator
	width int
	n     int
	data  []byte  // fixed-width values, or byte array contents
	offs  []int32 // byte arrays: n+1 offsets (when width is 0)
	offB  []byte
	pos   int // byte arrays: bytes written
	valid *memory.Buffer
	nulls int
	done  bool

	// Views (view): data holds the views; long values point into bufs
	// (dictionaries the batch references, and copies of plain values,
	// the last of which, copied, is being filled up to copyPos).
	view    bool
	views   []arrow.ViewHeader
	bufs    []*memory.Buffer
	copied  *memory.Buffer
	copyIdx int32 // copied's index in bufs
	copyPos int

	// Dictionary mode (dictMode, byte arrays): rows are indices into
	// dict, in idxB, until a value comes from elsewhere (a plain page,
	// another chunk's dictionary), when demote turns the rows so far into
	// offsets and data.
	dictMode bool
	dict     arrow.Array
	idxB     []byte
	idx      []int32
	avg      float64
}

// viewCopySize is the size of the buffers plain values too long to be
// inlined in views are copied into.
const viewCopySize = 256 << 10

// start allocates the batch's buffers; avg estimates a byte array's size.
func (o *columnOut) start(avg float64) {
	if o.dictMode {
		o.avg = avg
		o.idxB = allocUninit(o.mem, o.n*arrow.Int32SizeBytes)
		o.idx = arrow.Int32Traits.CastFromBytes(o.idxB)
		return
	}
	if o.view {
		o.data = allocUninit(o.mem, o.n*arrow.ViewHeaderSizeBytes)
		o.views = arrow.ViewHeaderTraits.CastFromBytes(o.data)
		return
	}
	if o.width > 0 {
		o.data = allocUninit(o.mem, o.n*o.width)
		return
	}
	o.offB = allocUninit(o.mem, (o.n+1)*arrow.Int32SizeBytes)
	o.offs = arrow.Int32Traits.CastFromBytes(o.offB)
	o.offs[0] = 0
	if avg <= 0 {
		avg = 16
	}
	o.data = allocUninit(o.mem, int(avg*float64(o.n))+64)
}

// putBytes sets row r (rows are put in order) to b.
func (o *columnOut) putBytes(r int, b []byte) {
	if o.pos+len(b) > len(o.data) {
		grown := allocUninit(o.mem, max(o.pos+len(b), 2*len(o.data)))
		copy(grown, o.data[:o.pos])
		o.mem.Free(o.data)
		o.data = grown
	}
	o.pos += copy(o.data[o.pos:], b)
	o.offs[r+1] = int32(o.pos)
}

// putValue sets row r (rows are put in order) to the plain value b: a
// copy of it for offsets and data, or a view with it inlined or copied.
func (o *columnOut) putValue(r int, b []byte) {
	if !o.view {
		o.putBytes(r, b)
		return
	}
	v := &o.views[r]
	*v = arrow.ViewHeader{}
	v.SetBytes(b)
	if v.IsInline() {
		return
	}
	if o.copied == nil || o.copyPos+len(b) > o.copied.Len() {
		o.copied = memory.NewResizableBuffer(o.mem)
		o.copied.Resize(max(viewCopySize, len(b)))
		o.bufs = append(o.bufs, o.copied)
		o.copyIdx, o.copyPos = int32(len(o.bufs)-1), 0
	}
	copy(o.copied.Bytes()[o.copyPos:], b)
	v.SetIndexOffset(o.copyIdx, int32(o.copyPos))
	o.copyPos += len(b)
}

// holdBuffer makes b one of the batch's data buffers, once, and returns
// its index.
func (o *columnOut) holdBuffer(b *memory.Buffer) int32 {
	for i, have := range o.bufs {
		if have == b {
			return int32(i)
		}
	}
	b.Retain()
	o.bufs = append(o.bufs, b)
	return int32(len(o.bufs) - 1)
}

// putIndices sets rows [r, r+len(idx)) to the dictionary entries idx.
func (o *columnOut) putIndices(r int, idx []uint32, dictLen int) error {
	for i, j := range idx {
		if int(j) >= dictLen {
			return fmt.Errorf("dictionary index %d out of range (%d entries)", j, dictLen)
		}
		o.idx[r+i] = int32(j)
	}
	return nil
}

// demote ends dictionary mode: rows [0, row) become offsets and data.
func (o *columnOut) demote(row int) {
	if !o.dictMode {
		return
	}
	var dOffs []int32
	var dData []byte
	if o.dict != nil {
		b := o.dict.(interface {
			ValueOffsets() []int32
			ValueBytes() []byte
		})
		dOffs, dData = b.ValueOffsets(), b.ValueBytes()
	}
	valid := func(r int) bool { return o.valid == nil || bitutil.BitIsSet(o.valid.Bytes(), r) }
	size := 0
	for r := range row {
		if valid(r) {
			j := o.idx[r]
			size += int(dOffs[j+1] - dOffs[j])
		}
	}
	avg := o.avg
	if avg <= 0 {
		avg = 16
	}
	o.offB = allocUninit(o.mem, (o.n+1)*arrow.Int32SizeBytes)
	o.offs = arrow.Int32Traits.CastFromBytes(o.offB)
	o.offs[0] = 0
	o.data = allocUninit(o.mem, size+int(avg*float64(o.n-row))+64)
	for r := range row {
		if valid(r) {
			j := o.idx[r]
			o.pos += copy(o.data[o.pos:], dData[dOffs[j]:dOffs[j+1]])
		}
		o.offs[r+1] = int32(o.pos)
	}
	o.mem.Free(o.idxB)
	o.idxB, o.idx = nil, nil
	if o.dict != nil {
		o.dict.Release()
		o.dict = nil
	}
	o.dictMode = false
}

// putNull sets row r (rows are put in order) to null.
func (o *columnOut) putNull(r int) {
	if o.valid == nil {
		o.valid = memory.NewResizableBuffer(o.mem)
		o.valid.Resize(int(bitutil.BytesForBits(int64(o.n))))
		bitutil.SetBitsTo(o.valid.Bytes(), 0, int64(o.n), true)
	}
	bitutil.ClearBit(o.valid.Bytes(), r)
	o.nulls++
	switch {
	case o.dictMode:
		o.idx[r] = 0
	case o.view:
		o.views[r] = arrow.ViewHeader{}
	case o.width > 0:
		clear(o.data[r*o.width : (r+1)*o.width])
	default:
		o.offs[r+1] = int32(o.pos)
	}
}

// array hands the buffers to an Arrow array of type dt.
func (o *columnOut) array(dt arrow.DataType) (arrow.Array, error) {
	if o.dictMode && o.dict == nil {
		o.demote(o.n) // no value came from a dictionary
	}
	if o.dictMode {
		idx := memory.NewBufferWithAllocator(o.idxB, o.mem)
		bufs := []*memory.Buffer{o.valid, idx}
		dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: dt}
		d := array.NewDataWithDictionary(dictType, o.n, bufs, o.nulls, 0, o.dict.Data().(*array.Data))
		o.done = true
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
		o.dict.Release()
		o.dict = nil
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	if o.width == 0 && o.pos > math.MaxInt32 {
		return nil, errors.New("a batch holds over 2 GiB of values")
	}
	var bufs []*memory.Buffer
	switch {
	case o.view:
		if o.copied != nil {
			o.copied.ResizeNoShrink(o.copyPos)
		}
		views := memory.NewBufferWithAllocator(o.data, o.mem)
		bufs = append([]*memory.Buffer{o.valid, views}, o.bufs...)
	case o.width > 0:
		data := memory.NewBufferWithAllocator(o.data, o.mem)
		bufs = []*memory.Buffer{o.valid, data}
	default:
		offsets := memory.NewBufferWithAllocator(o.offB, o.mem)
		data := memory.NewBufferWithAllocator(o.data, o.mem) // freed whole, as allocated
		data.ResizeNoShrink(o.pos)
		bufs = []*memory.Buffer{o.valid, offsets, data}
	}
	o.done = true
	d := array.NewData(dt, o.n, bufs, nil, o.nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

// free returns the buffers of a batch that failed.
func (o *columnOut) free() {
	if o.done {
		return
	}
	if o.idxB != nil {
		o.mem.Free(o.idxB)
	}
	if o.dict != nil {
		o.dict.Release()
	}
	if o.data != nil {
		o.mem.Free(o.data)
	}
	if o.offB != nil {
		o.mem.Free(o.offB)
	}
	if o.valid != nil {
		o.valid.Release()
	}
	for _, b := range o.bufs {
		b.Release()
	}
}

// hybrid decodes Parquet's RLE / bit-packing hybrid encoding of values of
// bitWidth bits (definition levels, dictionary indices).
type hybrid struct {
	data    []byte
	pos     int // next run header
	width   uint
	mask    uint32
	rle     int // values left in the current RLE run
	rleVal  uint32
	packed  int // values left in the current bit-packed run
	packBit int // bit offset in data of the next bit-packed value
}

func (h *hybrid) init(data []byte, width int) {
	*h = hybrid{data: data, width: uint(width), mask: uint32(1<<uint(width)) - 1}
	if width >= 32 {
		h.mask = math.MaxUint32
	}
}

// decode fills out with the next len(out) values.
func (h *hybrid) decode(out []uint32) error {
	for i := 0; i < len(out); {
		if h.rle == 0 && h.packed == 0 {
			if err := h.header(); err != nil {
				return err
			}
			continue
		}
		if h.rle > 0 {
			k := min(h.rle, len(out)-i)
			v := h.rleVal
			for j := range out[i : i+k] {
				out[i+j] = v
			}
			h.rle -= k
			i += k
			continue
		}
		k := min(h.packed, len(out)-i)
		w, bit := int(h.width), h.packBit
		for j := 0; j < k; j++ {
			out[i+j] = h.bitsAt(bit)
			bit += w
		}
		h.packBit = bit
		h.packed -= k
		i += k
	}
	return nil
}

// bitsAt reads width bits at bit offset bit, little-endian bit order.
func (h *hybrid) bitsAt(bit int) uint32 {
	b := bit >> 3
	var word uint64
	if b+8 <= len(h.data) {
		word = binary.LittleEndian.Uint64(h.data[b:])
	} else {
		for k := 0; b+k < len(h.data) && k < 8; k++ {
			word |= uint64(h.data[b+k]) << (8 * k)
		}
	}
	return uint32(word>>(bit&7)) & h.mask
}

// header reads the next run's header.
func (h *hybrid) header() error {
	v, n := binary.Uvarint(h.data[h.pos:])
	if n <= 0 {
		return errors.New("truncated run")
	}
	h.pos += n
	if v&1 == 1 { // bit-packed: groups of 8 values
		groups := int(v >> 1)
		if groups <= 0 || groups > len(h.data)*8 {
			return errors.New("bad bit-packed run")
		}
		h.packed = groups * 8
		h.packBit = h.pos * 8
		h.pos += min(groups*int(h.width), len(h.data)-h.pos)
		if h.width == 0 {
			h.packBit = 0
		}
		return nil
	}
	count := int(v >> 1)
	if count <= 0 {
		return errors.New("bad RLE run")
	}
	nb := (int(h.width) + 7) / 8
	if h.pos+nb > len(h.data) {
		return errors.New("truncated RLE run")
	}
	var val uint32
	for k := 0; k < nb; k++ {
		val |= uint32(h.data[h.pos+k]) << (8 * k)
	}
	h.pos += nb
	h.rle, h.rleVal = count, val&h.mask
	return nil
}
