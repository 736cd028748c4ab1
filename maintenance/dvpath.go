package maintenance

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// dvKey is the store key of the file a deletion vector is stored in, or ""
// for an inline vector (storage type "i"), which has no file. Storage type
// "u" is a path relative to the table: an optional random prefix (a folder)
// followed by the vector's UUID in Z85 (20 characters), stored as
// <prefix>/deletion_vector_<uuid>.bin; "p" is an absolute path.
//
// TODO(lead): the deletionvector package (branch dv) decodes the same
// path; keep one of the two.
func dvKey(snap *deltalog.Snapshot, dv *actions.DeletionVector) (string, error) {
	if dv == nil {
		return "", nil
	}
	switch dv.StorageType {
	case "i":
		return "", nil
	case "p":
		return snap.TablePath(dv.PathOrInlineDv), nil
	case "u":
		s := dv.PathOrInlineDv
		if len(s) < 20 {
			return "", fmt.Errorf("maintenance: deletion vector %q: a \"u\" path needs at least 20 characters", s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		raw, err := z85Decode(enc)
		if err != nil {
			return "", fmt.Errorf("maintenance: deletion vector %q: %w", s, err)
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", fmt.Errorf("maintenance: deletion vector %q: %w", s, err)
		}
		name := "deletion_vector_" + id.String() + ".bin"
		if prefix != "" {
			name = prefix + "/" + name
		}
		return snap.TablePath(name), nil
	default:
		return "", fmt.Errorf("maintenance: deletion vector of unknown storage type %q", dv.StorageType)
	}
}

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Decode decodes ZeroMQ's Z85 (RFC 32), whose length is a multiple of 5.
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85: length %d is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := range 5 {
			d := strings.IndexByte(z85Alphabet, s[i+j])
			if d < 0 {
				return nil, fmt.Errorf("z85: invalid character %q at %d", s[i+j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85: group at %d overflows", i)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
