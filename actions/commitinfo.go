package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
)

// CommitInfo is the commitInfo action: provenance of a commit. The protocol
// leaves its content open; the fields below are the ones lakelog reads or
// writes. Every other field a writer put there (Spark's clusterId,
// notebook, ...) is kept in Extra and written back unchanged.
type CommitInfo struct {
	Timestamp           *int64         `json:"timestamp,omitempty"`
	InCommitTimestamp   *int64         `json:"inCommitTimestamp,omitempty"`
	Operation           string         `json:"operation,omitempty"`
	OperationParameters map[string]any `json:"operationParameters,omitzero"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsolationLevel      string         `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	OperationMetrics    map[string]any `json:"operationMetrics,omitzero"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	TxnID               string         `json:"txnId,omitempty"`
	UserMetadata        string         `json:"userMetadata,omitempty"`
	// Tags are Spark's commit tags (DeltaCommitTag), such as
	// TagIdentitySchemaUpdate and TagRowTrackingPreserved.
	Tags map[string]string `json:"tags,omitempty"`
	// Extra holds the fields not named above, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Spark's commit tags that lakelog writes and reads (value "true").
const (
	// TagIdentitySchemaUpdate marks a commit whose only metadata change
	// is identity high-water marks: a concurrent transaction that changes
	// no metadata rebases over it (conflict's metadata rule).
	TagIdentitySchemaUpdate = "delta.identity.schemaUpdate"
	// TagRowTrackingPreserved marks a rewrite that kept every row's ID
	// and commit version.
	TagRowTrackingPreserved = "delta.rowTracking.preserved"
)

// commitInfoKnown lists the JSON names of CommitInfo's typed fields.
var commitInfoKnown = map[string]bool{
	"timestamp": true, "inCommitTimestamp": true, "operation": true,
	"operationParameters": true, "readVersion": true, "isolationLevel": true,
	"isBlindAppend": true, "operationMetrics": true, "engineInfo": true,
	"txnId": true, "userMetadata": true, "tags": true,
}

type commitInfoFields CommitInfo // no methods: plain struct codec

// UnmarshalJSON decodes the known fields and keeps the rest in Extra.
// Field names match exactly (encoding/json alone would also match
// "Timestamp" to timestamp). Numbers inside the free-form maps are kept as
// json.Number, so that large integers survive. Extra's values are kept
// compacted.
func (c *CommitInfo) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	if all == nil {
		return errors.New("commitInfo is null")
	}
	known := make(map[string]json.RawMessage, len(commitInfoKnown))
	var extra map[string]json.RawMessage
	for k, v := range all {
		if commitInfoKnown[k] {
			known[k] = v
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return err
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = buf.Bytes()
	}
	kb, err := json.Marshal(known)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(kb))
	dec.UseNumber()
	var f commitInfoFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	f.Extra = extra
	*c = CommitInfo(f)
	return nil
}

// MarshalJSON writes the known fields, then Extra's in key order. Keys of
// Extra that name a known field are skipped: the typed field wins.
func (c CommitInfo) MarshalJSON() ([]byte, error) {
	known, err := marshalNoEscape(commitInfoFields(c))
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		if !commitInfoKnown[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return known, nil
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(known[:len(known)-1])
	first := len(known) == 2 // "{}"
	for _, k := range keys {
		if !json.Valid(c.Extra[k]) {
			return nil, fmt.Errorf("actions: commitInfo field %q is not valid JSON", k)
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(c.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// JSONText is v as compact JSON text without HTML escaping, the form in
// which Spark writes list and map operationParameters (partitionBy,
// predicate, properties, zOrderBy) as strings: ["age > 40"], not
// ["age \u003e 40"]. A nil slice is [] and a nil map {}.
func JSONText(v any) string {
	switch rv := reflect.ValueOf(v); {
	case rv.Kind() == reflect.Slice && rv.IsNil():
		return "[]"
	case rv.Kind() == reflect.Map && rv.IsNil():
		return "{}"
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return ""
	}
	return string(b)
}
