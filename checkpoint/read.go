package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/internal/rangefetch"
	"github.com/lakelog/lakelog/objstore"
)

// ErrCorrupt is wrapped by every error that means the checkpoint cannot be
// used: a part or sidecar is missing, a file is truncated or not Parquet
// (or not JSON), a column has a type no writer uses, or a row is invalid.
// It is terminal for that checkpoint; the log should fall back to an older
// checkpoint or to the JSON commits. Errors of the store itself (network,
// permissions) and of the context do not wrap it: they are worth a retry.
var ErrCorrupt = errors.New("corrupt or incomplete")

// corrupt wraps err as a corrupt-checkpoint error about key.
func corrupt(key string, err error) error {
	return fmt.Errorf("checkpoint: %s: %w: %w", key, ErrCorrupt, err)
}

// Thresholds for reading from stores without cheap random access.
const (
	// defaultWholeFileLimit: smaller files are fetched with one Get.
	defaultWholeFileLimit = 8 << 20
	// pageBufferSize is the read buffer of each column chunk.
	pageBufferSize = 1 << 20
)

// Read yields every action of one checkpoint: the files of parts, which
// the caller found in the log (the one file of a classic or UUID-named
// checkpoint, or all parts of a multi-part one), and, when the checkpoint
// has sidecar actions, the sidecar files they name under the log folder's
// _sidecars/ (resolved against the folder of the checkpoint's key).
//
// Order: the files' actions in part order, each file's rows in order;
// sidecar files' actions after all of the checkpoint's own, in the order
// the sidecar actions appear. Sidecar actions are yielded too (before the
// actions of their files). commitInfo and cdc columns, which old writers
// put in checkpoints, are ignored.
//
// Parts are validated first: all must be checkpoint file names of one
// version, a multi-part checkpoint must have every one of its parts, and
// the other kinds exactly one file; an incomplete set is ErrCorrupt.
//
// Row groups of all files are decoded concurrently (WithConcurrency),
// while at most a few batches per row group in flight are held in memory,
// so memory does not grow with the checkpoint's size. On the first error
// Read yields it (once, with a zero Action) and stops. Stopping the
// iteration early releases everything before the iterator returns.
func Read(ctx context.Context, store objstore.Store, parts []Part, opts ...ReadOption) iter.Seq2[actions.Action, error] {
	return func(yield func(actions.Action, error) bool) {
		cfg, err := newReadConfig(opts)
		if err != nil {
			yield(actions.Action{}, err)
			return
		}
		readParts(ctx, store, parts, cfg, func(a actions.Action) bool { return yield(a, nil) },
			func(err error) { yield(actions.Action{}, err) })
	}
}

// readParts is Read: it passes each action to out until out returns
// false, and an error to fail.
func readParts(ctx context.Context, store objstore.Store, parts []Part, cfg readConfig, out func(actions.Action) bool, fail func(error)) {
	srcs, err := planParts(parts)
	if err != nil {
		fail(err)
		return
	}
	r := &reader{store: store, cfg: cfg}
	_, randomAccess := store.(objstore.RandomAccess)
	r.randomAccess = randomAccess

	follow := cfg.kinds.has(KindAdd) || cfg.kinds.has(KindRemove)
	topKinds := cfg.kinds
	if follow {
		topKinds |= kindBit(KindSidecar)
	}
	var sidecars []source
	stopped := false
	err = r.run(ctx, srcs, topKinds, func(src source, a actions.Action) error {
		if a.Sidecar != nil {
			if follow {
				key, err := sidecarKey(src.key, a.Sidecar.Path)
				if err != nil {
					return corrupt(src.key, err)
				}
				sidecars = append(sidecars, source{key: key, size: a.Sidecar.SizeInBytes, sidecar: true})
			}
			if !cfg.kinds.has(KindSidecar) {
				return nil
			}
		}
		if !out(a) {
			stopped = true
			return errStop
		}
		return nil
	})
	if stopped {
		return
	}
	if err != nil {
		fail(err)
		return
	}
	if len(sidecars) == 0 {
		return
	}
	sideKinds := cfg.kinds & (kindBit(KindAdd) | kindBit(KindRemove))
	err = r.run(ctx, sidecars, sideKinds, func(_ source, a actions.Action) error {
		if !out(a) {
			stopped = true
			return errStop
		}
		return nil
	})
	if err != nil && !stopped {
		fail(err)
	}
}

