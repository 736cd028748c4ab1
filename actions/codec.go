package actions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// knownKinds are the action kinds Action has a field for.
var knownKinds = map[string]bool{
	"protocol": true, "metaData": true, "add": true, "remove": true, "cdc": true,
	"commitInfo": true, "txn": true, "domainMetadata": true,
	"checkpointMetadata": true, "sidecar": true,
}

// UnmarshalJSON decodes one action line. An object with no known kind is
// kept in Unknown; an object with more than one key is an error.
func (a *Action) UnmarshalJSON(b []byte) error {
	// Fast path for the common line {"kind":{...}}: decode the value
	// straight into its struct, scanning the line once instead of three
	// times. Anything unusual takes the general path below, which also
	// gives the error messages.
	if k, v, ok := splitKind(b); ok && knownKinds[k] {
		var fast Action
		if err := fast.decodeKind(k, v); err == nil {
			*a = fast
			return nil
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	if obj == nil {
		return errors.New("action is null")
	}
	*a = Action{}
	n := 0
	for k, v := range obj {
		if !knownKinds[k] {
			continue
		}
		n++
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Errorf("action %q is null", k)
		}
		if err := a.decodeKind(k, v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("action has %d kinds, want one", n)
	case n == 0:
		// Compact, so that the kept text is what MarshalJSON gives back.
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		a.Unknown = buf.Bytes()
	}
	return nil
}

// decodeKind decodes v as the action of kind k.
func (a *Action) decodeKind(k string, v []byte) error {
	switch k {
	case "protocol":
		a.Protocol = new(Protocol)
		return json.Unmarshal(v, a.Protocol)
	case "metaData":
		a.Metadata = new(Metadata)
		return json.Unmarshal(v, a.Metadata)
	case "add":
		a.Add = new(Add)
		return json.Unmarshal(v, a.Add)
	case "remove":
		a.Remove = new(Remove)
		return json.Unmarshal(v, a.Remove)
	case "cdc":
		a.CDC = new(AddCDCFile)
		return json.Unmarshal(v, a.CDC)
	case "commitInfo":
		a.CommitInfo = new(CommitInfo)
		return json.Unmarshal(v, a.CommitInfo)
	case "txn":
		a.Txn = new(Txn)
		return json.Unmarshal(v, a.Txn)
	case "domainMetadata":
		a.DomainMetadata = new(DomainMetadata)
		return json.Unmarshal(v, a.DomainMetadata)
	case "checkpointMetadata":
		a.CheckpointMetadata = new(CheckpointMetadata)
		return json.Unmarshal(v, a.CheckpointMetadata)
	case "sidecar":
		a.Sidecar = new(Sidecar)
		return json.Unmarshal(v, a.Sidecar)
	}
	return fmt.Errorf("unknown action kind %q", k)
}

// splitKind splits {"kind": value} into its key and value without
// decoding. ok is false for anything else: an escaped key, a null value,
// no key. A value that hides a second key ({"a":{},"b":{}}) is not
// detected here, but it is not valid JSON on its own, so decoding it
// fails and the caller falls back.
func splitKind(b []byte) (kind string, value []byte, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return "", nil, false
	}
	body := bytes.TrimLeft(b[1:len(b)-1], " \t\r\n")
	if len(body) == 0 || body[0] != '"' {
		return "", nil, false
	}
	end := bytes.IndexByte(body[1:], '"')
	if end < 0 {
		return "", nil, false
	}
	key := body[1 : 1+end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return "", nil, false
	}
	rest := bytes.TrimLeft(body[2+end:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return "", nil, false
	}
	v := bytes.TrimSpace(rest[1:])
	if len(v) == 0 || v[0] != '{' {
		return "", nil, false
	}
	return string(key), v, true
}

// MarshalJSON encodes the action as its one-key object. Characters such as
// '<', '>' and '&' are written as they are, not HTML-escaped, as Spark and
// delta-rs write them.
func (a Action) MarshalJSON() ([]byte, error) {
	if a.Unknown != nil {
		if !json.Valid(a.Unknown) {
			return nil, errors.New("actions: unknown action is not valid JSON")
		}
		return a.Unknown, nil
	}
	type plain Action
	return marshalNoEscape(plain(a))
}

// marshalNoEscape is json.Marshal without HTML escaping and without the
// trailing newline an Encoder adds.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Kind returns the protocol's name for the action's kind, or "" for an
// unknown one.
func (a *Action) Kind() string {
	switch {
	case a.Protocol != nil:
		return "protocol"
	case a.Metadata != nil:
		return "metaData"
	case a.Add != nil:
		return "add"
	case a.Remove != nil:
		return "remove"
	case a.CDC != nil:
		return "cdc"
	case a.CommitInfo != nil:
		return "commitInfo"
	case a.Txn != nil:
		return "txn"
	case a.DomainMetadata != nil:
		return "domainMetadata"
	case a.CheckpointMetadata != nil:
		return "checkpointMetadata"
	case a.Sidecar != nil:
		return "sidecar"
	}
	return ""
}

// LineError reports an undecodable line of a commit file. Line is 1-based.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("actions: line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseCommit decodes a newline-delimited commit file. Blank lines are
// skipped. A bad line gives a *LineError naming it.
func ParseCommit(r io.Reader) ([]Action, error) {
	if br, ok := r.(*bytes.Reader); ok && br.Len() < 64<<10 {
		// Small in-memory commits (the usual case) skip the scanner and
		// its 64 KiB buffer.
		b := make([]byte, br.Len())
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, &LineError{Line: 1, Err: err}
		}
		return ParseCommitBytes(b)
	}
	var out []Action
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		if err := appendAction(&out, sc.Bytes(), line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Line: line + 1, Err: err}
	}
	return out, nil
}

