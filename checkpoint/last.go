package checkpoint

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// LastCheckpointName is the name of the last-checkpoint hint in the log
// folder.
const LastCheckpointName = "_last_checkpoint"

// LastCheckpoint is the content of _delta_log/_last_checkpoint (PROTOCOL.md
// "Last Checkpoint File Schema"): a hint naming a recent checkpoint, so
// that a reader need not list the whole log. Fields are in the order Spark
// writes them.
type LastCheckpoint struct {
	// Version is the table version of the checkpoint.
	Version int64 `json:"version"`
	// Size is the number of actions in the checkpoint.
	Size int64 `json:"size"`
	// Parts is the number of files of a multi-part checkpoint.
	Parts *int `json:"parts,omitempty"`
	// SizeInBytes is the total size of the checkpoint's files.
	SizeInBytes *int64 `json:"sizeInBytes,omitempty"`
	// NumOfAddFiles is the number of add actions in the checkpoint.
	NumOfAddFiles *int64 `json:"numOfAddFiles,omitempty"`
	// CheckpointSchema is the Delta schema (JSON) of the checkpoint file.
	CheckpointSchema json.RawMessage `json:"checkpointSchema,omitempty"`
	// Tags holds any additional metadata.
	Tags map[string]string `json:"tags,omitempty"`
	// V2Checkpoint describes a UUID-named V2 checkpoint, as Spark embeds it.
	V2Checkpoint *V2Checkpoint `json:"v2Checkpoint,omitempty"`
	// Checksum is the MD5 of the other fields, canonicalised as PROTOCOL.md
	// "JSON checksum" says. WriteLast sets it; ReadLast checks it.
	Checksum string `json:"checksum,omitempty"`
}

// V2Checkpoint is the v2Checkpoint field Spark writes in _last_checkpoint
// for a UUID-named checkpoint: its file and, optionally, its non-file
// actions and sidecars, so that a reader can skip reading the file.
type V2Checkpoint struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	NonFileActions   []actions.Action  `json:"nonFileActions,omitempty"`
	SidecarFiles     []actions.Sidecar `json:"sidecarFiles,omitempty"`
}

// ReadLast reads <logDir>/_last_checkpoint. A missing file gives (nil, nil):
// the log simply has no hint, and the caller lists the log. An empty,
// malformed or inconsistent file (invalid JSON, duplicate keys, no version,
// a checksum that does not match) gives an error wrapping ErrCorrupt, after
// which the caller should also list the log. Other errors are the store's.
//
// The older delta-rs spelling size_in_bytes is accepted for sizeInBytes.
func ReadLast(ctx context.Context, store objstore.Store, logDir string) (*LastCheckpoint, error) {
	key := joinKey(logDir, LastCheckpointName)
	b, err := store.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", key, err)
	}
	lc, err := ParseLast(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", key, err)
	}
	return lc, nil
}

