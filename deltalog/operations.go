package deltalog

import (
	"fmt"
)

// Operation names what a caller is about to do with a table, for
// Snapshot.Supports.
type Operation string

// The operations lakelog does, or will do, on a table.
const (
	OpScan           Operation = "scan"
	OpChangeDataFeed Operation = "change data feed"
	OpAppend         Operation = "append"
	OpOverwrite      Operation = "overwrite"
	OpReplaceWhere   Operation = "replaceWhere"
	OpDelete         Operation = "delete"
	OpUpdate         Operation = "update"
	OpMerge          Operation = "merge"
	OpOptimize       Operation = "optimize"
	OpVacuum         Operation = "vacuum"
	OpRestore        Operation = "restore"
)

// opCommit is any commit (Transaction.Commit): the check of the
// protocol and metadata it leaves, whatever the operation.
const opCommit Operation = "commit"

// Supports reports whether lakelog can do op on this snapshot's table
// correctly: nil, or an error wrapping ErrUnsupportedFeature that names
// the operation and the feature (or property) in the way. It answers from
// the one record per table feature (features.go), and is asked once,
// before any work: writers ask before they upload a file, scans before
// they read one. A column-mapped table (Config().ColumnMappingMode() "name" or
// "id") is read and written (data files under physical names and field
// ids), and its change data feed read. A write to a table with an invalid value
// of a property lakelog knows (Properties().Invalid) is refused with
// ErrInvalidProperty naming the property.
func (s *Snapshot) Supports(op Operation) error {
	if err := s.supports(op); err != nil {
		return fmt.Errorf("deltalog: %s of %s: %w", op, s.display(), err)
	}
	return nil
}

func (s *Snapshot) supports(op Operation) error {
	if err := check(s.config, op); err != nil {
		return err
	}
	// A property whose value does not parse would be read as its default
	// (a feed not recorded, a retention not kept): Spark fails such writes
	// too. Checked last, so that ErrInvalidProperty means nothing else is
	// in the way (ALTER TABLE may then mend the property).
	if err := s.Properties().Err(); err != nil && writeOps.has(op) {
		return fmt.Errorf("%w: %w", ErrInvalidProperty, err)
	}
	return nil
}