// errStop is returned by an emit callback when the consumer stopped.
var errStop = errors.New("checkpoint: iteration stopped")

// source is one file to read.
type source struct {
	key     string
	size    int64 // 0 when unknown; for a sidecar, the size its action states
	json    bool
	sidecar bool
}

// planParts validates the caller's parts and orders them.
func planParts(parts []Part) ([]source, error) {
	if len(parts) == 0 {
		return nil, errors.New("checkpoint: no checkpoint files to read")
	}
	type named struct {
		Part
		fileName
	}
	ns := make([]named, len(parts))
	for i, p := range parts {
		fn, ok := parseName(baseName(p.Key))
		if !ok {
			return nil, fmt.Errorf("checkpoint: %q is not a checkpoint file name", p.Key)
		}
		ns[i] = named{p, fn}
	}
	first := ns[0]
	for _, n := range ns[1:] {
		if n.version != first.version {
			return nil, fmt.Errorf("checkpoint: parts of different versions: %q and %q", first.Key, n.Key)
		}
		if n.kind != kindMultiPart || first.kind != kindMultiPart {
			return nil, fmt.Errorf("checkpoint: %d files given for a single-file checkpoint: %q and %q", len(ns), first.Key, n.Key)
		}
	}
	if first.kind == kindMultiPart {
		slices.SortFunc(ns, func(a, b named) int { return a.part - b.part })
		for i, n := range ns {
			if n.numParts != first.numParts {
				return nil, corrupt(n.Key, fmt.Errorf("part of %d parts mixed with parts of %d", n.numParts, first.numParts))
			}
			if n.part != i+1 {
				break
			}
		}
		if len(ns) != first.numParts {
			return nil, corrupt(first.Key, fmt.Errorf("multi-part checkpoint of version %d has %d of its %d parts", first.version, len(ns), first.numParts))
		}
		for i, n := range ns {
			if n.part != i+1 {
				return nil, corrupt(n.Key, fmt.Errorf("multi-part checkpoint of version %d lacks part %d", first.version, i+1))
			}
		}
	}
	out := make([]source, len(ns))
	for i, n := range ns {
		out[i] = source{key: n.Key, size: n.Size, json: n.json}
	}
	return out, nil
}

// reader reads sources with a bounded pool of workers.
type reader struct {
	store        objstore.Store
	cfg          readConfig
	onFiles      func(*FileColumns) error // receives the batches of adds read as columns
	cache        *openCache               // files opened by an earlier pass; nil: none kept
	randomAccess bool
	fetch        *rangefetch.Fetcher // row groups' bytes ahead of decoding; nil with random access
}

// batch is a run of decoded actions of one unit, or the unit's error.
type batch struct {
	acts  []decoded
	files *FileColumns // adds read as columns (readConfig.layout)
	err   error
}

// decoded is one action of a batch: an add by pointer (most rows of a
// checkpoint, and an Action is a dozen words), anything else whole.
type decoded struct {
	add   *actions.Add
	other *actions.Action
}

func newDecoded(a actions.Action) decoded {
	if a.Add != nil {
		return decoded{add: a.Add}
	}
	// A copy of its own, so that only actions other than adds reach the
	// heap: taking a's address would move every call's a there (a
	// hundred bytes per add of a checkpoint).
	other := a
	return decoded{other: &other}
}

func (d decoded) action() actions.Action {
	if d.add != nil {
		return actions.Action{Add: d.add}
	}
	return *d.other
}

// unit is one row group (or one JSON file) being decoded. Its batches
// arrive on out in order; out is closed when the unit is done.
type unit struct {
	src source
	out chan batch
}

