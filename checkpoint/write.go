package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// Compression is the codec of a written checkpoint's column chunks. Spark,
// delta-rs and delta-kernel read all of them.
type Compression int

// The codecs Write offers.
const (
	Snappy Compression = iota // the default, as Spark writes
	Zstd
	Uncompressed
)

func (c Compression) String() string {
	switch c {
	case Snappy:
		return "snappy"
	case Zstd:
		return "zstd"
	case Uncompressed:
		return "uncompressed"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

func (c Compression) codec() (compress.Compression, error) {
	switch c {
	case Snappy:
		return compress.Codecs.Snappy, nil
	case Zstd:
		return compress.Codecs.Zstd, nil
	case Uncompressed:
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("checkpoint: unknown compression %d", int(c))
}

type writeConfig struct {
	compression Compression
	batchRows   int
	mem         memory.Allocator
	statsJSON   bool
	parsed      *parsedSpec
	parts       int
	v2          bool
	sidecarRows int
	now         func() time.Time
	// progress (WithProgress) is told the file rows written of total.
	progress      func(done, total int64)
	progressTotal int64
}

// DefaultRowGroupSize is the number of actions Write buffers before writing
// them as one row group.
const DefaultRowGroupSize = 20000

// WithProgress reports the writing of the files' rows (the adds, the
// bulk of a checkpoint) to fn: the rows written so far of total (the
// caller's count of the files, 0 if unknown), every few thousand rows
// and at the end.
func WithProgress(total int64, fn func(done, total int64)) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.progress, w.progressTotal = fn, total })
}

// progressEvery is how many file rows pass between progress reports.
const progressEvery = 4096

// counted passes files through, reporting them to fn (WithProgress).
func counted(files iter.Seq[FileRow], total int64, fn func(done, total int64)) iter.Seq[FileRow] {
	return func(yield func(FileRow) bool) {
		var n int64
		fn(0, total)
		defer func() { fn(n, total) }()
		for f := range files {
			if !yield(f) {
				return
			}
			if n++; n%progressEvery == 0 {
				fn(n, total)
			}
		}
	}
}

// WithCompression sets the codec (default Snappy).
func WithCompression(c Compression) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.compression = c })
}

// WithRowGroupSize sets how many actions Write buffers and writes as one
// row group (default DefaultRowGroupSize). Write's memory grows with it (and
// with the number of files written at once), not with the number of
// actions.
func WithRowGroupSize(n int) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.batchRows = max(n, 1) })
}

// WithoutStatsJSON omits the add.stats column, as the table property
// delta.checkpoint.writeStatsAsJson=false asks.
func WithoutStatsJSON() WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.statsJSON = false })
}

// WithParts writes a multi-part checkpoint of n files,
// <v>.checkpoint.<i>.<n>.parquet, instead of a classic one (n = 1). The
// protocol deprecates them and forbids them on tables with the
// v2Checkpoint feature; they exist for readers that want parts. Actions
// are spread over the parts as Spark does (a Murmur3 hash of the file
// path, PROTOCOL.md "Multi-part checkpoint"), so that two writers produce
// the same parts. A multi-part checkpoint cannot appear atomically: the
// parts are written concurrently, and on failure the ones already written
// are deleted (best effort); readers ignore incomplete sets.
func WithParts(n int) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.parts = n })
}

// WithV2 writes a V2 spec checkpoint under a UUID name,
// <v>.checkpoint.<uuid>.parquet, with a checkpointMetadata action. When
// sidecarActions > 0 the add and remove actions go to sidecar files of at
// most that many actions each under <logDir>/_sidecars/, written before
// the top-level file that names them; otherwise they are in the top-level
// file. Only for tables with the v2Checkpoint feature.
func WithV2(sidecarActions int) WriteOption {
	return writeOptionFunc(func(w *writeConfig) { w.v2, w.sidecarRows = true, max(sidecarActions, 0) })
}

