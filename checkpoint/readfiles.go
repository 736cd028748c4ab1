package checkpoint

import (
	"context"
	"errors"
	"sync"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// Columnar is a checkpoint read by ReadFiles.
type Columnar struct {
	// Layout is the layout of Files.
	Layout *FileLayout
	// Actions are the checkpoint's actions other than adds (protocol,
	// metaData, txn, domainMetadata, remove, checkpointMetadata and
	// sidecar), in read order.
	Actions []actions.Action
	// Files are its add actions, in read order.
	Files []*FileColumns
	// NumFiles is the number of add actions.
	NumFiles int
}

// WithLayout makes ReadFiles lay the adds out by l instead of by the
// checkpoint's own metaData.
func WithLayout(l *FileLayout) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.layout = l })
}

// filesBatchRows is how many rows ReadFiles decodes at a time, unless
// WithBatchRows says otherwise: each batch's adds become one
// FileColumns, and fewer, larger batches cost less per file.
const filesBatchRows = 1 << 15

// ReadFiles reads one checkpoint as Read does (the same parts and
// sidecars, the same options), but keeps its add actions as FileColumns
// instead of building an *actions.Add per file. The adds are laid out by
// the checkpoint's metaData (NewFileLayout) unless WithLayout gives a
// layout; the other actions are returned as actions. WithoutStats leaves
// the files' stats out (FileColumns.SetStats attaches them later).
//
// The checkpoint is read in two passes over the same opened files: its
// actions other than file actions first (the row groups that hold none
// are skipped by their column statistics), then the file actions, laid
// out by the metaData the first pass found.
func ReadFiles(ctx context.Context, store objstore.Store, parts []Part, opts ...ReadOption) (*Columnar, error) {
	cfg, err := newReadConfig(opts)
	if err != nil {
		return nil, err
	}
	if !cfg.batchRowsSet {
		cfg.batchRows = filesBatchRows
	}
	srcs, err := planParts(parts)
	if err != nil {
		return nil, err
	}
	r := &reader{store: store, cfg: cfg, cache: &openCache{files: map[string]*openFile{}}}
	_, r.randomAccess = store.(objstore.RandomAccess)
	out := &Columnar{}
	fileKinds := kindBit(KindAdd) | kindBit(KindRemove)
	follow := cfg.kinds&fileKinds != 0
	var sidecars []source
	var md *actions.Metadata
	var protocol *actions.Protocol // nil when not asked for: the table is laid out by its mode property

	// Pass 1: every other action, and the sidecars to follow.
	first := cfg.kinds &^ fileKinds
	if follow {
		first |= kindBit(KindSidecar)
	}
	r.cfg.layout = nil
	err = r.run(ctx, srcs, first, func(src source, a actions.Action) error {
		if a.Sidecar != nil && follow {
			key, err := sidecarKey(src.key, a.Sidecar.Path)
			if err != nil {
				return corrupt(src.key, err)
			}
			sidecars = append(sidecars, source{key: key, size: a.Sidecar.SizeInBytes, sidecar: true})
			if !cfg.kinds.has(KindSidecar) {
				return nil
			}
		}
		if a.Metadata != nil && md == nil {
			md = a.Metadata
		}
		if a.Protocol != nil && protocol == nil {
			protocol = a.Protocol
		}
		out.Actions = append(out.Actions, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !follow {
		return out, nil
	}

	// Pass 2: the file actions, the adds as columns.
	out.Layout = cfg.layout
	if out.Layout == nil {
		if md == nil {
			return nil, corrupt(srcs[0].key, errors.New("no metaData action"))
		}
		table, err := actions.NewTableConfig(protocol, md)
		if err != nil {
			return nil, corrupt(srcs[0].key, err)
		}
		if out.Layout, err = NewFileLayout(table); err != nil {
			return nil, corrupt(srcs[0].key, err)
		}
	}
	r.cfg.layout = out.Layout
	r.onFiles = func(f *FileColumns) error {
		out.Files = append(out.Files, f)
		out.NumFiles += f.Len()
		return nil
	}
	collect := func(_ source, a actions.Action) error {
		out.Actions = append(out.Actions, a)
		return nil
	}
	if err := r.run(ctx, srcs, cfg.kinds&fileKinds, collect); err != nil {
		return nil, err
	}
	if len(sidecars) > 0 {
		if err := r.run(ctx, sidecars, cfg.kinds&fileKinds, collect); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openCache keeps the files a multi-pass read opened, so that a second
// pass reads no footer again.
type openCache struct {
	mu    sync.Mutex
	files map[string]*openFile
}

// openCached is open, through the read's cache when it has one.
func (r *reader) openCached(ctx context.Context, src source) (*openFile, error) {
	if r.cache == nil {
		return r.open(ctx, src)
	}
	r.cache.mu.Lock()
	f, ok := r.cache.files[src.key]
	r.cache.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := r.open(ctx, src)
	if err != nil {
		return nil, err
	}
	r.cache.mu.Lock()
	r.cache.files[src.key] = f
	r.cache.mu.Unlock()
	return f, nil
}

// jsonFiles collects the adds of a JSON checkpoint as FileColumns.
type jsonFiles struct {
	b    *FilesBuilder
	rows int
}

func (j *jsonFiles) add(r *reader, a *actions.Add) *FileColumns {
	if j.b == nil {
		j.b = NewFilesBuilder(r.cfg.layout, r.cfg.batchRows, r.cfg.stats)
	}
	if !r.cfg.stats {
		a.Stats = ""
	}
	j.b.AppendAdd(a)
	if j.b.Len() < r.cfg.batchRows {
		return nil
	}
	return j.flush()
}

func (j *jsonFiles) flush() *FileColumns {
	if j.b == nil || j.b.Len() == 0 {
		return nil
	}
	f := j.b.Finish()
	j.b = nil
	return f
}
