package actions

import "slices"

// Table feature names. Those down to FeatureVariantShreddingPreview are
// specified in PROTOCOL.md (its "Valid Feature Names" table and the
// sections on type widening and variants); the rest are written by Delta
// Lake on Spark. A client that meets a name it does not support must
// refuse the table, known name or not.
const (
	FeatureAppendOnly          = "appendOnly"
	FeatureInvariants          = "invariants"
	FeatureCheckConstraints    = "checkConstraints"
	FeatureGeneratedColumns    = "generatedColumns"
	FeatureAllowColumnDefaults = "allowColumnDefaults"
	FeatureChangeDataFeed      = "changeDataFeed"
	FeatureColumnMapping       = "columnMapping"
	FeatureIdentityColumns     = "identityColumns"
	FeatureDeletionVectors     = "deletionVectors"
	FeatureRowTracking         = "rowTracking"
	FeatureTimestampNTZ        = "timestampNtz"
	FeatureDomainMetadata      = "domainMetadata"
	FeatureV2Checkpoint        = "v2Checkpoint"
	FeatureCatalogManaged      = "catalogManaged"
	FeatureIcebergCompatV1     = "icebergCompatV1"
	FeatureIcebergCompatV2     = "icebergCompatV2"
	FeatureClustering          = "clustering"
	FeatureVacuumProtocolCheck = "vacuumProtocolCheck"
	FeatureInCommitTimestamp   = "inCommitTimestamp"
	FeatureTypeWidening        = "typeWidening"
	FeatureTypeWideningPreview = "typeWidening-preview"
	FeatureVariantType         = "variantType"
	FeatureVariantTypePreview  = "variantType-preview"
	FeatureVariantShredding    = "variantShredding"
	// FeatureVariantShreddingPreview is the preview name of variantShredding.
	FeatureVariantShreddingPreview = "variantShredding-preview"

	// Written by Delta Lake on Spark, not (yet) in PROTOCOL.md's table.
	FeatureIcebergCompatV3             = "icebergCompatV3"
	FeatureCheckpointProtection        = "checkpointProtection"
	FeatureCoordinatedCommitsPreview   = "coordinatedCommits-preview"
	FeatureCatalogOwnedPreview         = "catalogOwned-preview" // catalogManaged's earlier name
	FeatureMaterializePartitionColumns = "materializePartitionColumns"
	FeatureRedirectReaderWriterPreview = "redirectReaderWriter-preview"
	FeatureRedirectWriterOnlyPreview   = "redirectWriterOnly-preview"
	FeatureGeospatial                  = "geospatial"
	FeatureGeospatialPreview           = "geospatial-dev"
)

// featureSpec is what PROTOCOL.md and Spark say of one table feature:
// whether readers must know it, the legacy protocol versions that imply
// it, when a table's metadata needs it (Spark's
// metadataRequiresFeatureToBeEnabled), whether needing it raises an
// existing table's protocol by itself (Spark's
// automaticallyUpdateProtocolOfExistingTables: legacy features and those
// a property enables; not those a column type brings in), and what turns
// it on. What lakelog does with a table that has the feature is decided
// in deltalog.
type featureSpec struct {
	name         string
	readerWriter bool
	// legacyReader and legacyWriter are the lowest legacy versions that
	// imply the feature; 0 when only a table-features protocol lists it.
	legacyReader, legacyWriter int
	// needed says whether the table's metadata needs the feature; nil
	// when only an explicit enablement adds it.
	needed      func(c *TableConfig) bool
	autoUpgrade bool
	// enabledBy names what enables the feature, for messages.
	enabledBy string
}

