package arrowpool

import (
	"strings"
	"testing"
	"unsafe"
)

// TestPoolAllocator checks the contract arrow-go's allocators keep and its
// kernels rely on: length and capacity equal to the size asked for, zeroed
// memory, 64-byte alignment; and that pooled arrays are reused whole.
func TestPoolAllocator(t *testing.T) {
	for _, checked := range []bool{false, true} {
		p := New(checked)
		aligned := func(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%poolAlign == 0 }
		for _, size := range []int{0, 1, 100, poolMinSize/2 + 1, poolMinSize - 1, poolMinSize, poolMinSize + 1, 1 << 20, 3<<20 + 7} {
			b := p.Allocate(size)
			if len(b) != size || cap(b) != size || !aligned(b) {
				t.Fatalf("Allocate(%d): len %d cap %d aligned %v", size, len(b), cap(b), aligned(b))
			}
			for i := range b {
				b[i] = 0xab
			}
			p.Free(b)
			// A reused buffer comes back zeroed, and as long as asked.
			c := p.Allocate(size)
			if len(c) != size || cap(c) != size || !aligned(c) {
				t.Fatalf("Allocate(%d) after Free: len %d cap %d aligned %v", size, len(c), cap(c), aligned(c))
			}
			for i, v := range c {
				if v != 0 {
					t.Fatalf("Allocate(%d) after Free: byte %d is %#x, want 0", size, i, v)
				}
			}
			p.Free(c)
		}

		// A freed pooled array serves a later allocation of its class
		// (sync.Pool may drop an item, at a GC or at random under the race
		// detector, so a few tries).
		reused := false
		for range 20 {
			a := p.Allocate(poolMinSize + 1)
			base := unsafe.SliceData(a)
			p.Free(a)
			b := p.Allocate(2*poolMinSize - 5)
			reused = unsafe.SliceData(b) == base
			p.Free(b)
			if reused {
				break
			}
		}
		if !reused {
			t.Fatalf("a freed array of a class never served the next allocation of that class")
		}

		// Reallocate keeps the contents, zeroes the growth, and keeps
		// len == cap whether it shrinks, grows in place or moves.
		b := p.Allocate(poolMinSize + 10)
		for i := range b {
			b[i] = byte(i)
		}
		b = p.Reallocate(10, b)
		for _, size := range []int{poolMinSize + 100, poolMinSize * 2, poolMinSize * 5, 64} {
			b = p.Reallocate(size, b)
			if len(b) != size || cap(b) != size || !aligned(b) {
				t.Fatalf("Reallocate(%d): len %d cap %d aligned %v", size, len(b), cap(b), aligned(b))
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
			b = p.Reallocate(10, b)
		}
		p.Free(b)

		// Foreign slices are ignored, not pooled.
		p.Free(make([]byte, 3*poolMinSize))
		p.Free(nil)
		if checked {
			p.outstanding.Add(3 * poolMinSize) // the foreign Free above was not an allocation of p's
			if err := p.Check(); err != nil {
				t.Fatalf("checked pool: %v", err)
			}
		}
	}
}

// TestCheckedPoolFindsOverrunsAndLeaks shows the checked mode reporting a
// write past a buffer's length (done here through unsafe, as a faulty
// decoder would) and a buffer never freed.
func TestCheckedPoolFindsOverrunsAndLeaks(t *testing.T) {
	p := New(true)
	b := p.Allocate(poolMinSize + 100)
	past := unsafe.Slice(unsafe.SliceData(b), poolMinSize+101)
	past[poolMinSize+100] = 1
	p.Free(b)
	err := p.Check()
	if err == nil || !strings.Contains(err.Error(), "written past its length, at byte 4196") {
		t.Fatalf("check after an overrun: %v", err)
	}

	p = New(true)
	kept := p.AllocateUninit(5000)
	for i, v := range kept {
		if v != poolPoison {
			t.Fatalf("unzeroed allocation byte %d is %#x, want the poison %#x", i, v, poolPoison)
		}
	}
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "5000 bytes allocated and not freed") {
		t.Fatalf("check with a buffer not freed: %v", err)
	}
	p.Free(kept)
	for i, v := range kept {
		if v != poolPoison {
			t.Fatalf("freed byte %d is %#x, want the poison %#x", i, v, poolPoison)
		}
	}
	if err := p.Check(); err != nil {
		t.Fatalf("check after every buffer was freed: %v", err)
	}
}
