// Package gcs is an [objstore.Store] over a Google Cloud Storage bucket.
// Importing it registers the "gs" scheme with [objstore.Open]:
// gs://bucket/prefix is the bucket's objects under prefix/.
//
// # Configuration
//
// [New] makes a client with storage.NewClient, which finds credentials the
// standard way: GOOGLE_APPLICATION_CREDENTIALS, gcloud's application
// default credentials, or the metadata server on Google Cloud. When
// STORAGE_EMULATOR_HOST is set (fake-gcs-server:
// STORAGE_EMULATOR_HOST=127.0.0.1:4443) the client talks to that host over
// HTTP and sends no credentials. [WithClientOptions] and [WithClient]
// override all of this.
//
// # Contract
//
//   - Put with IfAbsent uploads with Conditions{DoesNotExist: true}, the
//     precondition ifGenerationMatch=0, so GCS itself decides which of
//     several racing writers creates the key; a 412 Precondition Failed is
//     [objstore.ErrExists]. The body is read into memory first, so a
//     failing body never starts an upload, and sent in one request.
//   - Other puts buffer a body of known size up to 16 MiB and send it in
//     one request, and send longer or unsized bodies in a resumable upload
//     of 16 MiB chunks. The client keeps each chunk until GCS acknowledges
//     it and re-sends that chunk alone on a transient failure, resuming
//     the upload where GCS says it stands (the file is not restarted); a
//     try of a chunk is cut after the stall timeout plus a second per MiB.
//     Chunks are sent one at a time (the client has no concurrent chunks:
//     a resumable upload is sequential). GCS publishes an object only when
//     its upload completes; a failing body abandons the upload.
//   - Get, GetRange (a ranged read) and Head of a missing key wrap
//     [objstore.ErrNotFound]. Objects are read as stored, never
//     decompressed.
//   - List lists with the prefix and StartOffset, so the server skips what
//     comes before startAfter (StartOffset is inclusive; startAfter itself is
//     dropped here). GCS orders names by their UTF-8 bytes, the order the
//     contract asks for.
//   - Delete of a missing key succeeds.
//   - Keys are checked as objstore's own stores check them, and a bad key
//     wraps [objstore.ErrInvalidKey].
//
// # Retries and lost responses
//
// The client retries transient failures of reads and listings (408, 429,
// 5xx, resets, unexpected EOFs; a read that breaks off is reopened at the
// byte it reached), with the tries and backoff of [objstore.RetryPolicy]
// when New makes the client ([WithRetryPolicy]), and the store asks it to
// retry plain puts and deletes too, since repeating them is harmless. Get
// and GetRange guard each try: one that receives no byte for the policy's
// StallTimeout is cancelled and issued again, within its Deadline; and
// GetRange checks that it received exactly the range asked for, or up to
// the object's end: never a silent short read. The upload of a Put with IfAbsent is never retried: were it
// retried after GCS created the object but the response was lost, the
// retry would get 412 and the store would report ErrExists for a create
// that was in fact its own. Such a Put returns the transport error
// instead, which is neither nil nor ErrExists: the object may or may not
// exist. A caller that retries and then gets ErrExists must read the object
// back to learn whose it is; the Delta commit loop does so by comparing the
// commit's txnId.
//
// Errors start with "gcs:" and wrap the client's errors, so errors.As finds
// *googleapi.Error. A missing bucket is [objstore.ErrNoBucket] (a Get of a
// key in it is ErrNotFound, as the client reports it); a 401 or 403, or a
// token that cannot be fetched, is [objstore.ErrAccessDenied].
package gcs
