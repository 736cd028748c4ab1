package uniform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// Properties of the Iceberg metadata that record which Delta version it
// is: Spark's converter's names (delta-version, delta-timestamp) and the
// names Delta's documentation shows (converted_delta_version,
// converted_delta_timestamp). Both are written; delta-version is read.
const (
	PropDeltaVersion            = "delta-version"
	PropDeltaTimestamp          = "delta-timestamp"
	PropConvertedDeltaVersion   = "converted_delta_version"
	PropConvertedDeltaTimestamp = "converted_delta_timestamp"
)

// ErrNotEnabled: the table does not ask for Iceberg metadata
// (delta.universalFormat.enabledFormats has no "iceberg").
var ErrNotEnabled = errors.New("uniform: the table does not enable UniForm Iceberg (delta.universalFormat.enabledFormats)")

// errDiverged: the Iceberg metadata does not hold a file a Delta commit
// removes; the conversion starts over from the snapshot.
var errDiverged = errors.New("uniform: Iceberg metadata diverged from the Delta log")

// Result says what a conversion did.
type Result struct {
	// From is the Delta version the Iceberg metadata was at before (-1:
	// none), To the version it is at now.
	From, To int64
	// Snapshots is the number of Iceberg snapshots added (one per Delta
	// commit that changed files; one for a full conversion).
	Snapshots int
	// Full is set when the metadata was rebuilt from the Delta snapshot
	// (first conversion, a gap of more than WithMaxCommits, or
	// divergence) rather than from the commits since the last one.
	Full bool
	// MetadataLocation is the URI of the current metadata file ("" when
	// the table was already converted).
	MetadataLocation string
	// ManifestsWritten and ManifestsRead count the manifests this
	// conversion wrote and read: the work is proportional to them.
	ManifestsWritten, ManifestsRead int
}

// Option configures a conversion.
type Option func(*config)

type config struct {
	maxCommits   int
	maxManifests int
	attempts     int
	now          func() time.Time
}

// WithMaxCommits bounds the number of Delta commits converted one by one
// (default 100); a larger gap is converted from the snapshot in one
// Iceberg snapshot, as Spark's converter does.
func WithMaxCommits(n int) Option { return func(c *config) { c.maxCommits = max(n, 1) } }

// WithMaxManifests bounds the manifests a snapshot lists (default 100):
// past it, all but the newest are merged into one per partition spec.
func WithMaxManifests(n int) Option { return func(c *config) { c.maxManifests = max(n, 2) } }

// Sync brings the Iceberg metadata of the table at root up to its latest
// Delta version. It is what runs after a commit lands (and what `lakelog
// uniform sync` runs); its failure never affects the Delta table.
func Sync(ctx context.Context, store objstore.Store, root string, opts ...Option) (*Result, error) {
	snap, err := deltalog.Open(ctx, store, root)
	if err != nil {
		return nil, fmt.Errorf("uniform: %w", err)
	}
	return Convert(ctx, snap, opts...)
}

// Convert writes the Iceberg metadata of snap's version, continuing from
// the version the table's Iceberg metadata is at: each Delta commit in
// between becomes an Iceberg snapshot whose manifest list reuses the
// previous manifests, rewriting only those that hold removed files, and
// adds one manifest for the commit's added files.
//
// The commit point is the creation (if absent) of the next metadata file
// metadata/v<N>.metadata.json; manifests and manifest lists are written
// before it under new names, so a reader sees the previous metadata or
// the new one, never a part. A converter that loses the race for v<N>
// reloads and tries again. A crash leaves only unreferenced files.
// Converting a version already converted does nothing.
func Convert(ctx context.Context, snap *deltalog.Snapshot, opts ...Option) (*Result, error) {
	cfg := config{maxCommits: 100, maxManifests: 100, attempts: 5, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	if !snap.Config().UniversalFormat("iceberg") {
		return nil, ErrNotEnabled
	}
	t, err := newTableLoc(snap.Store(), snap.Root())
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		cur, err := loadCurrent(ctx, t)
		if err != nil {
			return nil, err
		}
		res, err := convertOnce(ctx, t, snap, cur, &cfg, false)
		if errors.Is(err, errDiverged) {
			res, err = convertOnce(ctx, t, snap, cur, &cfg, true)
		}
		if errors.Is(err, objstore.ErrExists) && attempt < cfg.attempts {
			continue // another converter wrote that metadata version
		}
		return res, err
	}
}

