package reader

import (
	"encoding/binary"
	"testing"
)

// TestHybridRuns decodes an RLE run and a bit-packed run of each width.
func TestHybridRuns(t *testing.T) {
	for width := 0; width <= 32; width++ {
		mask := uint64(1)<<uint(width) - 1
		var want []uint32
		data := binary.AppendUvarint(nil, 5<<1) // RLE: 5 copies
		rle := uint32(0x9e3779b9 & mask)
		for b := 0; b < (width+7)/8; b++ {
			data = append(data, byte(rle>>(8*b)))
		}
		for range 5 {
			want = append(want, rle)
		}
		data = binary.AppendUvarint(data, 2<<1|1) // bit-packed: 2 groups
		var acc, bitsIn uint64
		for i := range 16 {
			v := uint64(i*0x2545f491+7) & mask
			want = append(want, uint32(v))
			acc |= v << bitsIn
			bitsIn += uint64(width)
			for bitsIn >= 8 {
				data = append(data, byte(acc))
				acc >>= 8
				bitsIn -= 8
			}
		}
		var h hybrid
		h.init(data, width)
		got := make([]uint32, len(want))
		// In two calls, the second starting inside the bit-packed run.
		if err := h.decode(got[:9]); err != nil {
			t.Fatalf("width %d: %v", width, err)
		}
		if err := h.decode(got[9:]); err != nil {
			t.Fatalf("width %d: %v", width, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("width %d, value %d: got %d, want %d", width, i, got[i], want[i])
			}
		}
		if err := h.decode(make([]uint32, 1)); err == nil {
			t.Errorf("width %d: decoding past the data: no error", width)
		}
	}
}

// FuzzHybrid: any bytes and width decode to an error or values, never a
// panic.
func FuzzHybrid(f *testing.F) {
	f.Add([]byte{10, 1, 3, 0xff, 0x0f}, 3, 20)
	f.Add([]byte{}, 0, 1)
	f.Fuzz(func(t *testing.T, data []byte, width, n int) {
		if width < 0 || width > 32 || n < 0 || n > 1<<16 {
			return
		}
		var h hybrid
		h.init(data, width)
		_ = h.decode(make([]uint32, n))
	})
}
