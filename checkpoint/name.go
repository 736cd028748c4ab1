package checkpoint

import (
	"fmt"
	"path"
	"strconv"
	"strings"
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

// parseName parses the base name of a checkpoint file. It accepts the three
// naming schemes of the protocol and nothing else.
func parseName(name string) (fileName, bool) {
	dot := strings.IndexByte(name, '.')
	if dot != 20 {
		return fileName{}, false
	}
	v, ok := parseDigits(name[:dot])
	if !ok {
		return fileName{}, false
	}
	rest, ok := strings.CutPrefix(name[dot:], ".checkpoint.")
	if !ok {
		return fileName{}, false
	}
	f := fileName{version: v}
	if rest == "parquet" {
		f.kind = kindClassic
		return f, true
	}
	switch {
	case strings.HasSuffix(rest, ".parquet"):
		rest = strings.TrimSuffix(rest, ".parquet")
	case strings.HasSuffix(rest, ".json"):
		rest = strings.TrimSuffix(rest, ".json")
		f.json = true
	default:
		return fileName{}, false
	}
	if i, n, ok := strings.Cut(rest, "."); ok && !f.json && len(i) == 10 && len(n) == 10 {
		part, ok1 := parseDigits(i)
		num, ok2 := parseDigits(n)
		if !ok1 || !ok2 || part < 1 || part > num || num > 1<<31-1 {
			return fileName{}, false
		}
		f.kind, f.part, f.numParts = kindMultiPart, int(part), int(num)
		return f, true
	}
	if !isUUID(rest) {
		return fileName{}, false
	}
	f.kind = kindUUID
	return f, true
}

func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// isUUID reports whether s has the 8-4-4-4-12 hex form of a UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
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
func ClassicName(v int64) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }

// MultiPartName is the file name of part (1-based) of numParts of the
// multi-part checkpoint of version v.
func MultiPartName(v int64, part, numParts int) string {
	return fmt.Sprintf("%020d.checkpoint.%010d.%010d.parquet", v, part, numParts)
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
	dec, err := unescapePath(rel)
	if err != nil {
		return "", fmt.Errorf("sidecar path %q: %w", p, err)
	}
	if dec == "" || strings.HasPrefix(dec, "/") || strings.Contains("/"+dec+"/", "/../") {
		return "", fmt.Errorf("sidecar path %q is outside _delta_log/_sidecars", p)
	}
	return dirOf(checkpointKey) + "_sidecars/" + dec, nil
}

// unescapePath decodes %XX escapes (and leaves '+' alone, as paths do).
func unescapePath(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad escape at %d", i)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape at %d", i)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}