// ParseCommitBytes is ParseCommit of a commit file held in memory.
func ParseCommitBytes(b []byte) ([]Action, error) {
	out := make([]Action, 0, bytes.Count(b, []byte{'\n'})+1)
	for line := 1; len(b) > 0; line++ {
		ln := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			ln, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if err := appendAction(&out, ln, line); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendAction decodes one line, skipping blank ones.
func appendAction(out *[]Action, ln []byte, line int) error {
	ln = bytes.TrimSpace(ln)
	if len(ln) == 0 {
		return nil
	}
	var a Action
	if err := a.UnmarshalJSON(ln); err != nil {
		return &LineError{Line: line, Err: err}
	}
	*out = append(*out, a)
	return nil
}

// MarshalCommit encodes actions as a commit file: one JSON object per line,
// each line ended by '\n'.
func MarshalCommit(as []Action) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range as {
		if err := enc.Encode(as[i]); err != nil {
			return nil, fmt.Errorf("actions: encode action %d (%s): %w", i, as[i].Kind(), err)
		}
	}
	return buf.Bytes(), nil
}

// The protocol requires some fields to be present even when empty:
// metaData's partitionColumns, configuration and format.options, the
// partitionValues of add and cdc, and protocol's feature lists from reader
// version 3 and writer version 7 on. Decoding turns a missing or null one
// into an empty one, and encoding writes an empty one for a nil one, so
// that a value built in Go encodes as Spark expects and a decoded value
// encodes back to itself.

// UnmarshalJSON decodes a protocol action; see the note above on empty
// feature lists.
func (p *Protocol) UnmarshalJSON(b []byte) error {
	type plain Protocol
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Protocol(v)
	p.fillEmpty()
	return nil
}

// MarshalJSON encodes a protocol action; see the note above on empty
// feature lists.
func (p Protocol) MarshalJSON() ([]byte, error) {
	type plain Protocol
	p.fillEmpty()
	return marshalNoEscape(plain(p))
}

func (p *Protocol) fillEmpty() {
	if p.MinReaderVersion >= 3 && p.ReaderFeatures == nil {
		p.ReaderFeatures = []string{}
	}
	if p.MinWriterVersion >= 7 && p.WriterFeatures == nil {
		p.WriterFeatures = []string{}
	}
}

// UnmarshalJSON decodes a metaData action; missing collections decode as
// empty ones.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	type plain Metadata
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Metadata(v)
	m.fillEmpty()
	return nil
}

// MarshalJSON encodes a metaData action; nil collections encode as empty
// ones.
func (m Metadata) MarshalJSON() ([]byte, error) {
	type plain Metadata
	m.fillEmpty()
	return marshalNoEscape(plain(m))
}

func (m *Metadata) fillEmpty() {
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
}

// UnmarshalJSON decodes an add action; a missing partitionValues decodes
// as an empty map.
func (a *Add) UnmarshalJSON(b []byte) error {
	type plain Add
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = Add(v)
	if a.PartitionValues == nil {
		a.PartitionValues = map[string]*string{}
	}
	return nil
}

// MarshalJSON encodes an add action; a nil partitionValues encodes as {}.
func (a Add) MarshalJSON() ([]byte, error) {
	type plain Add
	if a.PartitionValues == nil {
		a.PartitionValues = map[string]*string{}
	}
	return marshalNoEscape(plain(a))
}

// UnmarshalJSON decodes a cdc action; a missing partitionValues decodes as
// an empty map.
func (c *AddCDCFile) UnmarshalJSON(b []byte) error {
	type plain AddCDCFile
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = AddCDCFile(v)
	if c.PartitionValues == nil {
		c.PartitionValues = map[string]*string{}
	}
	return nil
}

// MarshalJSON encodes a cdc action; a nil partitionValues encodes as {}.
func (c AddCDCFile) MarshalJSON() ([]byte, error) {
	type plain AddCDCFile
	if c.PartitionValues == nil {
		c.PartitionValues = map[string]*string{}
	}
	return marshalNoEscape(plain(c))
}
