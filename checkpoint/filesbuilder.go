package checkpoint

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
)

// FilesBuilder builds a FileColumns one add action at a time. It is not
// safe for concurrent use.
type FilesBuilder struct {
	layout     *FileLayout
	capacity   int
	n          int
	path       *textCol
	size       *fixedCol[int64]
	modTime    *fixedCol[int64]
	dataChange *bitCol
	parts      []*partCol
	oddParts   map[int]map[string]*string
	dv         *dvCols
	tags       *array.MapBuilder
	baseRowID  *fixedCol[int64]
	defaultVer *fixedCol[int64]
	clustering *textCol
	stats      *statsBuilder // nil: stats left out
	percent    bool
}

// NewFilesBuilder starts a batch of about capacity files laid out by l;
// without stats, the batch's stats are left out (to be attached later
// with SetStats).
func NewFilesBuilder(l *FileLayout, capacity int, stats bool) *FilesBuilder {
	capacity = max(capacity, 1)
	b := &FilesBuilder{
		layout:     l,
		capacity:   capacity,
		path:       newTextCol(capacity, 0),
		size:       newFixedCol[int64](capacity),
		modTime:    newFixedCol[int64](capacity),
		dataChange: newBitCol(capacity),
	}
	for range l.Partitions {
		b.parts = append(b.parts, &partCol{codes: newFixedCol[int32](capacity), memo: map[string]int32{}, dict: newTextCol(8, 0)})
	}
	if stats {
		b.stats = newStatsBuilder(l, capacity)
	}
	return b
}

// Len is the number of files appended.
func (b *FilesBuilder) Len() int { return b.n }

// AppendAdd appends an add action.
func (b *FilesBuilder) AppendAdd(a *actions.Add) {
	i := b.n
	b.appendPath(a.Path)
	b.size.append(a.Size, true)
	b.modTime.append(a.ModificationTime, true)
	b.dataChange.append(a.DataChange, true)
	b.appendPartitions(i, a.PartitionValues)
	if b.stats != nil {
		b.stats.appendJSON(i, bytesOf(a.Stats), a.Stats != "")
	}
	if len(a.Tags) > 0 { // no tags and empty tags are the same to Delta
		b.appendTags(i, a.Tags)
	}
	if a.DeletionVector != nil {
		b.appendDV(i, a.DeletionVector)
	}
	if a.BaseRowID != nil {
		b.baseRowID = padInt(b.baseRowID, b.capacity, i)
		b.baseRowID.append(*a.BaseRowID, true)
	}
	if a.DefaultRowCommitVersion != nil {
		b.defaultVer = padInt(b.defaultVer, b.capacity, i)
		b.defaultVer.append(*a.DefaultRowCommitVersion, true)
	}
	if a.ClusteringProvider != nil {
		b.clustering = padText(b.clustering, b.capacity, i)
		b.clustering.appendString(*a.ClusteringProvider, true)
	}
	b.n++
}

func (b *FilesBuilder) appendPath(p string) {
	b.path.appendString(p, true)
	if !b.percent && mayEscape(p) {
		b.percent = true
	}
}

func padInt(c *fixedCol[int64], capacity, n int) *fixedCol[int64] {
	if c == nil {
		c = newFixedCol[int64](capacity)
	}
	c.pad(n)
	return c
}

func padText(c *textCol, capacity, n int) *textCol {
	if c == nil {
		c = newTextCol(capacity, 0)
	}
	c.pad(n)
	return c
}

// partCol builds one partition key's dictionary column.
type partCol struct {
	codes *fixedCol[int32]
	memo  map[string]int32
	dict  *textCol
}

func (p *partCol) append(v *string) {
	if v == nil {
		p.codes.append(0, false)
		return
	}
	p.appendBytes([]byte(*v))
}

func (p *partCol) appendBytes(v []byte) {
	code, ok := p.memo[string(v)]
	if !ok {
		code = int32(p.dict.rows())
		p.memo[string(v)] = code
		p.dict.appendBytes(v, true)
	}
	p.codes.append(code, true)
}

// appendPartitions appends file i's partition values.
func (b *FilesBuilder) appendPartitions(i int, m map[string]*string) {
	regular := len(m) == len(b.layout.Partitions)
	if regular {
		for _, k := range b.layout.Partitions {
			if _, ok := m[k]; !ok {
				regular = false
				break
			}
		}
	}
	if !regular {
		b.odd(i, m)
		return
	}
	for j, k := range b.layout.Partitions {
		b.parts[j].append(m[k])
	}
}

