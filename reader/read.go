package reader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/arrowconv"
	"github.com/lakelog/lakelog/objstore"
)

// ReadFile reads one planned file: batches of the scan's Schema, with the
// filter applied and rows in file order. The scan's limit does not apply.
// Each batch is released when the loop body returns; Retain it to keep it.
func (s *Scan) ReadFile(ctx context.Context, f *ScanFile) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if err := checkReadSupported(s.snap); err != nil {
			yield(nil, err)
			return
		}
		stopped := false
		err := s.readFile(ctx, f, nil, func(rec arrow.RecordBatch) bool {
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				stopped = true
			}
			return ok
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}

// sizedReaderAt is an opened data file: an object opened for reads at
// offsets, or its entry in an object-store pass's fetcher.
type sizedReaderAt interface {
	io.ReaderAt
	Size() int64
}

// columnSource says where one read column of a file comes from.
type columnSource struct {
	field    *actions.StructField
	arrow    arrow.Field
	part     bool // a partition column: a constant
	value    any  // the partition value (nil for null)
	fileName string
	// fileField is the file's column, when inFile.
	fileField *pqarrow.SchemaField
	inFile    bool
	int96     *int96Column     // a top-level INT96 column, decoded here
	bytes     *byteArrayColumn // a top-level string or binary column, decoded here
	pages     *pageColumn      // a flat column decoded here page by page
}

// readFile decodes f and calls emit with each non-empty batch, which emit
// owns (it must release it). It stops when emit returns false.
//
// On an object store the file is read through h, its entry in the pass's
// fetcher (fetch.go); with h nil, through a fetcher of its own.
func (s *Scan) readFile(ctx context.Context, f *ScanFile, h *fetchedFile, emit func(arrow.RecordBatch) bool) error {
	if remoteStore(s.snap.Store()) && h == nil {
		fe := s.newFetcher(ctx)
		defer fe.Close()
		h = s.addFile(fe, f, false)
	}
	o, err := s.openFile(ctx, f, h, false)
	if err != nil {
		return err
	}
	defer o.close()
	for _, u := range o.units {
		stopped := false
		err := s.readUnit(ctx, o, u, func(rec arrow.RecordBatch) bool {
			if !emit(rec) {
				stopped = true
			}
			return !stopped
		})
		if err != nil || stopped {
			return err
		}
	}
	return nil
}

// openedFile is a data file opened for reading: its footer parsed once,
// its rows cut into units of whole row groups that are decoded apart (on
// several goroutines by Records), each by decoders of its own reading
// through the same object.
type openedFile struct {
	f     *ScanFile
	h     *fetchedFile // on an object store; nil on local disk
	obj   sizedReaderAt
	close func() // releases obj (and h); call it once every unit is read
	md    *metadata.FileMetaData
	sel   *rowSelector // the deletion vector's rows, or nil
	// pages are the rows the page index leaves (pageSelection), nil for
	// every row.
	pages []rowRange
	units []fileUnit
}

// fileUnit is a run of whole row groups of a file, rgFrom..rgTo-1, whose
// first row is the file's row base, or a range of the rows of one row
// group (splitUnits): rows rows from base, rgBase the row group's first.
type fileUnit struct {
	rgFrom, rgTo int
	base, rows   int64
	rgBase       int64
	// columns: the unit's page-decoded columns are decoded on goroutines
	// of their own, batch by batch (a large row group not split).
	columns bool
	// owner is the unit's number in its file: on an object store its
	// decoders read as this owner of the file's claims (fetch.go).
	owner int
}

// unitRows is the fewest rows a unit holds when the file has more: a
// file's row groups are gathered into units of at least a batch, so that
// files of many small row groups do not pay a unit's set-up per group.
func unitRows(batch int) int64 { return int64(max(batch, 1)) }

