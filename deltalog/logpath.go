package deltalog

import (
	"fmt"

	"github.com/lakelog/lakelog/actions"
)

// LogDir is the name of the log folder under a table's root.
const LogDir = "_delta_log/"

// The log file names are parsed and printed by actions (its one codec of
// them); these names keep deltalog's API.

// FileType is the kind of a file in _delta_log/.
type FileType = actions.LogFileType

// The log file kinds of PROTOCOL.md.
const (
	Unknown             = actions.LogUnknown
	Commit              = actions.LogCommit
	Checkpoint          = actions.LogCheckpoint
	MultiPartCheckpoint = actions.LogMultiPartCheckpoint
	UUIDCheckpoint      = actions.LogUUIDCheckpoint
	CompactedCommit     = actions.LogCompactedCommit
	Checksum            = actions.LogChecksum
	LastCheckpoint      = actions.LogLastCheckpoint
)

// LogPath is a parsed log file name.
type LogPath = actions.LogPath

// ParseLogPath parses a file name of _delta_log/ (actions.ParseLogPath).
func ParseLogPath(name string) (LogPath, bool) { return actions.ParseLogPath(name) }

// CommitName is the file name of the commit of version v.
func CommitName(v int64) string { return actions.CommitName(v) }

// CheckpointName is the file name of the classic checkpoint of version v.
func CheckpointName(v int64) string { return actions.CheckpointName(v) }

// versionPrefix is the 20-digit prefix shared by every file of version v;
// listing strictly after it starts at that version's files.
func versionPrefix(v int64) string { return fmt.Sprintf("%020d", v) }
