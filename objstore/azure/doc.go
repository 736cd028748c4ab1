// Package azure is an [objstore.Store] over an Azure Blob Storage
// container. Importing it registers the "az" scheme with [objstore.Open]:
// az://container/prefix is the container's blobs under prefix/.
//
// # Configuration
//
// [New] reads the account from the environment, with the names delta-rs
// (object_store) uses: AZURE_STORAGE_CONNECTION_STRING;
// AZURE_STORAGE_USE_EMULATOR=true for Azurite's well-known account at
// AZURITE_BLOB_STORAGE_URL (default http://127.0.0.1:10000); or
// AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY or
// AZURE_STORAGE_SAS_TOKEN, at AZURE_STORAGE_ENDPOINT or the account's
// public endpoint. For Microsoft Entra ID credentials, build an
// azblob.Client and pass it with [WithClient].
//
// # Contract
//
//   - Put with IfAbsent is a Put Blob with If-None-Match: *, so Azure itself
//     decides which of several racing writers creates the blob. A 409
//     BlobAlreadyExists or a 412 ConditionNotMet is [objstore.ErrExists].
//     The body is read into memory and sent in one request.
//   - Other puts send a body up to the block size (8 MiB unless
//     [WithBlockSize]) in one Put Blob, and stage longer or unsized bodies
//     as blocks committed with Put Block List, up to
//     [DefaultBlockConcurrency] blocks in flight ([WithBlockConcurrency])
//     while the next is read: an upload holds at most that many block
//     buffers (32 MiB at the defaults). Each block is retried alone by the
//     client's retry policy. Both replace the blob in one step; a failed
//     upload commits nothing.
//   - Get, GetRange (a ranged download) and Head of a missing blob wrap
//     [objstore.ErrNotFound]. A missing container is [objstore.ErrNoBucket];
//     a 401 or 403 (a wrong key, no credentials) is [objstore.ErrAccessDenied].
//   - List is a flat listing of the prefix, in byte order. Azurite (and, it
//     seems, Azure) keeps names in UTF-16 order, which differs only for
//     names with characters above U+FFFF; List sorts those itself, so a
//     listing streams unless such names occur. startAfter goes to the
//     server as startFrom, cut where the two orders could disagree, and
//     keys up to startAfter are dropped here, so a server that ignores
//     startFrom is only slower.
//   - Delete of a missing blob succeeds.
//   - Keys are checked as objstore's own stores check them, and a bad key
//     wraps [objstore.ErrInvalidKey].
//
// # Retries and lost responses
//
// The client made from the environment retries failed requests (408, 429,
// 5xx, broken connections, stalls) with the tries and backoff of
// [objstore.RetryPolicy] ([WithRetryPolicy]; 6 tries, 50ms to 5s), and
// every request passes a stall watchdog that cancels it after StallTimeout
// (30s) without progress, so that it is re-issued. (No TryTimeout: it
// would also cut a large transfer that is slow but moving.) Get and
// GetRange read again a body that breaks off or stalls, within the
// policy's Deadline, and GetRange checks that it received exactly the
// range asked for, or up to the blob's end: never a silent short read.
// The exception is the Put Blob of a Put with IfAbsent, which is sent
// exactly once. Were it retried after Azure created the blob but the
// response was lost, the retry would be refused as BlobAlreadyExists, and
// the store would report ErrExists for a create that was in fact its own.
// Such a Put returns the transport error instead, which is neither nil nor
// ErrExists: the blob may or may not exist. A caller that retries and then
// gets ErrExists must read the blob back to learn whose it is; the Delta
// commit loop does so by comparing the commit's txnId.
//
// Errors start with "azure:" and wrap the client's errors, so errors.As
// finds *azcore.ResponseError.
package azure