// odd records partition values that are not the layout's keys exactly.
func (b *FilesBuilder) odd(i int, m map[string]*string) {
	if b.oddParts == nil {
		b.oddParts = map[int]map[string]*string{}
	}
	b.oddParts[i] = m
	for _, p := range b.parts {
		p.codes.append(0, false)
	}
}

func (b *FilesBuilder) appendTags(i int, tags map[string]string) {
	tb := b.tagBuilder(i)
	tb.Append(true)
	kb := tb.KeyBuilder().(*array.StringBuilder)
	ib := tb.ItemBuilder().(*array.StringBuilder)
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kb.Append(k)
		ib.Append(tags[k])
	}
}

// tagBuilder returns the tags builder, made and padded to row i.
func (b *FilesBuilder) tagBuilder(i int) *array.MapBuilder {
	if b.tags == nil {
		b.tags = array.NewMapBuilder(memory.DefaultAllocator, arrow.BinaryTypes.String, arrow.BinaryTypes.String, true)
	}
	if n := i - b.tags.Len(); n > 0 {
		b.tags.AppendNulls(n)
	}
	return b.tags
}

// dvCols builds the deletion vector columns.
type dvCols struct {
	present     *bitCol
	storageType *textCol
	path        *textCol
	offset      *fixedCol[int32]
	size        *fixedCol[int32]
	cardinality *fixedCol[int64]
	maxRowIndex *fixedCol[int64]
}

func (d *dvCols) pad(n int) {
	for d.present.n < n {
		d.present.append(false, false)
		d.storageType.appendBytes(nil, false)
		d.path.appendBytes(nil, false)
		d.offset.append(0, false)
		d.size.append(0, false)
		d.cardinality.append(0, false)
		d.maxRowIndex.append(0, false)
	}
}

func (b *FilesBuilder) appendDV(i int, dv *actions.DeletionVector) {
	if b.dv == nil {
		c := b.capacity
		b.dv = &dvCols{present: newBitCol(c), storageType: newTextCol(c, c), path: newTextCol(c, 0),
			offset: newFixedCol[int32](c), size: newFixedCol[int32](c), cardinality: newFixedCol[int64](c), maxRowIndex: newFixedCol[int64](c)}
	}
	d := b.dv
	d.pad(i)
	d.present.append(true, true)
	d.storageType.appendString(dv.StorageType, true)
	d.path.appendString(dv.PathOrInlineDv, true)
	if dv.Offset != nil {
		d.offset.append(*dv.Offset, true)
	} else {
		d.offset.append(0, false)
	}
	d.size.append(dv.SizeInBytes, true)
	d.cardinality.append(dv.Cardinality, true)
	if dv.MaxRowIndex != nil {
		d.maxRowIndex.append(*dv.MaxRowIndex, true)
	} else {
		d.maxRowIndex.append(0, false)
	}
}

// Finish makes the FileColumns of the files appended.
func (b *FilesBuilder) Finish() *FileColumns {
	n := b.n
	c := &FileColumns{
		layout:     b.layout,
		n:          n,
		path:       b.path.array(arrow.BinaryTypes.String).(*array.String),
		size:       b.size.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64),
		modTime:    b.modTime.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64),
		dataChange: b.dataChange.array(),
		oddParts:   b.oddParts,
		percent:    b.percent,
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	for _, p := range b.parts {
		codes := p.codes.array(arrow.PrimitiveTypes.Int32, 4)
		dict := p.dict.array(arrow.BinaryTypes.String)
		d := array.NewDictionaryArray(dictType, codes, dict)
		// Arrow makes a dictionary's values array on first use, unlocked:
		// make it now, before the batch is shared.
		d.Dictionary()
		c.parts = append(c.parts, d)
		codes.Release()
		dict.Release()
	}
	if b.dv != nil {
		d := b.dv
		d.pad(n)
		c.dv = &dvArrays{
			present:     d.present.array(),
			storageType: d.storageType.array(arrow.BinaryTypes.String).(*array.String),
			path:        d.path.array(arrow.BinaryTypes.String).(*array.String),
			offset:      d.offset.array(arrow.PrimitiveTypes.Int32, 4).(*array.Int32),
			size:        d.size.array(arrow.PrimitiveTypes.Int32, 4).(*array.Int32),
			cardinality: d.cardinality.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64),
			maxRowIndex: d.maxRowIndex.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64),
		}
	}
	if b.tags != nil {
		b.tagBuilder(n)
		c.tags = b.tags.NewMapArray()
		b.tags.Release()
	}
	if b.baseRowID != nil {
		b.baseRowID.pad(n)
		c.baseRowID = b.baseRowID.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64)
	}
	if b.defaultVer != nil {
		b.defaultVer.pad(n)
		c.defaultRowVersion = b.defaultVer.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64)
	}
	if b.clustering != nil {
		b.clustering.pad(n)
		c.clustering = b.clustering.array(arrow.BinaryTypes.String).(*array.String)
	}
	if b.stats != nil {
		c.stats.Store(b.stats.finish(n))
	}
	return c
}

