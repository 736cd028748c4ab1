package reader

import (
	"testing"
	"unsafe"
)

func TestPoolAllocator(t *testing.T) {
	p := &poolAllocator{}
	aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%poolAlign == 0 }
	for _, size := range []int{0, 1, 100, poolMinSize - 1, poolMinSize, poolMinSize + 1, 1 << 20, 3<<20 + 7} {
		b := p.Allocate(size)
		if len(b) != size || !aligned(b) {
			t.Fatalf("Allocate(%d): len %d cap %d aligned %v", size, len(b), cap(b), aligned(b))
		}
		for i := range b {
			b[i] = 0xab
		}
		p.Free(b)
		// A reused buffer comes back zeroed.
		c := p.Allocate(size)
		if len(c) != size || !aligned(c) {
			t.Fatalf("Allocate(%d) after Free: len %d aligned %v", size, len(c), aligned(c))
		}
		for i, v := range c {
			if v != 0 {
				t.Fatalf("Allocate(%d) after Free: byte %d is %#x, want 0", size, i, v)
			}
		}
		p.Free(c)
	}

	// Reallocate keeps the contents and zeroes the growth, in place or not.
	b := p.Allocate(poolMinSize + 10)
	for i := range b {
		b[i] = byte(i)
	}
	b = b[:10] // as if the buffer had shrunk; the tail holds stale bytes
	for _, size := range []int{poolMinSize * 2, poolMinSize * 5} {
		b = p.Reallocate(size, b)
		if len(b) != size || !aligned(b) {
			t.Fatalf("Reallocate(%d): len %d aligned %v", size, len(b), aligned(b))
		}
		for i := range b {
			want := byte(0)
			if i < 10 {
				want = byte(i)
			}
			if b[i] != want {
				t.Fatalf("Reallocate(%d): byte %d is %#x, want %#x", size, i, b[i], want)
			}
		}
		b = b[:10]
	}

	// Foreign or odd-sized slices are ignored, not pooled.
	p.Free(make([]byte, 3*poolMinSize))
	p.Free(nil)
	if got := p.Allocate(3 * poolMinSize); len(got) != 3*poolMinSize || cap(got) != 4*poolMinSize {
		t.Fatalf("Allocate(3*min): len %d cap %d", len(got), cap(got))
	}
}
