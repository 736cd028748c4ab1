package actions

import (
	"fmt"
	"slices"
	"strings"
)

// TableConfig is a table's rules at one version: its protocol, metadata,
// typed properties and schema joined, with every decision that follows
// from them made here once: the column mapping mode readers and writers
// honour and each column's physical name, the columns whose older files
// hold narrower types, the table features the metadata needs, and what
// writes must do (deletion vectors, change data, row IDs, partition
// columns in the data files, Iceberg compatibility, the checkpoint
// policy). A snapshot builds one (deltalog.Snapshot.Config), and so does
// a transaction for the table it commits; pruners, scans, writers and
// the conflict checker take it, so that no package decides a rule for
// itself. (delta-kernel-rs's TableConfiguration is the model.)
//
// A TableConfig is immutable and safe for concurrent use.
type TableConfig struct {
	protocol *Protocol
	metadata *Metadata
	props    *TableProperties
	schema   *StructType
	mode     string // the column mapping mode honoured
}

// NewTableConfig joins a protocol and the metadata it governs, parsing the
// schema and the properties once. A nil protocol is a table being
// created, whose protocol is not chosen yet (MinimalProtocol): its column
// mapping mode is the property's.
func NewTableConfig(p *Protocol, md *Metadata) (*TableConfig, error) {
	if md == nil {
		return nil, fmt.Errorf("table configuration: no metadata")
	}
	schema, err := md.Schema()
	if err != nil {
		return nil, err
	}
	return newTableConfig(p, md, md.Properties(), schema), nil
}

// newTableConfig is NewTableConfig with the schema and properties
// already parsed.
func newTableConfig(p *Protocol, md *Metadata, props *TableProperties, schema *StructType) *TableConfig {
	c := &TableConfig{protocol: p, metadata: md, props: props, schema: schema, mode: props.ColumnMappingMode}
	if p != nil && !p.HasReaderFeature(FeatureColumnMapping) {
		// The property means nothing to a protocol without the feature
		// (PROTOCOL.md "Column Mapping"); writes to such a table are
		// refused (deltalog), reads take the names as they are.
		c.mode = ColumnMappingNone
	}
	return c
}

// WithProtocol is the configuration of the same metadata under p.
func (c *TableConfig) WithProtocol(p *Protocol) *TableConfig {
	return newTableConfig(p, c.metadata, c.props, c.schema)
}

// Protocol is the table's protocol (nil for a table being created).
func (c *TableConfig) Protocol() *Protocol { return c.protocol }

// Metadata is the table's metaData action.
func (c *TableConfig) Metadata() *Metadata { return c.metadata }

// Properties are the metadata's properties, parsed once.
func (c *TableConfig) Properties() *TableProperties { return c.props }

// Schema is the table's schema, with logical names.
func (c *TableConfig) Schema() *StructType { return c.schema }

// PartitionColumns are the partition columns' logical names.
func (c *TableConfig) PartitionColumns() []string { return c.metadata.PartitionColumns }

// ColumnMappingMode is the column mapping mode readers and writers honour:
// delta.columnMapping.mode ("none", "name" or "id") where the protocol
// supports the columnMapping feature, else "none".
func (c *TableConfig) ColumnMappingMode() string { return c.mode }

// ColumnMapped reports whether data files, partition values and stats
// name the columns by physical name (mode name or id).
func (c *TableConfig) ColumnMapped() bool { return c.mode != ColumnMappingNone }

// PhysicalName is the name of f's column in data files, partition values
// and stats: its delta.columnMapping.physicalName under column mapping,
// else its name. f is a field of the schema, at any depth.
func (c *TableConfig) PhysicalName(f *StructField) string { return f.PhysicalName(c.mode) }

