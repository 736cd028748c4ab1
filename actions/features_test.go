package actions

import (
	"reflect"
	"testing"
)

func TestFeatureSets(t *testing.T) {
	for _, tc := range []struct {
		p              Protocol
		reader, writer []string
	}{
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 1}, []string{}, []string{}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, []string{}, []string{"appendOnly", "invariants"}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 3}, []string{}, []string{"appendOnly", "invariants", "checkConstraints"}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, []string{}, []string{"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns"}},
		{Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, []string{"columnMapping"}, []string{"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping"}},
		{Protocol{MinReaderVersion: 2, MinWriterVersion: 6}, []string{"columnMapping"}, []string{"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping", "identityColumns"}},
		{Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "appendOnly"}},
			[]string{"deletionVectors"}, []string{"deletionVectors", "appendOnly"}},
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"domainMetadata"}}, []string{}, []string{"domainMetadata"}},
	} {
		p := tc.p
		if got := p.ReaderFeatureSet(); !reflect.DeepEqual(got, tc.reader) {
			t.Errorf("%+v: reader features %v, want %v", p, got, tc.reader)
		}
		if got := p.WriterFeatureSet(); !reflect.DeepEqual(got, tc.writer) {
			t.Errorf("%+v: writer features %v, want %v", p, got, tc.writer)
		}
	}
	legacy := &Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	if !legacy.HasReaderFeature(FeatureColumnMapping) || !legacy.HasWriterFeature(FeatureGeneratedColumns) || legacy.HasWriterFeature(FeatureIdentityColumns) {
		t.Error("legacy (2,5) implied features are wrong")
	}
	explicit := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{FeatureAppendOnly}}
	if explicit.HasWriterFeature(FeatureInvariants) || !explicit.HasWriterFeature(FeatureAppendOnly) || explicit.HasReaderFeature(FeatureColumnMapping) {
		t.Error("explicit (3,7) features are wrong")
	}
	var none *Protocol
	if none.HasReaderFeature(FeatureColumnMapping) || len(none.WriterFeatureSet()) != 0 || none.SupportsReaderFeatures() {
		t.Error("nil protocol requires something")
	}
	// The returned slices are copies.
	explicit.WriterFeatureSet()[0] = "x"
	if explicit.WriterFeatures[0] != FeatureAppendOnly {
		t.Error("WriterFeatureSet aliases the protocol")
	}
	if !IsReaderWriterFeature(FeatureDeletionVectors) || IsReaderWriterFeature(FeatureAppendOnly) || IsReaderWriterFeature("nope") {
		t.Error("IsReaderWriterFeature")
	}
}

// Every feature named in a golden table's protocol is one of the constants.
func TestGoldenFeaturesAreKnown(t *testing.T) {
	known := map[string]bool{}
	for _, f := range []string{FeatureAppendOnly, FeatureInvariants, FeatureCheckConstraints, FeatureGeneratedColumns,
		FeatureAllowColumnDefaults, FeatureChangeDataFeed, FeatureColumnMapping, FeatureIdentityColumns,
		FeatureDeletionVectors, FeatureRowTracking, FeatureTimestampNTZ, FeatureDomainMetadata, FeatureV2Checkpoint,
		FeatureCatalogManaged, FeatureIcebergCompatV1, FeatureIcebergCompatV2, FeatureClustering,
		FeatureVacuumProtocolCheck, FeatureInCommitTimestamp, FeatureTypeWidening, FeatureTypeWideningPreview,
		FeatureVariantType, FeatureVariantTypePreview, FeatureVariantShredding, FeatureVariantShreddingPreview} {
		known[f] = true
	}
	seen := 0
	for _, s := range goldenProtocols(t) {
		for _, f := range append(s.ReaderFeatures, s.WriterFeatures...) {
			seen++
			if !known[f] {
				t.Errorf("golden feature %q has no constant", f)
			}
			if slicesContains(s.ReaderFeatures, f) && !IsReaderWriterFeature(f) {
				t.Errorf("%q is a reader feature in a golden table but IsReaderWriterFeature says no", f)
			}
		}
	}
	if seen == 0 {
		t.Error("no features in the golden protocols")
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