// openFile opens f: it loads its deletion vector, waits for its plan
// (object store) or opens it (local disk), parses its footer, finds the
// rows the page index leaves and cuts the row groups that hold any into
// units (fileUnits; on an object store, those of the plan).
func (s *Scan) openFile(ctx context.Context, f *ScanFile, h *fetchedFile, split bool) (_ *openedFile, err error) {
	o := &openedFile{f: f, h: h, close: func() {}}
	defer func() {
		if err != nil {
			o.close()
		}
	}()
	if h != nil {
		o.close = h.Release
	}
	if o.sel, err = s.rowSelection(ctx, f); err != nil {
		return nil, err
	}
	if h != nil {
		if err := h.Wait(ctx); err != nil {
			return nil, s.fileError(f.Key, err)
		}
		if err := h.PlanErr(); errors.Is(err, objstore.ErrNotFound) {
			return nil, s.fileError(f.Key, err) // its tail is not there
		}
		o.obj = h
	} else {
		obj, err := objstore.OpenObject(ctx, s.snap.FileStore(), f.Key, f.Add.Size)
		if err != nil {
			return nil, s.fileError(f.Key, err)
		}
		o.obj, o.close = obj, func() { obj.Close() }
	}
	s.m.filesRead.Add(1)
	pf, err := file.NewParquetReader(io.NewSectionReader(o.obj, 0, o.obj.Size()), file.WithReadProps(s.readProps()))
	if err != nil {
		return nil, fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	defer pf.Close()
	o.md = pf.MetaData()
	if f.Stats == nil || f.Stats.NumRecords < 0 {
		s.m.footerRows.Add(pf.NumRows())
		s.m.footersRead.Add(1)
	}
	if o.sel != nil {
		if err := o.sel.check(pf.NumRows()); err != nil {
			return nil, fmt.Errorf("reader: %s: %w", f.Key, err)
		}
	}
	if h != nil && h.planned {
		// The plan's units: what was fetched is what they read.
		o.pages, o.units = h.pages, h.units
	} else {
		var sources []columnSource
		if s.pruner != nil || s.big(o.md) {
			// The page index may leave only some rows, and a row group may
			// be split: both depend on the decoders the columns get,
			// resolved here for the file.
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, s.cfg.mem)
			if err != nil {
				return nil, fmt.Errorf("reader: %s: %w", f.Key, err)
			}
			if sources, err = s.columnSources(f); err != nil {
				return nil, err
			}
			defer closeSources(sources)
			if _, err = s.resolveSources(pf, fr, sources); err != nil {
				return nil, fmt.Errorf("reader: %s: %w", f.Key, err)
			}
			o.pages = s.pageSelection(pf, sources, f.Add.PartitionValues)
		}
		o.units = s.fileUnits(pf, sources, o.pages, split)
	}
	if o.pages != nil {
		left := int64(0)
		for _, r := range o.pages {
			left += r.end - r.start
		}
		s.m.pageIndexFiles.Add(1)
		s.m.pageIndexSkipped.Add(pf.NumRows() - left)
	}
	return o, nil
}

// big reports whether the file (md) has a row group that a scan cuts
// into pieces or whose columns it decodes side by side (fileUnits).
func (s *Scan) big(md *metadata.FileMetaData) bool {
	return s.cfg.parallelism > 1 && s.largeRowGroups(md)
}

// fileUnits cuts the row groups of the file pf that hold any of the rows
// pages leaves (nil: every row) into units (cutUnits). With parallelism
// above 1, a large row group's page-decoded columns (sources) are decoded
// side by side, and with split it is cut into several units
// (splitUnits) where it can be. Each unit's owner is its index.
func (s *Scan) fileUnits(pf *file.Reader, sources []columnSource, pages []rowRange, split bool) []fileUnit {
	md := pf.MetaData()
	units := cutUnits(md, pages, unitRows(s.cfg.batchSize))
	if s.big(md) && pageColumns(sources) > 1 {
		// A large row group not split below (no offset index, or
		// columns pqarrow decodes): its columns decoded side by side.
		// (The pieces splitUnits makes are not.)
		for i, u := range units {
			if u.rgTo-u.rgFrom == 1 && s.large(md, u.rgFrom) {
				units[i].columns = true
			}
		}
	}
	if split && s.big(md) {
		units = s.splitUnits(pf, sources, units)
	}
	for i := range units {
		units[i].owner = i
	}
	return units
}

// pageColumns counts the sources decoded page by page.
func pageColumns(sources []columnSource) int {
	n := 0
	for _, src := range sources {
		if src.pages != nil {
			n++
		}
	}
	return n
}

// batchesByColumns counts the batches decoded column by column (for tests).
var batchesByColumns atomic.Int64