// PhysicalPath resolves a column path of logical names (exact spelling,
// through structs) to the field and its path of physical names. A name a
// struct does not have is an *UnknownFieldError.
func (c *TableConfig) PhysicalPath(path []string) (*StructField, []string, error) {
	fields := c.schema.Fields
	var f *StructField
	physical := make([]string, 0, len(path))
	for i, name := range path {
		if i > 0 {
			st, ok := f.Type.(*StructType)
			if !ok {
				return nil, nil, &UnknownFieldError{Path: path[:i+1]}
			}
			fields = st.Fields
		}
		f = nil
		for _, cand := range fields {
			if cand.Name == name {
				f = cand
				break
			}
		}
		if f == nil {
			return nil, nil, &UnknownFieldError{Path: path[:i+1]}
		}
		physical = append(physical, c.PhysicalName(f))
	}
	if f == nil {
		return nil, nil, &UnknownFieldError{}
	}
	return f, physical, nil
}

// UnknownFieldError is a column path the schema does not have.
type UnknownFieldError struct{ Path []string }

func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("no column %q in the table", strings.Join(e.Path, "."))
}

// PhysicalSchema is the schema as data files name it: every field,
// nested too, under its physical name (PhysicalSchema).
func (c *TableConfig) PhysicalSchema() *StructType { return PhysicalSchema(c.schema, c.mode) }

// FieldByPhysicalName is the top-level field whose physical name is name,
// as partitionValues and stats keys name it; nil when none is.
func (c *TableConfig) FieldByPhysicalName(name string) *StructField {
	return c.schema.FieldByPhysicalName(name, c.mode)
}

// WidenedPaths are the physical paths of the columns (struct fields
// included) whose type was widened (delta.typeChanges): files written
// before hold the narrower type, so their stats bounds do not bound the
// values read widened.
func (c *TableConfig) WidenedPaths() [][]string {
	var out [][]string
	var walk func(st *StructType, prefix []string)
	walk = func(st *StructType, prefix []string) {
		for _, f := range st.Fields {
			p := append(slices.Clone(prefix), c.PhysicalName(f))
			if _, ok := f.Metadata[MetaTypeChanges]; ok {
				out = append(out, p)
			}
			if sub, ok := f.Type.(*StructType); ok {
				walk(sub, p)
			}
		}
	}
	walk(c.schema, nil)
	return out
}

// Supports reports whether the protocol supports the named feature
// (lists it, or implies it by a legacy version): writers must honour it.
func (c *TableConfig) Supports(feature string) bool {
	return c.protocol != nil && c.protocol.HasWriterFeature(feature)
}

// Needs reports whether the metadata needs the named feature: a property
// or the schema uses it (Spark's metadataRequiresFeatureToBeEnabled).
func (c *TableConfig) Needs(feature string) bool {
	s := specByName[feature]
	return s != nil && s.needed != nil && s.needed(c)
}

// NeededFeatures are the features the metadata needs, in the order a new
// table's protocol lists them.
func (c *TableConfig) NeededFeatures() []string {
	var out []string
	for _, s := range featureSpecs {
		if s.needed != nil && s.needed(c) {
			out = append(out, s.name)
		}
	}
	return out
}

// Enabled reports whether the named feature is in force: the protocol
// supports it and the metadata uses it.
func (c *TableConfig) Enabled(feature string) bool { return c.Supports(feature) && c.Needs(feature) }

// DeletionVectors reports whether operations may mark rows deleted with
// deletion vectors: delta.enableDeletionVectors and the feature.
func (c *TableConfig) DeletionVectors() bool { return c.Enabled(FeatureDeletionVectors) }

// ChangeDataFeed reports whether operations that change rows record change
// data (delta.enableChangeDataFeed).
func (c *TableConfig) ChangeDataFeed() bool { return c.props.EnableChangeDataFeed }

// AssignsRowIDs reports whether commits give new files row IDs: the
// protocol supports rowTracking (whether or not the property is set yet,
// as while enabling it on an existing table).
func (c *TableConfig) AssignsRowIDs() bool { return c.Supports(FeatureRowTracking) }

// RowTracking reports whether rows keep their IDs and commit versions
// through rewrites (delta.enableRowTracking and the feature).
func (c *TableConfig) RowTracking() bool { return c.Enabled(FeatureRowTracking) }

// MaterializesPartitionColumns reports whether data files hold the
// partition columns too: the materializePartitionColumns feature,
// delta.writePartitionColumnsToParquet, or Iceberg compatibility.
func (c *TableConfig) MaterializesPartitionColumns() bool {
	if c.Supports(FeatureMaterializePartitionColumns) {
		return true
	}
	on, _ := ParseBool(c.metadata.Configuration[PropWritePartitionColumnsToParquet])
	return on || c.IcebergCompat() > 0
}

