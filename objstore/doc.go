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
// Keys are '/'-separated paths relative to the store's root, with no leading
// slash. A store never interprets them beyond that.
package objstore