// Write writes the checkpoint of version: by default the classic file
// <logDir>/<version %020d>.checkpoint.parquet (V1 spec), one row per action
// of acts (the reconciled state of the table at version: protocol,
// metaData, txn, domainMetadata, add, and the unexpired remove
// tombstones). commitInfo, cdc and V2 actions and domainMetadata
// tombstones (removed=true) are skipped, as the protocol requires;
// anything else is written as given. acts must hold exactly one protocol
// and one metaData action. WithParts and WithV2 choose the other forms.
//
// Write streams: it buffers one row group of actions (WithRowGroupSize) per
// file being written and pipes the encoded Parquet into the store's Put,
// so memory does not grow with the table. Each file appears whole or not
// at all: an error from acts, the encoder or the store aborts the Put, and
// nothing is left under the final name. A classic checkpoint replaces an
// existing one of the same version, which is equivalent by construction.
//
// The returned LastCheckpoint describes the checkpoint, for WriteLast.
func Write(ctx context.Context, store objstore.Store, logDir string, version int64, acts iter.Seq2[actions.Action, error], opts ...WriteOption) (LastCheckpoint, error) {
	return WriteFiles(ctx, store, logDir, version, acts, nil, opts...)
}

// FileRow is one add action held in FileColumns, for WriteFiles.
type FileRow struct {
	Columns *FileColumns
	Row     int
}

// WriteFiles writes a checkpoint as Write does, with add actions given
// both ways: in acts, and as rows of FileColumns in files (nil: none),
// which are written from their columns without an *actions.Add each
// (stats_parsed, when asked for, from the typed stats columns). Rows
// whose stats the columns hold as written text are written as Write
// writes an add.
func WriteFiles(ctx context.Context, store objstore.Store, logDir string, version int64, acts iter.Seq2[actions.Action, error], files iter.Seq[FileRow], opts ...WriteOption) (LastCheckpoint, error) {
	cfg := writeConfig{compression: Snappy, batchRows: DefaultRowGroupSize, mem: memory.DefaultAllocator, statsJSON: true, parts: 1, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyWrite(&cfg)
		}
	}
	switch {
	case version < 0:
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write: negative version %d", version)
	case cfg.parts < 1 || cfg.parts > 9999999999:
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write: %d parts", cfg.parts)
	case cfg.parts > 1 && cfg.v2:
		return LastCheckpoint{}, errors.New("checkpoint: write: a V2 checkpoint cannot have parts")
	}
	if _, err := cfg.compression.codec(); err != nil {
		return LastCheckpoint{}, err
	}
	w := &writer{ctx: ctx, store: store, logDir: logDir, version: version, cfg: cfg}
	if files == nil {
		files = func(func(FileRow) bool) {}
	}
	if cfg.progress != nil {
		files = counted(files, cfg.progressTotal, cfg.progress)
	}
	if cfg.v2 {
		return w.writeV2(acts, files)
	}
	return w.writeV1(acts, files)
}

// writer holds what the files of one checkpoint share.
type writer struct {
	ctx     context.Context
	store   objstore.Store
	logDir  string
	version int64
	cfg     writeConfig
}

// tally counts what a checkpoint holds.
type tally struct {
	rows, adds, protocols, metadatas int64
}

func (t *tally) count(a *actions.Action) {
	t.rows++
	switch {
	case a.Protocol != nil:
		t.protocols++
	case a.Metadata != nil:
		t.metadatas++
	case a.Add != nil:
		t.adds++
	}
}

func (t *tally) check() error {
	if t.protocols != 1 || t.metadatas != 1 {
		return fmt.Errorf("checkpoint needs one protocol and one metaData action, got %d and %d", t.protocols, t.metadatas)
	}
	return nil
}

// keep reports whether a checkpoint holds a; see Write.
func keep(a *actions.Action) bool {
	switch {
	case a.Protocol != nil, a.Metadata != nil, a.Add != nil, a.Remove != nil, a.Txn != nil:
		return true
	case a.DomainMetadata != nil:
		return !a.DomainMetadata.Removed
	}
	return false
}

func (w *writer) schemaConfig(v2, sidecar bool) (schemaConfig, error) {
	sc := schemaConfig{statsJSON: w.cfg.statsJSON, v2: v2, sidecar: sidecar}
	if w.cfg.parsed != nil {
		parsed, err := newParsedEncoder(w.cfg.parsed)
		if err != nil {
			return sc, err
		}
		sc.partitionValuesParsed, sc.statsParsed = parsed.fields()
	}
	return sc, nil
}