// IcebergCompat is the IcebergCompat version the table keeps (1 or 2), 0
// for none.
func (c *TableConfig) IcebergCompat() int {
	switch {
	case c.props.EnableIcebergCompatV2:
		return 2
	case c.props.EnableIcebergCompatV1:
		return 1
	}
	return 0
}

// UniversalFormat reports whether the table carries the metadata of the
// named format ("iceberg") beside its log
// (delta.universalFormat.enabledFormats).
func (c *TableConfig) UniversalFormat(format string) bool {
	return slices.Contains(c.props.UniversalFormats, format)
}

// V2Checkpoints reports whether checkpoints are written in the V2 form
// (delta.checkpointPolicy=v2 and the v2Checkpoint feature).
func (c *TableConfig) V2Checkpoints() bool { return c.Enabled(FeatureV2Checkpoint) }

// SymlinkManifest reports whether every commit regenerates the symlink
// manifest (delta.compatibility.symlinkFormatManifest.enabled).
func (c *TableConfig) SymlinkManifest() bool {
	on, _ := ParseBool(c.metadata.Configuration[PropSymlinkFormatManifest])
	return on
}

// AutoCompact reports whether each write is followed by auto compaction
// of the partitions it wrote (delta.autoOptimize.autoCompact=true, in
// any case, as Spark lower-cases it).
func (c *TableConfig) AutoCompact() bool {
	return asciiLower(c.metadata.Configuration[PropAutoCompact]) == "true"
}

// MinimalProtocol is the protocol a new table with this metadata gets, as
// Spark 4 gives it: the features of Spark's default protocol (1, 2),
// appendOnly and invariants, and those the metadata needs, in the
// smallest protocol that supports exactly them (ProtocolWith).
func (c *TableConfig) MinimalProtocol() *Protocol {
	return ProtocolWith(append([]string{FeatureAppendOnly, FeatureInvariants}, c.NeededFeatures()...))
}

// ProtocolWith is the protocol that supports exactly the named features
// (each once), written as Delta on Spark 4 writes it: a legacy protocol
// when the features are exactly those a legacy version implies ((1, 3)
// for appendOnly, invariants and checkConstraints); otherwise writer
// version 7 listing them, with reader version 1 when none concerns
// readers, 2 when columnMapping is the only one (a legacy reader version
// implies it), and 3 listing the reader-writer ones otherwise.
func ProtocolWith(names []string) *Protocol {
	set := map[string]bool{}
	var ordered []string
	for _, s := range featureSpecs { // a stable order, Spark's for new tables
		if slices.Contains(names, s.name) && !set[s.name] {
			set[s.name] = true
			ordered = append(ordered, s.name)
		}
	}
	for _, n := range names { // names lakelog has no spec of, last
		if !set[n] {
			set[n] = true
			ordered = append(ordered, n)
		}
	}
	for w := 1; w < len(legacyWriterFeatures); w++ {
		legacy := &Protocol{MinReaderVersion: 1, MinWriterVersion: w}
		if set[FeatureColumnMapping] {
			legacy.MinReaderVersion = 2
		}
		implied := legacy.WriterFeatureSet()
		if len(implied) == len(set) && !slices.ContainsFunc(implied, func(f string) bool { return !set[f] }) {
			return legacy
		}
	}
	p := &Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: ordered}
	var rw []string
	for _, n := range ordered {
		if IsReaderWriterFeature(n) {
			rw = append(rw, n)
		}
	}
	switch {
	case len(rw) == 1 && rw[0] == FeatureColumnMapping:
		p.MinReaderVersion = 2
	case len(rw) > 0:
		p.MinReaderVersion, p.ReaderFeatures = 3, rw
	}
	return p
}

// FeatureNotEnabledError is new metadata of an existing table that needs a
// table feature its protocol lacks and which Spark does not add by
// itself (a timestamp_ntz column needs timestampNtz): the feature must
// be enabled explicitly first.
type FeatureNotEnabledError struct {
	Feature   string
	EnabledBy string
}

