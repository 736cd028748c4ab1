package reader

import "github.com/lakelog/lakelog/internal/arrowpool"

// PageColumns turns the page-by-page decoding of flat columns on or off
// until restore is called, and reports how many columns it has decoded.
func PageColumns(on bool) (used func() int64, restore func()) {
	disablePageColumns = !on
	return pageColumnsUsed.Load, func() { disablePageColumns = false }
}

// PageIndex turns page-index skipping on or off until restore is called.
func PageIndex(on bool) (restore func()) {
	disablePageIndex = !on
	return func() { disablePageIndex = false }
}

// CheckedPool is the scans' pooled allocator in checked mode.
type CheckedPool struct{ *arrowpool.Pool }

// NewCheckedPool returns an empty pool in checked mode: it verifies on
// every Free that nothing wrote past a buffer's length, poisons what is
// freed, and counts the bytes outstanding.
func NewCheckedPool() CheckedPool { return CheckedPool{arrowpool.New(true)} }

// FetchSizes sets the object-store read path's piece size, coalescing gap
// and tail bounds until restore is called.
func FetchSizes(piece, gap, tailMin, tailMax int64) (restore func()) {
	old := [4]int64{fetchPieceSize, fetchCoalesceGap, fetchTailMin, fetchTailMax}
	fetchPieceSize, fetchCoalesceGap, fetchTailMin, fetchTailMax = piece, gap, tailMin, tailMax
	return func() { fetchPieceSize, fetchCoalesceGap, fetchTailMin, fetchTailMax = old[0], old[1], old[2], old[3] }
}

// DecodeAhead bounds the decoded batches a parallel pass holds ahead of
// the consumer (default 32 MiB), for tests of the pipeline.
func DecodeAhead(bytes int64) Option { return func(c *config) { c.decodeAhead = bytes } }

// UnitsSplit is how many units row groups have been split into so far.
func UnitsSplit() int64 { return unitsSplit.Load() }

// BatchesByColumns is how many batches have been decoded column by column
// (their page-decoded columns side by side) so far.
func BatchesByColumns() int64 { return batchesByColumns.Load() }
