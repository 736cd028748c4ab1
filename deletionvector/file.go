package deletionvector

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// The storage types of a descriptor (PROTOCOL.md "Deletion Vector
// Descriptor Schema").
const (
	StorageInline   = "i" // pathOrInlineDv is the vector, Z85
	StorageUUID     = "u" // pathOrInlineDv is [prefix]<Z85 uuid>: a file under the table
	StorageAbsolute = "p" // pathOrInlineDv is an absolute path
)

// fileVersion is the first byte of a deletion vector file. The rest of the
// file is, per vector, its size (4 bytes), its data and the CRC-32 of the
// data (4 bytes), both numbers big endian. A descriptor's offset points at
// the size.
const fileVersion = 1

// uuidChars is the length of a Z85-encoded uuid (16 bytes).
const uuidChars = 20

// FileName is the name of the deletion vector file with this uuid.
func FileName(id uuid.UUID) string {
	return "deletion_vector_" + id.String() + ".bin"
}

// Key returns the store key of dv's file, for storage types u and p, in the
// store of the table whose keys start with tableRoot. An absolute path is
// accepted only when it lies under the store's location.
func Key(store objstore.Store, tableRoot string, dv *actions.DeletionVector) (string, error) {
	switch dv.StorageType {
	case StorageUUID:
		p := dv.PathOrInlineDv
		if len(p) < uuidChars {
			return "", fmt.Errorf("%w: pathOrInlineDv %q is shorter than a Z85 uuid", ErrCorrupt, p)
		}
		prefix, enc := p[:len(p)-uuidChars], p[len(p)-uuidChars:]
		raw, err := z85DecodeString(enc)
		if err != nil {
			return "", fmt.Errorf("%w: pathOrInlineDv %q: %v", ErrCorrupt, p, err)
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", fmt.Errorf("%w: pathOrInlineDv %q: %v", ErrCorrupt, p, err)
		}
		if prefix != "" {
			prefix += "/"
		}
		return tableRoot + prefix + FileName(id), nil
	case StorageAbsolute:
		p := actions.CanonicalPath(dv.PathOrInlineDv)
		loc := objstore.Location(store)
		base := strings.TrimSuffix(actions.CanonicalPath(loc), "/") + "/"
		if rest, ok := strings.CutPrefix(p, base); ok && rest != "" {
			return rest, nil
		}
		if objstore.ResolvesAbsolute(store) && objstore.IsAbsoluteKey(p) {
			return p, nil // a file of another table (a SHALLOW CLONE's source)
		}
		return "", fmt.Errorf("deletionvector: deletion vector file %s is not under the table's store %s", dv.PathOrInlineDv, loc)
	default:
		return "", fmt.Errorf("%w: storage type %q has no file", ErrCorrupt, dv.StorageType)
	}
}