// writeV1 writes a classic or multi-part checkpoint.
func (w *writer) writeV1(acts iter.Seq2[actions.Action, error], rows iter.Seq[FileRow]) (LastCheckpoint, error) {
	n := w.cfg.parts
	sc, err := w.schemaConfig(false, false)
	if err != nil {
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write version %d: %w", w.version, err)
	}
	files := make([]*fileWriter, n)
	for i := range files {
		key := joinKey(w.logDir, ClassicName(w.version))
		if n > 1 {
			key = joinKey(w.logDir, MultiPartName(w.version, i+1, n))
		}
		files[i], err = w.startFile(key, sc)
		if err != nil {
			abortAll(files[:i], err)
			return LastCheckpoint{}, err
		}
	}
	var t tally
	err = func() error {
		for a, err := range acts {
			if err != nil {
				return err
			}
			if !keep(&a) {
				continue
			}
			part := 0
			if n > 1 {
				part = sparkPartition(actionPath(&a), n)
			}
			if err := files[part].append(&a); err != nil {
				return err
			}
			t.count(&a)
		}
		for row := range rows {
			part := 0
			if n > 1 {
				p := row.Columns.Path(row.Row)
				part = sparkPartition(&p, n)
			}
			if err := files[part].appendFile(row); err != nil {
				return err
			}
			t.rows++
			t.adds++
		}
		return t.check()
	}()
	if err != nil {
		abortAll(files, err)
		return LastCheckpoint{}, w.errorf(files, err)
	}
	var size int64
	for i, f := range files {
		if err := f.finish(); err != nil {
			abortAll(files[i+1:], err)
			w.deleteFiles(files[:i])
			return LastCheckpoint{}, w.errorf(files, err)
		}
		size += f.size()
	}
	lc := LastCheckpoint{Version: w.version, Size: t.rows, SizeInBytes: &size, NumOfAddFiles: &t.adds}
	if n > 1 {
		lc.Parts = &n
	}
	lc.CheckpointSchema, err = deltaSchemaJSON(checkpointSchema(sc))
	if err != nil {
		return LastCheckpoint{}, err
	}
	return lc, nil
}

