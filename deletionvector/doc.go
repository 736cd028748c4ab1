// Package deletionvector reads and writes Delta deletion vectors: the sets
// of row indexes of a data file that a table no longer holds
// (PROTOCOL.md "Deletion Vectors" and "Deletion Vector Format").
//
// [Encode] and [Decode] convert a bitmap of row indexes to and from the
// RoaringBitmapArray bytes of the protocol: the magic number 1681511377
// followed by a 64-bit roaring bitmap in the portable layout, all little
// endian. Decode is strict: it checks every length, count and ordering of
// the layout before anything is built from it, so no input makes it panic
// or allocate more than the input's size suggests.
//
// [Load] resolves a descriptor (inline Z85, a uuid-named file relative to
// the table, or an absolute path under the table's store) and returns the
// rows it deletes, checking the file's size field, its CRC-32 and the
// descriptor's cardinality.
//
// [Writer] collects the vectors of one commit: small ones are kept inline
// in the descriptor, the others are packed into deletion_vector_<uuid>.bin
// files, several to a file as Spark does, written with create-if-absent on
// [Writer.Flush]. Nothing is visible in the table until the commit that
// carries the descriptors; [Writer.Keys] lists the files to delete when
// that commit fails.
//
// # Deletion vectors
//
//   - Bytes. A vector is the protocol's RoaringBitmapArray: magic
//     1681511377, then the portable 64-bit roaring layout, little endian.
//     `Encode` run-optimizes a copy; row indexes above 2^63-1 are refused.
//     `Decode` validates the whole layout itself (counts against the bytes
//     left, ascending keys with the top bit clear, container cardinalities,
//     offsets, no trailing bytes; empty buckets, which Delta's writer emits,
//     are dropped) before roaring builds the bitmap, so no input panics it or
//     makes it allocate out of proportion; errors wrap `ErrCorrupt`. It is
//     fuzzed (`FuzzDecode`).
//   - Storage. Inline (`i`): Z85 of the bytes padded to four, with
//     Delta's decoder quirks kept (a group over 32 bits keeps its low bits;
//     the Rust z85 crate's `#`-padded last group, found in real logs, is
//     understood). File (`u`): `[prefix/]deletion_vector_<uuid>.bin` under the
//     table, uuid from the Z85 of its 16 bytes; the file is a version byte
//     (1), then per vector its size, data and CRC-32, both numbers big
//     endian; `offset` points at the size. `p`: an absolute path, accepted when
//     it lies under the store's location. `Load` checks the version, the size
//     field against `sizeInBytes`, the checksum and `cardinality` (and
//     `maxRowIndex` when present); errors name the vector's file, and the
//     reader adds the data file.
//   - Writing. `deletionvector.Writer` serves one commit: `Add` returns the
//     descriptor at once (cardinality, sizeInBytes, offset as Spark fills
//     them; maxRowIndex left out, as Spark does); vectors up to
//     `WithInlineLimit` bytes (default 256: a few hundred characters in the
//     add, about the size of its stats, and no extra object to read) go
//     inline, the others are packed into one `.bin` file (a new one past
//     `WithMaxFileSize`, 64 MiB). `Flush` writes the files with
//     create-if-absent before the commit (a file it has tried takes no more
//     vectors; a retry that finds its own lost upload counts it); `Keys`
//     lists them (written or attempted) for the caller to delete when the
//     commit fails.
package deletionvector
