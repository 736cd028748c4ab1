package reader

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakelog/lakelog/actions"
)

// rowRange is a half-open range of a file's row indexes.
type rowRange struct{ start, end int64 }

// disablePageIndex turns page-index skipping off, for tests that compare
// the rows read with and without it.
var disablePageIndex = false

// pageSelection uses the Parquet page index of f to find the rows of a
// file that the scan's filter may select: a file's min/max statistics are
// per file, a page index has them per page. Only the filter's integer
// columns are used (their page bounds are exact; strings may be truncated
// and floats may hide NaN), and only when every column the scan reads
// from the file is decoded by pageColumn, which can skip pages. It
// returns nil to read every row.
//
// The rows of a row group are cut at every page boundary of the indexed
// columns; a segment is skipped when the filter cannot hold for values
// within its pages' bounds. Null counts say something only where they are
// exact for any part of a page: a page with no nulls, or only nulls.
func (s *Scan) pageSelection(pf *file.Reader, sources []columnSource, partitionValues map[string]*string) []rowRange {
	if s.pruner == nil || disablePageIndex {
		return nil
	}
	type indexed struct {
		name  string
		col   int
		int32 bool
	}
	var cols []indexed
	for _, src := range sources {
		if src.inFile && src.pages == nil {
			return nil // decoded by pqarrow, which cannot skip pages
		}
		if src.pages == nil || !slices.Contains(s.filterColumns, src.field.Name) {
			continue
		}
		switch pf.MetaData().Schema.Column(src.pages.col).PhysicalType() {
		case parquet.Types.Int64:
			if src.field.Type.String() == "long" {
				cols = append(cols, indexed{src.field.Name, src.pages.col, false})
			}
		case parquet.Types.Int32:
			if src.field.Type.String() == "integer" {
				cols = append(cols, indexed{src.field.Name, src.pages.col, true})
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	idx := pf.GetPageIndexReader()
	if idx == nil {
		return nil
	}
	var out []rowRange
	skipped := false
	var base int64
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		rows := pf.MetaData().RowGroup(rg).NumRows()
		all := []rowRange{{base, base + rows}}
		rgIdx, err := idx.RowGroup(rg)
		if err != nil || rgIdx == nil {
			out = append(out, all...)
			base += rows
			continue
		}
		// Each indexed column's pages: first rows and statistics.
		type pageStats struct {
			first    []int64
			min, max []any
			nulls    []int64 // -1: unknown
		}
		var ps []pageStats
		ok := true
		for _, c := range cols {
			oi, err1 := rgIdx.GetOffsetIndex(c.col)
			ci, err2 := rgIdx.GetColumnIndex(c.col)
			if err1 != nil || err2 != nil || oi == nil || ci == nil {
				ok = false
				break
			}
			locs := oi.GetPageLocations()
			mins, maxs, nullPages := ci.GetMinValues(), ci.GetMaxValues(), ci.GetNullPages()
			if len(locs) == 0 || len(mins) != len(locs) || len(maxs) != len(locs) || len(nullPages) != len(locs) {
				ok = false
				break
			}
			var p pageStats
			var counts []int64
			if ci.IsSetNullCounts() {
				counts = ci.GetNullCounts()
			}
			for i, loc := range locs {
				p.first = append(p.first, loc.FirstRowIndex)
				nulls := int64(-1)
				switch {
				case nullPages[i]:
					nulls = -2 // only nulls
				case len(counts) == len(locs) && counts[i] == 0:
					nulls = 0
				}
				p.nulls = append(p.nulls, nulls)
				lo, okLo := intBound(mins[i], c.int32)
				hi, okHi := intBound(maxs[i], c.int32)
				if nullPages[i] || !okLo || !okHi {
					lo, hi = nil, nil
				}
				p.min, p.max = append(p.min, lo), append(p.max, hi)
			}
			if p.first[0] != 0 || !slices.IsSorted(p.first) {
				ok = false
				break
			}
			ps = append(ps, p)
		}
		if !ok {
			out = append(out, all...)
			base += rows
			continue
		}
		// Segments between every page boundary of every indexed column.
		var cuts []int64
		for _, p := range ps {
			cuts = append(cuts, p.first...)
		}
		cuts = append(cuts, rows)
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		page := make([]int, len(ps))
		for i := 0; i+1 < len(cuts); i++ {
			lo, hi := cuts[i], cuts[i+1]
			if lo >= rows {
				break
			}
			st := &actions.Stats{NumRecords: hi - lo, MinValues: map[string]any{}, MaxValues: map[string]any{}, NullCount: map[string]any{}}
			for k, p := range ps {
				for page[k]+1 < len(p.first) && p.first[page[k]+1] <= lo {
					page[k]++
				}
				j := page[k]
				name := cols[k].name
				if p.min[j] != nil {
					st.MinValues[name], st.MaxValues[name] = p.min[j], p.max[j]
				}
				switch p.nulls[j] {
				case 0:
					st.NullCount[name] = json.Number("0")
				case -2:
					st.NullCount[name] = json.Number(strconv.FormatInt(hi-lo, 10))
				}
			}
			if s.pruner.MayMatch(partitionValues, st) {
				if n := len(out); n > 0 && out[n-1].end == base+lo {
					out[n-1].end = base + hi
				} else {
					out = append(out, rowRange{base + lo, base + hi})
				}
			} else {
				skipped = true
			}
		}
		base += rows
	}
	if !skipped {
		return nil
	}
	return out
}

// intBound decodes a page index bound of an INT32 or INT64 column as the
// JSON number a stats string would hold.
func intBound(b []byte, int32Col bool) (any, bool) {
	if int32Col {
		if len(b) != 4 {
			return nil, false
		}
		return json.Number(strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(b))), 10)), true
	}
	if len(b) != 8 {
		return nil, false
	}
	return json.Number(strconv.FormatInt(int64(binary.LittleEndian.Uint64(b)), 10)), true
}
