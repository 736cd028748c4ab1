package deltalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

// TestFeatureRecords: for every record, a table whose table-features
// protocol lists the feature (and nothing else) supports exactly the
// operations of the record, each refusal wrapping ErrUnsupportedFeature
// and naming the feature; a feature without a record is refused by
// every operation that must know it.
func TestFeatureRecords(t *testing.T) {
	md := &actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`, Configuration: map[string]string{}}
	snapOf := func(p *actions.Protocol) *Snapshot {
		c, err := actions.NewTableConfig(p, md)
		if err != nil {
			t.Fatal(err)
		}
		return &Snapshot{table: newTable(nil, "t"), config: c}
	}
	listing := func(name string) *actions.Protocol {
		p := &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{name}}
		if actions.IsReaderWriterFeature(name) {
			p.MinReaderVersion, p.ReaderFeatures = 3, []string{name}
		}
		return p
	}
	seen := map[string]bool{}
	for _, r := range features {
		if seen[r.name] {
			t.Errorf("two records of %s", r.name)
		}
		seen[r.name] = true
		s := snapOf(listing(r.name))
		for _, op := range operations {
			err := s.supports(op)
			want := r.ops.has(op) || (readOps.has(op) && !actions.IsReaderWriterFeature(r.name))
			if (err == nil) != want {
				t.Errorf("%s, %s: %v; want supported %v", r.name, op, err, want)
			}
			if err != nil && (!errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"`+r.name+`"`)) {
				t.Errorf("%s, %s: %v does not name the feature", r.name, op, err)
			}
		}
	}
	for _, name := range []string{actions.FeatureClustering, actions.FeatureVariantType, "someFutureFeature"} {
		s := snapOf(listing(name))
		for _, op := range operations {
			err := s.supports(op)
			mustKnow := writeOps.has(op) || actions.IsReaderWriterFeature(name)
			if (err != nil) != mustKnow || (err != nil && !strings.Contains(err.Error(), `"`+name+`"`)) {
				t.Errorf("unrecorded %s, %s: %v", name, op, err)
			}
		}
	}
	// Every feature metadata can need (that MinimalProtocol may list)
	// has a record that writes it.
	for _, name := range actions.MetadataFeatures() {
		if r := featureByName[name]; r == nil || !r.ops.has(opCommit) {
			t.Errorf("%s is enabled for new tables but lakelog does not commit to a table that has it", name)
		}
	}
}

// TestFeatureEnabledByProperties: a feature the table's properties use is
// checked on writes even when the protocol does not list it (an
// append-only property on a protocol without appendOnly still forbids
// deletes), and not on reads.
func TestFeatureEnabledByProperties(t *testing.T) {
	md := &actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`, Configuration: map[string]string{"delta.appendOnly": "true"}}
	c, err := actions.NewTableConfig(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 1}, md)
	if err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{table: newTable(nil, "t"), config: c}
	for _, op := range operations {
		err := s.supports(op)
		if removesRows.has(op) != (err != nil) {
			t.Errorf("%s: %v", op, err)
		}
	}
}
