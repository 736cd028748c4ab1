package checkpoint

import (
	"fmt"
	"path"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Part is one checkpoint file to read: its store key and, when the caller
// knows it from a listing, its size in bytes (0 when unknown; Read then
// asks the store).
type Part struct {
	Key  string
	Size int64
}

// fileKind is the naming scheme of a checkpoint file (PROTOCOL.md
// "Checkpoint Naming Scheme").
type fileKind int

const (
	kindClassic   fileKind = iota // <v>.checkpoint.parquet
	kindMultiPart                 // <v>.checkpoint.<i>.<n>.parquet
	kindUUID                      // <v>.checkpoint.<uuid>.parquet or .json
)

// fileName is a parsed checkpoint file name.
type fileName struct {
	version        int64
	kind           fileKind
	part, numParts int  // multi-part only, 1-based
	json           bool // a UUID-named checkpoint in JSON
}

// parseName parses the base name of a checkpoint file (through
// actions.ParseLogPath, the one parser of log file names). It accepts the
// three naming schemes of the protocol and nothing else.
func parseName(name string) (fileName, bool) {
	p, ok := actions.ParseLogPath(name)
	if !ok {
		return fileName{}, false
	}
	switch p.Type {
	case actions.LogCheckpoint:
		return fileName{version: p.Version, kind: kindClassic}, true
	case actions.LogMultiPartCheckpoint:
		return fileName{version: p.Version, kind: kindMultiPart, part: p.Part, numParts: p.NumParts}, true
	case actions.LogUUIDCheckpoint:
		return fileName{version: p.Version, kind: kindUUID, json: p.Ext == "json"}, true
	}
	return fileName{}, false
}

// baseName is the last segment of a store key.
func baseName(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// dirOf is the folder of a store key, with a trailing slash, or "".
func dirOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return ""
}

// joinKey joins a folder key and a name with exactly one slash.
func joinKey(dir, name string) string {
	if dir == "" {
		return name
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// ClassicName is the file name of the classic checkpoint of version v.
func ClassicName(v int64) string { return actions.CheckpointName(v) }

// MultiPartName is the file name of part (1-based) of numParts of the
// multi-part checkpoint of version v.
func MultiPartName(v int64, part, numParts int) string {
	return actions.MultiPartCheckpointName(v, part, numParts)
}

// sidecarKey resolves the path of a sidecar action against the log folder
// of the checkpoint that names it. The protocol stores the file name
// (URI-encoded) relative to _delta_log/_sidecars/; an absolute URI is
// accepted when it points into a _sidecars folder, by its file name.
func sidecarKey(checkpointKey, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("sidecar with empty path")
	}
	rel := p
	if strings.Contains(p, "://") || strings.HasPrefix(p, "/") {
		dir, file := path.Split(p)
		if !strings.HasSuffix(dir, "/_sidecars/") || file == "" {
			return "", fmt.Errorf("sidecar path %q is outside _delta_log/_sidecars", p)
		}
		rel = file
	}
	dec, err := actions.UnescapePath(rel)
	if err != nil {
		return "", fmt.Errorf("sidecar path %q: %w", p, err)
	}
	if dec == "" || strings.HasPrefix(dec, "/") || strings.Contains("/"+dec+"/", "/../") {
		return "", fmt.Errorf("sidecar path %q is outside _delta_log/_sidecars", p)
	}
	return dirOf(checkpointKey) + "_sidecars/" + dec, nil
}
