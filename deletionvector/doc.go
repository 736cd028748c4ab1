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
package deletionvector
