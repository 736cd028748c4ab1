// Package arrowpool is the pooled Arrow allocator that scans and
// checkpoint reads share: buffers one frees serve the next.
package arrowpool

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is the default Arrow allocator of scans and checkpoint reads: Go memory like
// memory.GoAllocator, and bound by the same contract, which arrow-go's
// compute kernels rely on: a buffer from Allocate has exactly the length
// asked for and a capacity equal to that length, is zeroed and starts on
// a 64-byte boundary. (The kernels' buffer builders measure free space
// with cap(buf): a buffer whose capacity ran past its length made filters
// of string, list and map columns copy values into space past the
// buffer's length, which was then cut off or zeroed.)
//
// Buffers of at least poolMinSize bytes come from arrays of a power-of-two
// size class; when freed, the whole array goes back to a pool per class
// and serves later allocations. The class of an array is kept on the side,
// in a registry keyed by the array's address, so that the slice handed
// out can hide the rest of the array. A full scan allocates and frees the
// same page, decompression and column buffers file after file; reusing
// them takes most of that churn off the garbage collector. Buffers never
// freed (a batch the caller keeps without releasing) are simply collected,
// and their registry entries with them.
//
// In checked mode (New(true), or Default when LAKELOG_CHECKED_POOL=1 is set), the pool also fills the
// hidden rest of each array with a canary and verifies on every Free and
// Reallocate that nothing wrote there, fills freed buffers and unzeroed
// allocations with poison, and counts the bytes outstanding. A write past
// a buffer's length or a read of freed memory then shows up as an error
// (Check) or as wrong rows, not as silently wrong rows later.
type Pool struct {
	classes [poolClasses]sync.Pool // class i holds *[]byte of len == cap == poolMinSize<<i
	// arrays maps the address of every pooled array this allocator made
	// to its *poolArray, until the array is collected.
	arrays sync.Map

	checked     bool
	outstanding atomic.Int64
	violations  atomic.Int64
	firstErr    atomic.Pointer[string]
}

// poolArray is a registry entry. It holds only a weak pointer to its
// array's allocation, so the registry keeps no array alive; and a weak
// pointer, unlike a cleanup, is cleared before the garbage collector can
// give the memory to another allocation, so an entry whose array was
// collected is never taken for a newer buffer at the same address.
type poolArray struct {
	class int
	alloc weak.Pointer[byte] // the first byte of the array's allocation
}

const (
	poolMinShift = 12 // 4 KiB: smaller buffers are not worth pooling
	poolMinSize  = 1 << poolMinShift
	poolClasses  = 17 // up to 256 MiB
	poolAlign    = 64

	// poolCanary fills the hidden part of a pooled array in checked mode;
	// poolPoison fills freed memory and unzeroed allocations.
	poolCanary = 0xC5
	poolPoison = 0xDB
)

// Default is shared by every scan and checkpoint read that sets no
// allocator, so buffers freed by one serve the next.
var Default memory.Allocator = New(os.Getenv("LAKELOG_CHECKED_POOL") == "1")

// New returns an empty pool, in checked mode when checked.
func New(checked bool) *Pool {
	return &Pool{checked: checked}
}

// poolClass returns the size class of a buffer of size bytes, or -1 when
// such buffers are not pooled.
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

func classSize(c int) int { return poolMinSize << c }

func (p *Pool) Allocate(size int) []byte {
	b, reused := p.allocate(size)
	if reused {
		clear(b)
	}
	return b
}

// AllocateUninit is Allocate without zeroing a reused buffer, for callers
// that write every byte they later read.
func (p *Pool) AllocateUninit(size int) []byte {
	b, _ := p.allocate(size)
	if p.checked {
		fill(b, poolPoison)
	}
	return b
}

// allocate returns size bytes, len == cap == size: zeroed when new, old
// bytes when reused from the pool.
func (p *Pool) allocate(size int) (b []byte, reused bool) {
	if p.checked {
		p.outstanding.Add(int64(size))
	}
	c := poolClass(size)
	if c < 0 {
		return alignedBytes(size), false
	}
	var full []byte
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		full, reused = *v, true
	} else {
		full = p.newArray(c)
	}
	if p.checked {
		fill(full[size:], poolCanary)
	}
	return full[:size:size], reused
}

