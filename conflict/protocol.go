package conflict

import (
	"slices"

	"github.com/lakelog/lakelog/actions"
)

// features is the set of table features a protocol supports, explicitly
// (reader version 3, writer version 7) or implied by legacy versions.
func features(p *actions.Protocol) map[string]bool {
	set := map[string]bool{}
	for _, f := range p.ReaderFeatureSet() {
		set[f] = true
	}
	for _, f := range p.WriterFeatureSet() {
		set[f] = true
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
