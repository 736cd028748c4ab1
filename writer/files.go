package writer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/parallel"
	"github.com/lakelog/lakelog/objstore"
)

// WriteResult describes the data files a write produced. The files are
// invisible until a commit adds them.
type WriteResult struct {
	// Adds are the files' add actions, in the order the files were closed.
	Adds []*actions.Add
	// NumRows and NumBytes total the files' rows and sizes.
	NumRows  int64
	NumBytes int64
	// Metadata is the table metadata the files were written for: the
	// table's own, or with WithMergeSchema, when the input had new
	// columns, a copy with the widened schema (SchemaChanged is then set)
	// that the commit must carry.
	Metadata      *actions.Metadata
	SchemaChanged bool
	// HighWaterMarks are the identity columns' high-water marks after the
	// values the write generated, by column name (none when it generated
	// none). The commit must carry them (WriteResult.Changes does).
	HighWaterMarks map[string]int64
}

// WriteFiles writes batches as data files of snap's table, without
// committing: the building block of Append, Overwrite and ReplaceWhere,
// and of operations that rewrite files (DELETE, UPDATE, MERGE, OPTIMIZE).
//
// The input must fit the table's schema (see the package documentation):
// otherwise the error is a *SchemaError and the files written so far are
// left as orphans, which no snapshot references (VACUUM removes them).
// Rows go to one file per partition, Hive-style folders, rolled over at
// the target size. Batches are consumed as they come; WriteFiles never
// holds the whole input.
func WriteFiles(ctx context.Context, snap *deltalog.Snapshot, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*WriteResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := snap.Supports(deltalog.OpAppend); err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	if err := refuseOverwriteSchema(cfg, "WriteFiles (replaceWhere, DELETE, UPDATE, MERGE, OPTIMIZE)"); err != nil {
		return nil, err
	}
	if err := refuseCommitOptions(cfg); err != nil {
		return nil, err
	}
	if table := cfg.schemaChange; table != nil {
		if cfg.rowTracking {
			return nil, fmt.Errorf("writer: a rewrite that keeps row IDs cannot change the schema yet")
		}
		wr, err := writeFiles(ctx, snap.Store(), snap.Root(), table, batches, cfg)
		if err != nil {
			return nil, err
		}
		wr.SchemaChanged = true
		return wr, nil
	}
	table := snap.Config()
	if cfg.rowTracking {
		if table, cfg.hidden, err = rowTrackingTable(snap); err != nil {
			return nil, err
		}
	}
	return writeFiles(ctx, snap.Store(), snap.Root(), table, batches, cfg)
}

// rowCheck validates a conformed batch (replaceWhere's constraint).
type rowCheck func(rec arrow.RecordBatch, rowBase int64) error

// writeFiles is WriteFiles on a store and table root ("" or ending in
// '/') for the table whose configuration is table: its schema, partition
// columns and properties, the physical names of its columns, whether
// its files hold the partition columns (materializePartitionColumns,
// delta.writePartitionColumnsToParquet, Iceberg compatibility; readers
// take partition values from the adds either way, and the files have no
// stats for them).
func writeFiles(ctx context.Context, store objstore.Store, root string, table *actions.TableConfig, batches iter.Seq2[arrow.RecordBatch, error], cfg *config) (*WriteResult, error) {
	check := cfg.rowCheck
	md, props, schema := table.Metadata(), table.Properties(), table.Schema()
	// Change data files never hold the partition columns: their
	// values are in the cdc actions.
	cfg.materializePartitions = table.MaterializesPartitionColumns() && !cfg.changeFiles
	if cfg.dataChange && !cfg.changeFiles && len(props.Constraints) > 0 {
		// Every row an operation writes meets the table's CHECK
		// constraints; a rearrangement (OPTIMIZE) and change data
		// files write rows the table already had.
		cs, err := bindConstraints(props, schema)
		if err != nil {
			return nil, err
		}
		inner := check
		check = func(rec arrow.RecordBatch, rowBase int64) error {
			if inner != nil {
				if err := inner(rec, rowBase); err != nil {
					return err
				}
			}
			return checkConstraints(cs, rec, rowBase, cfg.mem)
		}
	}
	conf, err := newConformer(table, cfg.mergeSchema, cfg.mem)
	if err != nil {
		return nil, err
	}
	// Rows that change data get their generated columns computed (or
	// checked, when given); a rearrangement (OPTIMIZE) and change data
	// files copy rows the table had.
	conf.generate = cfg.dataChange && !cfg.changeFiles
	conf.tableRows = cfg.tableRows
	conf.keepDicts, conf.partition = true, map[string]bool{}
	for _, p := range md.PartitionColumns {
		conf.partition[strings.ToLower(p)] = true
	}
	fs := &fileSet{ctx: ctx, cfg: cfg, store: store, root: root, md: md, props: props, open: map[string]*openFile{}, workers: runtime.GOMAXPROCS(0),
		uploadSlots: make(chan struct{}, uploadsInFlight), mode: table.ColumnMappingMode()}
	if table.ColumnMapped() || props.RandomizeFilePrefixes {
		fs.randomPrefix = int(props.RandomPrefixLength)
	}
	if err := fs.setSchema(schema); err != nil {
		return nil, err
	}
	// The input is read and conformed on its own goroutine, one batch
	// ahead of the writing: generating or decoding the next rows overlaps
	// encoding these.
	items := make(chan conformed, 1)
	stop := make(chan struct{})
	go conformAll(ctx, batches, conf, check, items, stop)
	var failed error
	for c := range items {
		if c.err != nil {
			failed = c.err
			break
		}
		if c.schema != fs.schema {
			// Merge-schema widened the table: finish the files written
			// with the old columns and go on with the new ones.
			if err := fs.closeAll(); err != nil {
				c.full.Release()
				failed = err
				break
			}
			if err := fs.setSchema(c.schema); err != nil {
				c.full.Release()
				failed = err
				break
			}
		}
		err := fs.write(c.full)
		c.full.Release()
		if err != nil {
			failed = err
			break
		}
	}
	close(stop)
	for c := range items { // what the reader had ready; until it has stopped
		if c.full != nil {
			c.full.Release()
		}
	}
	if failed != nil {
		fs.abort()
		return nil, failed
	}
	if err := fs.closeAll(); err != nil {
		fs.abort()
		return nil, err
	}
	res := &WriteResult{Adds: fs.sortedAdds(), Metadata: md}
	for _, a := range fs.adds {
		res.NumBytes += a.Size
	}
	res.NumRows = fs.rows
	res.HighWaterMarks = conf.ids.HighWaterMarks()
	if conf.changed {
		s, err := actions.SchemaString(conf.schema)
		if err != nil {
			return nil, fmt.Errorf("writer: %w", err)
		}
		nmd := *md
		nmd.SchemaString = s
		if conf.mode != actions.ColumnMappingNone {
			nmd.Configuration = maps.Clone(md.Configuration)
			nmd.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(conf.maxID, 10)
		}
		res.Metadata, res.SchemaChanged = &nmd, true
	}
	return res, nil
}