// statsBuilder builds a FileStats.
type statsBuilder struct {
	layout     *FileLayout
	capacity   int
	present    *bitCol
	numRecords *fixedCol[int64]
	tight      *bitCol
	mins, maxs []*boundCol
	nulls      []*fixedCol[int64]
	raw        map[int]string
	row        *statsRow
}

func newStatsBuilder(l *FileLayout, capacity int) *statsBuilder {
	return &statsBuilder{
		layout:   l,
		capacity: capacity,
		present:  newBitCol(capacity),
		mins:     make([]*boundCol, len(l.Stats)),
		maxs:     make([]*boundCol, len(l.Stats)),
		nulls:    make([]*fixedCol[int64], len(l.Stats)),
		row:      newStatsRow(l),
	}
}

// appendJSON appends file i's add.stats (present false: it has none).
func (s *statsBuilder) appendJSON(i int, js []byte, present bool) {
	s.present.append(present, true)
	if !present {
		return
	}
	if !parseStats(s.layout, js, s.row) {
		if s.raw == nil {
			s.raw = map[int]string{}
		}
		s.raw[i] = string(js)
		return
	}
	s.commit(i)
}

// commit appends the parsed row as file i's.
func (s *statsBuilder) commit(i int) {
	r := s.row
	if r.hasNum {
		s.numRecords = padInt(s.numRecords, s.capacity, i)
		s.numRecords.append(r.numRecords, true)
	}
	if r.hasTight {
		if s.tight == nil {
			s.tight = newBitCol(s.capacity)
		}
		s.tight.pad(i)
		s.tight.append(r.tight, true)
	}
	for _, idx := range r.touched {
		cell := &r.cells[idx]
		if cell.null {
			continue
		}
		j := int(idx) / cellsPerColumn
		switch int(idx) % cellsPerColumn {
		case cellMin:
			s.mins[j] = s.bound(s.mins[j], j, i)
			s.mins[j].appendCell(cell)
		case cellMax:
			s.maxs[j] = s.bound(s.maxs[j], j, i)
			s.maxs[j].appendCell(cell)
		case cellNulls:
			s.nulls[j] = padInt(s.nulls[j], s.capacity, i)
			s.nulls[j].append(cell.i, true)
		}
	}
}

func (s *statsBuilder) bound(c *boundCol, j, i int) *boundCol {
	if c == nil {
		c = newBoundCol(s.layout.Stats[j].Arrow, s.capacity)
	}
	c.pad(i)
	return c
}

func (s *statsBuilder) finish(n int) *FileStats {
	st := &FileStats{
		present: s.present.array(),
		mins:    make([]arrow.Array, len(s.mins)),
		maxs:    make([]arrow.Array, len(s.maxs)),
		nulls:   make([]*array.Int64, len(s.nulls)),
		raw:     s.raw,
	}
	if s.numRecords != nil {
		s.numRecords.pad(n)
		st.numRecords = s.numRecords.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64)
	}
	if s.tight != nil {
		s.tight.pad(n)
		st.tightBounds = s.tight.array()
	}
	for j := range s.mins {
		if c := s.mins[j]; c != nil {
			c.pad(n)
			st.mins[j] = c.array()
		}
		if c := s.maxs[j]; c != nil {
			c.pad(n)
			st.maxs[j] = c.array()
		}
		if c := s.nulls[j]; c != nil {
			c.pad(n)
			st.nulls[j] = c.array(arrow.PrimitiveTypes.Int64, 8).(*array.Int64)
		}
	}
	return st
}
