package reader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/internal/rangefetch"
	"github.com/lakelog/lakelog/objstore"
)

// Reads from object stores (stores that are not objstore.RandomAccess:
// S3, GCS, Azure) go through internal/rangefetch, an I/O stage apart
// from the decoding goroutines (see its package doc: one speculative
// tail read per file, pieces coalesced and cut to fetchPieceSize, fetched
// in file order by up to WithFetchConcurrency ranged GETs within
// WithFetchBudget, the files being decoded and the next fetchFilesAhead
// at once, into pooled buffers). What is the reader's is the plan
// (planFetch): from the footer, the byte ranges the decoders will read,
// the projected columns' chunks in the row groups and, where the page
// index selects rows, only the selected pages. Decoding adds its own
// batches on top of the fetched bytes (Records).

// Defaults of the object-store read path.
const (
	// DefaultFetchBudget is the default most bytes the I/O stage holds
	// fetched or in flight ahead of the decoders.
	DefaultFetchBudget = 128 << 20
	// DefaultFetchConcurrency is the default most ranged GETs in flight.
	DefaultFetchConcurrency = 16
)

// Fixed sizes of the plan.
var (
	// fetchPieceSize is the most bytes one ranged GET asks for: a larger
	// run is split into pieces fetched concurrently.
	fetchPieceSize int64 = 4 << 20
	// fetchCoalesceGap is the largest gap between two needed ranges that
	// is fetched (and thrown away) to save a request.
	fetchCoalesceGap int64 = 256 << 10
	// fetchTailMin and fetchTailMax bound the speculative tail read; in
	// between it is 1/32 of the file.
	fetchTailMin int64 = 64 << 10
	fetchTailMax int64 = 1 << 20
	// fetchFilesAhead is how many files beyond those being decoded are
	// fetched at once.
	fetchFilesAhead = 2
)

// pageBufferSize is the buffer through which decoders read the pages of
// a column chunk (each chunk makes one: small, since a scan of many
// files opens many chunks); the page plan fetches that much past a run
// of selected pages. arrow-go peeks 16 KiB for each page header: a
// smaller buffer would be grown for every chunk.
const pageBufferSize = 16 << 10

// WithFetchBudget bounds the bytes a scan on an object store holds
// fetched or in flight ahead of its decoders (default DefaultFetchBudget).
// It does not apply on local disk, which is read in place.
func WithFetchBudget(bytes int64) Option { return func(c *config) { c.fetchBudget = bytes } }

// WithFetchConcurrency sets how many ranged GETs a scan on an object
// store keeps in flight at most (default DefaultFetchConcurrency),
// whatever its decode parallelism.
func WithFetchConcurrency(n int) Option { return func(c *config) { c.fetchConcurrency = n } }

// remoteStore reports whether reads of s go through the fetcher.
func remoteStore(s objstore.Store) bool {
	_, local := s.(objstore.RandomAccess)
	return !local
}

// minFetchBudget is the fetch budget a pass starts with, before its
// plans raise it to what the files' row groups need (raiseBudget).
var minFetchBudget int64 = 16 << 20

// newFetcher starts the I/O stage of one pass of the scan.
func (s *Scan) newFetcher(ctx context.Context) *rangefetch.Fetcher {
	return rangefetch.New(ctx, s.snap.FileStore(), rangefetch.Options{
		Budget:      max(1, min(s.cfg.fetchBudget, minFetchBudget)),
		Requests:    max(1, s.cfg.fetchConcurrency),
		Window:      max(1, s.cfg.parallelism) + fetchFilesAhead,
		PieceSize:   fetchPieceSize,
		CoalesceGap: fetchCoalesceGap,
		TailMin:     fetchTailMin,
		TailMax:     fetchTailMax,
		Stats:       &s.m.fetch,
	})
}

// fetchedFile is a data file entered in a pass's fetcher, and the plan
// its decoders follow: once the file's Wait returns with the plan run
// (planned), its rows are cut into units (and the page index's rows,
// pages) here, and each unit's decoders read the file through
// Reader(unit.owner), whose reads the unit's claims hold.
type fetchedFile struct {
	*rangefetch.File
	planned bool
	pages   []rowRange
	units   []fileUnit
}

// addFile enters f into the pass's fetcher: its tail is fetched in turn,
// then its plan made (planFetch) and its pieces queued behind those of the
// files added before. split: the pass may split large row groups
// (openFile).
func (s *Scan) addFile(fe *rangefetch.Fetcher, f *ScanFile, split bool) *fetchedFile {
	ff := &fetchedFile{}
	ff.File = fe.Add(f.Key, f.Add.Size, func(h *rangefetch.File) error {
		unit, err := s.planFetch(h, ff, f, split)
		s.raiseBudget(fe, unit)
		return err
	})
	return ff
}