// run decodes srcs and calls emit for every action, in order. Units (row
// groups) are started in order, at most cfg.concurrency at a time, and
// consumed in order; each buffers at most one batch ahead, so memory is
// bounded by the concurrency and the batch size.
func (r *reader) run(ctx context.Context, srcs []source, kinds kindSet, emit func(source, actions.Action) error) error {
	if kinds == 0 {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	if !r.randomAccess {
		r.fetch = r.newFetcher(ctx)
		defer func() { r.fetch.Close(); r.fetch = nil }() // after cancel, below
	}
	pending := make(chan *unit, r.cfg.concurrency)
	sem := make(chan struct{}, r.cfg.concurrency)

	// start launches fn as the next unit, waiting for a free slot. It
	// reports false when the context ended first.
	start := func(src source, fn func(ctx context.Context, out chan<- batch) error) bool {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		u := &unit{src: src, out: make(chan batch, 1)}
		select {
		case pending <- u:
		case <-ctx.Done():
			<-sem
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer close(u.out)
			err := protect(func() error { return fn(ctx, u.out) })
			if err != nil {
				select {
				case u.out <- batch{err: r.classify(src, err)}:
				case <-ctx.Done():
				}
			}
		}()
		return true
	}

	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(pending)
		// The next openAhead files' footers are read while this one's row
		// groups are planned: parts and sidecars are opened concurrently.
		ahead := make([]chan opened, len(srcs))
		for i, src := range srcs {
			for j := i; j < min(len(srcs), i+openAhead); j++ {
				if ahead[j] != nil || srcs[j].json {
					continue
				}
				ch := make(chan opened, 1)
				ahead[j] = ch
				wg.Add(1)
				go func() {
					defer wg.Done()
					f, err := r.openCached(ctx, srcs[j])
					ch <- opened{f, err}
				}()
			}
			var o opened
			if !src.json {
				o = <-ahead[i]
			}
			if !r.plan(ctx, src, o, kinds, start) {
				return
			}
		}
	}()

	var err error
consume:
	for u := range pending {
		for b := range u.out {
			if b.err != nil {
				err = b.err
				break consume
			}
			for _, a := range b.acts {
				if e := emit(u.src, a.action()); e != nil {
					err = e
					break consume
				}
			}
			if b.files != nil {
				if e := r.onFiles(b.files); e != nil {
					err = e
					break consume
				}
			}
		}
	}
	cancel() // also ends the fetcher, which the deferred Close waits for
	// Let every producer and worker see the cancellation and finish.
	go func() {
		for u := range pending {
			for range u.out {
			}
		}
	}()
	wg.Wait()
	if err == nil {
		// Our own cancel comes only after a clean end, so a cancellation
		// seen here is the caller's; units may have stopped silently.
		if e := parent.Err(); e != nil {
			err = fmt.Errorf("checkpoint: read: %w", e)
		}
	}
	return err
}

// protect runs fn and turns a panic in a Parquet or Arrow decoder into an
// error: malformed files must not crash the process.
func protect(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &formatError{fmt.Errorf("decoder panic: %v", p)}
		}
	}()
	return fn()
}

// opened is a Parquet file opened ahead of its planning, or why not.
type opened struct {
	f   *openFile
	err error
}

// plan starts one unit per row group of src, opened as o (or one unit
// for a JSON file). From a store without random access it queues each
// row group's bytes with the fetcher first. It reports false when
// reading should stop.
func (r *reader) plan(ctx context.Context, src source, o opened, kinds kindSet, start func(source, func(context.Context, chan<- batch) error) bool) bool {
	if src.json {
		return start(src, func(ctx context.Context, out chan<- batch) error {
			return r.readJSON(ctx, src, kinds, out)
		})
	}
	f, err := o.f, o.err
	if err != nil {
		return start(src, func(context.Context, chan<- batch) error { return err })
	}
	md := f.md
	leaves := r.leaves(md, kinds)
	if len(leaves) == 0 {
		return true
	}
	// Every row group's chunks are queued before the first unit starts,
	// so that the fetcher runs ahead of decoding, in the order of
	// decoding.
	type planned struct {
		rg   int
		live []int
		span [2]int64 // where its chunks lie, on a fetched file
	}
	var rgs []planned
	var needs [][2]int64
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		if md.RowGroup(rg).NumRows() == 0 {
			continue
		}
		live := liveLeaves(md, rg, leaves)
		if len(live) == 0 {
			continue
		}
		p := planned{rg: rg, live: live}
		if f.h != nil {
			// Chunks open checks against the file; the decoder reports
			// any other error.
			if rs, err := rangefetch.RowGroupRanges(md, rg, live, f.size); err == nil {
				needs = append(needs, rs...)
				p.span = spanOf(rs)
			}
		}
		rgs = append(rgs, p)
	}
	var left *rowGroupsLeft
	if f.h != nil {
		if len(rgs) == 0 {
			f.h.Release()
		}
		f.h.Queue(needs)
		left = &rowGroupsLeft{h: f.h}
		left.left.Store(int64(len(rgs)))
	}
	for _, p := range rgs {
		if !start(src, func(ctx context.Context, out chan<- batch) error {
			if left != nil {
				defer left.done(p.span)
			}
			return r.readRowGroup(ctx, f, p.rg, p.live, kinds, out)
		}) {
			return false // the fetcher's Close releases the rest
		}
	}
	return true
}