// ParseLast decodes the content of a _last_checkpoint file, with the checks
// ReadLast describes. Its errors wrap ErrCorrupt.
func ParseLast(b []byte) (*LastCheckpoint, error) {
	bad := func(err error) error { return fmt.Errorf("%w: _last_checkpoint: %w", ErrCorrupt, err) }
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, bad(errors.New("empty file"))
	}
	sum, stored, err := checksumOf(b)
	if err != nil {
		return nil, bad(err)
	}
	var raw struct {
		LastCheckpoint
		Version      *int64 `json:"version"`
		SizeInBytes2 *int64 `json:"size_in_bytes"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, bad(err)
	}
	if raw.Version == nil {
		return nil, bad(errors.New("no version"))
	}
	if *raw.Version < 0 {
		return nil, bad(fmt.Errorf("negative version %d", *raw.Version))
	}
	if stored != nil && *stored != sum {
		return nil, bad(fmt.Errorf("checksum %s does not match content (%s)", *stored, sum))
	}
	lc := raw.LastCheckpoint
	lc.Version = *raw.Version
	if lc.SizeInBytes == nil {
		lc.SizeInBytes = raw.SizeInBytes2
	}
	return &lc, nil
}

// WriteLast writes lc as <logDir>/_last_checkpoint, replacing the previous
// hint, with a freshly computed checksum. The store's Put is atomic, so a
// reader sees the old hint or the new one.
func WriteLast(ctx context.Context, store objstore.Store, logDir string, lc LastCheckpoint) error {
	key := joinKey(logDir, LastCheckpointName)
	b, err := MarshalLast(lc)
	if err != nil {
		return fmt.Errorf("checkpoint: write %s: %w", key, err)
	}
	if err := store.Put(ctx, key, bytes.NewReader(b), objstore.PutOptions{Size: int64(len(b))}); err != nil {
		return fmt.Errorf("checkpoint: write %s: %w", key, err)
	}
	return nil
}

// MarshalLast encodes lc as _last_checkpoint content, with its checksum.
func MarshalLast(lc LastCheckpoint) ([]byte, error) {
	if lc.Version < 0 {
		return nil, fmt.Errorf("negative version %d", lc.Version)
	}
	lc.Checksum = ""
	b, err := marshalPlain(lc)
	if err != nil {
		return nil, err
	}
	sum, _, err := checksumOf(b)
	if err != nil {
		return nil, err
	}
	lc.Checksum = sum
	return marshalPlain(lc)
}

func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checksumOf computes the checksum of a _last_checkpoint JSON object as
// PROTOCOL.md "JSON checksum" defines it, and returns the stored checksum
// when the object has one. Spark sorts the "path=value" entries as whole
// strings (LastCheckpointInfo.treeNodeToChecksum); with every byte of a
// canonical entry in ASCII that is a byte sort, and it is what makes the
// checksums of Spark's files match, so this does the same. Duplicate keys
// are an error.
func checksumOf(b []byte) (sum string, stored *string, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return "", nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "", nil, errors.New("not a JSON object")
	}
	var entries []string
	var walk func(prefix string, tok json.Token) error
	walk = func(prefix string, tok json.Token) error {
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				seen := map[string]bool{}
				for dec.More() {
					kt, err := dec.Token()
					if err != nil {
						return err
					}
					k := kt.(string)
					if seen[k] {
						return fmt.Errorf("duplicate key %q", k)
					}
					seen[k] = true
					vt, err := dec.Token()
					if err != nil {
						return err
					}
					if prefix == "" && k == "checksum" {
						if s, ok := vt.(string); ok {
							stored = &s
						}
						if err := skip(dec, vt); err != nil {
							return err
						}
						continue
					}
					if err := walk(join(prefix, canonString(k)), vt); err != nil {
						return err
					}
				}
			case '[':
				for i := 0; dec.More(); i++ {
					vt, err := dec.Token()
					if err != nil {
						return err
					}
					if err := walk(join(prefix, strconv.Itoa(i)), vt); err != nil {
						return err
					}
				}
			default:
				return fmt.Errorf("unexpected %v", t)
			}
			_, err := dec.Token() // the closing delimiter
			return err
		case string:
			entries = append(entries, prefix+"="+canonString(t))
		case json.Number:
			entries = append(entries, prefix+"="+t.String())
		case bool:
			entries = append(entries, prefix+"="+strconv.FormatBool(t))
		case nil:
			entries = append(entries, prefix+"=null")
		}
		return nil
	}
	if err := walk("", tok); err != nil {
		return "", nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", nil, errors.New("trailing data after the JSON object")
	}
	slices.Sort(entries)
	h := md5.Sum([]byte(strings.Join(entries, ",")))
	return hex.EncodeToString(h[:]), stored, nil
}

// skip consumes the rest of a value whose first token was tok.
func skip(dec *json.Decoder, tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

func join(prefix, seg string) string {
	if prefix == "" {
		return seg
	}
	return prefix + "+" + seg
}

// canonString quotes s with every byte but a-z A-Z 0-9 - . _ ~ written as
// %XX in upper-case hex.
func canonString(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	b.WriteByte('"')
	return b.String()
}
