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
package objstore