// raiseBudget sizes the fetch budget by the largest unit (its claimed
// bytes) planned so far: the parallelism's units being decoded and one
// ahead, at least minFetchBudget and at most WithFetchBudget. A table of
// small row groups then holds little fetched ahead, and one of large row
// groups what its decoders need, however many files it has.
func (s *Scan) raiseBudget(fe *rangefetch.Fetcher, unit int64) {
	need := min(s.cfg.fetchBudget, max(minFetchBudget, int64(s.cfg.parallelism+1)*unit))
	if need > fe.Budget() {
		fe.SetBudget(need)
	}
}

// planFetch reads the footer of f (h, whose entry ff is) from its tail, cuts the file into the
// units its decoders will read (fileUnits, as openFile would) and claims
// for each unit the bytes its decoders read (unitClaims), in unit order;
// it returns the bytes of the largest unit. The plan, recorded in ff, is
// what openFile and readUnit then follow, so the decoders read what was
// fetched for them. A plan that fails leaves the decoder to read the file
// itself and report what is wrong.
func (s *Scan) planFetch(h *rangefetch.File, ff *fetchedFile, f *ScanFile, split bool) (largest int64, err error) {
	size := h.Size()
	tail := make([]byte, 8)
	if _, err := h.ReadAt(tail, size-8); err != nil {
		return 0, err
	}
	footer := int64(binary.LittleEndian.Uint32(tail)) + 8
	if footer > size {
		return 0, errors.New("footer length beyond the file")
	}
	tailLen := rangefetch.TailSize(size, fetchTailMin, fetchTailMax)
	if footer > tailLen {
		// The footer is larger than the tail: one more read for the rest.
		h.Pin(size-footer, footer-tailLen)
	}
	// The plan decodes metadata only, with Go's allocator: nothing of it
	// outlives the plan, and the scan's allocator accounts for batches.
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err := file.NewParquetReader(io.NewSectionReader(h, 0, size), file.WithReadProps(props))
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	md := pf.MetaData()
	if s.pruner != nil || split && s.big(md) {
		// The page index, when the filter may use it or a row group may
		// be split (its offset index says where a piece's pages start):
		// one read unless the tail holds it.
		lo, hi := int64(-1), int64(-1)
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			for c := 0; c < md.NumColumns(); c++ {
				cc, err := md.RowGroup(rg).ColumnChunk(c)
				if err != nil {
					continue
				}
				if ci := cc.GetColumnIndexLocation(); ci != nil && ci.Length > 0 {
					lo, hi = span(lo, hi, ci.Offset, ci.Offset+int64(ci.Length))
				}
				if oi := cc.GetOffsetIndexLocation(); oi != nil && oi.Length > 0 {
					lo, hi = span(lo, hi, oi.Offset, oi.Offset+int64(oi.Length))
				}
			}
		}
		held := size - max(footer, tailLen) // from here on the file is fetched
		if lo >= 0 && hi <= size && lo < held {
			h.Pin(lo, min(hi, held)-lo)
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	sources, err := s.columnSources(f)
	if err != nil {
		return 0, err
	}
	_, err = s.resolveSources(pf, fr, sources)
	defer closeSources(sources)
	if err != nil {
		return 0, err
	}
	pages := s.pageSelection(pf, sources, f.Add.PartitionValues)
	units := s.fileUnits(pf, sources, pages, split)
	claims, largest, err := unitClaims(pf, size, fileColumns(sources), pages, units)
	if err != nil {
		return 0, err
	}
	ff.pages, ff.units, ff.planned = pages, units, true
	h.Claim(claims)
	return largest, nil
}

// unitClaims returns, for each unit of a file (pf, of size bytes), the bytes its
// decoders read of the file's columns cols, as claims of the unit's owner
// (one per column chunk), in unit order, and the most bytes one unit
// claims. A unit reads the chunks of its row groups whole, unless it
// reads only some of a row group's rows (a piece of a split row group, or
// the rows the page index leaves, pages): then, of each chunk with an
// offset index, the pages of pageRanges.
func unitClaims(pf *file.Reader, size int64, cols []int, pages []rowRange, units []fileUnit) ([]rangefetch.Claim, int64, error) {
	md := pf.MetaData()
	padded := rangefetch.Padded(md)
	var pir *metadata.PageIndexReader
	starts := make([]int64, md.NumRowGroups()+1) // each row group's first row
	for rg := range md.NumRowGroups() {
		starts[rg+1] = starts[rg] + md.RowGroup(rg).NumRows()
	}
	var claims []rangefetch.Claim
	var largest int64
	for _, u := range units {
		var bytes int64
		for rg := u.rgFrom; rg < u.rgTo; rg++ {
			rgBase, rows := starts[rg], starts[rg+1]-starts[rg]
			from, to := max(rgBase, u.base), min(rgBase+rows, u.base+u.rows)
			sel := []rowRange{{from, to}}
			if pages != nil {
				if sel = overlapping(pages, from, to); len(sel) == 0 {
					continue // a piece of a split row group: none of its rows is read
				}
			}
			whole := len(sel) == 1 && sel[0] == rowRange{rgBase, rgBase + rows}
			if !whole && pir == nil {
				pir = pf.GetPageIndexReader()
			}
			for _, c := range cols {
				cc, err := md.RowGroup(rg).ColumnChunk(c)
				if err != nil {
					return nil, 0, err
				}
				start, end, err := rangefetch.ChunkSpan(cc, size, padded)
				if err != nil {
					return nil, 0, fmt.Errorf("column chunk %d of row group %d: %w", c, rg, err)
				}
				if start == end {
					continue // an empty chunk: nothing is read
				}
				ranges := [][2]int64{{start, end}}
				if !whole {
					if pr := pageRanges(pir, rg, c, start, end, rgBase, rows, sel); pr != nil {
						ranges = pr
					}
				}
				for _, r := range ranges {
					bytes += r[1] - r[0]
				}
				claims = append(claims, rangefetch.Claim{Owner: u.owner, Span: [2]int64{start, end}, Ranges: ranges})
			}
		}
		largest = max(largest, bytes)
	}
	return claims, largest, nil
}

// span widens lo..hi (lo < 0: empty) to hold from..to.
func span(lo, hi, from, to int64) (int64, int64) {
	if lo < 0 {
		return from, to
	}
	return min(lo, from), max(hi, to)
}

// overlapping returns the parts of sel within from..to; nil when sel is.
func overlapping(sel []rowRange, from, to int64) []rowRange {
	var out []rowRange
	for _, r := range sel {
		if r.end > from && r.start < to {
			out = append(out, rowRange{max(r.start, from), min(r.end, to)})
		}
	}
	return out
}

// pageRanges returns the byte ranges of column c in row group rg that
// reading the rows rgSel (file rows; rg starts at file row base) touches:
// the dictionary, the first page and each page holding a selected row,
// and the page after each selected run (the decoder starts those before
// seeking), each run with what the decoder's buffer reads past it. nil
// means the whole chunk.
func pageRanges(pir *metadata.PageIndexReader, rg, c int, start, end, base, rows int64, rgSel []rowRange) [][2]int64 {
	if pir == nil || len(rgSel) == 0 {
		return nil
	}
	rgIdx, err := pir.RowGroup(rg)
	if err != nil || rgIdx == nil {
		return nil
	}
	oi, err := rgIdx.GetOffsetIndex(c)
	if err != nil || oi == nil {
		return nil
	}
	locs := oi.GetPageLocations()
	if len(locs) == 0 || locs[0].Offset < start {
		return nil
	}
	var out [][2]int64
	add := func(from, to int64) {
		if n := len(out); n > 0 && out[n-1][1] >= from {
			out[n-1][1] = max(out[n-1][1], to)
			return
		}
		out = append(out, [2]int64{from, to})
	}
	if locs[0].Offset > start {
		add(start, locs[0].Offset) // the dictionary page
	}
	prevSel := false
	for i, l := range locs {
		first := base + l.FirstRowIndex
		last := base + rows
		if i+1 < len(locs) {
			last = base + locs[i+1].FirstRowIndex
		}
		pend := l.Offset + int64(l.CompressedPageSize)
		if pend > end || l.Offset < start {
			return nil
		}
		isSel := len(overlapping(rgSel, first, last)) > 0
		if isSel || prevSel || i == 0 { // the first page is read before seeking
			add(l.Offset, pend)
		}
		prevSel = isSel
	}
	// The decoder reads pages through a buffer of pageBufferSize, which
	// reads on past a run's last page.
	for i := range out {
		out[i][1] = min(end, out[i][1]+pageBufferSize)
	}
	return out
}