// writeV2 writes a UUID-named V2 checkpoint, with sidecars when asked.
func (w *writer) writeV2(acts iter.Seq2[actions.Action, error], rows iter.Seq[FileRow]) (LastCheckpoint, error) {
	topSC, err := w.schemaConfig(true, false)
	if err != nil {
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write version %d: %w", w.version, err)
	}
	if w.cfg.sidecarRows > 0 {
		topSC.partitionValuesParsed, topSC.statsParsed = nil, nil
	}
	sideSC, err := w.schemaConfig(false, true)
	if err != nil {
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write version %d: %w", w.version, err)
	}
	name := fmt.Sprintf("%020d.checkpoint.%s.parquet", w.version, uuid.NewString())
	var (
		t        tally
		nonFile  []actions.Action // buffered for the top-level file; small
		sidecars []actions.Sidecar
		done     []*fileWriter // finished sidecar files, to delete on failure
		side     *fileWriter
		top      *fileWriter
	)
	if w.cfg.sidecarRows == 0 {
		if top, err = w.startFile(joinKey(w.logDir, name), topSC); err != nil {
			return LastCheckpoint{}, err
		}
	}
	finishSidecar := func() error {
		if side == nil {
			return nil
		}
		f := side
		side = nil
		if err := f.finish(); err != nil {
			return err
		}
		done = append(done, f)
		sidecars = append(sidecars, actions.Sidecar{
			Path:             baseName(f.key),
			SizeInBytes:      f.size(),
			ModificationTime: w.cfg.now().UnixMilli(),
		})
		return nil
	}
	fail := func(err error) (LastCheckpoint, error) {
		if side != nil {
			side.abort()
		}
		if top != nil {
			top.abort()
		}
		w.deleteFiles(done)
		return LastCheckpoint{}, fmt.Errorf("checkpoint: write %s: %w", joinKey(w.logDir, name), err)
	}
	err = func() error {
		for a, err := range acts {
			if err != nil {
				return err
			}
			if !keep(&a) {
				continue
			}
			t.count(&a)
			fileAction := a.Add != nil || a.Remove != nil
			switch {
			case top != nil:
				// File actions embedded in the top-level file.
				if err := top.append(&a); err != nil {
					return err
				}
				if !fileAction {
					nonFile = append(nonFile, a)
				}
			case fileAction:
				if side == nil {
					key := joinKey(w.logDir, "_sidecars/"+uuid.NewString()+".parquet")
					if side, err = w.startFile(key, sideSC); err != nil {
						return err
					}
				}
				if err := side.append(&a); err != nil {
					return err
				}
				if side.rows == int64(w.cfg.sidecarRows) {
					if err := finishSidecar(); err != nil {
						return err
					}
				}
			default:
				nonFile = append(nonFile, a)
			}
		}
		for row := range rows {
			t.rows++
			t.adds++
			if top != nil {
				if err := top.appendFile(row); err != nil {
					return err
				}
				continue
			}
			if side == nil {
				key := joinKey(w.logDir, "_sidecars/"+uuid.NewString()+".parquet")
				if side, err = w.startFile(key, sideSC); err != nil {
					return err
				}
			}
			if err := side.appendFile(row); err != nil {
				return err
			}
			if side.rows == int64(w.cfg.sidecarRows) {
				if err := finishSidecar(); err != nil {
					return err
				}
			}
		}
		if err := t.check(); err != nil {
			return err
		}
		return finishSidecar()
	}()
	if err != nil {
		return fail(err)
	}
	cm := actions.Action{CheckpointMetadata: &actions.CheckpointMetadata{Version: w.version}}
	var tail []actions.Action
	if top == nil {
		if top, err = w.startFile(joinKey(w.logDir, name), topSC); err != nil {
			return fail(err)
		}
		tail = append(tail, nonFile...)
	}
	tail = append(tail, cm)
	for i := range sidecars {
		tail = append(tail, actions.Action{Sidecar: &sidecars[i]})
	}
	for i := range tail {
		if err := top.append(&tail[i]); err != nil {
			return fail(err)
		}
	}
	t.rows += 1 + int64(len(sidecars))
	f := top
	if err := f.finish(); err != nil {
		top = nil
		return fail(err)
	}
	size := f.size()
	for _, s := range sidecars {
		size += s.SizeInBytes
	}
	nonFileActions := append(nonFile[:len(nonFile):len(nonFile)], cm)
	lc := LastCheckpoint{
		Version: w.version, Size: t.rows, SizeInBytes: &size, NumOfAddFiles: &t.adds,
		V2Checkpoint: &V2Checkpoint{
			Path:             name,
			SizeInBytes:      f.size(),
			ModificationTime: w.cfg.now().UnixMilli(),
			NonFileActions:   nonFileActions,
			SidecarFiles:     sidecars,
		},
	}
	lc.CheckpointSchema, err = deltaSchemaJSON(checkpointSchema(topSC))
	if err != nil {
		return LastCheckpoint{}, err
	}
	return lc, nil
}

func (w *writer) errorf(files []*fileWriter, err error) error {
	key := joinKey(w.logDir, ClassicName(w.version))
	if len(files) > 1 {
		key = joinKey(w.logDir, fmt.Sprintf("%020d.checkpoint.*.%010d.parquet", w.version, len(files)))
	}
	return fmt.Errorf("checkpoint: write %s: %w", key, err)
}

// deleteFiles removes files already written by a failed checkpoint, best
// effort: readers ignore incomplete multi-part sets and unreferenced
// sidecars anyway.
func (w *writer) deleteFiles(files []*fileWriter) {
	ctx := context.WithoutCancel(w.ctx)
	for _, f := range files {
		_ = w.store.Delete(ctx, f.key)
	}
}

func abortAll(files []*fileWriter, err error) {
	for _, f := range files {
		if f != nil {
			f.abort()
		}
	}
}

// actionPath is the key Spark partitions multi-part checkpoints by:
// coalesce(add.path, remove.path), nil for other actions.
func actionPath(a *actions.Action) *string {
	switch {
	case a.Add != nil:
		return &a.Add.Path
	case a.Remove != nil:
		return &a.Remove.Path
	}
	return nil
}

// fileWriter streams one Parquet file of actions into a store's Put.
type fileWriter struct {
	key     string
	upload  objstore.Writer // the file's streaming upload
	fw      *pqarrow.FileWriter
	rb      *array.RecordBuilder
	enc     *encoder
	batch   int
	pending int
	rows    int64
	closed  bool
}