// liveLeaves drops from leaves the columns that row group rg of md holds
// no value of, by the chunk statistics' null count. A checkpoint row is one
// action, so in a row group of adds every remove, metaData, protocol, txn
// and deletion vector column is null; decoding those nulls row by row was
// most of the Arrow buffers a snapshot load allocated. A dropped column
// reads as missing, which the decoders treat as null. Only leaves outside
// lists and maps are dropped: there a null count also counts empty
// collections, which are not null.
//
// A kind whose identifying field (keyFields) is all null has no action in
// the row group, and all its columns are dropped, those in lists and maps
// too.
func liveLeaves(md *metadata.FileMetaData, rg int, leaves []int) []int {
	rgmd := md.RowGroup(rg)
	rows := rgmd.NumRows()
	dead := map[string]bool{}
	for _, leaf := range leaves {
		p := md.Schema.Column(leaf).ColumnPath()
		if len(p) == 2 && keyFields[p[0]] == p[1] && allNull(rgmd, leaf, rows) {
			dead[p[0]] = true
		}
	}
	live := make([]int, 0, len(leaves))
	for _, leaf := range leaves {
		c := md.Schema.Column(leaf)
		if dead[c.ColumnPath()[0]] || c.MaxRepetitionLevel() == 0 && allNull(rgmd, leaf, rows) {
			continue
		}
		live = append(live, leaf)
	}
	return live
}

// keyFields name, per action kind, the field whose presence makes a row
// an action of that kind (the decoders' presentBy).
var keyFields = map[string]string{
	KindAdd:                "path",
	KindRemove:             "path",
	KindMetadata:           "id",
	KindProtocol:           "minReaderVersion",
	KindTxn:                "appId",
	KindDomainMetadata:     "domain",
	KindCheckpointMetadata: "version",
	KindSidecar:            "path",
}

// allNull says whether the chunk statistics prove that column leaf of the
// row group holds only nulls. Missing or untrusted statistics prove
// nothing.
func allNull(rgmd *metadata.RowGroupMetaData, leaf int, rows int64) bool {
	cc, err := rgmd.ColumnChunk(leaf)
	if err != nil || cc.NumValues() != rows {
		return false
	}
	if ok, err := cc.StatsSet(); !ok || err != nil {
		return false
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasNullCount() {
		return false
	}
	return st.NullCount() == rows
}

// openFile is a Parquet file whose footer has been read.
type openFile struct {
	src  source
	size int64
	data []byte // the whole file, when it was small enough to fetch at once
	// h is the file in the run's fetcher, from a store without random
	// access when it was not fetched whole.
	h  *rangefetch.File
	md *metadata.FileMetaData
}

// open reads src's footer (and, from a remote store, the whole file when
// it is small).
func (r *reader) open(ctx context.Context, src source) (f *openFile, err error) {
	f = &openFile{src: src}
	err = protect(func() error {
		size := src.size
		if !r.randomAccess && (src.sidecar || size == 0) {
			// A sidecar's stated size is a hint only; a listing's is exact.
			info, err := r.store.Head(ctx, src.key)
			if err != nil {
				return err
			}
			size = info.Size
		}
		var ra io.ReaderAt
		switch {
		case !r.randomAccess && size <= r.cfg.wholeFileLimit:
			b, err := r.store.Get(ctx, src.key)
			if err != nil {
				return err
			}
			f.data, size = b, int64(len(b))
			ra = bytes.NewReader(b)
		case !r.randomAccess:
			// One speculative read of the tail serves the footer's length
			// and the footer, which are otherwise two round trips.
			f.h = r.fetch.Add(src.key, size, nil)
			ra = f.h
		default:
			obj, err := objstore.OpenObject(ctx, r.store, src.key, max(size, -1))
			if err != nil {
				return err
			}
			defer obj.Close()
			size = obj.Size()
			ra = obj
		}
		f.size = size
		t := &trackedReader{ra: ra, size: size}
		pf, err := file.NewParquetReader(t.parquetSource(), file.WithReadProps(r.readProps()))
		if err != nil {
			if t.err != nil {
				return t.err
			}
			return &formatError{err}
		}
		f.md = pf.MetaData()
		// Columns are read by their Parquet types. The key-value metadata
		// is not needed, and decoding a damaged ARROW:schema entry (which
		// delta-rs writes) can exhaust memory.
		f.md.FileMetaData.KeyValueMetadata = nil
		if err := checkChunks(f.md, size); err != nil {
			pf.Close()
			return &formatError{err}
		}
		return pf.Close()
	})
	if err != nil {
		if f.h != nil {
			f.h.Release()
		}
		return nil, err
	}
	return f, nil
}

// checkChunks validates the row groups' column chunk offsets and sizes
// against the file size. The Parquet reader opens the chunks of a struct's
// fields on goroutines of its own, where a panic on a bad offset could not
// be recovered, so bad metadata must be refused before.
func checkChunks(md *metadata.FileMetaData, size int64) error {
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		rgmd := md.RowGroup(rg)
		if rgmd.NumRows() < 0 {
			return fmt.Errorf("row group %d has %d rows", rg, rgmd.NumRows())
		}
		for c := 0; c < md.Schema.NumColumns(); c++ {
			cc, err := rgmd.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("row group %d column %d: %w", rg, c, err)
			}
			if _, _, err := rangefetch.ChunkSpan(cc, size, false); err != nil {
				return fmt.Errorf("row group %d column %d: %w", rg, c, err)
			}
			if cc.NumValues() < 0 {
				return fmt.Errorf("row group %d column %d: %d values", rg, c, cc.NumValues())
			}
		}
	}
	return nil
}