func (e *FeatureNotEnabledError) Error() string {
	return fmt.Sprintf("the table needs the %s feature, which its protocol lacks and which is added only when asked for: set %s first (ALTER TABLE ... SET TBLPROPERTIES), as Spark requires", e.Feature, e.EnabledBy)
}

// UpgradeProtocol is the protocol an existing table whose protocol is
// current gets when it takes this configuration's metadata, by Spark's
// rule: every feature the metadata needs that current lacks is added
// when Spark adds it by itself (legacy features and those a property
// enables) or when it is in explicit (delta.feature.NAME=supported);
// otherwise the change is refused with a *FeatureNotEnabledError. The
// result supports exactly current's features and the added ones, written
// as Spark 4 writes it (ProtocolWith: (1, 2) and a change data feed give
// (1, 7) listing appendOnly, invariants and changeDataFeed); it is never
// a downgrade, and current itself is returned when it already supports
// everything.
func (c *TableConfig) UpgradeProtocol(current *Protocol, explicit ...string) (*Protocol, error) {
	var missing []string
	for _, name := range c.NeededFeatures() {
		if current.HasWriterFeature(name) || slices.Contains(explicit, name) {
			continue
		}
		if s := specByName[name]; !s.autoUpgrade {
			return nil, &FeatureNotEnabledError{Feature: name, EnabledBy: s.enabledBy}
		}
		missing = append(missing, name)
	}
	for _, name := range explicit {
		if !current.HasWriterFeature(name) && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return current, nil
	}
	have := append(current.ReaderFeatureSet(), current.WriterFeatureSet()...)
	p := ProtocolWith(append(have, missing...))
	// Versions never go down (a reader version 3 stays 3 even when no
	// reader feature is listed any more).
	if p.MinReaderVersion < current.MinReaderVersion || p.MinWriterVersion < current.MinWriterVersion {
		return MergeProtocols(p, current), nil
	}
	return p, nil
}

// FeatureName is the canonical spelling of a table feature named in any
// case (delta.feature.* keys are stored lower-cased, and Spark matches
// feature names without regard to case); ok is false for a name neither
// PROTOCOL.md nor Delta Lake on Spark defines.
func FeatureName(name string) (canonical string, ok bool) {
	for _, s := range featureSpecs {
		if strings.EqualFold(s.name, name) {
			return s.name, true
		}
	}
	return name, false
}

// MetaInvariants is the field metadata key of a column invariant
// (PROTOCOL.md "Column Invariants"), the invariants feature.
const MetaInvariants = "delta.invariants"

// hasInvariants reports whether the schema holds what Spark's Invariants
// feature covers: a NOT NULL field or a delta.invariants expression,
// looking through structs but not into arrays and maps, as Spark does.
func hasInvariants(s *StructType) bool {
	for _, f := range s.Fields {
		if !f.Nullable {
			return true
		}
		if _, ok := f.Metadata[MetaInvariants]; ok {
			return true
		}
		if sub, ok := f.Type.(*StructType); ok && hasInvariants(sub) {
			return true
		}
	}
	return false
}

// hasFieldMetadata reports whether a top-level field's metadata has key.
func hasFieldMetadata(s *StructType, key string) bool {
	return slices.ContainsFunc(s.Fields, func(f *StructField) bool {
		_, ok := f.Metadata[key]
		return ok
	})
}

// usesType reports whether t is want or holds it, at any depth.
func usesType(t DataType, want PrimitiveType) bool {
	switch t := t.(type) {
	case PrimitiveType:
		return t == want
	case *StructType:
		return slices.ContainsFunc(t.Fields, func(f *StructField) bool { return usesType(f.Type, want) })
	case *ArrayType:
		return usesType(t.ElementType, want)
	case *MapType:
		return usesType(t.KeyType, want) || usesType(t.ValueType, want)
	}
	return false
}

// MetadataFeatures lists the features a table's metadata can need, in the
// order a new table's protocol lists them.
func MetadataFeatures() []string {
	var out []string
	for _, s := range featureSpecs {
		if s.needed != nil {
			out = append(out, s.name)
		}
	}
	return out
}
