package checkpoint

import (
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/internal/arrowpool"
)

// The action kinds a checkpoint can hold, named as PROTOCOL.md names their
// columns (and as actions.Action.Kind returns them).
const (
	KindTxn                = "txn"
	KindAdd                = "add"
	KindRemove             = "remove"
	KindMetadata           = "metaData"
	KindProtocol           = "protocol"
	KindDomainMetadata     = "domainMetadata"
	KindCheckpointMetadata = "checkpointMetadata"
	KindSidecar            = "sidecar"
)

// allKinds lists the kinds in the column order Spark writes them.
var allKinds = []string{
	KindTxn, KindAdd, KindRemove, KindMetadata, KindProtocol,
	KindDomainMetadata, KindCheckpointMetadata, KindSidecar,
}

// kindSet is a set of action kinds, one bit per entry of allKinds.
type kindSet uint16

const everyKind kindSet = 1<<8 - 1

func kindBit(name string) kindSet {
	for i, k := range allKinds {
		if k == name {
			return 1 << i
		}
	}
	return 0
}

func (s kindSet) has(name string) bool { return s&kindBit(name) != 0 }

// ReadOption configures Read.
type ReadOption interface{ applyRead(*readConfig) }

// WriteOption configures Write.
type WriteOption interface{ applyWrite(*writeConfig) }

type readOptionFunc func(*readConfig)

func (f readOptionFunc) applyRead(c *readConfig) { f(c) }

type writeOptionFunc func(*writeConfig)

func (f writeOptionFunc) applyWrite(c *writeConfig) { f(c) }

type readConfig struct {
	kinds    kindSet
	badKinds []string
	stats    bool
	// layout, when set, reads the adds as FileColumns laid out by it
	// (ReadFiles).
	layout       *FileLayout
	concurrency  int
	batchRows    int
	batchRowsSet bool // WithBatchRows was given
	mem          memory.Allocator
	// wholeFileLimit is the size up to which a file from a store without
	// random access is fetched with one Get; tests lower it.
	wholeFileLimit int64
	// fetchPieceSize is the largest ranged read of a file from a store
	// without random access; 0 is rangefetch's default (tests shrink it).
	fetchPieceSize int64
}

func newReadConfig(opts []ReadOption) (readConfig, error) {
	c := readConfig{
		kinds:          everyKind,
		stats:          true,
		concurrency:    min(runtime.GOMAXPROCS(0), 8),
		batchRows:      4096,
		mem:            arrowpool.Default,
		wholeFileLimit: defaultWholeFileLimit,
	}
	for _, o := range opts {
		if o != nil {
			o.applyRead(&c)
		}
	}
	if len(c.badKinds) > 0 {
		return c, fmt.Errorf("checkpoint: unknown action kinds %q", c.badKinds)
	}
	return c, nil
}

// OnlyKinds makes Read yield only actions of the given kinds (KindAdd,
// KindProtocol, ...) and read only their columns. Sidecar files of a V2
// checkpoint are followed only when KindAdd or KindRemove is asked for.
// An unknown kind name makes Read yield an error.
func OnlyKinds(kinds ...string) ReadOption {
	return readOptionFunc(func(c *readConfig) {
		c.kinds = 0
		for _, k := range kinds {
			b := kindBit(k)
			if b == 0 {
				c.badKinds = append(c.badKinds, k)
			}
			c.kinds |= b
		}
	})
}

// WithoutStats skips the add.stats column: the yielded adds have an empty
// Stats. Reading a large checkpoint without stats is much cheaper.
func WithoutStats() ReadOption {
	return readOptionFunc(func(c *readConfig) { c.stats = false })
}

// WithConcurrency sets how many row groups (of any of the files) Read
// decodes at once; at least 1. The default is GOMAXPROCS, at most 8.
// Memory use grows with it: about n × 2 batches of decoded actions.
func WithConcurrency(n int) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.concurrency = max(n, 1) })
}

// WithBatchRows sets how many rows Read decodes from a row group at a time
// (default 4096).
func WithBatchRows(n int) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.batchRows, c.batchRowsSet = max(n, 1), true })
}

// AllocatorOption is both a ReadOption and a WriteOption.
type AllocatorOption struct{ mem memory.Allocator }

func (o AllocatorOption) applyRead(c *readConfig)   { c.mem = o.mem }
func (o AllocatorOption) applyWrite(c *writeConfig) { c.mem = o.mem }

// WithAllocator sets the Arrow allocator for Parquet buffers (tests pass a
// memory.CheckedAllocator to find leaks). Reads default to the pool they
// share with scans (internal/arrowpool): the page and column buffers of
// one row group serve the next instead of becoming garbage. Writes
// default to Go's heap.
func WithAllocator(mem memory.Allocator) AllocatorOption {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return AllocatorOption{mem}
}