// featureSpecs are the features a table's metadata can need, in the order
// a new table's protocol lists them (Spark's), then the others lakelog
// knows the kind of.
var featureSpecs = []featureSpec{
	{name: FeatureAppendOnly, legacyReader: 1, legacyWriter: 2, autoUpgrade: true, enabledBy: PropAppendOnly + "=true",
		needed: func(c *TableConfig) bool { return c.props.AppendOnly }},
	{name: FeatureInvariants, legacyReader: 1, legacyWriter: 2, autoUpgrade: true, enabledBy: "a NOT NULL column",
		needed: func(c *TableConfig) bool { return hasInvariants(c.schema) }},
	{name: FeatureChangeDataFeed, legacyReader: 1, legacyWriter: 4, autoUpgrade: true, enabledBy: PropEnableChangeDataFeed + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableChangeDataFeed }},
	{name: FeatureTimestampNTZ, readerWriter: true, enabledBy: PropFeaturePrefix + FeatureTimestampNTZ + "=supported",
		needed: func(c *TableConfig) bool { return usesType(c.schema, TypeTimestampNTZ) }},
	{name: FeatureDeletionVectors, readerWriter: true, autoUpgrade: true, enabledBy: PropEnableDeletionVectors + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableDeletionVectors }},
	{name: FeatureInCommitTimestamp, autoUpgrade: true, enabledBy: PropEnableInCommitTimestamps + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableInCommitTimestamps }},
	{name: FeatureColumnMapping, readerWriter: true, legacyReader: 2, legacyWriter: 5, autoUpgrade: true, enabledBy: PropColumnMappingMode + "=name",
		needed: func(c *TableConfig) bool {
			return c.props.ColumnMappingMode != ColumnMappingNone || c.props.InvalidProperty(PropColumnMappingMode) != nil
		}},
	{name: FeatureIcebergCompatV1, autoUpgrade: true, enabledBy: PropEnableIcebergCompatV1 + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableIcebergCompatV1 }},
	{name: FeatureIcebergCompatV2, autoUpgrade: true, enabledBy: PropEnableIcebergCompatV2 + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableIcebergCompatV2 }},
	{name: FeatureCheckConstraints, legacyReader: 1, legacyWriter: 3, autoUpgrade: true, enabledBy: "a CHECK constraint",
		needed: func(c *TableConfig) bool { return len(c.props.Constraints) > 0 }},
	{name: FeatureGeneratedColumns, legacyReader: 1, legacyWriter: 4, autoUpgrade: true, enabledBy: "a generated column",
		needed: func(c *TableConfig) bool { return hasFieldMetadata(c.schema, MetaGenerationExpression) }},
	{name: FeatureIdentityColumns, legacyReader: 1, legacyWriter: 6, autoUpgrade: true, enabledBy: "an identity column",
		needed: func(c *TableConfig) bool { return slices.ContainsFunc(c.schema.Fields, IsIdentity) }},
	{name: FeatureDomainMetadata, enabledBy: PropEnableRowTracking + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableRowTracking }},
	{name: FeatureRowTracking, autoUpgrade: true, enabledBy: PropEnableRowTracking + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableRowTracking }},
	{name: FeatureV2Checkpoint, readerWriter: true, autoUpgrade: true, enabledBy: PropCheckpointPolicy + "=v2",
		needed: func(c *TableConfig) bool { return c.props.CheckpointPolicy == CheckpointPolicyV2 }},
	{name: FeatureTypeWidening, readerWriter: true, autoUpgrade: true, enabledBy: PropEnableTypeWidening + "=true",
		needed: func(c *TableConfig) bool { return c.props.EnableTypeWidening }},
	{name: FeatureTypeWideningPreview, readerWriter: true},
	{name: FeatureVacuumProtocolCheck, readerWriter: true},
	{name: FeatureCheckpointProtection},
	{name: FeatureMaterializePartitionColumns},
	{name: FeatureAllowColumnDefaults},
	{name: FeatureClustering},
	{name: FeatureCatalogManaged, readerWriter: true},
	{name: FeatureCatalogOwnedPreview, readerWriter: true},
	{name: FeatureVariantType, readerWriter: true},
	{name: FeatureVariantTypePreview, readerWriter: true},
	{name: FeatureVariantShredding, readerWriter: true},
	{name: FeatureVariantShreddingPreview, readerWriter: true},
	{name: FeatureRedirectReaderWriterPreview, readerWriter: true},
	{name: FeatureGeospatial, readerWriter: true},
	{name: FeatureGeospatialPreview, readerWriter: true},
}

var specByName = func() map[string]*featureSpec {
	m := make(map[string]*featureSpec, len(featureSpecs))
	for i := range featureSpecs {
		m[featureSpecs[i].name] = &featureSpecs[i]
	}
	return m
}()