// convertedVersion is the Delta version the metadata records.
func convertedVersion(md table.Metadata) (int64, bool) {
	v, ok := md.Properties()[PropDeltaVersion]
	if !ok {
		return -1, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func convertOnce(ctx context.Context, t tableLoc, snap *deltalog.Snapshot, cur *current, cfg *config, full bool) (*Result, error) {
	res := &Result{From: -1, To: snap.Version()}
	last := int64(-1)
	if cur != nil {
		if v, ok := convertedVersion(cur.meta); ok {
			last = v
		}
	}
	res.From = last
	if last >= snap.Version() {
		res.To = last
		return res, nil
	}
	c := &conversion{t: t, res: res, maxManifests: cfg.maxManifests}
	var err error
	if cur == nil {
		c.b, err = newBuilder(t, snap)
	} else {
		c.b, err = table.MetadataBuilderFromBase(cur.meta, cur.uri)
	}
	if err != nil {
		return nil, fmt.Errorf("uniform: %w", err)
	}
	c.table, c.schema, c.partCols = snap.Config(), snap.Schema(), snap.PartitionColumns()
	if cur != nil && cur.meta.CurrentSnapshot() != nil {
		s := cur.meta.CurrentSnapshot()
		c.parent = s
	}
	incremental := !full && cur != nil && last >= 0 && snap.Version()-last <= int64(cfg.maxCommits)
	// Incrementally, each commit's snapshot is under the schema of its
	// version (metaData actions change it on the way); a full conversion
	// is under the snapshot's.
	if incremental {
		err = c.commits(ctx, snap, last+1)
	} else {
		res.Full = true
		if err = c.setSchema(snap.Config()); err == nil {
			err = c.replace(ctx, snap)
		}
	}
	if err == nil {
		err = c.setSchema(snap.Config())
	}
	if err != nil {
		return nil, err
	}
	ts := strconv.FormatInt(snap.Timestamp().UnixMilli(), 10)
	ver := strconv.FormatInt(snap.Version(), 10)
	if err := c.b.SetProperties(iceberg.Properties{
		PropDeltaVersion: ver, PropDeltaTimestamp: ts,
		PropConvertedDeltaVersion: ver, PropConvertedDeltaTimestamp: ts,
	}); err != nil {
		return nil, fmt.Errorf("uniform: %w", err)
	}
	md, err := c.b.Build()
	if err != nil {
		return nil, fmt.Errorf("uniform: build metadata: %w", err)
	}
	body, err := md.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("uniform: encode metadata: %w", err)
	}
	n := 1
	if cur != nil {
		n = cur.n + 1
	}
	key := t.metadataKey(metadataFile(n))
	if err := t.create(ctx, key, body); err != nil {
		return nil, fmt.Errorf("uniform: commit %s: %w", key, err)
	}
	res.MetadataLocation = t.metadataURI(metadataFile(n))
	// The hint is only a hint: readers that miss it list or probe.
	_ = t.store.Put(ctx, t.metadataKey(hintName), bytesReader(strconv.Itoa(n)), objstore.PutOptions{})
	return res, nil
}

// newBuilder starts the metadata of a table converted for the first
// time: format version 2, the Delta table's id as its uuid, the schema
// and identity partition spec with the Delta column ids.
func newBuilder(t tableLoc, snap *deltalog.Snapshot) (*table.MetadataBuilder, error) {
	b, err := table.NewMetadataBuilder(2)
	if err != nil {
		return nil, err
	}
	id, err := uuid.Parse(snap.Metadata().ID)
	if err != nil {
		id = uuid.New()
	}
	sc, err := icebergSchema(snap.Schema(), 0)
	if err != nil {
		return nil, err
	}
	spec, err := partitionSpec(snap.Schema(), snap.PartitionColumns(), 0)
	if err != nil {
		return nil, err
	}
	steps := []func() error{
		func() error { return b.SetUUID(id) },
		func() error { return b.AddSchema(sc) },
		func() error { return b.SetCurrentSchemaID(-1) },
		func() error { return b.AddPartitionSpec(&spec, true) },
		func() error { return b.SetDefaultSpecID(-1) },
		func() error {
			// A copy: AddSortOrder sets the ID of the order it is given,
			// and two conversions at once must not both write iceberg-go's
			// package-level UnsortedSortOrder (the race detector caught it).
			unsorted := table.UnsortedSortOrder
			return b.AddSortOrder(&unsorted)
		},
		func() error { return b.SetDefaultSortOrderID(-1) },
		func() error { return b.SetLoc(t.uri) },
		func() error {
			return b.SetProperties(iceberg.Properties{"write.parquet.compression-codec": "snappy"})
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// conversion is one conversion's state: the metadata being built and
// the current snapshot's manifests.
type conversion struct {
	t            tableLoc
	b            *table.MetadataBuilder
	res          *Result
	table        *actions.TableConfig // the Delta table's configuration at the version converted
	schema       *actions.StructType
	partCols     []string
	parent       *table.Snapshot
	maxManifests int
	manifests    []iceberg.ManifestFile // the parent's; nil until read
	loaded       bool
}

// setSchema makes the Delta table's schema and partition columns current,
// adding an Iceberg schema or spec when they differ from the current
// ones (a schema equal to an earlier one reuses its id).
func (c *conversion) setSchema(table *actions.TableConfig) error {
	s, partCols := table.Schema(), table.PartitionColumns()
	c.table, c.schema, c.partCols = table, s, partCols
	sc, err := icebergSchema(s, 0)
	if err != nil {
		return err
	}
	if cs := c.b.CurrentSchema(); cs == nil || !cs.Equals(sc) {
		if err := c.b.AddSchema(sc); err != nil {
			return err
		}
		if err := c.b.SetCurrentSchemaID(-1); err != nil {
			return err
		}
	}
	spec, err := partitionSpec(s, partCols, 0)
	if err != nil {
		return err
	}
	cur, err := c.b.CurrentSpec()
	if err != nil {
		return err
	}
	if cur == nil || !sameSpec(*cur, spec) {
		if err := c.b.AddPartitionSpec(&spec, false); err != nil {
			return err
		}
		return c.b.SetDefaultSpecID(-1)
	}
	return nil
}

func sameSpec(a, b iceberg.PartitionSpec) bool {
	var af, bf []iceberg.PartitionField
	for _, f := range a.Fields() {
		af = append(af, f)
	}
	for _, f := range b.Fields() {
		bf = append(bf, f)
	}
	if len(af) != len(bf) {
		return false
	}
	for i := range af {
		if af[i].Name != bf[i].Name || !slices.Equal(af[i].SourceIDs, bf[i].SourceIDs) || af[i].Transform.String() != bf[i].Transform.String() {
			return false
		}
	}
	return true
}

// commits converts the Delta commits from version from through the
// snapshot's, one Iceberg snapshot per commit that adds or removes
// files.
func (c *conversion) commits(ctx context.Context, snap *deltalog.Snapshot, from int64) error {
	for vc, err := range deltalog.Commits(ctx, snap.Store(), snap.Root(), from, snap.Version()) {
		if err != nil {
			return fmt.Errorf("uniform: %w", err)
		}
		var adds []*actions.Add
		removes := map[string]*actions.Remove{}
		dataChange := false
		for i := range vc.Actions {
			a := &vc.Actions[i]
			switch {
			case a.Metadata != nil:
				table, err := actions.NewTableConfig(snap.Protocol(), a.Metadata)
				if err != nil {
					return fmt.Errorf("uniform: version %d: %w", vc.Version, err)
				}
				if err := c.setSchema(table); err != nil {
					return fmt.Errorf("uniform: version %d: %w", vc.Version, err)
				}
			case a.Add != nil:
				adds = append(adds, a.Add)
				dataChange = dataChange || a.Add.DataChange
			case a.Remove != nil:
				removes[c.t.fileURI(a.Remove.Path)] = a.Remove
				dataChange = dataChange || a.Remove.DataChange
			}
		}
		if len(adds) == 0 && len(removes) == 0 {
			continue
		}
		// An add of a path that is live already (a re-add without data
		// change) replaces the file's entry.
		var readds []string
		for _, a := range adds {
			if !a.DataChange {
				readds = append(readds, c.t.fileURI(a.Path))
			}
		}
		op := table.OpOverwrite
		switch {
		case !dataChange:
			op = table.OpReplace
		case len(removes) == 0:
			op = table.OpAppend
		case len(adds) == 0:
			op = table.OpDelete
		}
		if err := c.snapshot(ctx, vc.Timestamp.UnixMilli(), vc.Version, op, adds, removes, readds); err != nil {
			return err
		}
	}
	return nil
}

// replace converts the whole snapshot into one Iceberg snapshot whose
// manifest holds every live file.
func (c *conversion) replace(ctx context.Context, snap *deltalog.Snapshot) error {
	if err := snap.LoadStats(ctx); err != nil {
		return fmt.Errorf("uniform: %w", err)
	}
	adds := make([]*actions.Add, 0, snap.NumFiles())
	for a := range snap.Files() {
		adds = append(adds, a)
	}
	c.manifests, c.loaded = nil, true
	if len(adds) == 0 && c.parent == nil {
		return nil // an empty table has no snapshot yet
	}
	op := table.OpAppend
	if c.parent != nil {
		op = table.OpOverwrite
	}
	return c.snapshot(ctx, snap.Timestamp().UnixMilli(), snap.Version(), op, adds, nil, nil)
}

// snapshot adds one Iceberg snapshot: the parent's manifests, those
// holding a removed file rewritten with its entry DELETED and the others
// EXISTING, and one new manifest of the added files.
func (c *conversion) snapshot(ctx context.Context, tsMs, deltaVersion int64, op table.Operation, adds []*actions.Add, removes map[string]*actions.Remove, readds []string) error {
	if err := c.loadManifests(ctx); err != nil {
		return err
	}
	spec, err := c.b.CurrentSpec()
	if err != nil {
		return fmt.Errorf("uniform: %w", err)
	}
	sc := c.b.CurrentSchema()
	snapID := newSnapshotID()
	seq := int64(1)
	if c.parent != nil {
		seq = c.parent.SequenceNumber + 1
	}
	gone := make(map[string]bool, len(removes)+len(readds))
	for p := range removes {
		gone[p] = true
	}
	for _, p := range readds {
		gone[p] = true
	}
	var out []iceberg.ManifestFile
	deleted := totals{}
	found := 0
	for _, mf := range c.manifests {
		if mf.ExistingDataFiles()+mf.AddedDataFiles() == 0 {
			continue // only deleted entries: they belonged to an earlier snapshot
		}
		if len(gone) == 0 {
			out = append(out, mf)
			continue
		}
		nmf, n, d, err := c.rewrite(ctx, mf, gone, snapID)
		if err != nil {
			return err
		}
		found += n
		deleted.add(d)
		out = append(out, nmf)
	}
	if found < len(removes) {
		return fmt.Errorf("%w: %d of the %d files Delta version %d removes are not in the Iceberg metadata", errDiverged, len(removes)-found, len(removes), deltaVersion)
	}
	added := totals{}
	if len(adds) > 0 {
		entries := make([]iceberg.ManifestEntry, 0, len(adds))
		for _, a := range adds {
			df, err := c.dataFile(*spec, a)
			if err != nil {
				return fmt.Errorf("uniform: version %d: %w", deltaVersion, err)
			}
			added.files++
			added.records += df.Count()
			added.size += df.FileSizeBytes()
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapID, nil, nil, df))
		}
		mf, err := c.writeManifest(ctx, *spec, sc, snapID, entries)
		if err != nil {
			return err
		}
		out = append([]iceberg.ManifestFile{mf}, out...)
	}
	if len(out) > c.maxManifests {
		if out, err = c.merge(ctx, out, snapID); err != nil {
			return err
		}
	}
	listName := fmt.Sprintf("snap-%d-%s.avro", snapID, uuid.NewString())
	var buf bytesBuffer
	var parentID *int64
	if c.parent != nil {
		parentID = &c.parent.SnapshotID
	}
	if err := iceberg.WriteManifestList(2, &buf, snapID, parentID, &seq, 0, out); err != nil {
		return fmt.Errorf("uniform: write manifest list: %w", err)
	}
	if err := c.t.create(ctx, c.t.metadataKey(listName), buf.Bytes()); err != nil {
		return fmt.Errorf("uniform: write %s: %w", c.t.metadataKey(listName), err)
	}
	prev := totals{}
	if c.parent != nil && c.parent.Summary != nil {
		prev = totalsOf(c.parent.Summary.Properties)
	}
	now := prev
	now.files += added.files - deleted.files
	now.records += added.records - deleted.records
	now.size += added.size - deleted.size
	if c.res.Full {
		now = added
	}
	props := iceberg.Properties{
		"added-data-files": strconv.FormatInt(added.files, 10), "added-records": strconv.FormatInt(added.records, 10),
		"added-files-size":   strconv.FormatInt(added.size, 10),
		"deleted-data-files": strconv.FormatInt(deleted.files, 10), "deleted-records": strconv.FormatInt(deleted.records, 10),
		"removed-files-size": strconv.FormatInt(deleted.size, 10),
		"total-data-files":   strconv.FormatInt(now.files, 10), "total-records": strconv.FormatInt(now.records, 10),
		"total-files-size": strconv.FormatInt(now.size, 10), "total-delete-files": "0",
		"total-position-deletes": "0", "total-equality-deletes": "0",
		PropDeltaVersion: strconv.FormatInt(deltaVersion, 10),
	}
	schemaID := sc.ID
	s := &table.Snapshot{
		SnapshotID: snapID, ParentSnapshotID: parentID, SequenceNumber: seq, TimestampMs: tsMs,
		ManifestList: c.t.metadataURI(listName), Summary: &table.Summary{Operation: op, Properties: props},
		SchemaID: &schemaID,
	}
	if err := c.b.AddSnapshot(s); err != nil {
		return fmt.Errorf("uniform: add snapshot: %w", err)
	}
	if err := c.b.SetSnapshotRef(table.MainBranch, snapID, table.BranchRef); err != nil {
		return fmt.Errorf("uniform: %w", err)
	}
	// The list writer assigned the new manifests' sequence numbers: the
	// next snapshot of this conversion reuses them as written.
	written, err := iceberg.ReadManifestList(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return fmt.Errorf("uniform: read back manifest list: %w", err)
	}
	c.parent, c.manifests = s, written
	c.res.Snapshots++
	return nil
}

// merge bounds the manifests a snapshot lists, as Iceberg's manifest
// merging does (commit.manifest.min-count-to-merge, 100): every manifest
// but the newest is merged into one per partition spec, its entries
// EXISTING with their snapshot ids and sequence numbers. Reading them is
// the cost, paid once every maxManifests commits.
func (c *conversion) merge(ctx context.Context, mfs []iceberg.ManifestFile, snapID int64) ([]iceberg.ManifestFile, error) {
	out := []iceberg.ManifestFile{mfs[0]}
	bySpec := map[int32][]iceberg.ManifestEntry{}
	var specs []int32
	for _, mf := range mfs[1:] {
		body, err := c.t.get(ctx, mf.FilePath())
		if err != nil {
			return nil, fmt.Errorf("uniform: read manifest %s: %w", mf.FilePath(), err)
		}
		c.res.ManifestsRead++
		entries, err := iceberg.ReadManifest(mf, bytesReader(string(body)), true)
		if err != nil {
			return nil, fmt.Errorf("uniform: read manifest %s: %w", mf.FilePath(), err)
		}
		id := mf.PartitionSpecID()
		if _, ok := bySpec[id]; !ok {
			specs = append(specs, id)
		}
		for _, e := range entries {
			seqNum, sid := e.SequenceNum(), e.SnapshotID()
			bySpec[id] = append(bySpec[id], iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &sid, &seqNum, e.FileSequenceNum(), e.DataFile()))
		}
	}
	for _, id := range specs {
		if len(bySpec[id]) == 0 {
			continue
		}
		spec, err := c.specByID(int(id))
		if err != nil {
			return nil, err
		}
		mf, err := c.writeManifest(ctx, spec, c.b.CurrentSchema(), snapID, bySpec[id])
		if err != nil {
			return nil, err
		}
		out = append(out, mf)
	}
	return out, nil
}

// rewrite rewrites a manifest when it holds a file of gone: that entry
// DELETED by snapshot snapID, the others EXISTING with their sequence
// numbers. A manifest without such a file is returned as it is.
func (c *conversion) rewrite(ctx context.Context, mf iceberg.ManifestFile, gone map[string]bool, snapID int64) (iceberg.ManifestFile, int, totals, error) {
	body, err := c.t.get(ctx, mf.FilePath())
	if err != nil {
		return nil, 0, totals{}, fmt.Errorf("uniform: read manifest %s: %w", mf.FilePath(), err)
	}
	c.res.ManifestsRead++
	entries, err := iceberg.ReadManifest(mf, bytesReader(string(body)), true)
	if err != nil {
		return nil, 0, totals{}, fmt.Errorf("uniform: read manifest %s: %w", mf.FilePath(), err)
	}
	hit := false
	for _, e := range entries {
		if gone[e.DataFile().FilePath()] {
			hit = true
			break
		}
	}
	if !hit {
		return mf, 0, totals{}, nil
	}
	var d totals
	n := 0
	out := make([]iceberg.ManifestEntry, 0, len(entries))
	for _, e := range entries {
		seqNum := e.SequenceNum()
		fileSeq := e.FileSequenceNum()
		df := e.DataFile()
		if gone[df.FilePath()] {
			n++
			d.files++
			d.records += df.Count()
			d.size += df.FileSizeBytes()
			out = append(out, iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &snapID, &seqNum, fileSeq, df))
			continue
		}
		sid := e.SnapshotID()
		out = append(out, iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &sid, &seqNum, fileSeq, df))
	}
	spec, err := c.specByID(int(mf.PartitionSpecID()))
	if err != nil {
		return nil, 0, totals{}, err
	}
	nmf, err := c.writeManifest(ctx, spec, c.b.CurrentSchema(), snapID, out)
	return nmf, n, d, err
}

