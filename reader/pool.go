package reader

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator is the scans' default Arrow allocator: Go memory like
// memory.GoAllocator (zeroed, 64-byte aligned), but buffers of at least
// poolMinSize bytes that are freed go back to a pool per power-of-two size
// class and serve later allocations. A full scan allocates and frees the
// same page, decompression and column buffers file after file; reusing
// them takes most of that churn off the garbage collector. Buffers never
// freed (a batch the caller keeps without releasing) are simply collected.
type poolAllocator struct {
	classes [poolClasses]sync.Pool // class i holds *[]byte of cap poolMinSize<<i
}

const (
	poolMinShift = 12 // 4 KiB: smaller buffers are not worth pooling
	poolMinSize  = 1 << poolMinShift
	poolClasses  = 17 // up to 256 MiB
	poolAlign    = 64
)

// defaultAllocator is shared by every scan that sets no allocator, so
// buffers freed by one scan serve the next.
var defaultAllocator memory.Allocator = &poolAllocator{}

// class returns the size class of a buffer of size bytes, or -1 when such
// buffers are not pooled.
func poolClass(size int) int {
	if size <= poolMinSize {
		if size <= poolMinSize/2 {
			return -1
		}
		return 0
	}
	c := bits.Len(uint(size-1)) - poolMinShift
	if c >= poolClasses {
		return -1
	}
	return c
}

func (p *poolAllocator) Allocate(size int) []byte {
	c := poolClass(size)
	if c < 0 {
		return alignedBytes(size, size)
	}
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		b := (*v)[:size]
		clear(b)
		return b
	}
	return alignedBytes(size, poolMinSize<<c)
}

// allocateUninit is Allocate without zeroing a reused buffer, for callers
// that write every byte they later read.
func (p *poolAllocator) allocateUninit(size int) []byte {
	c := poolClass(size)
	if c < 0 {
		return alignedBytes(size, size)
	}
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		return (*v)[:size]
	}
	return alignedBytes(size, poolMinSize<<c)
}

// allocUninit allocates size bytes from mem whose contents the caller
// will overwrite: from the scans' pool without zeroing them.
func allocUninit(mem memory.Allocator, size int) []byte {
	if p, ok := mem.(*poolAllocator); ok {
		return p.allocateUninit(size)
	}
	return mem.Allocate(size)
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < poolMinSize || c&(c-1) != 0 {
		return // not a pooled class (or not from Allocate): leave it to the GC
	}
	cl := bits.Len(uint(c)) - 1 - poolMinShift
	if cl >= poolClasses || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%poolAlign != 0 {
		return
	}
	b = b[:0]
	p.classes[cl].Put(&b)
}

// alignedBytes returns zeroed memory of length size and capacity capacity,
// starting on a 64-byte boundary.
func alignedBytes(size, capacity int) []byte {
	buf := make([]byte, capacity+poolAlign)
	shift := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % poolAlign); r != 0 {
		shift = poolAlign - r
	}
	return buf[shift : shift+size : shift+capacity]
}
