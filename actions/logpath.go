package actions

import (
	"fmt"
	"strconv"
	"strings"
)

// LogFileType is the kind of a file in _delta_log/.
type LogFileType int

// The log file kinds of PROTOCOL.md.
const (
	LogUnknown             LogFileType = iota
	LogCommit                          // 00000000000000000042.json
	LogCheckpoint                      // 00000000000000000042.checkpoint.parquet
	LogMultiPartCheckpoint             // 00000000000000000042.checkpoint.0000000001.0000000003.parquet
	LogUUIDCheckpoint                  // 00000000000000000042.checkpoint.<uuid>.parquet or .json (V2)
	LogCompactedCommit                 // 00000000000000000040.00000000000000000042.compacted.json
	LogChecksum                        // 00000000000000000042.crc
	LogLastCheckpoint                  // _last_checkpoint
)

var fileTypeNames = [...]string{"unknown", "commit", "checkpoint", "multi-part checkpoint", "uuid checkpoint", "compacted commit", "checksum", "last checkpoint"}

func (t LogFileType) String() string {
	if int(t) < len(fileTypeNames) {
		return fileTypeNames[t]
	}
	return "LogFileType(" + strconv.Itoa(int(t)) + ")"
}

// LogPath is a parsed log file name.
type LogPath struct {
	// Name is the file name inside _delta_log/.
	Name string
	Type LogFileType
	// Version is the commit or checkpoint version; for a compacted commit,
	// the first version it covers.
	Version int64
	// EndVersion is the last version a compacted commit covers.
	EndVersion int64
	// Part and NumParts number a multi-part checkpoint's files (1-based).
	Part, NumParts int
	// UUID and Ext describe a uuid (V2) checkpoint: Ext is "parquet" or "json".
	UUID, Ext string
}

// IsCheckpoint reports whether p is any kind of checkpoint file.
func (p LogPath) IsCheckpoint() bool {
	return p.Type == LogCheckpoint || p.Type == LogMultiPartCheckpoint || p.Type == LogUUIDCheckpoint
}

// ParseLogPath parses a file name of _delta_log/ (no folder). A name that
// is not a Delta log file (temp files, markers, sidecar folders) gives
// Type LogUnknown and ok false. It never panics.
func ParseLogPath(name string) (p LogPath, ok bool) {
	p.Name = name
	if name == "_last_checkpoint" {
		p.Type = LogLastCheckpoint
		return p, true
	}
	v, rest, ok := cutVersion(name)
	if !ok {
		return LogPath{Name: name}, false
	}
	p.Version = v
	switch {
	case rest == ".json":
		p.Type = LogCommit
	case rest == ".crc":
		p.Type = LogChecksum
	case rest == ".checkpoint.parquet":
		p.Type = LogCheckpoint
	case strings.HasPrefix(rest, ".checkpoint."):
		mid := strings.TrimPrefix(rest, ".checkpoint.")
		if part, num, ok := parseParts(mid); ok {
			p.Type, p.Part, p.NumParts = LogMultiPartCheckpoint, part, num
			break
		}
		id, ext, ok := cutExt(mid)
		if !ok || !isUUID(id) {
			return LogPath{Name: name}, false
		}
		p.Type, p.UUID, p.Ext = LogUUIDCheckpoint, id, ext
	case strings.HasPrefix(rest, ".") && strings.HasSuffix(rest, ".compacted.json"):
		end, tail, ok := cutVersion(rest[1:])
		if !ok || tail != ".compacted.json" || end < v {
			return LogPath{Name: name}, false
		}
		p.Type, p.EndVersion = LogCompactedCommit, end
	default:
		return LogPath{Name: name}, false
	}
	return p, true
}

// CommitName is the file name of the commit of version v.
func CommitName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// CheckpointName is the file name of the classic checkpoint of version v.
func CheckpointName(v int64) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }

// MultiPartCheckpointName is the file name of part (1-based) of numParts
// of the multi-part checkpoint of version v.
func MultiPartCheckpointName(v int64, part, numParts int) string {
	return fmt.Sprintf("%020d.checkpoint.%010d.%010d.parquet", v, part, numParts)
}

// cutVersion splits a leading 20-digit version off s.
func cutVersion(s string) (int64, string, bool) {
	const digits = 20
	if len(s) < digits {
		return 0, "", false
	}
	for i := 0; i < digits; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, "", false
		}
	}
	v, err := strconv.ParseInt(s[:digits], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return v, s[digits:], true
}

// parseParts parses "0000000001.0000000003.parquet".
func parseParts(s string) (part, num int, ok bool) {
	a, rest, ok1 := strings.Cut(s, ".")
	b, ext, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || ext != "parquet" || len(a) != 10 || len(b) != 10 {
		return 0, 0, false
	}
	pa, err1 := strconv.Atoi(a)
	nb, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || pa < 1 || nb < 1 || pa > nb {
		return 0, 0, false
	}
	return pa, nb, true
}

func cutExt(s string) (string, string, bool) {
	for _, ext := range []string{"parquet", "json"} {
		if id, ok := strings.CutSuffix(s, "."+ext); ok {
			return id, ext, true
		}
	}
	return "", "", false
}

// isUUID checks the 8-4-4-4-12 hex form.
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
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
