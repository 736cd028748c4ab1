package checkpoint

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// FileColumns is a batch of add actions held as Arrow columns, laid out
// by a FileLayout: path, size, modification time and dataChange; the
// partition values as one dictionary-encoded string column per partition
// key; the stats as typed min, max and null-count columns per stats
// column (FileStats); the deletion vector descriptors, tags and
// row-tracking fields in columns made only when a file of the batch has
// them. A snapshot of a million files is a few hundred of these, not a
// million *actions.Add: Add builds one when a caller asks for it.
//
// FileColumns are immutable once built, except that stats left out of
// the read (WithoutStats) may be attached once later (SetStats); they
// are safe for concurrent use.
type FileColumns struct {
	layout     *FileLayout
	n          int
	path       *array.String
	size       *array.Int64
	modTime    *array.Int64
	dataChange *array.Boolean
	// parts are the partition values by layout.Partitions: null where
	// the value is null. Files whose partitionValues are not exactly the
	// layout's keys are in oddParts instead (null in every column).
	parts    []*array.Dictionary
	oddParts map[int]map[string]*string
	dv       *dvArrays // nil when no file has a deletion vector
	tags     *array.Map
	// Row tracking and clustering fields; nil when no file has them.
	baseRowID, defaultRowVersion *array.Int64
	clustering                   *array.String
	stats                        atomic.Pointer[FileStats]
	// percent is set when some path holds a '%' or a "file:" scheme:
	// only then can a path's canonical form differ from it.
	percent bool

	pvMu    sync.Mutex
	pvCache map[string]map[string]*string
}

// dvArrays are the deletion vector descriptors; the struct is null where
// a file has none.
type dvArrays struct {
	present     *array.Boolean
	storageType *array.String
	path        *array.String
	offset      *array.Int32
	size        *array.Int32
	cardinality *array.Int64
	maxRowIndex *array.Int64
}

// FileStats are the stats of the files of a FileColumns: present says
// which files have stats; NumRecords, TightBounds and each stats
// column's bounds and null counts are columns (nil when no file of the
// batch has that value). A file whose stats JSON the columns cannot hold
// exactly (see Irregular) keeps its text in Raw, and its typed columns
// are null.
type FileStats struct {
	present     *array.Boolean
	numRecords  *array.Int64
	tightBounds *array.Boolean
	mins, maxs  []arrow.Array  // by layout.Stats
	nulls       []*array.Int64 // by layout.Stats
	raw         map[int]string
}

// Len is the number of files.
func (c *FileColumns) Len() int { return c.n }

// NumFiles is Len, under the name expr.FileBatch uses.
func (c *FileColumns) NumFiles() int { return c.n }

// Layout is the batch's layout.
func (c *FileColumns) Layout() *FileLayout { return c.layout }

// Path is file i's add.path, as the log holds it.
func (c *FileColumns) Path(i int) string { return c.path.Value(i) }

// PathColumn is the add.path column.
func (c *FileColumns) PathColumn() *array.String { return c.path }

// CanonicalPathsDiffer reports whether some file's canonical path
// (CanonicalPath) may differ from its path.
func (c *FileColumns) CanonicalPathsDiffer() bool { return c.percent }

// Size is file i's size in bytes.
func (c *FileColumns) Size(i int) int64 { return c.size.Value(i) }

// ModificationTime is file i's modificationTime.
func (c *FileColumns) ModificationTime(i int) int64 { return c.modTime.Value(i) }

// DataChange is file i's dataChange.
func (c *FileColumns) DataChange(i int) bool { return c.dataChange.Value(i) }

// PartitionColumn returns the values of partition key (as
// add.partitionValues keys it) as a dictionary of strings, null where a
// value is null or the file is irregular; nil when the layout has no
// such key.
func (c *FileColumns) PartitionColumn(key string) *array.Dictionary {
	if i := c.layout.PartitionIndex(key); i >= 0 {
		return c.parts[i]
	}
	return nil
}

