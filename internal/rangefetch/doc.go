// Package rangefetch is the one read-ahead engine of lakelog's Parquet
// readers on object stores (stores without cheap random access: S3, GCS,
// Azure): the data files of a scan (reader) and the parts and sidecars
// of a checkpoint (checkpoint) are read through it.
//
// A [Fetcher] serves one pass of a reader. Each object the pass reads is
// entered with [Fetcher.Add], which queues one speculative read of its
// tail ([TailSize]): the footer is parsed from it. The caller then says
// which byte ranges its decoders will read ([File.Queue]: the column
// chunks of [ChunkSpan], or only some pages of them); ranges whose gap is
// small are coalesced and runs are cut into pieces of at most
// Options.PieceSize, and the pieces are fetched in the order they were
// queued, ahead of the decoders, by up to Options.Requests ranged GETs in
// flight. Decoders read through the [File], an io.ReaderAt served from
// the fetched pieces; a read no piece holds goes to the store directly
// and is counted (Stats.Uncovered).
//
// Memory: the pieces fetched or in flight and not yet freed hold at most
// Options.Budget bytes. A piece is freed as soon as every range it was
// fetched for has been read (read whole, or read from its start past the
// piece's end), or dropped ([File.Forget]), and all of a file's pieces
// when the file is released ([File.Release]). The one exception keeps a
// pass from stalling: when the budget is full and a decoder of the
// oldest file not yet released waits for a piece, that piece is fetched
// beyond the budget (which happens only when one file's needed bytes
// exceed the budget). Pieces are read into buffers from a pool
// (objstore.GetRangeInto), so the garbage a pass makes does not grow with
// the bytes it fetches.
package rangefetch
