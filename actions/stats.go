package actions

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Stats is the decoded form of add.stats: per-file statistics keyed by
// physical column name. Nested columns nest as JSON objects. Min and max
// values are as JSON decodes them (json.Number for numbers, string for
// strings, dates and timestamps, map[string]any for structs); use
// ParseStatValue to turn one into a typed value. NumRecords is -1 when
// the stats do not give it.
type Stats struct {
	NumRecords  int64          `json:"numRecords"`
	MinValues   map[string]any `json:"minValues,omitempty"`
	MaxValues   map[string]any `json:"maxValues,omitempty"`
	NullCount   map[string]any `json:"nullCount,omitempty"`
	TightBounds *bool          `json:"tightBounds,omitempty"`
}

// ParseStats decodes an add.stats string. An empty string gives nil, nil:
// a file without stats, which no predicate can skip.
func ParseStats(s string) (*Stats, error) {
	if s == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	st := Stats{NumRecords: -1} // kept when the JSON has no numRecords
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("actions: parse stats: %w", err)
	}
	return &st, nil
}
