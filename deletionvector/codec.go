package deletionvector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// MagicNumber starts every serialized vector: the RoaringBitmapArray in
// the portable 64-bit layout (PROTOCOL.md "Deletion Vector Format").
const MagicNumber = 1681511377

// ErrCorrupt is wrapped by every error about bytes that are not a valid
// deletion vector: a wrong magic number, a length or count that does not
// fit, a checksum that does not match, a cardinality other than the
// descriptor's.
var ErrCorrupt = errors.New("deletionvector: corrupt deletion vector")

// MaxRowIndex is the largest row index a vector can hold: the protocol
// requires the most significant bit of every 32-bit bucket key to be 0.
const MaxRowIndex = 1<<63 - 1

// Encode serializes rows as the protocol's RoaringBitmapArray: the magic
// number, then the portable 64-bit roaring layout, run-optimized. rows is
// not changed. A row index above MaxRowIndex is an error.
func Encode(rows *roaring64.Bitmap) ([]byte, error) {
	if rows == nil {
		rows = roaring64.New()
	}
	if !rows.IsEmpty() && rows.Maximum() > MaxRowIndex {
		return nil, fmt.Errorf("deletionvector: row index %d is above the largest a deletion vector holds (%d)", rows.Maximum(), uint64(MaxRowIndex))
	}
	bm := rows.Clone()
	bm.RunOptimize()
	var buf bytes.Buffer
	buf.Grow(4 + int(bm.GetSerializedSizeInBytes()))
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], MagicNumber)
	buf.Write(magic[:])
	if _, err := bm.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("deletionvector: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode parses a RoaringBitmapArray (with its magic number). It checks
// the whole layout first — every count against the bytes that remain,
// keys in ascending order with the top bit clear, each container's
// cardinality against its contents, the offsets the header records, and
// that no bytes trail — so a corrupt or hostile input is an error wrapping
// ErrCorrupt, never a panic or an allocation out of proportion to it.
// Empty buckets, which Delta's own writer may emit, are accepted.
func Decode(b []byte) (*roaring64.Bitmap, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, too short for the magic number", ErrCorrupt, len(b))
	}
	if m := binary.LittleEndian.Uint32(b); m != MagicNumber {
		return nil, fmt.Errorf("%w: magic number %d, want %d", ErrCorrupt, m, MagicNumber)
	}
	body := b[4:]
	if len(body) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, too short for the bucket count", ErrCorrupt, len(b))
	}
	n := binary.LittleEndian.Uint64(body)
	// Each bucket takes at least a key (4 bytes) and an empty 32-bit
	// bitmap (8 bytes).
	if n > uint64(len(body)-8)/12 {
		return nil, fmt.Errorf("%w: %d buckets do not fit in %d bytes", ErrCorrupt, n, len(b))
	}
	type bucket struct {
		key  uint32
		data []byte
	}
	buckets := make([]bucket, 0, n)
	pos := 8
	empty := false
	for i := range n {
		if len(body)-pos < 4 {
			return nil, fmt.Errorf("%w: bucket %d: key cut off", ErrCorrupt, i)
		}
		key := binary.LittleEndian.Uint32(body[pos:])
		if key>>31 != 0 {
			return nil, fmt.Errorf("%w: bucket %d: key %d has its top bit set", ErrCorrupt, i, key)
		}
		if len(buckets) > 0 && key <= buckets[len(buckets)-1].key {
			return nil, fmt.Errorf("%w: bucket %d: key %d does not ascend", ErrCorrupt, i, key)
		}
		pos += 4
		size, card, err := check32(body[pos:])
		if err != nil {
			return nil, fmt.Errorf("%w: bucket %d (key %d): %v", ErrCorrupt, i, key, err)
		}
		buckets = append(buckets, bucket{key, body[pos : pos+size]})
		empty = empty || card == 0
		pos += size
	}
	if pos != len(body) {
		return nil, fmt.Errorf("%w: %d bytes after the last bucket", ErrCorrupt, len(body)-pos)
	}
	src := body
	if empty {
		// roaring64 keeps what it reads as is; drop the empty buckets so
		// that the bitmap is canonical.
		var buf bytes.Buffer
		buf.Grow(len(body))
		var word [8]byte
		live := 0
		for _, bk := range buckets {
			if len(bk.data) > 8 || binary.LittleEndian.Uint32(bk.data) != cookieNoRun {
				live++
			}
		}
		binary.LittleEndian.PutUint64(word[:], uint64(live))
		buf.Write(word[:])
		for _, bk := range buckets {
			if len(bk.data) == 8 && binary.LittleEndian.Uint32(bk.data) == cookieNoRun {
				continue
			}
			binary.LittleEndian.PutUint32(word[:4], bk.key)
			buf.Write(word[:4])
			buf.Write(bk.data)
		}
		src = buf.Bytes()
	}
	bm := roaring64.New()
	if _, err := bm.ReadFrom(bytes.NewReader(src)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return bm, nil
}

