package conflict

import (
	"slices"

	"github.com/lakelog/lakelog/actions"
)

// legacyWriterFeatures are the features a writer version below 7 implies
// (PROTOCOL.md "Table Features": legacy versions support a fixed set).
var legacyWriterFeatures = []struct {
	version  int
	features []string
}{
	{2, []string{"appendOnly", "invariants"}},
	{3, []string{"checkConstraints"}},
	{4, []string{"changeDataFeed", "generatedColumns"}},
	{5, []string{"columnMapping"}},
	{6, []string{"identityColumns"}},
}

// features is the set of table features a protocol supports, explicitly
// (reader version 3, writer version 7) or implied by legacy versions.
func features(p *actions.Protocol) map[string]bool {
	set := map[string]bool{}
	if p.MinReaderVersion >= 3 {
		for _, f := range p.ReaderFeatures {
			set[f] = true
		}
	} else if p.MinReaderVersion == 2 {
		set["columnMapping"] = true
	}
	if p.MinWriterVersion >= 7 {
		for _, f := range p.WriterFeatures {
			set[f] = true
		}
		return set
	}
	for _, l := range legacyWriterFeatures {
		if p.MinWriterVersion >= l.version {
			for _, f := range l.features {
				set[f] = true
			}
		}
	}
	return set
}

// featureDiff lists the features of to that from lacks (added) and those
// of from that to lacks (dropped), each sorted.
func featureDiff(from, to *actions.Protocol) (added, dropped []string) {
	a, b := features(from), features(to)
	for f := range b {
		if !a[f] {
			added = append(added, f)
		}
	}
	for f := range a {
		if !b[f] {
			dropped = append(dropped, f)
		}
	}
	slices.Sort(added)
	slices.Sort(dropped)
	return added, dropped
}
