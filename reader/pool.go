package reader

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/internal/arrowpool"
)

// defaultAllocator is the scans' allocator when none is set: the pool
// they share with checkpoint reads (internal/arrowpool).
var defaultAllocator memory.Allocator = arrowpool.Default

// allocUninit allocates size bytes from mem whose contents the caller
// will overwrite.
func allocUninit(mem memory.Allocator, size int) []byte { return arrowpool.AllocUninit(mem, size) }
