package checkpoint

import "math/bits"

// Spark's hash partitioning, which the protocol requires for multi-part
// checkpoints (PROTOCOL.md "Multi-part checkpoint"): Spark repartitions
// the actions by coalesce(add.path, remove.path) into n partitions, and
// row r goes to partition pmod(Murmur3Hash(key, seed 42), n). The hash of
// a string is Spark's Murmur3_x86_32.hashUnsafeBytes over its UTF-8 bytes,
// which mixes the trailing 1–3 bytes one by one as sign-extended ints
// (unlike the reference Murmur3); a null key leaves the seed unchanged.

const (
	murmurC1   = 0xcc9e2d51
	murmurC2   = 0x1b873593
	sparkSeed  = 42
	murmurMulH = 0xe6546b64
)

func mixK1(k1 uint32) uint32 {
	k1 *= murmurC1
	k1 = bits.RotateLeft32(k1, 15)
	return k1 * murmurC2
}

func mixH1(h1, k1 uint32) uint32 {
	h1 ^= k1
	h1 = bits.RotateLeft32(h1, 13)
	return h1*5 + murmurMulH
}

func fmix(h1 uint32, length int) uint32 {
	h1 ^= uint32(length)
	h1 ^= h1 >> 16
	h1 *= 0x85ebca6b
	h1 ^= h1 >> 13
	h1 *= 0xc2b2ae35
	h1 ^= h1 >> 16
	return h1
}

// sparkHashBytes is Spark's Murmur3_x86_32.hashUnsafeBytes.
func sparkHashBytes(b []byte, seed uint32) uint32 {
	h1 := seed
	aligned := len(b) - len(b)%4
	for i := 0; i < aligned; i += 4 {
		k := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
		h1 = mixH1(h1, mixK1(k))
	}
	for i := aligned; i < len(b); i++ {
		h1 = mixH1(h1, mixK1(uint32(int32(int8(b[i])))))
	}
	return fmix(h1, len(b))
}

// sparkHashInt is Spark's Murmur3_x86_32.hashInt.
func sparkHashInt(v int32, seed uint32) uint32 {
	return fmix(mixH1(seed, mixK1(uint32(v))), 4)
}

// sparkPartition is the partition (0-based) of n that Spark's
// repartition(n, key) puts a row with the string key in.
func sparkPartition(key *string, n int) int {
	h := uint32(sparkSeed)
	if key != nil {
		h = sparkHashBytes([]byte(*key), h)
	}
	m := int32(h) % int32(n)
	if m < 0 {
		m += int32(n)
	}
	return int(m)
}