func (r *reader) readProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(r.cfg.mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = pageBufferSize
	return props
}

// leaves returns the Parquet leaf columns to read for kinds.
func (r *reader) leaves(md *metadata.FileMetaData, kinds kindSet) []int {
	hasStats := false
	for i := 0; i < md.Schema.NumColumns(); i++ {
		if p := md.Schema.Column(i).ColumnPath(); len(p) == 2 && p[0] == KindAdd && p[1] == "stats" {
			hasStats = true
		}
	}
	var out []int
	for i := 0; i < md.Schema.NumColumns(); i++ {
		p := md.Schema.Column(i).ColumnPath()
		if len(p) == 0 || !kinds.has(p[0]) {
			continue
		}
		if len(p) > 1 && (p[0] == KindAdd || p[0] == KindRemove) {
			switch p[1] {
			case "partitionValues_parsed":
				continue
			case "stats_parsed":
				// Only to stand in for a missing stats column.
				if !r.cfg.stats || p[0] != KindAdd || hasStats {
					continue
				}
			case "stats":
				if !r.cfg.stats && p[0] == KindAdd {
					continue
				}
			}
		}
		out = append(out, i)
	}
	return out
}

// readRowGroup decodes row group rg of f and sends its actions to out.
func (r *reader) readRowGroup(ctx context.Context, f *openFile, rg int, leaves []int, kinds kindSet, out chan<- batch) error {
	ra, closeFn, err := r.rowGroupReader(ctx, f)
	if err != nil {
		return err
	}
	defer closeFn()
	t := &trackedReader{ra: ra, size: f.size}
	pf, err := file.NewParquetReader(t.parquetSource(), file.WithMetadata(f.md), file.WithReadProps(r.readProps()))
	if err != nil {
		return t.orFormat(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(r.cfg.batchRows)}, r.cfg.mem)
	if err != nil {
		return t.orFormat(err)
	}
	arrowLeaves, rawLeaves := splitRawLeaves(f.md, leaves)
	raws := make([]*rawStrings, len(rawLeaves))
	for i, leaf := range rawLeaves {
		if raws[i], err = newRawStrings(pf.RowGroup(rg), f.md.RowGroup(rg), leaf); err != nil {
			return t.orFormat(err)
		}
		defer raws[i].cr.Close()
		defer raws[i].release()
	}
	rr, err := fr.GetRecordReader(ctx, arrowLeaves, []int{rg})
	if err != nil {
		return t.orFormat(err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		if r.cfg.layout != nil {
			var b batch
			b.acts, b.files, err = decodeColumnar(rec, kinds, raws, r.cfg.layout, r.cfg.stats)
			if err != nil {
				return t.orFormat(err)
			}
			if len(b.acts) == 0 && b.files == nil {
				continue
			}
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		var raw map[string]strCol
		if len(raws) > 0 {
			raw = make(map[string]strCol, len(raws))
			for _, rs := range raws {
				c, err := rs.next(int(rec.NumRows()))
				if err != nil {
					return t.orFormat(err)
				}
				raw[rs.path] = c
			}
		}
		var b batch
		b.acts, err = decodeRecord(rec, kinds, raw)
		if err != nil {
			return &formatError{err}
		}
		if len(b.acts) == 0 {
			continue
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := rr.Err(); err != nil {
		return t.orFormat(err)
	}
	return nil
}

// rowGroupReader returns what to read a row group from: the file's bytes
// when it was fetched whole; from a store without random access, the
// file in the run's fetcher, which serves the chunks it fetched ahead;
// otherwise the object opened for reads at offsets.
func (r *reader) rowGroupReader(ctx context.Context, f *openFile) (io.ReaderAt, func(), error) {
	if f.data != nil {
		return bytes.NewReader(f.data), func() {}, nil
	}
	if f.h != nil {
		return f.h, func() {}, nil
	}
	obj, err := objstore.OpenObject(ctx, r.store, f.src.key, f.size)
	if err != nil {
		return nil, nil, err
	}
	return obj, func() { obj.Close() }, nil
}

// trackedReader adapts an io.ReaderAt to the Parquet reader and remembers
// the first error of the store, so that a failing store is not mistaken
// for a corrupt file.
type trackedReader struct {
	ra   io.ReaderAt
	size int64
	mu   sync.Mutex
	err  error
}

func (t *trackedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := t.ra.ReadAt(p, off)
	if err != nil && err != io.EOF {
		t.mu.Lock()
		if t.err == nil {
			t.err = err
		}
		t.mu.Unlock()
	}
	return n, err
}

// parquetSource is t as the Parquet reader wants it: Read and Seek over
// t's ReadAt.
func (t *trackedReader) parquetSource() *io.SectionReader {
	return io.NewSectionReader(t, 0, t.size)
}

// orFormat returns the store's error if there was one, else err as a
// format error.
func (t *trackedReader) orFormat(err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	return &formatError{err}
}

// formatError marks an error of the file's content (as opposed to the
// store's or the context's).
type formatError struct{ err error }

func (e *formatError) Error() string { return e.err.Error() }
func (e *formatError) Unwrap() error { return e.err }

// classify wraps a unit's error: content errors, missing files and short
// objects are ErrCorrupt; the context's and the store's errors are passed
// on as they are.
func (r *reader) classify(src source, err error) error {
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	what := "checkpoint file"
	if src.sidecar {
		what = "sidecar"
	}
	var fe *formatError
	if errors.As(err, &fe) || errors.Is(err, objstore.ErrNotFound) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("checkpoint: read %s %s: %w: %w", what, src.key, ErrCorrupt, err)
	}
	return fmt.Errorf("checkpoint: read %s %s: %w", what, src.key, err)
}

// readJSON decodes a UUID-named V2 checkpoint in JSON: one action per line.
func (r *reader) readJSON(ctx context.Context, src source, kinds kindSet, out chan<- batch) error {
	b, err := r.store.Get(ctx, src.key)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), len(b)+1)
	var acts []decoded
	var jf jsonFiles
	line := 0
	for sc.Scan() {
		line++
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		var a actions.Action
		if err := json.Unmarshal(l, &a); err != nil {
			return &formatError{fmt.Errorf("line %d: %w", line, err)}
		}
		if k := a.Kind(); k == "" || !kinds.has(k) {
			continue
		}
		if r.cfg.layout != nil && a.Add != nil {
			if f := jf.add(r, a.Add); f != nil {
				select {
				case out <- batch{files: f}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			continue
		}
		acts = append(acts, newDecoded(a))
		if len(acts) == r.cfg.batchRows {
			select {
			case out <- batch{acts: acts}:
			case <-ctx.Done():
				return ctx.Err()
			}
			acts = nil
		}
	}
	if err := sc.Err(); err != nil {
		return &formatError{err}
	}
	if f := jf.flush(); f != nil || len(acts) > 0 {
		select {
		case out <- batch{acts: acts, files: f}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// decodeRecord turns one record batch into actions of the given kinds, in
// row order. raw holds the columns read beside the batch by rawStrings,
// by dotted path.
func decodeRecord(rec arrow.RecordBatch, kinds kindSet, raw map[string]strCol) ([]decoded, error) {
	decs, err := newDecoders(rec, kinds, raw)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	acts := make([]decoded, 0, n)
	for i := 0; i < n; i++ {
		for _, d := range decs {
			if !d.present(i) {
				continue
			}
			a, err := d.decode(i)
			if err != nil {
				return nil, fmt.Errorf("row %d: %w", i, err)
			}
			acts = append(acts, newDecoded(a))
		}
	}
	return acts, nil
}
