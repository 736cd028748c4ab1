// Package rangefetch is the one read-ahead engine of lakelog's Parquet
// readers on object stores (stores without cheap random access: S3, GCS,
// Azure): the data files of a scan (reader) and the parts and sidecars
// of a checkpoint (checkpoint) are read through it.
//
// A [Fetcher] serves one pass of a reader. Each object the pass reads is
// entered with [Fetcher.Add], which queues one speculative read of its
// tail ([TailSize]): the footer is parsed from it. The caller then says
// which byte ranges its readers will read: [File.Claim] takes, for each
// reader (an owner: a number the caller gives each decoder of the file),
// the bytes it will read within each span it reads (a column chunk, or
// only some pages of it); [File.Queue] claims whole ranges for one
// reader. Ranges whose gap is small are coalesced and runs are cut into
// pieces of at most Options.PieceSize; bytes that several claims share
// (the dictionary page every reader of a split column chunk reads) are
// fetched once. Pieces are fetched in the order they were claimed, ahead
// of the readers, by up to Options.Requests ranged GETs in flight.
// Readers read through [File.Reader] (or the [File] itself, as
// [NoOwner]), an io.ReaderAt served from the fetched pieces; a read no
// piece holds goes to the store directly and is counted
// (Stats.Uncovered): a caller whose claims are what its readers read
// makes none.
//
// Memory: the pieces fetched or in flight and not yet freed hold at most
// Options.Budget bytes. Each reader reads a span at offsets that only
// grow (a buffered reader that jumps ahead re-reads at most from the
// jump's target on), so a piece is freed as soon as, for every claim
// holding bytes of it, the claim's owner has started a read past the
// piece's end, or has let go of the claim ([File.Done], [File.Forget]);
// all of a file's pieces when the file is released ([File.Release]).
// Pieces nobody claims any more are taken out of the queue unfetched.
// The one exception keeps a pass from stalling: when the budget is full
// and a reader of the oldest file not yet released waits for a piece,
// that piece is fetched beyond the budget (which happens only when one
// file's needed bytes exceed the budget). Pieces are read into buffers
// from a pool (objstore.GetRangeInto), so the garbage a pass makes does
// not grow with the bytes it fetches.
package rangefetch