func (c *conversion) specByID(id int) (iceberg.PartitionSpec, error) {
	s, err := c.b.GetSpecByID(id)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("uniform: partition spec %d: %w", id, err)
	}
	return *s, nil
}

func (c *conversion) writeManifest(ctx context.Context, spec iceberg.PartitionSpec, sc *iceberg.Schema, snapID int64, entries []iceberg.ManifestEntry) (iceberg.ManifestFile, error) {
	name := uuid.NewString() + "-m0.avro"
	var buf bytesBuffer
	mf, err := iceberg.WriteManifest(c.t.metadataURI(name), &buf, 2, spec, sc, snapID, entries)
	if err != nil {
		return nil, fmt.Errorf("uniform: write manifest: %w", err)
	}
	if err := c.t.create(ctx, c.t.metadataKey(name), buf.Bytes()); err != nil {
		return nil, fmt.Errorf("uniform: write %s: %w", c.t.metadataKey(name), err)
	}
	c.res.ManifestsWritten++
	return mf, nil
}

// loadManifests reads the parent snapshot's manifest list once.
func (c *conversion) loadManifests(ctx context.Context) error {
	if c.loaded {
		return nil
	}
	c.loaded = true
	if c.parent == nil || c.parent.ManifestList == "" {
		return nil
	}
	body, err := c.t.get(ctx, c.parent.ManifestList)
	if err != nil {
		return fmt.Errorf("uniform: read manifest list %s: %w", c.parent.ManifestList, err)
	}
	mfs, err := iceberg.ReadManifestList(bytesReader(string(body)))
	if err != nil {
		return fmt.Errorf("uniform: read manifest list %s: %w", c.parent.ManifestList, err)
	}
	c.manifests = mfs
	return nil
}

