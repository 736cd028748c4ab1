package checkpoint

import (
	"context"
	"sync/atomic"

	"github.com/lakelog/lakelog/internal/rangefetch"
)

// Reading from a store without cheap random access (S3, GCS, Azure), a
// checkpoint's I/O runs ahead of its decoding through internal/rangefetch
// (the read-ahead engine scans use too): each file's footer is read with
// one speculative tail read, the next files' footers (openAhead) while
// the current file's row groups are planned, and the projected column
// chunks of every row group are queued in file and row-group order, with
// up to fetchRequests requests in flight and up to fetchBudget bytes
// fetched and not yet decoded, while decoding stays bounded by
// WithConcurrency (GOMAXPROCS by default). On two cores a checkpoint of
// fifty row groups is fifty round trips; sixteen at a time they cost the
// latency of a few.
const (
	fetchRequests = 16
	fetchBudget   = 24 << 20
	openAhead     = 8
)

// newFetcher starts the I/O stage of one run of the reader; Close it
// after cancelling ctx.
func (r *reader) newFetcher(ctx context.Context) *rangefetch.Fetcher {
	return rangefetch.New(ctx, r.store, rangefetch.Options{Budget: fetchBudget, Requests: fetchRequests, PieceSize: r.cfg.fetchPieceSize})
}

// rowGroupsLeft counts the row groups of one fetched file still being
// decoded: when the last ends, the file's pieces (its tail among them)
// are released.
type rowGroupsLeft struct {
	h    *rangefetch.File
	left atomic.Int64
}

// done notes that a row group whose chunks lie in span ended: the bytes
// it did not read are dropped, and the file is released after its last.
func (u *rowGroupsLeft) done(span [2]int64) {
	if span[1] > span[0] {
		u.h.Forget(span[0], span[1])
	}
	if u.left.Add(-1) == 0 {
		u.h.Release()
	}
}

// spanOf is the smallest range holding every range of rs.
func spanOf(rs [][2]int64) [2]int64 {
	var s [2]int64
	for i, r := range rs {
		if i == 0 {
			s = r
			continue
		}
		s[0], s[1] = min(s[0], r[0]), max(s[1], r[1])
	}
	return s
}