// The 32-bit roaring layout (RoaringFormatSpec).
const (
	cookieNoRun      = 12346 // followed by a 32-bit container count; no run containers
	cookieRun        = 12347 // low 16 bits; the high 16 bits are the container count - 1
	noOffsetMinCount = 4     // with runs, offsets are written only from this many containers
	arrayMaxCard     = 4096  // larger non-run containers are bitsets
	bitsetBytes      = 8192
)

// check32 checks one serialized 32-bit roaring bitmap at the start of b
// and returns its length in bytes and its cardinality.
func check32(b []byte) (size int, card uint64, err error) {
	if len(b) < 4 {
		return 0, 0, errors.New("32-bit bitmap cut off before its cookie")
	}
	cookie := binary.LittleEndian.Uint32(b)
	pos := 4
	var count int
	var runFlags []byte
	switch {
	case cookie == cookieNoRun:
		if len(b) < 8 {
			return 0, 0, errors.New("32-bit bitmap cut off before its container count")
		}
		c := binary.LittleEndian.Uint32(b[4:])
		if c > 1<<16 {
			return 0, 0, fmt.Errorf("%d containers, more than 65536", c)
		}
		count = int(c)
		pos = 8
	case cookie&0xffff == cookieRun:
		count = int(cookie>>16) + 1
		nb := (count + 7) / 8
		if len(b)-pos < nb {
			return 0, 0, errors.New("32-bit bitmap cut off in its run flags")
		}
		runFlags = b[pos : pos+nb]
		pos += nb
	default:
		return 0, 0, fmt.Errorf("unknown 32-bit bitmap cookie %d", cookie)
	}
	if len(b)-pos < 4*count {
		return 0, 0, fmt.Errorf("32-bit bitmap cut off in the header of its %d containers", count)
	}
	header := b[pos : pos+4*count]
	pos += 4 * count
	var offsets []byte
	if runFlags == nil || count >= noOffsetMinCount {
		if len(b)-pos < 4*count {
			return 0, 0, errors.New("32-bit bitmap cut off in its container offsets")
		}
		offsets = b[pos : pos+4*count]
		pos += 4 * count
	}
	prevKey := -1
	for i := range count {
		key := int(binary.LittleEndian.Uint16(header[4*i:]))
		c := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if key <= prevKey {
			return 0, 0, fmt.Errorf("container %d: key %d does not ascend", i, key)
		}
		prevKey = key
		if offsets != nil {
			if off := binary.LittleEndian.Uint32(offsets[4*i:]); int64(off) != int64(pos) {
				return 0, 0, fmt.Errorf("container %d: recorded offset %d, found at %d", i, off, pos)
			}
		}
		isRun := runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0
		switch {
		case isRun:
			if len(b)-pos < 2 {
				return 0, 0, fmt.Errorf("container %d: cut off before its run count", i)
			}
			runs := int(binary.LittleEndian.Uint16(b[pos:]))
			pos += 2
			if runs == 0 {
				return 0, 0, fmt.Errorf("container %d: run container without runs", i)
			}
			if len(b)-pos < 4*runs {
				return 0, 0, fmt.Errorf("container %d: cut off in its %d runs", i, runs)
			}
			total, next := 0, 0 // next: the least value the next run may start at
			for r := range runs {
				start := int(binary.LittleEndian.Uint16(b[pos+4*r:]))
				length := int(binary.LittleEndian.Uint16(b[pos+4*r+2:])) + 1
				if start < next {
					return 0, 0, fmt.Errorf("container %d: run %d overlaps or touches the one before", i, r)
				}
				if start+length > 1<<16 {
					return 0, 0, fmt.Errorf("container %d: run %d passes the end of the container", i, r)
				}
				total += length
				next = start + length + 1
			}
			if total != c {
				return 0, 0, fmt.Errorf("container %d: runs hold %d values, header says %d", i, total, c)
			}
			pos += 4 * runs
		case c <= arrayMaxCard:
			if len(b)-pos < 2*c {
				return 0, 0, fmt.Errorf("container %d: cut off in its %d values", i, c)
			}
			prev := -1
			for j := range c {
				v := int(binary.LittleEndian.Uint16(b[pos+2*j:]))
				if v <= prev {
					return 0, 0, fmt.Errorf("container %d: values do not ascend at %d", i, j)
				}
				prev = v
			}
			pos += 2 * c
		default:
			if len(b)-pos < bitsetBytes {
				return 0, 0, fmt.Errorf("container %d: cut off in its bitset", i)
			}
			ones := 0
			for w := 0; w < bitsetBytes; w += 8 {
				ones += bits.OnesCount64(binary.LittleEndian.Uint64(b[pos+w:]))
			}
			if ones != c {
				return 0, 0, fmt.Errorf("container %d: bitset holds %d values, header says %d", i, ones, c)
			}
			pos += bitsetBytes
		}
		card += uint64(c)
	}
	return pos, card, nil
}
