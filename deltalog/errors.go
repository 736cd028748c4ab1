package deltalog

import "errors"

// Sentinel errors. All are terminal for the call that returns them.
var (
	// ErrNotTable: the location has no Delta log.
	ErrNotTable = errors.New("not a Delta table")
	// ErrVersionNotFound: the requested version or timestamp is outside the
	// versions the log can reconstruct.
	ErrVersionNotFound = errors.New("version not found")
	// ErrLogCorrupt: the log breaks the protocol (a gap in the versions, an
	// undecodable line, a first commit without protocol or metadata).
	ErrLogCorrupt = errors.New("corrupt Delta log")
	// ErrUnsupportedFeature: the table needs a reader or writer feature (or
	// protocol version) that lakelog does not implement.
	ErrUnsupportedFeature = errors.New("unsupported table feature")
	// ErrInvalidProperty: a table property lakelog knows has a value
	// that does not parse (delta.enableChangeDataFeed = "yes"); the error
	// also wraps the *actions.PropertyError naming it. Writes refuse such
	// a table, as Spark does.
	ErrInvalidProperty = errors.New("invalid table property")
	// ErrCommitUnknown: the store failed in a way that leaves it unknown
	// whether the commit landed (every retry of the create failed without an
	// answer). The error is a *CommitUnknownError: re-open the table and
	// look for its TxnID (FindCommit) before writing again. This is the only
	// error after which the outcome is not known. A store that refuses the
	// create outright (objstore.ErrRefused: a missing bucket, wrong or no
	// credentials) gives that error instead: nothing was committed.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrNoSnapshot: an operation was given a nil *Snapshot (open the
	// table with Open first).
	ErrNoSnapshot = errors.New("no snapshot: the *deltalog.Snapshot is nil (open the table with deltalog.Open)")
	// ErrNoStore: an operation was given a nil objstore.Store.
	ErrNoStore = errors.New("no store: the objstore.Store is nil")
)

// CommitUnknownError is returned with ErrCommitUnknown: the version the
// commit was being created at and the txnId its commitInfo carries.
type CommitUnknownError struct {
	Version int64
	TxnID   string
	Err     error
}

func (e *CommitUnknownError) Error() string { return e.Err.Error() }
func (e *CommitUnknownError) Unwrap() error { return e.Err }