// Load returns the rows dv deletes. tableRoot is the key prefix of the
// table in store ("" or ending in '/'). It reads inline vectors from the
// descriptor and file vectors with one ranged read, checking the recorded
// size, the CRC-32 and the cardinality; errors name the vector's file.
func Load(ctx context.Context, store objstore.Store, tableRoot string, dv *actions.DeletionVector) (*roaring64.Bitmap, error) {
	if dv == nil {
		return nil, errors.New("deletionvector: no descriptor")
	}
	if dv.SizeInBytes < 4 {
		return nil, fmt.Errorf("%w: sizeInBytes %d", ErrCorrupt, dv.SizeInBytes)
	}
	if dv.Cardinality < 0 {
		return nil, fmt.Errorf("%w: cardinality %d", ErrCorrupt, dv.Cardinality)
	}
	var (
		data  []byte
		where string
	)
	switch dv.StorageType {
	case StorageInline:
		where = "inline deletion vector"
		if dv.Offset != nil {
			return nil, fmt.Errorf("%w: %s has an offset", ErrCorrupt, where)
		}
		if want := (int(dv.SizeInBytes) + 3) / 4 * 5; len(dv.PathOrInlineDv) != want {
			return nil, fmt.Errorf("%w: %s: %d Z85 characters for %d bytes, want %d", ErrCorrupt, where, len(dv.PathOrInlineDv), dv.SizeInBytes, want)
		}
		raw, err := z85DecodeString(dv.PathOrInlineDv)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, where, err)
		}
		if len(raw) < int(dv.SizeInBytes) {
			return nil, fmt.Errorf("%w: %s: %d bytes, sizeInBytes is %d", ErrCorrupt, where, len(raw), dv.SizeInBytes)
		}
		data = raw[:dv.SizeInBytes]
	case StorageUUID, StorageAbsolute:
		key, err := Key(store, tableRoot, dv)
		if err != nil {
			return nil, err
		}
		where = "deletion vector file " + key
		var off int64 = 1
		if dv.Offset != nil {
			off = int64(*dv.Offset)
		}
		if data, err = readFromFile(ctx, store, key, off, int64(dv.SizeInBytes)); err != nil {
			return nil, fmt.Errorf("deletionvector: %s at offset %d: %w", where, off, err)
		}
	default:
		return nil, fmt.Errorf("%w: unknown storage type %q", ErrCorrupt, dv.StorageType)
	}
	bm, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("deletionvector: %s: %w", where, err)
	}
	if c := bm.GetCardinality(); c != uint64(dv.Cardinality) {
		return nil, fmt.Errorf("deletionvector: %s: %w: holds %d rows, the descriptor's cardinality is %d", where, ErrCorrupt, c, dv.Cardinality)
	}
	if dv.MaxRowIndex != nil && !bm.IsEmpty() && bm.Maximum() > uint64(*dv.MaxRowIndex) {
		return nil, fmt.Errorf("deletionvector: %s: %w: row %d is above the descriptor's maxRowIndex %d", where, ErrCorrupt, bm.Maximum(), *dv.MaxRowIndex)
	}
	return bm, nil
}

// headerReadAhead is how far into a file Load reads from its start, so
// that one request also brings the version byte.
const headerReadAhead = 64 << 10

// readFromFile reads the vector of size bytes whose size field is at off
// in the file key, checking the file's version, the size field and the
// checksum, and returns the vector's bytes.
func readFromFile(ctx context.Context, store objstore.Store, key string, off, size int64) ([]byte, error) {
	if off < 1 {
		return nil, fmt.Errorf("%w: offset %d is inside the version byte", ErrCorrupt, off)
	}
	n := 4 + size + 4
	start := off
	if off <= headerReadAhead {
		start = 0
	} else {
		v, err := store.GetRange(ctx, key, 0, 1)
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			return nil, fmt.Errorf("%w: empty file", ErrCorrupt)
		}
		if v[0] != fileVersion {
			return nil, fmt.Errorf("%w: file format version %d, want %d", ErrCorrupt, v[0], fileVersion)
		}
	}
	b, err := store.GetRange(ctx, key, start, off-start+n)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: file ends before offset %d", ErrCorrupt, off)
		}
		return nil, err
	}
	if start == 0 {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: empty file", ErrCorrupt)
		}
		if b[0] != fileVersion {
			return nil, fmt.Errorf("%w: file format version %d, want %d", ErrCorrupt, b[0], fileVersion)
		}
	}
	b = b[min(int64(len(b)), off-start):]
	if int64(len(b)) < n {
		return nil, fmt.Errorf("%w: file ends %d bytes into a vector of %d bytes with its size and checksum", ErrCorrupt, len(b), n)
	}
	if got := binary.BigEndian.Uint32(b); int64(got) != size {
		return nil, fmt.Errorf("%w: size field %d, the descriptor's sizeInBytes is %d", ErrCorrupt, got, size)
	}
	data := b[4 : 4+size]
	want := binary.BigEndian.Uint32(b[4+size:])
	if got := crc32.ChecksumIEEE(data); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, the file records %08x", ErrCorrupt, got, want)
	}
	return data, nil
}

// appendToFile appends one vector (size, data, checksum) to a file being
// built, which starts with the version byte.
func appendToFile(file, data []byte) []byte {
	if len(file) == 0 {
		file = append(file, fileVersion)
	}
	file = binary.BigEndian.AppendUint32(file, uint32(len(data)))
	file = append(file, data...)
	return binary.BigEndian.AppendUint32(file, crc32.ChecksumIEEE(data))
}
