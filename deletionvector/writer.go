package deletionvector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// DefaultInlineLimit is the largest serialized vector a Writer keeps
// inline by default: 256 bytes, about 110 scattered rows or any number of
// rows in a few runs. Inline, a vector costs 1.25 times its size in the add
// action, and again in every checkpoint, but saves a ranged read of a .bin
// file for every reader of the file; a file-based descriptor is itself
// about 100 bytes. At 256 bytes the inline text (320 characters) stays
// within the size of the add's statistics, so the log does not grow out
// of proportion while small deletes, the common case, need no extra file.
const DefaultInlineLimit = 256

// DefaultMaxFileSize is the size past which a Writer starts a new .bin
// file, so that no one request of a reader or upload grows without bound.
const DefaultMaxFileSize = 64 << 20

type writerConfig struct {
	inlineLimit int
	maxFileSize int
}

// WriterOption configures NewWriter.
type WriterOption func(*writerConfig)

// WithInlineLimit sets the largest serialized size, in bytes, of a vector
// kept inline in its descriptor (storage type i); larger ones go to a .bin
// file. 0 or less puts every vector in a file. Default DefaultInlineLimit.
func WithInlineLimit(bytes int) WriterOption {
	return func(c *writerConfig) { c.inlineLimit = bytes }
}

// WithMaxFileSize sets the size past which the Writer starts a new .bin
// file. Default DefaultMaxFileSize.
func WithMaxFileSize(bytes int) WriterOption {
	return func(c *writerConfig) { c.maxFileSize = bytes }
}

// Writer collects the deletion vectors of one commit. Add returns each
// vector's descriptor at once; the vectors that do not go inline are
// packed into .bin files, several to a file, which Flush writes with
// create-if-absent. It is safe for concurrent use.
type Writer struct {
	store objstore.Store
	root  string
	cfg   writerConfig
	mu    struct {
		sync.Mutex
		pending []pendingFile // the last one is being filled
		written []string
	}
}

type pendingFile struct {
	id     uuid.UUID
	data   []byte
	sealed bool // Flush has tried to write it: it takes no more vectors
}

// NewWriter returns a Writer for the table whose keys in store start with
// tableRoot ("" or ending in '/').
func NewWriter(store objstore.Store, tableRoot string, opts ...WriterOption) *Writer {
	w := &Writer{store: store, root: tableRoot, cfg: writerConfig{inlineLimit: DefaultInlineLimit, maxFileSize: DefaultMaxFileSize}}
	for _, o := range opts {
		o(&w.cfg)
	}
	return w
}

// Add serializes rows and returns its descriptor, filled as Spark fills
// it: cardinality and sizeInBytes always; for a vector in a file the Z85
// uuid of the file and the offset of the vector in it; maxRowIndex, which
// Spark leaves out, stays unset. A file-based descriptor is valid only
// after Flush has written its file. An empty rows is an error: a file
// without deleted rows carries no vector.
func (w *Writer) Add(rows *roaring64.Bitmap) (*actions.DeletionVector, error) {
	if rows == nil || rows.IsEmpty() {
		return nil, fmt.Errorf("deletionvector: an empty deletion vector is not written")
	}
	data, err := Encode(rows)
	if err != nil {
		return nil, err
	}
	if len(data) > math.MaxInt32 {
		return nil, fmt.Errorf("deletionvector: a vector of %d bytes is too large for a descriptor", len(data))
	}
	dv := &actions.DeletionVector{SizeInBytes: int32(len(data)), Cardinality: int64(rows.GetCardinality())}
	if len(data) <= w.cfg.inlineLimit {
		dv.StorageType = StorageInline
		dv.PathOrInlineDv = z85Encode(data)
		return dv, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.mu.pending)
	if n == 0 || w.mu.pending[n-1].sealed || len(w.mu.pending[n-1].data) >= w.cfg.maxFileSize || int64(len(w.mu.pending[n-1].data))+int64(len(data))+8 > math.MaxInt32 {
		w.mu.pending = append(w.mu.pending, pendingFile{id: uuid.New()})
		n++
	}
	f := &w.mu.pending[n-1]
	off := int32(max(len(f.data), 1)) // the first vector follows the version byte
	f.data = appendToFile(f.data, data)
	dv.StorageType = StorageUUID
	dv.PathOrInlineDv = z85Encode(f.id[:])
	dv.Offset = &off
	return dv, nil
}

// Flush writes the pending .bin files, each with create-if-absent. On
// error the files not yet written stay pending, so Flush can be called
// again (a retry that finds its own earlier upload in place, after an
// error whose outcome was unknown, counts it as written); Keys lists them
// either way. Vectors added after a Flush go to a new file. Call it
// before the commit that carries the descriptors.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.mu.pending {
		w.mu.pending[i].sealed = true
	}
	for len(w.mu.pending) > 0 {
		f := w.mu.pending[0]
		key := w.root + FileName(f.id)
		retry := w.attempted(key)
		if !retry {
			// Listed before the upload: an upload whose outcome is
			// unknown may have landed.
			w.mu.written = append(w.mu.written, key)
		}
		err := w.store.Put(ctx, key, bytes.NewReader(f.data), objstore.PutOptions{IfAbsent: true, Size: int64(len(f.data))})
		if err != nil && retry && errors.Is(err, objstore.ErrExists) {
			if got, gerr := w.store.Get(ctx, key); gerr == nil && bytes.Equal(got, f.data) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("deletionvector: write %s: %w", key, err)
		}
		w.mu.pending = w.mu.pending[1:]
	}
	return nil
}

func (w *Writer) attempted(key string) bool {
	for _, k := range w.mu.written {
		if k == key {
			return true
		}
	}
	return false
}

// Keys returns the store keys of the .bin files Flush has written or tried
// to write, so that a commit that fails can delete them (deleting a key
// that was never written is no error).
func (w *Writer) Keys() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.mu.written...)
}
