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
		var err error
		switch k {
		case "protocol":
			a.Protocol = new(Protocol)
			err = json.Unmarshal(v, a.Protocol)
		case "metaData":
			a.Metadata = new(Metadata)
			err = json.Unmarshal(v, a.Metadata)
		case "add":
			a.Add = new(Add)
			err = json.Unmarshal(v, a.Add)
		case "remove":
			a.Remove = new(Remove)
			err = json.Unmarshal(v, a.Remove)
		case "cdc":
			a.CDC = new(AddCDCFile)
			err = json.Unmarshal(v, a.CDC)
		case "commitInfo":
			a.CommitInfo = new(CommitInfo)
			err = json.Unmarshal(v, a.CommitInfo)
		case "txn":
			a.Txn = new(Txn)
			err = json.Unmarshal(v, a.Txn)
		case "domainMetadata":
			a.DomainMetadata = new(DomainMetadata)
			err = json.Unmarshal(v, a.DomainMetadata)
		case "checkpointMetadata":
			a.CheckpointMetadata = new(CheckpointMetadata)
			err = json.Unmarshal(v, a.CheckpointMetadata)
		case "sidecar":
			a.Sidecar = new(Sidecar)
			err = json.Unmarshal(v, a.Sidecar)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("action has %d kinds, want one", n)
	case n == 0:
		a.Unknown = append(json.RawMessage(nil), b...)
	}
	return nil
}

// MarshalJSON encodes the action as its one-key object.
func (a Action) MarshalJSON() ([]byte, error) {
	if a.Unknown != nil {
		return a.Unknown, nil
	}
	type plain Action
	return json.Marshal(plain(a))
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

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseCommit decodes a newline-delimited commit file. Blank lines are
// skipped. A bad line gives a *LineError naming it.
func ParseCommit(r io.Reader) ([]Action, error) {
	var out []Action
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, &LineError{Line: line, Err: err}
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Line: line + 1, Err: err}
	}
	return out, nil
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