// conformed is one input batch in the table's schema (schema: the
// conformer's after it), or the error that ends the input.
type conformed struct {
	full   arrow.RecordBatch
	schema *actions.StructType
	err    error
}

// conformAll reads batches, conforms each to the table and checks it, and
// sends the results to items, which it closes at the end of the input,
// after the first error, or when stop is closed.
func conformAll(ctx context.Context, batches iter.Seq2[arrow.RecordBatch, error], conf *conformer, check rowCheck, items chan<- conformed, stop <-chan struct{}) {
	defer close(items)
	if batches == nil {
		return // no input: no rows
	}
	// The caller's iterator runs on this goroutine, where the caller
	// could not recover its panic: it ends the input as an error.
	defer func() {
		if r := recover(); r != nil {
			select {
			case items <- conformed{err: fmt.Errorf("writer: the input's iterator panicked: %v", r)}:
			case <-stop:
			}
		}
	}()
	var rows int64
	for rec, err := range batches {
		var c conformed
		switch {
		case err != nil:
			c.err = err // the caller's own error, as it gave it
		case rec == nil || rec.NumRows() == 0:
			continue
		default:
			c.full, c.err = conf.conform(ctx, rec, rows)
			if c.err == nil && check != nil {
				if c.err = check(c.full, rows); c.err != nil {
					c.full.Release()
					c.full = nil
				}
			}
			if c.err == nil {
				c.schema = conf.schema
				rows += c.full.NumRows()
			}
		}
		select {
		case items <- c:
		case <-stop:
			if c.full != nil {
				c.full.Release()
			}
			return
		}
		if c.err != nil {
			return
		}
	}
}

// fileSet is the set of open data files of one write, by partition.
type fileSet struct {
	ctx   context.Context
	cfg   *config
	store objstore.Store
	root  string
	md    *actions.Metadata
	props *actions.TableProperties // md's
	// mode is the table's column mapping mode: data files name their
	// columns, and adds key their stats and partition values, by the
	// physical names of actions.PhysicalSchema. randomPrefix puts each
	// file in a folder of random characters instead of Hive-style
	// partition folders, as Spark does for column-mapped tables (whose
	// folder names would otherwise leak logical names) and with
	// delta.randomizeFilePrefixes.
	mode         string
	randomPrefix int

	schema     *actions.StructType // the full table schema being written
	partCols   []*actions.StructField
	partIdx    []int // positions of the partition columns in the full record
	dataIdx    []int // positions of the data columns
	dataSchema *arrow.Schema
	leaves     []*statsLeaf
	// plainCols are the data columns written without a dictionary, once
	// dictDecided (see dictionary.go).
	plainCols   []string
	dictDecided bool
	rowGroup    []int32 // groupByPartition's scratch: each row's group

	// workers is how many partitions' rows one batch writes at once.
	workers int
	// mu guards what the workers of one batch share: open, clock, seq,
	// adds and rows. Each worker has its partition's file to itself.
	mu    sync.Mutex
	open  map[string]*openFile // by partition folder
	clock int64                // ticks on each write, for least-recently-used
	// encoded totals the row groups flushed by all files, so that a new
	// file estimates its size from what earlier ones compressed to.
	encoded sharedRatio
	seq     int // files started
	adds    []*actions.Add
	addSeq  []int // the seq of each add's file
	rows    int64
	// Finished files whose uploads complete in the background (finish).
	uploads     sync.WaitGroup
	uploadSlots chan struct{}
	uploadErr   error // guarded by mu
}