// newArray makes a pooled array of class c and registers it.
func (p *Pool) newArray(c int) []byte {
	full, alloc := alignedAlloc(classSize(c))
	key := uintptr(unsafe.Pointer(unsafe.SliceData(full)))
	entry := &poolArray{class: c, alloc: weak.Make(alloc)}
	p.arrays.Store(key, entry)
	// When the array is collected, its entry goes too (unless a newer
	// array at the same address has replaced it). The weak pointer, not
	// this cleanup, is what keeps a late entry from being believed.
	runtime.AddCleanup(alloc, func(key uintptr) { p.arrays.CompareAndDelete(key, entry) }, key)
	return full
}

// array returns the whole pooled array that b starts, or nil when b is
// not the start of a live array this allocator made (a foreign or
// unpooled buffer).
func (p *Pool) array(b []byte) []byte {
	if cap(b) == 0 {
		return nil
	}
	base := unsafe.SliceData(b)
	v, ok := p.arrays.Load(uintptr(unsafe.Pointer(base)))
	if !ok {
		return nil
	}
	entry := v.(*poolArray)
	if entry.alloc.Value() == nil {
		// The array was collected and its address now serves another
		// allocation (b's): the entry is stale.
		p.arrays.CompareAndDelete(uintptr(unsafe.Pointer(base)), entry)
		return nil
	}
	n := classSize(entry.class)
	if cap(b) > n {
		return nil
	}
	// The registered array at base is alive, so b, which starts there,
	// is (part of) it, and its n bytes are ours to hand out again.
	return unsafe.Slice(base, n)
}

func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= len(b) {
		if p.checked {
			p.outstanding.Add(int64(size - cap(b)))
			if full := p.array(b); full != nil {
				p.verify(full, cap(b))
				fill(full[size:], poolCanary)
			}
		}
		return b[:size:size]
	}
	if full := p.array(b); full != nil && size <= len(full) {
		// Grow in place, into the hidden rest of the array.
		if p.checked {
			p.verify(full, cap(b))
			p.outstanding.Add(int64(size - cap(b)))
			fill(full[size:], poolCanary)
		}
		nb := full[:size:size]
		clear(nb[len(b):])
		return nb
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *Pool) Free(b []byte) {
	if p.checked {
		p.outstanding.Add(-int64(cap(b)))
	}
	full := p.array(b)
	if full == nil {
		if p.checked {
			fill(b[:cap(b)], poolPoison)
		}
		return // not pooled: left to the garbage collector
	}
	if p.checked {
		p.verify(full, cap(b))
		fill(full, poolPoison)
	}
	p.classes[p.classOf(full)].Put(&full)
}

func (p *Pool) classOf(full []byte) int {
	return bits.Len(uint(len(full))) - 1 - poolMinShift
}

// verify records a violation when the hidden part of full, past the n
// bytes handed out, no longer holds the canary.
func (p *Pool) verify(full []byte, n int) {
	for i := n; i < len(full); i++ {
		if full[i] != poolCanary {
			msg := fmt.Sprintf("arrowpool: pooled buffer of %d bytes (class %d bytes) was written past its length, at byte %d", n, len(full), i)
			if p.violations.Add(1) == 1 {
				p.firstErr.Store(&msg)
			}
			return
		}
	}
}

// check reports, in checked mode, the first write past a buffer's length
// seen so far and the bytes allocated but not freed.
func (p *Pool) Check() error {
	var errs []error
	if n := p.violations.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%s (%d violations)", *p.firstErr.Load(), n))
	}
	if n := p.outstanding.Load(); n != 0 {
		errs = append(errs, fmt.Errorf("arrowpool: %d bytes allocated and not freed", n))
	}
	return errors.Join(errs...)
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// AllocUninit allocates size bytes from mem whose contents the caller
// will overwrite: from a Pool without zeroing them.
func AllocUninit(mem memory.Allocator, size int) []byte {
	if p, ok := mem.(*Pool); ok {
		return p.AllocateUninit(size)
	}
	return mem.Allocate(size)
}

// alignedBytes returns zeroed memory of length and capacity size,
// starting on a 64-byte boundary.
func alignedBytes(size int) []byte {
	b, _ := alignedAlloc(size)
	return b
}

// alignedAlloc is alignedBytes, and the first byte of the allocation the
// bytes are cut from.
func alignedAlloc(size int) ([]byte, *byte) {
	buf := make([]byte, size+poolAlign)
	shift := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % poolAlign); r != 0 {
		shift = poolAlign - r
	}
	return buf[shift : shift+size : shift+size], &buf[0]
}
