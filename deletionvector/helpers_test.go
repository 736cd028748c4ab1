package deletionvector_test

import (
	"hash/crc32"

	"github.com/lakelog/lakelog/actions"
)

func inline(z85 string, size int32, card int64) *actions.DeletionVector {
	return &actions.DeletionVector{StorageType: "i", PathOrInlineDv: z85, SizeInBytes: size, Cardinality: card}
}

func crcOf(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