// decodePages decodes the next n values of each page-decoded column of
// sources at once, one goroutine a column (this one takes the first):
// each reads its own column chunk in order, as a serial decode does, so
// an object store's fetcher sees the same reads. out[i] is source i's
// array, errs[i] its error.
func decodePages(sources []columnSource, mem memory.Allocator, n int) (out []arrow.Array, errs []error) {
	out, errs = make([]arrow.Array, len(sources)), make([]error, len(sources))
	var wg sync.WaitGroup
	first := -1
	for i := range sources {
		if sources[i].pages == nil {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		wg.Go(func() { out[i], errs[i] = sources[i].pages.next(mem, n) })
	}
	if first >= 0 {
		out[first], errs[first] = sources[first].pages.next(mem, n)
	}
	wg.Wait()
	return out, errs
}

// unitsSplit counts the units splitUnits cut (for tests).
var unitsSplit atomic.Int64

// large reports whether row group rg of md is worth decoding by
// several goroutines: more bytes (uncompressed) than the decode-ahead
// budget, so that a second worker decoding the next unit would soon wait
// on the budget while one decodes this one, and rows enough for two
// pieces. (A row group below the budget is decoded ahead whole while
// the consumer reads the one before: splitting it only costs the
// pieces' dictionary re-reads, a quarter more CPU on delta-rs's row
// groups of 1Mi rows.)
func (s *Scan) large(md *metadata.FileMetaData, rg int) bool {
	r := md.RowGroup(rg)
	return r.TotalByteSize() > s.cfg.decodeAhead && r.NumRows() >= 2*s.splitRows(r.NumRows())
}

// largeRowGroups reports whether any row group of md is large.
func (s *Scan) largeRowGroups(md *metadata.FileMetaData) bool {
	for rg := range md.NumRowGroups() {
		if s.large(md, rg) {
			return true
		}
	}
	return false
}

// splitRows is the rows of each piece splitUnits cuts a row group of
// rows rows into: at least 4 batches (the pieces re-read each column's
// dictionary and the page each starts in), and few enough that the
// parallelism has about four pieces each.
func (s *Scan) splitRows(rows int64) int64 {
	return max(4*unitRows(s.cfg.batchSize), (rows+4*int64(s.cfg.parallelism)-1)/(4*int64(s.cfg.parallelism)))
}

// splitUnits cuts the units that are one large row group into ranges of
// its rows, decoded apart (several goroutines on one row group, as on
// the row groups of a file): a file of one or a few large row groups,
// as lakelog writes them (a row group per file up to 128 MiB) or delta-rs
// (1Mi rows), would otherwise be decoded by one goroutine while the
// others wait on the decode-ahead budget. Only where every column the
// file gives is decoded page by page (pageColumn, which can start at a
// row) and the row group has an offset index for each, so that a piece
// jumps to its first page instead of decoding the rows before it.
func (s *Scan) splitUnits(pf *file.Reader, sources []columnSource, units []fileUnit) []fileUnit {
	var cols []int
	for _, src := range sources {
		if src.inFile && src.pages == nil {
			return units // pqarrow or another decoder: it cannot start at a row
		}
		if src.pages != nil {
			cols = append(cols, src.pages.col)
		}
	}
	pir := pf.GetPageIndexReader()
	if len(cols) == 0 || pir == nil {
		return units // (nothing to decode: a unit is cheap whatever its size)
	}
	out := make([]fileUnit, 0, len(units))
	for _, u := range units {
		piece := s.splitRows(u.rows)
		if u.rgTo-u.rgFrom != 1 || !s.large(pf.MetaData(), u.rgFrom) || !offsetIndexed(pir, u.rgFrom, cols) {
			out = append(out, u)
			continue
		}
		for from := int64(0); from < u.rows; {
			n := min(piece, u.rows-from)
			if u.rows-from-n < piece/2 {
				n = u.rows - from // no short piece at the end
			}
			out = append(out, fileUnit{rgFrom: u.rgFrom, rgTo: u.rgTo, base: u.base + from, rows: n, rgBase: u.base})
			unitsSplit.Add(1)
			from += n
		}
	}
	return out
}

// offsetIndexed reports whether row group rg has an offset index for
// each column of cols.
func offsetIndexed(pir *metadata.PageIndexReader, rg int, cols []int) bool {
	rgIdx, err := pir.RowGroup(rg)
	if err != nil || rgIdx == nil {
		return false
	}
	for _, c := range cols {
		if oi, err := rgIdx.GetOffsetIndex(c); err != nil || oi == nil || len(oi.GetPageLocations()) == 0 {
			return false
		}
	}
	return true
}

// cutUnits gathers the row groups of md into units of at least minRows
// rows (but one row group stays one unit), leaving out row groups of
// which pages (nil: every row) selects no row.
func cutUnits(md *metadata.FileMetaData, pages []rowRange, minRows int64) []fileUnit {
	var out []fileUnit
	var base int64
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		rows := md.RowGroup(rg).NumRows()
		from := base
		base += rows
		if rows == 0 || pages != nil && len(overlapping(pages, from, from+rows)) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].rgTo == rg && out[n-1].rows < minRows {
			out[n-1].rgTo, out[n-1].rows = rg+1, out[n-1].rows+rows
			continue
		}
		out = append(out, fileUnit{rgFrom: rg, rgTo: rg + 1, base: from, rows: rows, rgBase: from})
	}
	return out
}