func (fs *fileSet) setSchema(s *actions.StructType) error {
	fs.schema = s
	fs.partCols, fs.partIdx, fs.dataIdx = nil, nil, nil
	isPart := map[string]bool{}
	for _, c := range fs.md.PartitionColumns {
		isPart[c] = true
	}
	// data are the columns stats are kept for; the files hold them, and
	// with materialized partitions the partition columns too, in schema
	// order (fileCol maps data's positions to the files').
	data := &actions.StructType{}
	var fileCol []int
	for i, f := range s.Fields {
		if isPart[f.Name] {
			if fs.cfg.materializePartitions {
				fs.dataIdx = append(fs.dataIdx, i)
			}
			continue
		}
		fileCol = append(fileCol, len(fs.dataIdx))
		fs.dataIdx = append(fs.dataIdx, i)
		data.Fields = append(data.Fields, f)
	}
	for _, c := range fs.md.PartitionColumns {
		i := s.IndexFold(c)
		if i < 0 {
			return fmt.Errorf("writer: partition column %q is not in the schema", c)
		}
		fs.partIdx = append(fs.partIdx, i)
		fs.partCols = append(fs.partCols, s.Fields[i])
	}
	fileFields := data
	if fs.cfg.materializePartitions {
		fileFields = &actions.StructType{}
		for _, i := range fs.dataIdx {
			fileFields.Fields = append(fileFields.Fields, s.Fields[i])
		}
	}
	sc, err := fs.fileSchema(fileFields)
	if err != nil {
		return err
	}
	fs.dataSchema = sc
	leaves, err := statsColumns(fs.props, data)
	if err != nil {
		return err
	}
	// Stats are keyed by physical names, as the data files' columns.
	phys := actions.PhysicalSchema(data, fs.mode)
	for _, l := range leaves {
		l.names = fieldNames(phys, l.path)
		l.path[0] = fileCol[l.path[0]]
	}
	fs.leaves = leaves
	fs.plainCols, fs.dictDecided = nil, false
	return nil
}