// dataFile is the Iceberg data file of a Delta add: its location, record
// count, size and partition values (by partition field id, typed).
func (c *conversion) dataFile(spec iceberg.PartitionSpec, a *actions.Add) (iceberg.DataFile, error) {
	st, err := actions.ParseStats(a.Stats)
	if err != nil || st == nil || st.NumRecords < 0 {
		return nil, fmt.Errorf("file %s has no numRecords in its stats (IcebergCompatV2 requires it)", a.Path)
	}
	part := map[int]any{}
	logical := map[int]string{}
	for _, f := range spec.Fields() {
		col := c.schema.Field(f.Name)
		if col == nil {
			return nil, fmt.Errorf("partition column %q is not in the schema", f.Name)
		}
		// Keyed by physical name, as the table's configuration says;
		// never by the logical name, which may be another column's
		// physical name.
		raw := a.PartitionValues[c.table.PhysicalName(col)]
		v, err := actions.ParsePartitionValue(col.Type, raw)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", a.Path, err)
		}
		iv, lt := partitionValue(v)
		part[f.FieldID] = iv
		if lt != "" {
			logical[f.FieldID] = lt
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, c.t.fileURI(a.Path), iceberg.ParquetFile, part, logical, nil, st.NumRecords, a.Size)
	if err != nil {
		return nil, err
	}
	columnStats(b, c.table, st)
	return b.Build(), nil
}

