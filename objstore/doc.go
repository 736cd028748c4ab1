// Package objstore is the storage contract lakelog is built on: a flat
// namespace of immutable objects with an atomic create-if-absent.
//
// Every Delta commit is one object created with [PutOptions.IfAbsent]; the
// store, not a lock service, decides which of several racing writers wins.
// Implementations: [NewMem] (in memory), [NewLocal] (a folder on disk), and
// the cloud stores in the s3, gcs and azure subpackages. [Faulty] wraps any
// store to inject failures in tests, and the objstoretest package is the
// conformance suite every implementation passes.
//
// The cloud stores also implement [Presigner]: a URL through which anyone
// may GET one object (Range included) until it expires, signed with the
// store's credentials and carrying none of them (S3 SigV4 query, GCS V4
// signed URL, Azure read-only blob SAS); [PresignGet] asks any store and
// fails with [ErrPresignUnsupported] for one that cannot. The sharing
// server gives recipients these URLs.
//
// Keys are '/'-separated paths relative to the store's root, with no leading
// slash. A store never interprets them beyond that.
//
// # The store contract
//
//   - Every method takes a `context.Context` first; nothing stores one.
//   - `Put(ctx, key, body, PutOptions{IfAbsent: true})` is atomic, and fails with
//     an error for which `errors.Is(err, objstore.ErrExists)` holds when the key
//     exists. It never checks and then writes: local disk writes an unnamed
//     `O_TMPFILE` (or a named temporary file), syncs it and links it into place;
//     S3 and Azure send `If-None-Match: *`; GCS sends `DoesNotExist`.
//   - `List(ctx, prefix, startAfter)` yields keys in byte order, strictly after
//     `startAfter`. `Delete` is idempotent. A missing key is `ErrNotFound`.
//   - A request the store refused before applying it wraps `ErrRefused`:
//     `ErrNoBucket` (no such bucket or container), `ErrAccessDenied` (wrong,
//     missing or insufficient credentials), or another 4xx. Nothing was
//     written, so a refused commit is a plain error, never an unknown outcome.
//   - `GetRange` returns a new slice; `GetRangeInto(ctx, key, off, p)`
//     (`objstore.RangeReader`, implemented by every store here, wrappers
//     included; `objstore.GetRangeInto` falls back to `GetRange` for others)
//     reads into the caller's buffer, under the same contract, so that
//     readers that fetch many ranges reuse their buffers.
//   - `objstore.Open(ctx, uri)` takes a path, `file://`, `mem://`,
//     `s3://bucket/prefix`, `gs://bucket/prefix` or `az://container/prefix`;
//     credentials and endpoints come from each cloud's standard environment.
//   - `objstore.NewWriter(ctx, store, key, opts)` streams an object: `Write`,
//     `Close` to commit (with `IfAbsent`, `ErrExists` at `Close`), `Abort`; a
//     cancelled context aborts, and nothing is visible before `Close`. It feeds
//     the store's own streaming `Put` (S3 multipart and Azure blocks of the
//     part size, the GCS resumable writer, a temporary file on disk) through one
//     buffered pipe. S3 parts and Azure blocks go up 4 at a time while the
//     encoder fills the next (`s3.WithPartConcurrency`,
//     `azure.WithBlockConcurrency`), so an upload holds at most 4 parts (32 MiB
//     at the defaults) and the 256 KiB pipe buffer; GCS chunks go one at a
//     time. A failed or stalled part is retried alone, never the file. A
//     store with a writer of its own implements `WriterStore`. Data files and
//     checkpoints are written through it. `writer.WriteFiles` encodes the
//     partitions of a batch on up to GOMAXPROCS goroutines, and every open
//     file uploads on its own goroutine, so partitions are encoded and uploaded
//     in parallel; a finished file's upload completes in the background (up to
//     4 files) while the next rows are encoded. A file never ends with an empty
//     row group: a file that reaches its target is finished with its row group,
//     and the writers' buffer limit (`writer.WithBufferSize`) finishes the
//     largest open file rather than flushing a row group (Parquet's writer can
//     only flush one by opening the next).
//   - Retries (`objstore.RetryPolicy`, each cloud store's `WithRetryPolicy`):
//     the SDKs' own retryers (aws `retry.Standard`, azcore's retry policy, the
//     GCS client's) retry 5xx, 429, S3 `SlowDown`, resets and timeouts, 6 tries
//     with full-jitter backoff (50ms to 5s). A stall watchdog cancels a request
//     that makes no progress for 30s (no body byte sent, no headers, no body
//     byte received) so that it is re-issued. `Get` and `GetRange` re-read a
//     body that breaks off or stalls after the SDK returned, within a 5-minute
//     deadline, and `GetRange` checks it got exactly the bytes asked for (or up
//     to the object's end): never a silent short read. A `Put` with
//     `IfAbsent` (a commit) is still sent exactly once per call: a retry after
//     a lost response would answer "exists" for our own create; the commit
//     loop (`ErrCommitUnknown`, txnId read-back) owns that retry.
//   - `cloudtest.Faults` is a seeded proxy that injects 503 SlowDown, resets
//     before and mid-body, stalls and lost responses; `test/cloud`
//     (`TestFaultsS3*`) appends, scans and commits through it in front of
//     MinIO.
//   - Stores implement `Locator` (`Location() string`), so that messages name a
//     table as its user wrote it. Stores that hold something open implement
//     `io.Closer`; `objstore.Close(store)` closes whatever `Open` returned.
//   - Batch deletes: stores that delete many keys with one request implement
//     `BatchDeleter` (`DeleteBatch`, `MaxDeleteBatch`): S3 with
//     `DeleteObjects` (1,000), Azure with a blob batch (256), GCS with a JSON
//     API batch (100: the Go client has none, so the store posts
//     `multipart/mixed` to `/batch/storage/v1` over an HTTP client the Google
//     API transport makes from the same client options, or plainly to
//     `STORAGE_EMULATOR_HOST`; a store over a caller's own client deletes one
//     key at a time), local and mem in one call. A missing key is not an
//     error; keys the server did not delete come back in a `*DeleteError`.
//     `DeleteKeys(ctx, store, keys, DeleteOptions{Concurrency, Retry,
//     Progress})` batches (or deletes one by one) under a concurrency budget
//     and retries the failed keys with backoff. `ListRanges(ctx, store,
//     prefix, splits, concurrency)` lists a prefix in ranges cut at the given
//     keys, concurrently, and yields what `List` yields, in order.
//   - `objstoretest.Run` is the suite every store passes, the cloud ones against
//     their emulators (MinIO, fake-gcs-server, Azurite) in CI; it checks
//     `DeleteKeys` (through `DeleteBatch` where a store has it) and
//     `ListRanges` too.
package objstore
