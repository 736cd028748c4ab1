package deltalog

import (
	"fmt"
	"strconv"
	"strings"
)

// LogDir is the name of the log folder under a table's root.
const LogDir = "_delta_log/"

// FileType is the kind of a file in _delta_log/.
type FileType int

// The log file kinds of PROTOCOL.md.
const (
	Unknown             FileType = iota
	Commit                       // 00000000000000000042.json
	Checkpoint                   // 00000000000000000042.checkpoint.parquet
	MultiPartCheckpoint          // 00000000000000000042.checkpoint.0000000001.0000000003.parquet
	UUIDCheckpoint               // 00000000000000000042.checkpoint.<uuid>.parquet or .json (V2)
	CompactedCommit              // 00000000000000000040.00000000000000000042.compacted.json
	Checksum                     // 00000000000000000042.crc
	LastCheckpoint               // _last_checkpoint
)

var fileTypeNames = [...]string{"unknown", "commit", "checkpoint", "multi-part checkpoint", "uuid checkpoint", "compacted commit", "checksum", "last checkpoint"}

func (t FileType) String() string {
	if int(t) < len(fileTypeNames) {
		return fileTypeNames[t]
	}
	return "FileType(" + strconv.Itoa(int(t)) + ")"
}

// LogPath is a parsed log file name.
type LogPath struct {
	// Name is the file name inside _delta_log/.
	Name string
	Type FileType
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
	return p.Type == Checkpoint || p.Type == MultiPartCheckpoint || p.Type == UUIDCheckpoint
}

// ParseLogPath parses a file name of _delta_log/ (no folder). A name that
// is not a Delta log file (temp files, markers, sidecar folders) gives
// Type Unknown and ok false. It never panics.
func ParseLogPath(name string) (p LogPath, ok bool) {
	p.Name = name
	if name == "_last_checkpoint" {
		p.Type = LastCheckpoint
		return p, true
	}
	v, rest, ok := cutVersion(name)
	if !ok {
		return LogPath{Name: name}, false
	}
	p.Version = v
	switch {
	case rest == ".json":
		p.Type = Commit
	case rest == ".crc":
		p.Type = Checksum
	case rest == ".checkpoint.parquet":
		p.Type = Checkpoint
	case strings.HasPrefix(rest, ".checkpoint."):
		mid := strings.TrimPrefix(rest, ".checkpoint.")
		if part, num, ok := parseParts(mid); ok {
			p.Type, p.Part, p.NumParts = MultiPartCheckpoint, part, num
			break
		}
		id, ext, ok := cutExt(mid)
		if !ok || !isUUID(id) {
			return LogPath{Name: name}, false
		}
		p.Type, p.UUID, p.Ext = UUIDCheckpoint, id, ext
	case strings.HasPrefix(rest, ".") && strings.HasSuffix(rest, ".compacted.json"):
		end, tail, ok := cutVersion(rest[1:])
		if !ok || tail != ".compacted.json" || end < v {
			return LogPath{Name: name}, false
		}
		p.Type, p.EndVersion = CompactedCommit, end
	default:
		return LogPath{Name: name}, false
	}
	return p, true
}

// CommitName is the file name of the commit of version v.
func CommitName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// CheckpointName is the file name of the classic checkpoint of version v.
func CheckpointName(v int64) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }

// versionPrefix is the 20-digit prefix shared by every file of version v;
// listing strictly after it starts at that version's files.
func versionPrefix(v int64) string { return fmt.Sprintf("%020d", v) }

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
