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

// readerWriterFeatures are the features a reader must also know: they are
// listed in readerFeatures as well as writerFeatures.
var readerWriterFeatures = map[string]bool{
	FeatureColumnMapping: true, FeatureDeletionVectors: true,
	FeatureTimestampNTZ: true, FeatureV2Checkpoint: true,
	FeatureCatalogManaged: true, FeatureVacuumProtocolCheck: true,
	FeatureTypeWidening: true, FeatureTypeWideningPreview: true,
	FeatureVariantType: true, FeatureVariantTypePreview: true,
	FeatureVariantShredding: true, FeatureVariantShreddingPreview: true,
	FeatureCatalogOwnedPreview: true, FeatureRedirectReaderWriterPreview: true,
	FeatureGeospatial: true, FeatureGeospatialPreview: true,
}

// IsReaderWriterFeature reports whether the named feature concerns readers
// as well as writers, so that a protocol supporting it lists it in both
// readerFeatures and writerFeatures. Unknown names report false.
func IsReaderWriterFeature(name string) bool { return readerWriterFeatures[name] }

// legacyWriterFeatures lists, by writer version, the features a legacy
// protocol (writer version below 7) implies; each version has those of
// the versions below it (PROTOCOL.md "Writer Version Requirements").
var legacyWriterFeatures = [...][]string{
	2: {FeatureAppendOnly, FeatureInvariants},
	3: {FeatureCheckConstraints},
	4: {FeatureChangeDataFeed, FeatureGeneratedColumns},
	5: {FeatureColumnMapping},
	6: {FeatureIdentityColumns},
}

// LegacyWriterVersion is the lowest legacy writer version (below 7) that
// implies the named feature, or 0 when only a table-features protocol
// can list it.
func LegacyWriterVersion(name string) int {
	for v, fs := range legacyWriterFeatures {
		if slices.Contains(fs, name) {
			return v
		}
	}
	return 0
}

// LegacyReaderVersion is the lowest legacy reader version (below 3) that
// implies the named feature: 2 for columnMapping, 1 for a writer-only
// feature (nothing of readers), 0 for any other reader-writer feature.
func LegacyReaderVersion(name string) int {
	switch {
	case name == FeatureColumnMapping:
		return 2
	case !IsReaderWriterFeature(name):
		return 1
	}
	return 0
}

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
