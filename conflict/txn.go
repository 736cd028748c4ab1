package conflict

import (
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// Isolation is a transaction's isolation level.
type Isolation string

// The isolation levels of Delta. WriteSerializable is the default.
const (
	Serializable      Isolation = "Serializable"
	WriteSerializable Isolation = "WriteSerializable"
	SnapshotIsolation Isolation = "SnapshotIsolation"
)

// Txn is what the checker needs to know of a transaction that lost the race
// for a version: what it read and what it writes.
type Txn struct {
	// ReadVersion is the snapshot version the transaction read (-1 when it
	// creates the table).
	ReadVersion int64
	// Isolation is the table's level (delta.isolationLevel); empty means
	// WriteSerializable. Check lowers it to SnapshotIsolation, as Spark
	// does, for a transaction whose actions are all file actions with
	// dataChange=false (OPTIMIZE and other rearrangements).
	Isolation Isolation
	// ReadPredicates are the bound predicates the transaction read the
	// table with (Bind against the read snapshot's schema). A file added
	// by a winner conflicts when one of them may match it, judged by its
	// partition values and min/max stats. No predicates, no ReadFiles and
	// ReadWholeTable false mean the transaction read nothing. No
	// predicates but some ReadFiles mean it read under a predicate the
	// checker does not know, so every added file may match.
	ReadPredicates []expr.Expr
	// ReadFiles are the canonical paths of the files the transaction read
	// (and may rewrite), as actions.CanonicalPath spells them.
	ReadFiles []string
	// ReadWholeTable is set when the transaction depends on every file of
	// the table (an unfiltered scan or overwrite).
	ReadWholeTable bool
	// ReadAppIDs are the application ids whose txn version it read.
	ReadAppIDs []string
	// ReadProtocol is the protocol of the snapshot the transaction read.
	// A winner that changes the protocol without adding or dropping a
	// table feature is harmless; to know that, the checker compares with
	// ReadProtocol. When it is nil every protocol change aborts.
	ReadProtocol *actions.Protocol
	// Actions are the transaction's own actions, without commitInfo,
	// including its protocol and metaData actions when it changes them.
	Actions []actions.Action
	// IsBlindAppend is set when it only adds files and read nothing. The
	// checker does not need it (a transaction that read nothing cannot
	// miss a concurrent add); it is kept for CheckCreate-style rules.
	IsBlindAppend bool
}

// Winner is one commit that took a version the transaction wanted.
type Winner struct {
	Version int64
	Actions []actions.Action
}

// WinnerIsBlindAppend reports whether the winning commit declared itself a
// blind append in its commitInfo.
func (w *Winner) WinnerIsBlindAppend() bool {
	for _, a := range w.Actions {
		if a.CommitInfo != nil && a.CommitInfo.IsBlindAppend != nil {
			return *a.CommitInfo.IsBlindAppend
		}
	}
	return false
}
