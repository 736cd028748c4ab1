package rangefetch

import "sync"

// Piece buffers are pooled by size class, in steps of classStep bytes up
// to maxPooled: a scan fetches the same few sizes (most pieces are
// PieceSize long) over and over, and a buffer a freed piece gives back
// serves the next. Larger buffers are left to the garbage collector.
const (
	classShift = 16 // 64 KiB steps
	classStep  = 1 << classShift
	maxPooled  = 16 << 20
)

var classes [maxPooled / classStep]sync.Pool // class i holds *[]byte of cap (i+1)*classStep

// Poison, when set (by tests, before any Fetcher runs), fills every
// buffer given back to the pool with poisonByte, so that a read of a
// piece after it was freed shows as wrong bytes.
var Poison bool

const poisonByte = 0xDB

// getBuffer returns n bytes, of unspecified contents.
func getBuffer(n int) []byte {
	c := (n + classStep - 1) >> classShift
	if c == 0 || c > len(classes) {
		return make([]byte, n)
	}
	if v, ok := classes[c-1].Get().(*[]byte); ok {
		return (*v)[:n]
	}
	return make([]byte, n, c*classStep)
}

// putBuffer gives b, from getBuffer, back to the pool.
func putBuffer(b []byte) {
	c := cap(b) >> classShift
	if cap(b)&(classStep-1) != 0 || c == 0 || c > len(classes) {
		return
	}
	b = b[:cap(b)]
	if Poison {
		for i := range b {
			b[i] = poisonByte
		}
	}
	classes[c-1].Put(&b)
}
