package conflict

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConflict is wrapped by every conflict abort. A conflict is terminal for
// the transaction: retrying the same actions cannot succeed. The caller may
// re-read the table and run its operation again.
var ErrConflict = errors.New("conflict")

// The kinds of conflict, as Spark names them. Each wraps ErrConflict.
var (
	ErrProtocolChanged        = fmt.Errorf("%w: protocol changed", ErrConflict)
	ErrMetadataChanged        = fmt.Errorf("%w: metadata changed", ErrConflict)
	ErrConcurrentAppend       = fmt.Errorf("%w: concurrent append", ErrConflict)
	ErrConcurrentDeleteRead   = fmt.Errorf("%w: concurrent delete of a file read", ErrConflict)
	ErrConcurrentDeleteDelete = fmt.Errorf("%w: concurrent delete of a file deleted", ErrConflict)
	ErrConcurrentTransaction  = fmt.Errorf("%w: concurrent transaction", ErrConflict)
)

// Error is a conflict abort: the kind, the winning commit's version and what
// collided.
type Error struct {
	// Kind is one of the Err* sentinels above.
	Kind error
	// WinningVersion is the version of the commit that caused the abort.
	WinningVersion int64
	// Paths are the data files involved (removed or added by the winner).
	Paths []string
	// Partitions are the partitions involved, as "a=1/b=x", when known.
	Partitions []string
	// AppID is the application id of a ConcurrentTransaction.
	AppID string
	// Detail says more, for people.
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conflict: %s with version %d", strings.TrimPrefix(e.Kind.Error(), "conflict: "), e.WinningVersion)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.AppID != "" {
		fmt.Fprintf(&b, " (appId %q)", e.AppID)
	}
	if len(e.Partitions) > 0 {
		fmt.Fprintf(&b, " (partitions %s)", list(e.Partitions))
	}
	if len(e.Paths) > 0 {
		fmt.Fprintf(&b, " (files %s)", list(e.Paths))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrConcurrentAppend) and errors.Is(err,
// ErrConflict) hold.
func (e *Error) Unwrap() error { return e.Kind }

func list(s []string) string {
	const most = 5
	if len(s) <= most {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(s[:most], ", "), len(s)-most)
}