// startFile starts the Put of key and the Parquet writer feeding it.
func (w *writer) startFile(key string, sc schemaConfig) (*fileWriter, error) {
	// The typed stats go with the add actions: in V1 files, sidecars, and
	// a V2 top-level file without sidecars.
	var parsed *parsedEncoder
	if w.cfg.parsed != nil && (!sc.v2 || w.cfg.sidecarRows == 0) {
		var err error
		if parsed, err = newParsedEncoder(w.cfg.parsed); err != nil {
			return nil, fmt.Errorf("checkpoint: write %s: %w", key, err)
		}
	} else {
		sc.partitionValuesParsed, sc.statsParsed = nil, nil
	}
	schema := checkpointSchema(sc)
	codec, _ := w.cfg.compression.codec()
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(w.cfg.mem),
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(int64(w.cfg.batchRows)),
		// Chunk statistics carry the null counts with which readers skip
		// the columns a row group has no value of (liveLeaves); the JSON
		// stats string's min and max are of no use to anyone.
		parquet.WithStats(true),
		parquet.WithStatsFor("add.stats", false),
		// Paths and stats are unique per file: a dictionary of them only
		// costs the writer a failed attempt and the reader a conversion.
		parquet.WithDictionaryFor("add.path", false),
		parquet.WithDictionaryFor("add.stats", false),
		parquet.WithDictionaryFor("remove.path", false),
		parquet.WithCreatedBy("lakelog"),
	)
	upload, err := objstore.NewWriter(w.ctx, w.store, key, objstore.PutOptions{})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: write %s: %w", key, err)
	}
	f := &fileWriter{key: key, upload: upload, batch: w.cfg.batchRows}
	// Only the Write of the upload: the Parquet writer closes a sink that
	// is an io.Closer, and the upload must be closed (committed) here.
	fw, err := pqarrow.NewFileWriter(schema, objstore.WriteOnly(upload), props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.cfg.mem)))
	if err != nil {
		upload.Abort()
		return nil, fmt.Errorf("checkpoint: write %s: %w", key, err)
	}
	f.fw = fw
	f.rb = array.NewRecordBuilder(w.cfg.mem, schema)
	f.enc = newEncoder(f.rb, parsed)
	return f, nil
}

// append adds one action, writing a row group when the batch is full.
func (f *fileWriter) append(a *actions.Action) error {
	ok, err := f.enc.append(a)
	if err != nil || !ok {
		return err
	}
	f.rows++
	f.pending++
	if f.pending == f.batch {
		return f.flush()
	}
	return nil
}

// appendFile adds one add action given as a row of FileColumns.
func (f *fileWriter) appendFile(row FileRow) error {
	if err := f.enc.appendFile(row.Columns, row.Row); err != nil {
		return err
	}
	f.rows++
	f.pending++
	if f.pending == f.batch {
		return f.flush()
	}
	return nil
}

func (f *fileWriter) flush() error {
	rec := f.rb.NewRecordBatch()
	defer rec.Release()
	f.pending = 0
	if rec.NumRows() == 0 {
		return nil
	}
	return f.fw.Write(rec)
}

// finish writes the last row group and the footer and waits for the Put.
func (f *fileWriter) finish() error {
	if f.closed {
		return errors.New("file already closed")
	}
	err := f.flush()
	f.closed = true
	f.rb.Release()
	if cerr := f.fw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.upload.Abort()
		return err
	}
	return f.upload.Close()
}

// abort discards the file, so that nothing appears under the key.
func (f *fileWriter) abort() {
	if f.closed {
		return
	}
	f.closed = true
	f.rb.Release()
	f.fw.Close() // releases its buffers; nothing is visible before Close
	f.upload.Abort()
}

func (f *fileWriter) size() int64 { return f.upload.Written() }

// TableOptions returns the write options that the table's properties
// (props, parsed from md) ask for: delta.checkpoint.writeStatsAsJson
// (default true) and delta.checkpoint.writeStatsAsStruct (default false).
func TableOptions(table *actions.TableConfig) []WriteOption {
	props := table.Properties()
	var opts []WriteOption
	if !props.CheckpointWriteStatsAsJSON {
		opts = append(opts, WithoutStatsJSON())
	}
	if props.CheckpointWriteStatsAsStruct {
		opts = append(opts, WithStatsAsStruct(table))
	}
	return opts
}