// IsReaderWriterFeature reports whether the named feature concerns readers
// as well as writers, so that a protocol supporting it lists it in both
// readerFeatures and writerFeatures. Unknown names report false.
func IsReaderWriterFeature(name string) bool {
	s := specByName[name]
	return s != nil && s.readerWriter
}

// legacyWriterFeatures lists, by writer version, the features a legacy
// protocol (writer version below 7) implies; each version has those of
// the versions below it (PROTOCOL.md "Writer Version Requirements").
var legacyWriterFeatures = func() [7][]string {
	var by [7][]string
	for _, s := range featureSpecs {
		if s.legacyWriter > 0 {
			by[s.legacyWriter] = append(by[s.legacyWriter], s.name)
		}
	}
	return by
}()

// ReaderFeatureSet returns the features a reader must support to read the
// table. From reader version 3 on that is the readerFeatures list; a
// legacy protocol implies its features: version 2 requires columnMapping,
// version 1 nothing. The slice is a copy. A nil protocol needs nothing.
func (p *Protocol) ReaderFeatureSet() []string {
	switch {
	case p == nil || p.MinReaderVersion < 2:
		return []string{}
	case p.MinReaderVersion == 2:
		return []string{FeatureColumnMapping}
	}
	return slices.Clone(p.ReaderFeatures)
}

// WriterFeatureSet returns the features a writer must support to write
// the table. From writer version 7 on that is the writerFeatures list; a
// legacy protocol implies the features of its version and all below it:
// 2 appendOnly and invariants, 3 checkConstraints, 4 changeDataFeed and
// generatedColumns, 5 columnMapping, 6 identityColumns. The slice is a
// copy. A nil protocol needs nothing.
func (p *Protocol) WriterFeatureSet() []string {
	if p == nil {
		return []string{}
	}
	if p.MinWriterVersion >= 7 {
		return slices.Clone(p.WriterFeatures)
	}
	out := []string{}
	for v := 2; v <= p.MinWriterVersion && v < len(legacyWriterFeatures); v++ {
		out = append(out, legacyWriterFeatures[v]...)
	}
	return out
}

// HasReaderFeature reports whether the table requires the named feature
// of readers, explicitly or by a legacy reader version.
func (p *Protocol) HasReaderFeature(name string) bool {
	return slices.Contains(p.ReaderFeatureSet(), name)
}

// HasWriterFeature reports whether the table requires the named feature
// of writers, explicitly or by a legacy writer version.
func (p *Protocol) HasWriterFeature(name string) bool {
	return slices.Contains(p.WriterFeatureSet(), name)
}

// SupportsReaderFeatures reports whether the protocol lists reader
// features explicitly (reader version 3 or later).
func (p *Protocol) SupportsReaderFeatures() bool { return p != nil && p.MinReaderVersion >= 3 }

// SupportsWriterFeatures reports whether the protocol lists writer
// features explicitly (writer version 7 or later).
func (p *Protocol) SupportsWriterFeatures() bool { return p != nil && p.MinWriterVersion >= 7 }

// MergeProtocols is the protocol that serves both a and b: b itself when
// it already asks for everything a does (so that a protocol is never
// rewritten needlessly), else the higher versions with the union of both
// feature sets (legacy versions' implied features listed when the result
// lists features). A protocol is never downgraded by it.
func MergeProtocols(a, b *Protocol) *Protocol {
	if protocolCovers(b, a) {
		return b
	}
	p := &Protocol{
		MinReaderVersion: max(a.MinReaderVersion, b.MinReaderVersion),
		MinWriterVersion: max(a.MinWriterVersion, b.MinWriterVersion),
	}
	if p.SupportsReaderFeatures() {
		p.ReaderFeatures = featureUnion(a.ReaderFeatureSet(), b.ReaderFeatureSet())
	}
	if p.SupportsWriterFeatures() {
		p.WriterFeatures = featureUnion(a.WriterFeatureSet(), b.WriterFeatureSet())
	}
	return p
}

// protocolCovers reports whether protocol b already asks for everything
// a does.
func protocolCovers(b, a *Protocol) bool {
	return a.MinReaderVersion <= b.MinReaderVersion && a.MinWriterVersion <= b.MinWriterVersion &&
		featureSubset(a.ReaderFeatureSet(), b.ReaderFeatureSet()) && featureSubset(a.WriterFeatureSet(), b.WriterFeatureSet())
}

func featureSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func featureUnion(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