// fileSchema is the Arrow schema of the data files' columns: data's
// fields under their physical names, with their column mapping ids as
// Parquet field ids (actions.ToArrowSchema). A change data file's
// _change_type column is not a table column and is written as it is named,
// without an id.
func (fs *fileSet) fileSchema(data *actions.StructType) (*arrow.Schema, error) {
	var extra []arrow.Field
	if fs.cfg.changeFiles && len(data.Fields) > 0 && data.Fields[len(data.Fields)-1].Name == actions.ChangeTypeColumn {
		last := data.Fields[len(data.Fields)-1]
		data = &actions.StructType{Fields: data.Fields[:len(data.Fields)-1]}
		extra = append(extra, arrow.Field{Name: last.Name, Type: arrow.BinaryTypes.String, Nullable: last.Nullable})
	}
	if k := len(fs.cfg.hidden); k > 0 && len(data.Fields) >= k {
		for _, f := range data.Fields[len(data.Fields)-k:] {
			extra = append(extra, arrow.Field{Name: f.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
		}
		data = &actions.StructType{Fields: data.Fields[:len(data.Fields)-k]}
	}
	sc, err := actions.ToArrowSchema(data, true, fs.mode)
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	if extra == nil {
		return sc, nil
	}
	return arrow.NewSchema(append(slices.Clone(sc.Fields()), extra...), nil), nil
}

// fieldNames are the names of the fields along path (field indexes into
// nested structs) of s.
func fieldNames(s *actions.StructType, path []int) []string {
	names := make([]string, len(path))
	for i, k := range path {
		f := s.Fields[k]
		names[i] = f.Name
		if st, ok := f.Type.(*actions.StructType); ok {
			s = st
		}
	}
	return names
}

// write routes the rows of full (the whole table schema) to the files of
// their partitions.
func (fs *fileSet) write(full arrow.RecordBatch) error {
	if !fs.dictDecided {
		data, err := fs.dataRecord(full, nil)
		if err != nil {
			return err
		}
		fs.plainCols, fs.dictDecided = plainColumns(data)
		data.Release()
	}
	if len(fs.partIdx) == 0 {
		if err := fs.writePart("", map[string]*string{}, full, nil); err != nil {
			return err
		}
		return fs.limitBuffers()
	}
	groups, err := fs.groupByPartition(full)
	if err != nil {
		return err
	}
	if len(groups) == 1 {
		groups[0].rows = nil // the whole batch
	}
	if fs.workers > 1 && len(groups) > 1 && fs.fitsOpen(groups) {
		err = fs.writeGroupsParallel(full, groups)
	} else {
		for _, g := range groups {
			if err = fs.writePart(g.folder, g.values, full, g.rows); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	return fs.limitBuffers()
}

// fitsOpen reports whether the files of groups can all be open at once
// without finishing one for lack of room (which could take a file another
// worker is writing).
func (fs *fileSet) fitsOpen(groups []*partGroup) bool {
	n := len(fs.open)
	for _, g := range groups {
		if fs.open[g.folder] == nil {
			n++
		}
	}
	return n <= fs.cfg.maxOpenFiles
}

// writeGroupsParallel writes the partitions of one batch on up to
// fs.workers goroutines: each partition's Take, encoding, statistics and
// compression are independent of the others'. The files are opened first,
// in order, so that file numbering follows first appearance as in the
// sequential path.
func (fs *fileSet) writeGroupsParallel(full arrow.RecordBatch, groups []*partGroup) error {
	for _, g := range groups {
		if _, err := fs.fileFor(g.folder, g.values); err != nil {
			return err
		}
	}
	return parallel.ForEach(fs.ctx, len(groups), fs.workers, func(_ context.Context, i int) error {
		g := groups[i]
		return fs.writePart(g.folder, g.values, full, g.rows)
	})
}

type partGroup struct {
	folder string
	values map[string]*string
	rows   []int32
}

// groupByPartition splits the rows by partition value, in order of first
// appearance. Rows are keyed by their raw values (a row with the same
// values as the one before it skips the lookup); the partition values'
// text is computed once per distinct key. The row lists share one
// buffer, filled by counting.
func (fs *fileSet) groupByPartition(full arrow.RecordBatch) ([]*partGroup, error) {
	n := int(full.NumRows())
	var groups []*partGroup
	if cap(fs.rowGroup) < n {
		fs.rowGroup = make([]int32, n)
	}
	of := fs.rowGroup[:n] // the group of each row
	byFolder := map[string]int32{}
	newGroup := func(r int) (int32, error) {
		// partitionValues are keyed by the metadata's spelling, or by
		// physical names in a column-mapped table; the folder (the
		// partition's key, and without column mapping its directory) by
		// the metadata's.
		values := make(map[string]*string, len(fs.partIdx))
		byName := values
		if fs.mode != actions.ColumnMappingNone {
			byName = make(map[string]*string, len(fs.partIdx))
		}
		for k, ci := range fs.partIdx {
			v, ok := actions.ArrowValue(full.Column(ci), r)
			if !ok {
				return 0, fmt.Errorf("writer: partition column %q: type %s cannot be a partition column", fs.partCols[k].Name, full.Column(ci).DataType())
			}
			s, err := actions.FormatPartitionValue(fs.partCols[k].Type, v)
			if err != nil {
				return 0, fmt.Errorf("writer: partition column %q: %w", fs.partCols[k].Name, err)
			}
			byName[fs.md.PartitionColumns[k]] = s
			values[fs.partCols[k].PhysicalName(fs.mode)] = s
		}
		folder, err := actions.PartitionPath(fs.md.PartitionColumns, nil, byName)
		if err != nil {
			return 0, fmt.Errorf("writer: %w", err)
		}
		if g, ok := byFolder[folder]; ok {
			// Two keys, one partition: an empty string is null, as in
			// Spark. One group, else two workers would write one file.
			return g, nil
		}
		byFolder[folder] = int32(len(groups))
		groups = append(groups, &partGroup{folder: folder, values: values})
		return int32(len(groups) - 1), nil
	}
	if str, ok := full.Column(fs.partIdx[0]).(*array.String); ok && len(fs.partIdx) == 1 && str.NullN() == 0 {
		// The common case, one string column without nulls: its values
		// are the keys.
		byValue := map[string]int32{}
		prev, prevGroup := "", int32(-1)
		for r := range n {
			v := str.Value(r)
			if prevGroup >= 0 && v == prev {
				of[r] = prevGroup
				continue
			}
			g, seen := byValue[v]
			if !seen {
				var err error
				if g, err = newGroup(r); err != nil {
					return nil, err
				}
				byValue[v] = g
			}
			of[r], prev, prevGroup = g, v, g
		}
	} else {
		byKey := map[string]int32{}
		var key, prevKey []byte
		prevGroup := int32(-1)
		for r := range n {
			key = key[:0]
			for _, ci := range fs.partIdx {
				key = appendRawKey(key, full.Column(ci), r)
			}
			if prevGroup >= 0 && bytes.Equal(key, prevKey) {
				of[r] = prevGroup
				continue
			}
			g, seen := byKey[string(key)]
			if !seen {
				var err error
				if g, err = newGroup(r); err != nil {
					return nil, err
				}
				byKey[string(key)] = g
			}
			of[r], prevGroup = g, g
			prevKey = append(prevKey[:0], key...)
		}
	}
	if len(groups) == 1 {
		return groups, nil // the whole batch; write needs no row lists
	}
	counts := make([]int, len(groups)+1)
	for _, g := range of {
		counts[g+1]++
	}
	for g := range groups {
		counts[g+1] += counts[g]
	}
	rows := make([]int32, n)
	for g, grp := range groups {
		grp.rows = rows[counts[g]:counts[g]:counts[g+1]]
	}
	for r, g := range of {
		groups[g].rows = append(groups[g].rows, int32(r))
	}
	return groups, nil
}

// appendRawKey appends an unambiguous encoding of value i of a partition
// column to key.
func appendRawKey(key []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(key, 0)
	}
	key = append(key, 1)
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return append(key, 1)
		}
		return append(key, 0)
	case *array.Int8:
		return binary.AppendVarint(key, int64(a.Value(i)))
	case *array.Int16:
		return binary.AppendVarint(key, int64(a.Value(i)))
	case *array.Int32:
		return binary.AppendVarint(key, int64(a.Value(i)))
	case *array.Int64:
		return binary.AppendVarint(key, a.Value(i))
	case *array.Date32:
		return binary.AppendVarint(key, int64(a.Value(i)))
	case *array.Timestamp:
		return binary.AppendVarint(key, int64(a.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint32(key, math.Float32bits(a.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(key, math.Float64bits(a.Value(i)))
	case *array.String:
		v := a.Value(i)
		key = binary.AppendUvarint(key, uint64(len(v)))
		return append(key, v...)
	case *array.Binary:
		v := a.Value(i)
		key = binary.AppendUvarint(key, uint64(len(v)))
		return append(key, v...)
	case *array.Decimal128:
		v := a.Value(i)
		key = binary.LittleEndian.AppendUint64(key, v.LowBits())
		return binary.LittleEndian.AppendUint64(key, uint64(v.HighBits()))
	}
	// Other types cannot be partition columns; scalarAt reports them.
	return key
}

// writePart writes rows idx (nil: all) of full to the partition's file.
func (fs *fileSet) writePart(folder string, values map[string]*string, full arrow.RecordBatch, idx []int32) error {
	data, err := fs.dataRecord(full, idx)
	if err != nil {
		return err
	}
	defer data.Release()
	f, err := fs.fileFor(folder, values)
	if err != nil {
		return err
	}
	// Write in slices so that row groups and files can be cut near their
	// sizes even when batches are large: at most slice rows, and no more
	// than the rows estimated to fill the file to its target.
	const slice = 16 * 1024
	n := data.NumRows()
	dataBytes := arrowbatch.Bytes(data)
	for off := int64(0); off < n; {
		rows := min(slice, n-off)
		if left := fs.cfg.targetFileSize - f.size(); left > 0 && dataBytes > 0 {
			// Encoded bytes per row, as this file's ratio predicts.
			perRow := float64(dataBytes) / float64(n) * f.ratio()
			rows = min(rows, max(1, int64(math.Ceil(float64(left)/perRow))))
		}
		part := data
		if rows < n {
			part = data.NewSlice(off, off+rows)
		}
		err := f.write(part, dataBytes*rows/n)
		fs.mu.Lock()
		fs.rows += rows
		fs.mu.Unlock()
		off += rows
		if part != data {
			part.Release()
		}
		if err != nil {
			return err
		}
		if f.size() >= fs.cfg.targetFileSize {
			if err := fs.finish(f); err != nil {
				return err
			}
			if off < n {
				if f, err = fs.fileFor(folder, values); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dataRecord projects the data columns (and rows idx, when not nil) of
// full, labelled with the files' Parquet schema.
func (fs *fileSet) dataRecord(full arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(fs.dataIdx))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var indices arrow.Array
	if idx != nil {
		// The indices borrow idx's memory: Take only reads them.
		buf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))
		indices = array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0))
		defer indices.Release()
	}
	for k, ci := range fs.dataIdx {
		col := full.Column(ci)
		if indices == nil {
			cols[k] = relabel(col, fs.dataSchema.Field(k).Type)
			continue
		}
		if d, ok := col.(*array.Dictionary); ok {
			// Rows of several partitions: decoded (each partition's
			// file would take a dictionary most of whose entries it
			// does not reference).
			col = d.Dictionary()
			taken, err := compute.TakeArray(compute.WithAllocator(fs.ctx, fs.cfg.mem), col, d.Indices())
			if err != nil {
				return nil, fmt.Errorf("writer: split partitions: %w", err)
			}
			defer taken.Release()
			col = taken
		}
		taken, err := compute.TakeArray(compute.WithAllocator(fs.ctx, fs.cfg.mem), col, indices)
		if err != nil {
			return nil, fmt.Errorf("writer: split partitions: %w", err)
		}
		cols[k] = relabel(taken, fs.dataSchema.Field(k).Type)
		taken.Release()
	}
	n := full.NumRows()
	if idx != nil {
		n = int64(len(idx))
	}
	return array.NewRecordBatch(arrowbatch.SchemaOf(fs.dataSchema, cols), cols, n), nil
}

// fileFor returns the open file of a partition, starting one (and
// finishing the least recently used when too many are open).
//
// In a parallel batch every partition's file is opened beforehand, and a
// worker only asks again for its own partition after finishing its file,
// which leaves room: no other worker's file is ever finished here.
func (fs *fileSet) fileFor(folder string, values map[string]*string) (*openFile, error) {
	fs.mu.Lock()
	fs.clock++
	if f := fs.open[folder]; f != nil {
		f.lastUse = fs.clock
		fs.mu.Unlock()
		return f, nil
	}
	var lru *openFile
	if len(fs.open) >= fs.cfg.maxOpenFiles {
		for _, f := range fs.open {
			if lru == nil || f.lastUse < lru.lastUse {
				lru = f
			}
		}
	}
	fs.mu.Unlock()
	if lru != nil {
		if err := fs.finish(lru); err != nil {
			return nil, err
		}
	}
	f, err := fs.startFile(folder, values)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	fs.open[folder] = f
	f.lastUse = fs.clock
	fs.mu.Unlock()
	return f, nil
}

// limitBuffers finishes the open file holding the most encoded bytes
// while all together hold more than the buffer size. Finishing, not
// flushing its row group: the file may receive no more rows, and a row
// group can only be flushed by opening the next (see openFile.write), so
// a flush could leave an empty row group in its footer.
func (fs *fileSet) limitBuffers() error {
	for {
		var total int64
		var big *openFile
		for _, f := range fs.open {
			b := f.buffered()
			total += b
			if big == nil || b > big.buffered() {
				big = f
			}
		}
		if total <= fs.cfg.bufferSize || big == nil || big.buffered() == 0 {
			return nil
		}
		if err := fs.finish(big); err != nil {
			return err
		}
	}
}

// finish closes f and records its add action.
// The footer of a finished file is encoded at once; the rest of its
// upload (the last part, or the whole object when it is smaller than a
// part: one PUT of a few megabytes on an object store) completes in the
// background while the next rows are encoded, up to uploadsInFlight files
// at a time, each holding at most its store's buffered bytes.
const uploadsInFlight = 4

// finish closes f and records its add action once its upload completes.
func (fs *fileSet) finish(f *openFile) error {
	fs.mu.Lock()
	delete(fs.open, f.folder)
	fs.mu.Unlock()
	if err := fs.uploadError(); err != nil {
		f.abort()
		return err
	}
	if err := f.finishEncoding(); err != nil {
		return err
	}
	fs.uploadSlots <- struct{}{}
	fs.uploads.Add(1)
	go func() {
		defer fs.uploads.Done()
		defer func() { <-fs.uploadSlots }()
		add, err := f.close(fs.cfg.dataChange)
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if err != nil {
			if fs.uploadErr == nil {
				fs.uploadErr = err
			}
			return
		}
		fs.adds = append(fs.adds, add)
		fs.addSeq = append(fs.addSeq, f.seq)
	}()
	return nil
}

// uploadError is the first failure of a background upload.
func (fs *fileSet) uploadError() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.uploadErr
}

// waitUploads waits for the background uploads and returns the first
// failure.
func (fs *fileSet) waitUploads() error {
	fs.uploads.Wait()
	return fs.uploadError()
}

// sortedAdds returns the adds in the order their files were started.
func (fs *fileSet) sortedAdds() []*actions.Add {
	order := make([]int, len(fs.adds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(fs.addSeq[a], fs.addSeq[b]) })
	out := make([]*actions.Add, len(order))
	for i, k := range order {
		out[i] = fs.adds[k]
	}
	return out
}

// closeAll finishes every open file and waits for all uploads.
func (fs *fileSet) closeAll() error {
	open := slices.Collect(maps.Values(fs.open))
	if err := parallel.ForEach(fs.ctx, len(open), fs.workers, func(_ context.Context, i int) error { return fs.finish(open[i]) }); err != nil {
		return err
	}
	return fs.waitUploads()
}

// abort discards every open file and waits for the uploads in flight
// (files already uploaded stay, invisible until a commit adds them).
func (fs *fileSet) abort() {
	for _, f := range fs.open {
		f.abort()
	}
	clear(fs.open)
	fs.uploads.Wait()
}

// startFile opens a new data file in folder.
func (fs *fileSet) startFile(folder string, values map[string]*string) (*openFile, error) {
	fs.mu.Lock()
	seq := fs.seq
	fs.seq++
	fs.mu.Unlock()
	prefix, dir := "part", folder
	if fs.randomPrefix > 0 {
		dir = randomPrefix(fs.randomPrefix) + "/"
	}
	if fs.cfg.changeFiles {
		prefix, dir = "cdc", actions.ChangeDataDir+dir
	}
	name := fmt.Sprintf("%s-%05d-%s-c000", prefix, seq, uuid.NewString())
	if fs.cfg.codecName != "" {
		name += "." + fs.cfg.codecName
	}
	name += ".parquet"
	rel := dir + name
	f := &openFile{
		folder:  folder,
		values:  values,
		key:     fs.root + rel,
		path:    actions.EscapePath(rel),
		seq:     seq,
		stats:   newStatsCollector(fs.leaves),
		mem:     fs.cfg.mem,
		schema:  fs.dataSchema,
		rgLimit: min(fs.cfg.targetFileSize, 128<<20),
		target:  fs.cfg.targetFileSize,
		shared:  &fs.encoded,
	}
	if fs.dataSchema.NumFields() == 0 {
		// Every column is a partition column: the file only counts rows.
		f.noColumns, f.store, f.ctx = true, fs.store, fs.ctx
		return f, nil
	}
	upload, err := objstore.NewWriter(fs.ctx, fs.store, f.key, objstore.PutOptions{})
	if err != nil {
		return nil, fmt.Errorf("writer: start %s: %w", f.key, err)
	}
	f.upload = upload
	popts := []parquet.WriterProperty{
		parquet.WithAllocator(fs.cfg.mem),
		parquet.WithCompression(fs.cfg.codec),
		parquet.WithCreatedBy(createdBy),
		parquet.WithStats(true),
		// A page index, and pages of about 20k rows of a long column (as
		// arrow-rs cuts them), let readers with a selective filter decode
		// only the pages whose bounds may match: lakelog's reader, Spark
		// and DataFusion use it.
		parquet.WithPageIndexEnabled(true),
		parquet.WithDataPageSize(dataPageSize),
	}
	if fs.cfg.codec == compress.Codecs.Snappy {
		popts = append(popts, parquet.WithCompressionLevel(fastSnappyLevel))
	}
	for _, c := range fs.plainCols {
		popts = append(popts, parquet.WithDictionaryFor(c, false))
	}
	popts = append(popts, fs.cfg.parquetProps...)
	props := parquet.NewWriterProperties(popts...)
	// Only the Write of the upload: the Parquet writer closes a sink that
	// is an io.Closer, and the upload must be closed (committed) here.
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(fs.cfg.mem))
	pqSchema, err := pqarrow.ToParquet(fs.dataSchema, props, aprops)
	if err != nil {
		upload.Abort()
		return nil, fmt.Errorf("writer: start %s: %w", f.key, err)
	}
	fw, err := pqarrow.NewFileWriter(fs.dataSchema, objstore.WriteOnly(upload), props, aprops)
	if err != nil {
		upload.Abort()
		return nil, fmt.Errorf("writer: start %s: %w", f.key, err)
	}
	f.fw = fw
	f.maxRows = props.MaxRowGroupLength()
	// Bounds and null counts come from the Parquet writer's statistics
	// (footerstats.go).
	f.stats.useFooter(fs.dataSchema, props, pqSchema)
	return f, nil
}

// dataPageSize is the size at which the data files' pages are cut.
const dataPageSize = 160 << 10

// createdBy is the data files' Parquet created_by.
const createdBy = "lakelog (arrow-go parquet)"

// openFile is one data file being written: a Parquet writer streaming
// into a store upload through a pipe. When the table has no data columns
// (all are partition columns) it only counts rows (noColumns) and is
// uploaded whole at close.
type openFile struct {
	noColumns bool
	store     objstore.Store
	ctx       context.Context

	folder  string
	values  map[string]*string
	key     string
	path    string
	seq     int
	lastUse int64
	rgLimit int64
	target  int64 // the file is finished once its size reaches it
	fw      *pqarrow.FileWriter
	upload  objstore.Writer // the file's streaming upload
	stats   *statsCollector
	dicts   dictChunks // the dictionaries of the row group's chunks
	mem     memory.Allocator
	schema  *arrow.Schema // the file's columns
	maxRows int64         // the Parquet writer's row group length limit
	// For size estimates: Arrow bytes written since the last row group
	// flush, bytes in and out of this file's flushes so far, and those of
	// every file of the write.
	pendingArrow int64
	flushed      encodedRatio
	shared       *sharedRatio
}

// sharedRatio is the encodedRatio of all files of a write, which workers
// update and read at once.
type sharedRatio struct {
	mu sync.Mutex
	r  encodedRatio
}

func (s *sharedRatio) add(arrow, encoded int64) {
	s.mu.Lock()
	s.r.add(arrow, encoded)
	s.mu.Unlock()
}

func (s *sharedRatio) ratio() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.ratio()
}

// encodedRatio totals the Arrow bytes given to flushed row groups and the
// bytes they were encoded to.
type encodedRatio struct{ arrow, encoded int64 }

func (r *encodedRatio) add(arrow, encoded int64) {
	r.arrow += arrow
	r.encoded += encoded
}

// ratio is the encoded bytes per Arrow byte, or 0 when nothing is known.
func (r encodedRatio) ratio() float64 {
	if r.arrow <= 0 {
		return 0
	}
	return float64(r.encoded) / float64(r.arrow)
}

// write adds rec, whose Arrow buffers hold about arrowBytes, to the
// current row group, and flushes the row group when it is large enough.
func (f *openFile) write(rec arrow.RecordBatch, arrowBytes int64) error {
	if f.noColumns {
		f.stats.update(rec)
		return nil
	}
	n := rec.NumRows()
	if cur, err := f.fw.RowGroupNumRows(); err == nil && int64(cur)+n > f.maxRows {
		// pqarrow would cut the row group itself inside the batch; cut
		// it here, so that f.dicts follows the row groups' chunks.
		room := f.maxRows - int64(cur)
		if room > 0 {
			head := rec.NewSlice(0, room)
			err := f.write(head, arrowBytes*room/n)
			head.Release()
			if err != nil {
				return err
			}
		}
		if err := f.flushRowGroup(); err != nil {
			return err
		}
		tail := rec.NewSlice(max(room, 0), n)
		defer tail.Release()
		return f.write(tail, arrowBytes-arrowBytes*max(room, 0)/n)
	}
	if f.stats.needsOwn(rec) {
		// A string too long for the footer's bounds: the row groups so
		// far keep theirs, the leaf's rows are observed from here on.
		if err := f.flushRowGroup(); err != nil {
			return err
		}
		f.stats.switchOwn(rec)
	}
	filled := withValueBuffers(rec)
	enc, err := f.dicts.prepare(filled, f.schema, f.mem)
	filled.Release()
	if err != nil {
		return fmt.Errorf("writer: write %s: %w", f.key, err)
	}
	err = f.fw.WriteBuffered(enc)
	enc.Release()
	if err != nil {
		return fmt.Errorf("writer: write %s: %w", f.key, err)
	}
	f.pendingArrow += arrowBytes
	f.stats.update(rec)
	if f.buffered() >= f.rgLimit && f.size() < f.target {
		// A file that has reached its target is finished by the caller,
		// which writes the row group with the footer. Flushing it here
		// would open the next row group, and Parquet's writer can only
		// flush a row group by opening another: the footer would then
		// record an empty row group, which some readers cannot read
		// (object_store refuses its empty byte range).
		return f.flushRowGroup()
	}
	return nil
}

// buffered estimates the encoded size of the row group held in memory.
// The Parquet writer counts only finished pages (a dictionary, for one,
// is counted when the row group is flushed), so the Arrow bytes written
// since the last flush are scaled by ratio, and the larger of the two
// estimates is used.
func (f *openFile) buffered() int64 {
	if f.noColumns {
		return 0
	}
	return max(f.fw.RowGroupTotalCompressedBytes(), int64(float64(f.pendingArrow)*f.ratio()))
}

// ratio estimates encoded bytes per Arrow byte: as seen in this file's
// flushed row groups, else in those of the write's earlier files, else 1.
func (f *openFile) ratio() float64 {
	if r := f.flushed.ratio(); r > 0 {
		return r
	}
	if r := f.shared.ratio(); r > 0 {
		return r
	}
	return 1
}

// size estimates the file's size so far.
func (f *openFile) size() int64 {
	if f.noColumns {
		return 0
	}
	return f.upload.Written() + f.buffered()
}

func (f *openFile) flushRowGroup() error {
	if f.noColumns {
		return nil
	}
	if n, _ := f.fw.RowGroupNumRows(); n == 0 {
		return nil
	}
	before := f.upload.Written()
	if err := f.fw.NewBufferedRowGroupChecked(); err != nil {
		return fmt.Errorf("writer: write %s: %w", f.key, err)
	}
	f.dicts.reset() // a new row group's chunks start new dictionaries
	f.flushed.add(f.pendingArrow, f.upload.Written()-before)
	f.shared.add(f.pendingArrow, f.upload.Written()-before)
	f.pendingArrow = 0
	return nil
}

// finishEncoding writes the footer into the upload; close completes it.
func (f *openFile) finishEncoding() error {
	if f.noColumns {
		return nil
	}
	f.dicts.reset()
	if err := f.fw.Close(); err != nil {
		f.upload.Abort()
		return fmt.Errorf("writer: finish %s: %w", f.key, err)
	}
	md, err := f.fw.FileMetadata()
	if err == nil {
		err = f.stats.fromFooter(md)
	}
	if err != nil {
		f.upload.Abort()
		return fmt.Errorf("writer: finish %s: statistics: %w", f.key, err)
	}
	return nil
}

// close completes the upload of a file whose encoding is finished and
// returns its add.
func (f *openFile) close(dataChange bool) (*actions.Add, error) {
	size, err := f.finishUpload()
	if err != nil {
		return nil, err
	}
	stats, err := f.stats.json()
	if err != nil {
		return nil, err
	}
	return &actions.Add{
		Path:             f.path,
		PartitionValues:  f.values,
		Size:             size,
		ModificationTime: time.Now().UnixMilli(),
		DataChange:       dataChange,
		Stats:            stats,
	}, nil
}

// finishUpload completes the file in the store and returns its size.
func (f *openFile) finishUpload() (int64, error) {
	if f.noColumns {
		body, err := noColumnsParquet(f.stats.rows, createdBy)
		if err != nil {
			return 0, err
		}
		if err := f.store.Put(f.ctx, f.key, bytes.NewReader(body), objstore.PutOptions{Size: int64(len(body))}); err != nil {
			return 0, fmt.Errorf("writer: upload %s: %w", f.key, err)
		}
		return int64(len(body)), nil
	}
	if err := f.upload.Close(); err != nil {
		return 0, fmt.Errorf("writer: %w", err)
	}
	return f.upload.Written(), nil
}

// abort discards the file: the Parquet writer is closed first (closing it
// after a failed write is what releases its column buffers; nothing is
// visible before the upload's Close), then the upload is aborted, so that
// nothing appears under the key.
func (f *openFile) abort() {
	if f.noColumns {
		return // nothing was uploaded
	}
	f.dicts.reset()
	_ = f.fw.Close()
	f.upload.Abort()
}

// randomPrefix is a folder name of n random letters and digits, as
// Spark's DeltaUtils.getRandomPrefix makes them.
func randomPrefix(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[rand.IntN(len(chars))]
	}
	return string(b)
}