// PartitionValues returns file i's partitionValues. Files with equal
// values share one map: callers must not modify it.
func (c *FileColumns) PartitionValues(i int) map[string]*string {
	if m, ok := c.oddParts[i]; ok {
		return m
	}
	keys := c.layout.Partitions
	if len(keys) == 0 {
		return emptyPartitions
	}
	var kb [64]byte
	k := kb[:0]
	for _, d := range c.parts {
		if d.IsNull(i) {
			k = append(k, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		x := d.GetValueIndex(i)
		k = append(k, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	c.pvMu.Lock()
	defer c.pvMu.Unlock()
	if m, ok := c.pvCache[string(k)]; ok {
		return m
	}
	m := make(map[string]*string, len(keys))
	for j, key := range keys {
		d := c.parts[j]
		if d.IsNull(i) {
			m[key] = nil
			continue
		}
		v := d.Dictionary().(*array.String).Value(d.GetValueIndex(i))
		m[key] = &v
	}
	if c.pvCache == nil {
		c.pvCache = map[string]map[string]*string{}
	}
	if len(c.pvCache) < maxInterned {
		c.pvCache[string(k)] = m
	}
	return m
}

// emptyPartitions is the partitionValues of files of unpartitioned
// tables; shared, never modified.
var emptyPartitions = map[string]*string{}

// HasDeletionVector reports whether file i has a deletion vector.
func (c *FileColumns) HasDeletionVector(i int) bool {
	return c.dv != nil && c.dv.present.IsValid(i) && c.dv.storageType.IsValid(i)
}

// DeletionVectorID is file i's deletion vector's unique id
// (actions.DeletionVector.UniqueID), "" when it has none.
func (c *FileColumns) DeletionVectorID(i int) string {
	if !c.HasDeletionVector(i) {
		return ""
	}
	id := c.dv.storageType.Value(i) + c.dv.path.Value(i)
	if c.dv.offset.IsValid(i) {
		id += "@" + strconv.FormatInt(int64(c.dv.offset.Value(i)), 10)
	}
	return id
}

// DeletionVector is file i's deletion vector descriptor, nil when it has
// none. Each call returns a new value.
func (c *FileColumns) DeletionVector(i int) *actions.DeletionVector {
	if !c.HasDeletionVector(i) {
		return nil
	}
	d := c.dv
	dv := &actions.DeletionVector{
		StorageType:    d.storageType.Value(i),
		PathOrInlineDv: d.path.Value(i),
		SizeInBytes:    d.size.Value(i),
		Cardinality:    d.cardinality.Value(i),
	}
	if d.offset.IsValid(i) {
		dv.Offset = ptrTo(d.offset.Value(i))
	}
	if d.maxRowIndex.IsValid(i) {
		dv.MaxRowIndex = ptrTo(d.maxRowIndex.Value(i))
	}
	return dv
}

// DeletedRows is the cardinality of file i's deletion vector, 0 without.
func (c *FileColumns) DeletedRows(i int) int64 {
	if !c.HasDeletionVector(i) {
		return 0
	}
	return c.dv.cardinality.Value(i)
}

// Tags are file i's tags, nil when it has none (an empty map is kept as
// none: the same to Delta). Each call returns a new
// map.
func (c *FileColumns) Tags(i int) map[string]string {
	if c.tags == nil || !c.tags.IsValid(i) {
		return nil
	}
	beg, end := c.tags.ValueOffsets(i)
	keys := c.tags.Keys().(*array.String)
	items := c.tags.Items().(*array.String)
	m := make(map[string]string, end-beg)
	for j := int(beg); j < int(end); j++ {
		m[keys.Value(j)] = items.Value(j)
	}
	return m
}

func optInt(a *array.Int64, i int) *int64 {
	if a == nil || !a.IsValid(i) {
		return nil
	}
	return ptrTo(a.Value(i))
}

// Stats returns the batch's stats; nil when they were left out of the
// read (WithoutStats) and not attached since.
func (c *FileColumns) Stats() *FileStats { return c.stats.Load() }

// SetStats attaches the stats of a read that left them out: s must be
// the stats of the same files in the same order (ReadFileStats). It
// reports false when the batch has stats already.
func (c *FileColumns) SetStats(s *FileStats) bool {
	return c.stats.CompareAndSwap(nil, s)
}

// StatsJSON is file i's add.stats: the text it was written with when the
// columns could not hold it exactly, else the columns rendered as JSON
// (the same values, perhaps spelled differently); "" when it has none or
// the stats were left out of the read.
func (c *FileColumns) StatsJSON(i int) string {
	s := c.stats.Load()
	if s == nil || !s.present.Value(i) {
		return ""
	}
	if raw, ok := s.raw[i]; ok {
		return raw
	}
	return string(s.render(c.layout, i, nil))
}

// FileStats returns file i's stats as actions.ParseStats would give them
// from its add.stats (numbers as json.Number, perhaps spelled
// differently); nil when it has none. paths, when not nil, restricts the
// bounds and null counts to those stats columns (by physical path).
func (c *FileColumns) FileStats(i int, paths [][]string) *actions.Stats {
	s := c.stats.Load()
	if s == nil || !s.present.Value(i) {
		return nil
	}
	if raw, ok := s.raw[i]; ok {
		st, err := actions.ParseStats(raw)
		if err != nil {
			return nil
		}
		return st
	}
	return s.decode(c.layout, i, paths)
}

// NumRecords is file i's numRecords; ok is false when its stats lack it.
func (c *FileColumns) NumRecords(i int) (n int64, ok bool) {
	s := c.stats.Load()
	if s == nil || !s.present.Value(i) {
		return 0, false
	}
	if raw, isRaw := s.raw[i]; isRaw {
		st, err := actions.ParseStats(raw)
		if err != nil || st == nil || st.NumRecords < 0 {
			return 0, false
		}
		return st.NumRecords, true
	}
	if s.numRecords == nil || !s.numRecords.IsValid(i) {
		return 0, false
	}
	return s.numRecords.Value(i), true
}

// Add builds file i's add action. Each call returns a new Add; its
// partitionValues map is shared with other files' (do not modify it).
func (c *FileColumns) Add(i int) *actions.Add {
	a := &actions.Add{
		Path:                    c.path.Value(i),
		PartitionValues:         c.PartitionValues(i),
		Size:                    c.size.Value(i),
		ModificationTime:        c.modTime.Value(i),
		DataChange:              c.dataChange.Value(i),
		Stats:                   c.StatsJSON(i),
		Tags:                    c.Tags(i),
		DeletionVector:          c.DeletionVector(i),
		BaseRowID:               optInt(c.baseRowID, i),
		DefaultRowCommitVersion: optInt(c.defaultRowVersion, i),
	}
	if c.clustering != nil && c.clustering.IsValid(i) {
		a.ClusteringProvider = ptrTo(c.clustering.Value(i))
	}
	return a
}

// Irregular lists the files whose partition values or stats the typed
// columns do not hold (their partitionValues keys differ from the
// layout's, or their stats text was kept as written), in order. Readers
// that evaluate the columns must evaluate these files one at a time
// (FileValues).
func (c *FileColumns) Irregular() []int {
	var out []int
	for i := range c.oddParts {
		out = append(out, i)
	}
	if s := c.stats.Load(); s != nil {
		for i := range s.raw {
			if _, dup := c.oddParts[i]; !dup {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}

// FileValues returns file i's partition values and stats, as
// PartitionValues and FileStats do.
func (c *FileColumns) FileValues(i int, paths [][]string) (map[string]*string, *actions.Stats) {
	return c.PartitionValues(i), c.FileStats(i, paths)
}

// HasStats reports whether file i has stats (always false when the stats
// were left out of the read).
func (c *FileColumns) HasStats(i int) bool {
	s := c.stats.Load()
	return s != nil && s.present.Value(i)
}

// NumRecordsColumn is the numRecords column, nil when no file has one or
// the stats were left out.
func (c *FileColumns) NumRecordsColumn() *array.Int64 {
	if s := c.stats.Load(); s != nil {
		return s.numRecords
	}
	return nil
}

// MinColumn is the minimum values of the stats column at the physical
// path, nil when no file has one (or the layout has no such column).
func (c *FileColumns) MinColumn(path []string) arrow.Array {
	if s, j := c.statsColumn(path); s != nil {
		return s.mins[j]
	}
	return nil
}

// MaxColumn is MinColumn for the maximum values.
func (c *FileColumns) MaxColumn(path []string) arrow.Array {
	if s, j := c.statsColumn(path); s != nil {
		return s.maxs[j]
	}
	return nil
}

// NullCountColumn is the null counts of the stats column at the physical
// path, nil when no file has one.
func (c *FileColumns) NullCountColumn(path []string) *array.Int64 {
	if s, j := c.statsColumn(path); s != nil {
		return s.nulls[j]
	}
	return nil
}

func (c *FileColumns) statsColumn(path []string) (*FileStats, int) {
	s := c.stats.Load()
	if s == nil {
		return nil, -1
	}
	j := c.layout.StatsColumnIndex(path)
	if j < 0 {
		return nil, -1
	}
	return s, j
}

// CanonicalPath is file i's path in the form two file actions are
// compared in (actions.CanonicalPath).
func (c *FileColumns) CanonicalPath(i int) string {
	if !c.percent {
		return c.path.Value(i)
	}
	return actions.CanonicalPath(c.path.Value(i))
}

// mayEscape reports whether path p's canonical form may differ from it.
func mayEscape(p string) bool {
	return strings.IndexByte(p, '%') >= 0 || strings.HasPrefix(p, "file:")
}