// readProps are the Parquet reader properties of data files.
func (s *Scan) readProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(s.cfg.mem)
	// Column chunks are read page by page through a small buffer, rather
	// than whole: arrow-go reads a whole chunk into a new slice of its
	// own (garbage as large as the bytes read), while pages read through
	// the buffer land in the decoder's pooled page buffers. Pages the page
	// index skips are then not read at all. (On an object store the
	// fetcher has fetched the chunks, or only the pages the page index
	// leaves, and serves these reads from memory.)
	props.BufferedStreamEnabled = true
	props.BufferSize = pageBufferSize
	return props
}

// readUnit decodes the rows of unit u of o and calls emit with each
// non-empty batch, as readFile does. Units of one file may be read
// concurrently: each has its own Parquet reader and decoders over o's
// object and parsed footer.
func (s *Scan) readUnit(ctx context.Context, o *openedFile, u fileUnit, emit func(arrow.RecordBatch) bool) error {
	f := o.f
	sources, err := s.columnSources(f)
	if err != nil {
		return err
	}
	var obj sizedReaderAt = o.obj
	if o.h != nil {
		// Its reads count for the unit's claims, let go of when it ends.
		obj = o.h.Reader(u.owner)
		defer o.h.Done(u.owner)
	}
	pf, err := file.NewParquetReader(io.NewSectionReader(obj, 0, obj.Size()), file.WithReadProps(s.readProps()), file.WithMetadata(o.md))
	if err != nil {
		return fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	defer pf.Close()
	// pqarrow reserves a whole batch for every column up front, so a batch
	// size above the unit's rows only allocates memory that stays unused.
	batchSize := max(1, min(int64(s.cfg.batchSize), u.rows))
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchSize, PreAllocBinaryData: true}, s.cfg.mem)
	if err != nil {
		return fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	defer closeSources(sources)
	leaves, err := s.resolveSources(pf, fr, sources)
	if err != nil {
		return fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	for _, src := range sources {
		src.startAt(u.rgFrom, u.rgBase)
		if src.pages != nil {
			pageColumnsUsed.Add(1)
		}
	}
	if len(leaves) == 0 {
		// Nothing for pqarrow to decode: cut the unit's rows into
		// batches, only those the page index leaves when it is of use.
		ranges := []rowRange{{u.base, u.base + u.rows}}
		if o.pages != nil {
			ranges = overlapping(o.pages, u.base, u.base+u.rows)
		}
		for _, r := range ranges {
			for i := range sources {
				if sources[i].pages != nil {
					if err := sources[i].pages.skipTo(r.start); err != nil {
						return fmt.Errorf("reader: %s: %w", f.Key, err)
					}
				}
			}
			for start := r.start; start < r.end; start += int64(s.cfg.batchSize) {
				n := min(int64(s.cfg.batchSize), r.end-start)
				s.m.rowsRead.Add(n)
				rec, err := s.assemble(ctx, f, sources, nil, start, n, o.sel, u.columns)
				if err != nil {
					return err
				}
				if rec != nil && !emit(rec) {
					return nil
				}
			}
		}
		return nil
	}
	rgs := make([]int, 0, u.rgTo-u.rgFrom)
	for rg := u.rgFrom; rg < u.rgTo; rg++ {
		rgs = append(rgs, rg)
	}
	rr, err := fr.GetRecordReader(ctx, leaves, rgs)
	if err != nil {
		return fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	defer rr.Release()
	start := u.base // file row index of the batch's first row
	for rr.Next() {
		batch := rr.RecordBatch()
		s.m.rowsRead.Add(batch.NumRows())
		rec, err := s.assemble(ctx, f, sources, batch, start, batch.NumRows(), o.sel, u.columns)
		start += batch.NumRows()
		if err != nil {
			return err
		}
		if rec != nil && !emit(rec) {
			return nil
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	return nil
}

// resolveSources finds each read column of sources in the file pf (fr
// its pqarrow reader) and picks its decoder: INT96, pages or byte arrays
// decoded here, or pqarrow, whose leaf columns it returns.
func (s *Scan) resolveSources(pf *file.Reader, fr *pqarrow.FileReader, sources []columnSource) ([]int, error) {
	mem := s.cfg.mem
	var leaves []int
	for i := range sources {
		src := &sources[i]
		if src.part {
			continue
		}
		sf, err := s.mapping.fileField(fr.Manifest, src.field)
		if err != nil {
			return nil, err
		}
		if sf == nil {
			continue // added to the table after this file, or not in it: nulls
		}
		src.inFile, src.fileName, src.fileField = true, sf.Field.Name, sf
		if sf.IsLeaf() && pf.MetaData().Schema.Column(sf.ColIndex).PhysicalType() == parquet.Types.Int96 {
			// Legacy INT96 timestamps: decoded here, because pqarrow goes
			// through nanoseconds and fails outside 1677..2262.
			src.int96 = &int96Column{pf: pf, col: sf.ColIndex, maxDef: pf.MetaData().Schema.Column(sf.ColIndex).MaxDefinitionLevel()}
			continue
		}
		if sf.IsLeaf() && !disablePageColumns {
			if pc := pageColumnFor(pf, sf.ColIndex, src.arrow.Type, mem); pc != nil {
				pc.dictOut = s.cfg.dictionaries && pc.width == 0 && !pc.view
				src.pages = pc
				continue
			}
		}
		if sf.IsLeaf() && directByteArray(pf, sf.ColIndex, src.arrow.Type) {
			src.bytes = newByteArrayColumn(pf, sf.ColIndex, plainOf(src.arrow.Type))
			continue
		}
		plainDictionary(sf)
		leaves = appendLeaves(leaves, sf)
	}
	return leaves, nil
}

// fileColumns are the file's leaf columns that sources read, whatever
// decodes them.
func fileColumns(sources []columnSource) []int {
	var out []int
	for _, src := range sources {
		if src.inFile && src.fileField != nil {
			out = appendLeaves(out, src.fileField)
		}
	}
	return out
}

// startAt makes the source's own decoder (if it has one) start at row
// group rg, whose first row is the file's row base.
func (src *columnSource) startAt(rg int, base int64) {
	switch {
	case src.int96 != nil:
		src.int96.rg = rg
	case src.bytes != nil:
		src.bytes.rg = rg
	case src.pages != nil:
		src.pages.rg, src.pages.pos = rg, base
	}
}

// closeSources releases what the decoders of sources hold.
func closeSources(sources []columnSource) {
	for _, src := range sources {
		if src.int96 != nil {
			src.int96.close()
		}
		if src.bytes != nil {
			src.bytes.close()
		}
		if src.pages != nil {
			src.pages.close()
		}
	}
}

// columnSources resolves each read column of f: partition constant, file
// column or (for now) nulls.
func (s *Scan) columnSources(f *ScanFile) ([]columnSource, error) {
	out := make([]columnSource, len(s.readFields))
	for i, field := range s.readFields {
		out[i] = columnSource{field: field, arrow: s.readSchema.Field(i)}
		if !s.partCols[field.Name] {
			continue
		}
		out[i].part = true
		raw, _ := s.mapping.partitionValue(f.Add.PartitionValues, field)
		v, err := actions.ParsePartitionValue(field.Type, raw)
		if err != nil {
			return nil, fmt.Errorf("reader: %s: partition column %q: %w", f.Add.Path, field.Name, err)
		}
		out[i].value = v
	}
	return out, nil
}

// plainDictionary makes pqarrow decode a top-level column that the file's
// stored Arrow schema types as a dictionary (other writers store string
// columns so) into plain values: decoding dictionary-encoded pages straight
// into a string array is cheaper than building dictionary arrays batch by
// batch and expanding them afterwards, which conformData would do. sf
// belongs to this file's reader alone, so changing its type is safe.
func plainDictionary(sf *pqarrow.SchemaField) {
	if !sf.IsLeaf() {
		return
	}
	if dt, ok := sf.Field.Type.(*arrow.DictionaryType); ok {
		f := *sf.Field
		f.Type = dt.ValueType
		sf.Field = &f
	}
}

func appendLeaves(dst []int, sf *pqarrow.SchemaField) []int {
	if sf.IsLeaf() {
		return append(dst, sf.ColIndex)
	}
	for i := range sf.Children {
		dst = appendLeaves(dst, &sf.Children[i])
	}
	return dst
}

// rowSelector says which of a file's rows exist: those its deletion
// vector does not delete. A nil *rowSelector selects every row.
type rowSelector struct {
	deleted *roaring64.Bitmap
	dv      string // the vector, for messages
}

// rowSelection loads the deletion vector of f, if it has one, and checks
// it against the file's statistics: no more rows deleted than numRecords,
// none at or past it.
func (s *Scan) rowSelection(ctx context.Context, f *ScanFile) (*rowSelector, error) {
	dv := f.Add.DeletionVector
	if dv == nil {
		return nil, nil
	}
	bm, err := deletionvector.Load(ctx, s.snap.FileStore(), s.snap.Root(), dv)
	if err != nil {
		return nil, fmt.Errorf("reader: data file %s: %w", f.Add.Path, err)
	}
	sel := &rowSelector{deleted: bm, dv: dv.UniqueID()}
	if f.Stats != nil && f.Stats.NumRecords >= 0 {
		if err := sel.check(f.Stats.NumRecords); err != nil {
			return nil, fmt.Errorf("reader: data file %s: %w (numRecords in its statistics)", f.Add.Path, err)
		}
	}
	return sel, nil
}

// check fails when the vector deletes a row at or past rows.
func (r *rowSelector) check(rows int64) error {
	if !r.deleted.IsEmpty() && r.deleted.Maximum() >= uint64(rows) {
		return fmt.Errorf("%w: deletion vector %s deletes row %d of a file of %d rows", deletionvector.ErrCorrupt, r.dv, r.deleted.Maximum(), rows)
	}
	return nil
}

// deletedIn returns the deleted rows among start..start+n-1, as offsets
// from start, walking only the vector's rows in that range; nil when none
// is deleted (or r is nil).
func (r *rowSelector) deletedIn(start, n int64) []int {
	if r == nil {
		return nil
	}
	it := r.deleted.Iterator()
	it.AdvanceIfNeeded(uint64(start))
	var out []int
	for it.HasNext() {
		row := it.PeekNext()
		if row >= uint64(start+n) {
			break
		}
		out = append(out, int(int64(row)-start))
		it.Next()
	}
	return out
}

// sparseDeletes is the largest share of a batch's rows (1 in this many)
// for which the kept rows are copied run by run rather than through the
// filter kernel: copying a run is a memmove per buffer, where arrow-go's
// filter takes strings value by value, but a run costs a slice per
// column.
const sparseDeletes = 64

// selectRows drops the rows at the offsets del (ascending) from rec,
// which it releases.
func selectRows(ctx context.Context, rec arrow.RecordBatch, del []int, mem memory.Allocator) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	if len(del) == n {
		rec.Release()
		return nil, nil
	}
	defer rec.Release()
	if rec.NumCols() == 0 {
		return array.NewRecordBatch(rec.Schema(), nil, int64(n-len(del))), nil
	}
	if len(del)*sparseDeletes <= n {
		type run struct{ from, to int64 }
		runs := make([]run, 0, len(del)+1)
		from := 0
		for _, d := range del {
			if d > from {
				runs = append(runs, run{int64(from), int64(d)})
			}
			from = d + 1
		}
		if from < n {
			runs = append(runs, run{int64(from), int64(n)})
		}
		cols := make([]arrow.Array, rec.NumCols())
		parts := make([]arrow.Array, len(runs))
		for c := range cols {
			for i, r := range runs {
				parts[i] = array.NewSlice(rec.Column(c), r.from, r.to)
			}
			var err error
			cols[c], err = array.Concatenate(parts, mem)
			for _, p := range parts {
				p.Release()
			}
			if err != nil {
				for _, done := range cols[:c] {
					done.Release()
				}
				return nil, err
			}
		}
		out := array.NewRecordBatch(rec.Schema(), cols, int64(n-len(del)))
		for _, c := range cols {
			c.Release()
		}
		return out, nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	bitutil.SetBitsTo(bits, 0, int64(n), true)
	for _, d := range del {
		bitutil.ClearBit(bits, d)
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	mask := array.NewBooleanData(data)
	data.Release()
	defer mask.Release()
	return filterRecord(ctx, rec, mask, mem)
}

// assemble builds the scan's batch for n rows of f, starting at file row
// index start, from the decoded file columns (nil when none were decoded):
// it conforms file columns to the table's types, adds partition constants
// and null columns, drops the rows sel does not select, applies the
// filter and projects. It returns nil when no row is left.
func (s *Scan) assemble(ctx context.Context, f *ScanFile, sources []columnSource, batch arrow.RecordBatch, start, n int64, sel *rowSelector, byColumns bool) (arrow.RecordBatch, error) {
	mem := s.cfg.mem
	ncols := len(sources)
	if s.rowIndex {
		ncols++
	}
	cols := make([]arrow.Array, ncols)
	var pages []arrow.Array // decoded side by side (byColumns)
	var pageErrs []error
	defer func() {
		for _, c := range append(cols, pages...) {
			if c != nil {
				c.Release()
			}
		}
	}()
	if byColumns {
		pages, pageErrs = decodePages(sources, mem, int(n))
		batchesByColumns.Add(1)
	}
	for i, src := range sources {
		var err error
		switch {
		case src.part:
			cols[i], err = constantArray(mem, plainOf(src.arrow.Type), src.value, int(n))
		case src.int96 != nil:
			var ts arrow.Array
			if ts, err = src.int96.next(mem, int(n)); err == nil {
				cols[i], err = arrowconv.Conform(ctx, mem, ts, src.arrow.Type)
				ts.Release()
			}
		case src.pages != nil && pages != nil:
			cols[i], pages[i], err = pages[i], nil, pageErrs[i]
		case src.pages != nil:
			cols[i], err = src.pages.next(mem, int(n))
		case src.bytes != nil:
			cols[i], err = src.bytes.next(mem, int(n))
		case src.inFile:
			idx := batch.Schema().FieldIndices(src.fileName)
			if len(idx) == 0 {
				return nil, fmt.Errorf("reader: %s: column %q missing from the decoded batch", f.Key, src.fileName)
			}
			cols[i], err = s.conformFileColumn(ctx, src, batch.Column(idx[0]))
		default:
			cols[i] = array.MakeArrayOfNull(mem, src.arrow.Type, int(n))
		}
		if err != nil {
			return nil, fmt.Errorf("reader: %s: column %q: %w", f.Key, src.field.Name, err)
		}
		if dt := src.arrow.Type; isView(dt) && !isView(cols[i].DataType()) {
			plain := cols[i]
			cols[i] = toView(mem, plain, dt)
			plain.Release()
		}
	}
	if s.rowIndex {
		cols[len(sources)] = rowIndexArray(mem, start, int(n))
	}
	rec := array.NewRecordBatch(arrowbatch.SchemaOf(s.readSchema, cols), cols, n)
	if del := sel.deletedIn(start, n); del != nil {
		kept, err := selectRows(ctx, rec, del, mem)
		if err != nil {
			return nil, fmt.Errorf("reader: %s: row selection: %w", f.Key, err)
		}
		if kept == nil {
			return nil, nil
		}
		rec = kept
	}
	if s.filter != nil {
		mask, err := expr.EvalPredicate(s.filter, rec, mem)
		if err != nil {
			rec.Release()
			return nil, fmt.Errorf("reader: %s: filter: %w", f.Key, err)
		}
		filtered, err := filterRecord(ctx, rec, mask, mem)
		mask.Release()
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("reader: %s: filter: %w", f.Key, err)
		}
		rec = filtered
	}
	if rec.NumRows() == 0 {
		rec.Release()
		return nil, nil
	}
	if len(s.readFields) != len(s.outFields) || s.viewsAfterFilter {
		proj := make([]arrow.Array, len(s.outFields), len(s.outFields)+1)
		for i := range proj {
			proj[i] = rec.Column(i)
			if dt := s.assembled.Field(i).Type; isView(dt) && !isView(proj[i].DataType()) {
				proj[i] = toView(mem, proj[i], dt) // read plain for the filter
				defer proj[i].Release()
			}
		}
		if s.rowIndex {
			proj = append(proj, rec.Column(int(rec.NumCols())-1))
		}
		out := array.NewRecordBatch(arrowbatch.SchemaOf(s.assembled, proj), proj, rec.NumRows())
		rec.Release()
		rec = out
	}
	if s.rt != nil {
		rec = s.rt.apply(rec, f, s.outSchema, mem)
	}
	return rec, nil
}

// conformFileColumn brings a column pqarrow decoded to the table's type:
// under column mapping a nested column's struct fields first take their
// logical names (columnMapping.toLogical).
func (s *Scan) conformFileColumn(ctx context.Context, src columnSource, col arrow.Array) (arrow.Array, error) {
	if !s.mapping.on() || !nested(src.field.Type) {
		return arrowconv.Conform(ctx, s.cfg.mem, col, plainOf(src.arrow.Type))
	}
	d, err := s.mapping.toLogical(col.Data(), src.fileField, src.field.Type)
	if err != nil {
		return nil, err
	}
	logical := array.MakeFromData(d)
	d.Release()
	defer logical.Release()
	return arrowconv.Conform(ctx, s.cfg.mem, logical, src.arrow.Type)
}

// nested reports whether t is a struct, array or map.
func nested(t actions.DataType) bool {
	switch t.(type) {
	case *actions.StructType, *actions.ArrayType, *actions.MapType:
		return true
	}
	return false
}

// rowIndexArray is start, start+1, ..., start+n-1.
func rowIndexArray(mem memory.Allocator, start int64, n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := range int64(n) {
		b.UnsafeAppend(start + i)
	}
	return b.NewArray()
}

// constantArray is n copies of v (a value of the Go type actions gives
// the column's Delta type, or nil) as an array of type dt.
func constantArray(mem memory.Allocator, dt arrow.DataType, v any, n int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	if err := actions.AppendArrowValue(b, v); err != nil {
		return nil, err
	}
	one := b.NewArray()
	defer one.Release()
	if rep := repeatValue(mem, one, n); rep != nil {
		return rep, nil
	}
	b.Reserve(n)
	for range n {
		if err := actions.AppendArrowValue(b, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// repeatValue builds n copies of one's single non-null element by filling
// buffers directly, for strings, binaries, booleans and fixed-width types;
// it returns nil for other types (or a string too long to repeat n times).
func repeatValue(mem memory.Allocator, one arrow.Array, n int) arrow.Array {
	var buffers []*memory.Buffer
	switch a := one.(type) {
	case *array.String, *array.Binary:
		var val []byte
		if sa, ok := a.(*array.String); ok {
			val = []byte(sa.Value(0))
		} else {
			val = a.(*array.Binary).Value(0)
		}
		if int64(len(val))*int64(n) > math.MaxInt32 {
			return nil
		}
		offsets := memory.NewResizableBuffer(mem)
		offsets.Resize(arrow.Int32Traits.BytesRequired(n + 1))
		offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())[:n+1]
		for i := range offs {
			offs[i] = int32(i * len(val))
		}
		data := memory.NewResizableBuffer(mem)
		data.Resize(len(val) * n)
		fillRepeated(data.Bytes(), val)
		buffers = []*memory.Buffer{nil, offsets, data}
	case *array.Boolean:
		bits := memory.NewResizableBuffer(mem)
		bits.Resize(int(bitutil.BytesForBits(int64(n))))
		if a.Value(0) {
			fillRepeated(bits.Bytes(), []byte{0xff})
		} else {
			clear(bits.Bytes())
		}
		buffers = []*memory.Buffer{nil, bits}
	default:
		fw, ok := one.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || len(one.Data().Buffers()) != 2 {
			return nil
		}
		w := fw.BitWidth() / 8
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(w * n)
		off := one.Data().Offset() * w
		fillRepeated(vals.Bytes(), one.Data().Buffers()[1].Bytes()[off:off+w])
		buffers = []*memory.Buffer{nil, vals}
	}
	d := array.NewData(one.DataType(), n, buffers, nil, 0, 0)
	for _, b := range buffers {
		if b != nil {
			b.Release()
		}
	}
	defer d.Release()
	return array.MakeFromData(d)
}

// fillRepeated fills dst with copies of val (len(dst) a multiple of len(val)).
func fillRepeated(dst, val []byte) {
	if len(dst) == 0 || len(val) == 0 {
		return
	}
	done := copy(dst, val)
	for done < len(dst) {
		done += copy(dst[done:], dst[:done])
	}
}

// int96Column decodes a top-level INT96 column (Spark's legacy timestamp:
// nanoseconds of the day and a Julian day) straight to microseconds, in
// step with the batches pqarrow decodes for the other columns.
type int96Column struct {
	pf     *file.Reader
	col    int
	maxDef int16
	rg     int // next row group to open
	rdr    *file.Int96ColumnChunkReader
	vals   []parquet.Int96
	defs   []int16
}

// julianUnixEpoch is the Julian day number of 1970-01-01.
const julianUnixEpoch = 2_440_588

// next decodes the next n values as Timestamp(us, UTC).
func (c *int96Column) next(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer b.Release()
	b.Reserve(n)
	if cap(c.vals) < n {
		c.vals, c.defs = make([]parquet.Int96, n), make([]int16, n)
	}
	for done := 0; done < n; {
		if c.rdr == nil || !c.rdr.HasNext() {
			c.close()
			if c.rg >= c.pf.NumRowGroups() {
				return nil, fmt.Errorf("INT96 column %d ends before the file's rows", c.col)
			}
			cr, err := c.pf.RowGroup(c.rg).Column(c.col)
			if err != nil {
				return nil, err
			}
			c.rg++
			r, ok := cr.(*file.Int96ColumnChunkReader)
			if !ok {
				return nil, fmt.Errorf("column %d is not INT96", c.col)
			}
			c.rdr = r
			continue
		}
		levels, nvals, err := c.rdr.ReadBatch(int64(n-done), c.vals[:n-done], c.defs[:n-done], nil)
		if err != nil {
			return nil, err
		}
		v := 0
		for i := 0; i < int(levels); i++ {
			if c.maxDef > 0 && c.defs[i] < c.maxDef {
				b.AppendNull()
				continue
			}
			if v >= nvals {
				return nil, fmt.Errorf("INT96 column %d: fewer values than levels", c.col)
			}
			b.Append(arrow.Timestamp(int96Micros(c.vals[v])))
			v++
		}
		done += int(levels)
		if levels == 0 {
			c.close() // the chunk is exhausted
		}
	}
	return b.NewArray(), nil
}

// close releases the current column chunk's pages.
func (c *int96Column) close() {
	if c.rdr != nil {
		c.rdr.Close()
		c.rdr = nil
	}
}

// int96Micros converts an INT96 timestamp to microseconds since the epoch,
// truncating nanoseconds.
func int96Micros(v parquet.Int96) int64 {
	nanos := int64(binary.LittleEndian.Uint64(v[:8]))
	day := int64(binary.LittleEndian.Uint32(v[8:]))
	return (day-julianUnixEpoch)*86_400_000_000 + floorDiv(nanos, 1000)
}