// partitionValue is a Delta partition value as Iceberg's manifests hold
// it, with the Avro logical type of its field ("" for none).
func partitionValue(v any) (any, string) {
	switch x := v.(type) {
	case int8:
		return int32(x), ""
	case int16:
		return int32(x), ""
	case actions.Date:
		return iceberg.Date(x), "date"
	case actions.Timestamp:
		return iceberg.Timestamp(x), "timestamp-micros"
	case actions.TimestampNTZ:
		return iceberg.Timestamp(x), "timestamp-micros"
	case actions.Decimal:
		return decimalValue(x), "decimal"
	}
	return v, ""
}

type totals struct{ files, records, size int64 }

func (t *totals) add(o totals) { t.files += o.files; t.records += o.records; t.size += o.size }

func totalsOf(p iceberg.Properties) totals {
	n := func(k string) int64 { v, _ := strconv.ParseInt(p[k], 10, 64); return v }
	return totals{files: n("total-data-files"), records: n("total-records"), size: n("total-files-size")}
}

// newSnapshotID is a positive random 63-bit id, as Iceberg makes them.
func newSnapshotID() int64 {
	u := uuid.New()
	var v int64
	for _, b := range u[:8] {
		v = v<<8 | int64(b)
	}
	if v < 0 {
		v = -v
	}
	if v <= 0 {
		v = 1
	}
	return v
}