// relabel returns a (retained) with the Arrow type t, which differs from
// a's at most in field names and metadata: the conformed batches carry
// the table's logical names, data files its physical names and field ids
// (nested struct fields included). The buffers are shared. A dictionary
// array stays as it is (its type names no field).
func relabel(a arrow.Array, t arrow.DataType) arrow.Array {
	if arrow.TypeEqual(a.DataType(), t, arrow.CheckMetadata()) || a.DataType().ID() == arrow.DICTIONARY || a.DataType().ID() != t.ID() {
		a.Retain()
		return a
	}
	d := relabelData(a.Data(), t)
	defer d.Release()
	return array.MakeFromData(d)
}

func relabelData(d arrow.ArrayData, t arrow.DataType) arrow.ArrayData {
	children := d.Children()
	var childTypes []arrow.DataType
	switch x := t.(type) {
	case *arrow.StructType:
		for _, f := range x.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case arrow.ListLikeType:
		childTypes = []arrow.DataType{x.Elem()}
	}
	newChildren := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		if i < len(childTypes) && c.DataType().ID() == childTypes[i].ID() && c.DataType().ID() != arrow.DICTIONARY {
			newChildren[i] = relabelData(c, childTypes[i])
		} else {
			c.Retain()
			newChildren[i] = c
		}
	}
	out := array.NewData(t, d.Len(), d.Buffers(), newChildren, d.NullN(), d.Offset())
	for _, c := range newChildren {
		c.Release()
	}
	return out
}
