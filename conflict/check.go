package conflict

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// Check decides whether tx, which read the table at tx.ReadVersion, may be
// committed after the winning commits, given in version order: nil means
// rebasing onto them is safe; otherwise the result is a *Error for the
// first winner that conflicts, and the transaction must not be committed.
// table describes the table as tx read it (see TableOf).
//
// The rules are Spark's ConflictChecker, applied to each winner in turn:
//
//  1. ProtocolChanged: the winner changed the protocol and tx changes it
//     too, or the winner added or dropped a table feature.
//  2. MetadataChanged: the winner changed the metadata.
//  3. ConcurrentTransaction: the winner wrote a txn for an appId tx read,
//     or a domainMetadata for a domain tx also writes.
//  4. ConcurrentAppend: the winner added a file that tx's read may match,
//     by partition values and min/max stats (ReadWholeTable matches all).
//     Which adds count depends on the isolation level: Serializable counts
//     all; WriteSerializable counts only those of winners that are not
//     blind appends, unless tx changes the metadata; SnapshotIsolation
//     counts none. A transaction whose actions are all file actions with
//     dataChange=false (OPTIMIZE) is checked at SnapshotIsolation.
//  5. ConcurrentDeleteRead: the winner removed a file tx read, or any file
//     when tx read the whole table.
//  6. ConcurrentDeleteDelete: the winner removed a file tx removes.
//
// A blind append reads nothing, so it never conflicts with concurrent
// appends, deletes, updates or merges. Check does no I/O and does not
// modify its arguments; it is safe for concurrent use.
func Check(tx *Txn, table *actions.TableConfig, winners ...Winner) error {
	if tx == nil {
		return errors.New("conflict: check: no transaction")
	}
	c := newChecker(tx, table)
	for i := range winners {
		if err := c.check(&winners[i]); err != nil {
			return err
		}
	}
	return nil
}

// NewChecker returns Check for one table, in the shape the commit loop
// calls it: once per winning commit, in version order, with the same
// transaction. It matches deltalog.Checker:
//
//	tx := snap.NewTransaction(deltalog.WithChecker(conflict.NewChecker(snap.Config())))
func NewChecker(table *actions.TableConfig) func(tx *Txn, w *Winner) error {
	return func(tx *Txn, w *Winner) error {
		if w == nil {
			return nil
		}
		return Check(tx, table, *w)
	}
}

// checker holds what Check derives from the transaction once and uses for
// every winner.
type checker struct {
	tx              *Txn
	table           *actions.TableConfig
	isolation       Isolation
	metadataChanged bool
	protocolChanged bool
	// readAll: every added file may match the transaction's read.
	readAll  bool
	readWide string // why readAll, for Detail
	pruners  []pruner
	readSet  map[string]bool
	removes  map[string]*actions.Remove // canonical path -> our remove
	domains  map[string]bool
	appIDs   map[string]bool
}

// pruner is one read predicate, ready to test files. p is nil when the
// predicate could not be turned into a pruner; it then matches every file.
type pruner struct {
	e   expr.Expr
	p   *expr.Pruner
	err error
}

func newChecker(tx *Txn, table *actions.TableConfig) *checker {
	c := &checker{
		tx:      tx,
		table:   table,
		readSet: make(map[string]bool, len(tx.ReadFiles)),
		removes: map[string]*actions.Remove{},
		domains: map[string]bool{},
		appIDs:  make(map[string]bool, len(tx.ReadAppIDs)),
	}
	for _, p := range tx.ReadFiles {
		c.readSet[p] = true
	}
	for _, id := range tx.ReadAppIDs {
		c.appIDs[id] = true
	}
	for _, a := range tx.Actions {
		switch {
		case a.Metadata != nil:
			c.metadataChanged = true
		case a.Protocol != nil:
			c.protocolChanged = true
		case a.Remove != nil:
			c.removes[actions.CanonicalPath(a.Remove.Path)] = a.Remove
		case a.DomainMetadata != nil:
			c.domains[a.DomainMetadata.Domain] = true
		}
	}
	c.isolation = isolationFor(tx)
	switch {
	case tx.ReadWholeTable:
		c.readAll, c.readWide = true, "the whole table"
	case len(tx.ReadPredicates) == 0 && len(tx.ReadFiles) > 0:
		// Files were read under a predicate we were not told: any new
		// file might have been read too.
		c.readAll, c.readWide = true, "files under an unknown predicate"
	}
	if !c.readAll {
		for _, e := range tx.ReadPredicates {
			if e == nil {
				continue
			}
			if table == nil {
				c.pruners = append(c.pruners, pruner{e: e, err: errors.New("the table's schema is not known")})
				continue
			}
			p, err := expr.NewPruner(e, table)
			c.pruners = append(c.pruners, pruner{e: e, p: p, err: err})
		}
	}
	return c
}

// isolationFor is the level the transaction is checked at: the table's,
// lowered to SnapshotIsolation, as Spark's canDowngradeToSnapshotIsolation
// does, when the transaction changes no data: its actions are all file
// actions with dataChange=false (or the row tracking high-water mark).
// Spark also requires, at WriteSerializable, that the operation is not
// one that changes data; an operation we cannot name, we take to change
// data when it wrote nothing at all.
func isolationFor(tx *Txn) Isolation {
	iso := tx.Isolation
	if iso == "" {
		iso = WriteSerializable
	}
	if iso == SnapshotIsolation {
		return iso
	}
	files := 0
	for _, a := range tx.Actions {
		switch {
		case a.Add != nil:
			if a.Add.DataChange {
				return iso
			}
			files++
		case a.Remove != nil:
			if a.Remove.DataChange {
				return iso
			}
			files++
		case a.CDC != nil:
			if a.CDC.DataChange {
				return iso
			}
			files++
		case a.DomainMetadata != nil && a.DomainMetadata.Domain == rowTrackingDomain:
		case a.CommitInfo != nil:
		default:
			return iso
		}
	}
	if files == 0 && iso != Serializable {
		return iso
	}
	return SnapshotIsolation
}

// rowTrackingDomain is the domain of the row ID high-water mark.
const rowTrackingDomain = "delta.rowTracking"

// check runs the rules against one winner, in Spark's order.
func (c *checker) check(w *Winner) error {
	for _, rule := range []func(*Winner) *Error{
		c.protocol,
		c.metadata,
		c.domainMetadata,
		c.appTransactions,
		c.addedFiles,
		c.deletedReadFiles,
		c.deletedDeletedFiles,
	} {
		if e := rule(w); e != nil {
			e.WinningVersion = w.Version
			return e
		}
	}
	return nil
}

// protocol: Spark's checkProtocolCompatibility. A winner's protocol
// change is harmless when the transaction does not change the protocol
// itself and the new protocol supports exactly the features the read one
// did. Spark also lets through added features that it knows need nothing
// of concurrent writers (failConcurrentTransactionsAtUpgrade=false); we
// abort on any added feature, since we cannot know what a future feature
// asks of writers.
func (c *checker) protocol(w *Winner) *Error {
	var wp *actions.Protocol
	for _, a := range w.Actions {
		if a.Protocol != nil {
			wp = a.Protocol
			break
		}
	}
	if wp == nil {
		return c.ownDowngrade(w)
	}
	by := winnerName(w)
	switch {
	case c.protocolChanged:
		return &Error{Kind: ErrProtocolChanged, Detail: fmt.Sprintf("%s changed the protocol and this transaction changes it too", by)}
	case c.tx.ReadProtocol == nil:
		return &Error{Kind: ErrProtocolChanged, Detail: fmt.Sprintf("%s changed the protocol (the protocol this transaction read is not known)", by)}
	}
	added, dropped := featureDiff(c.tx.ReadProtocol, wp)
	switch {
	case len(dropped) > 0:
		return &Error{Kind: ErrProtocolChanged, Detail: fmt.Sprintf("%s dropped table features %s", by, strings.Join(dropped, ", "))}
	case len(added) > 0:
		return &Error{Kind: ErrProtocolChanged, Detail: fmt.Sprintf("%s added table features %s", by, strings.Join(added, ", "))}
	}
	return nil
}

// ownDowngrade: a transaction that drops table features must have the
// removal revalidated against every winner (Spark re-runs the feature's
// validation on the winner's snapshot). A pure checker cannot, so such a
// transaction aborts when anything committed first.
func (c *checker) ownDowngrade(w *Winner) *Error {
	if !c.protocolChanged || c.tx.ReadProtocol == nil {
		return nil
	}
	for _, a := range c.tx.Actions {
		if a.Protocol == nil {
			continue
		}
		if _, dropped := featureDiff(c.tx.ReadProtocol, a.Protocol); len(dropped) > 0 {
			return &Error{Kind: ErrProtocolChanged, Detail: fmt.Sprintf("this transaction drops table features %s and cannot revalidate that against %s", strings.Join(dropped, ", "), winnerName(w))}
		}
	}
	return nil
}

// metadata: Spark's checkNoMetadataUpdates. Any metadata change by the
// winner aborts, except one whose only change is identity high-water
// marks (commitInfo tag delta.identity.schemaUpdate) when tx changes no
// metadata: tx then commits under the winner's metadata, as Spark's.
// (Spark also tolerates a winner that only enabled row tracking, column
// mapping or deletion vectors; lakelog aborts.)
func (c *checker) metadata(w *Winner) *Error {
	identityOnly := false
	for _, a := range w.Actions {
		if a.CommitInfo != nil && a.CommitInfo.Tags[actions.TagIdentitySchemaUpdate] == "true" {
			identityOnly = true
		}
	}
	if identityOnly && !c.metadataChanged {
		return nil
	}
	for _, a := range w.Actions {
		if a.Metadata != nil {
			return &Error{Kind: ErrMetadataChanged, Detail: fmt.Sprintf("%s changed the table's metadata", winnerName(w))}
		}
	}
	return nil
}

// domainMetadata: Spark's checkIfDomainMetadataConflict. Two commits that
// write the same metadata domain conflict. Spark resolves the row
// tracking domain by reassigning row IDs; deltalog's commit loop does the
// same (it writes delta.rowTracking afresh on every attempt and never
// hands it to the checker), so a transaction that does give the checker
// that domain still conflicts on it.
func (c *checker) domainMetadata(w *Winner) *Error {
	if len(c.domains) == 0 {
		return nil
	}
	for _, a := range w.Actions {
		if d := a.DomainMetadata; d != nil && c.domains[d.Domain] {
			return &Error{Kind: ErrConcurrentTransaction, Detail: fmt.Sprintf("%s wrote metadata domain %q, which this transaction also writes", winnerName(w), d.Domain)}
		}
	}
	return nil
}

// appTransactions: Spark's
// checkForUpdatedApplicationTransactionIdsThatCurrentTxnDependsOn.
func (c *checker) appTransactions(w *Winner) *Error {
	if len(c.appIDs) == 0 {
		return nil
	}
	for _, a := range w.Actions {
		if t := a.Txn; t != nil && c.appIDs[t.AppID] {
			return &Error{Kind: ErrConcurrentTransaction, AppID: t.AppID, Detail: fmt.Sprintf("%s wrote txn version %d for an application this transaction read", winnerName(w), t.Version)}
		}
	}
	return nil
}

// addedFiles: Spark's checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn.
// Spark matches only the partition-column part of the read predicates,
// against partition values; an unpartitioned table therefore conflicts on
// any counted add. We match the whole predicate against partition values
// and min/max stats as well: a file whose stats show it holds no row the
// transaction could have read cannot change what it read.
func (c *checker) addedFiles(w *Winner) *Error {
	if !c.readAll && len(c.pruners) == 0 {
		return nil // read nothing: a blind append
	}
	var counted []*actions.Add
	switch c.isolation {
	case SnapshotIsolation:
		return nil
	case WriteSerializable:
		if !c.metadataChanged && w.WinnerIsBlindAppend() {
			return nil
		}
	}
	for _, a := range w.Actions {
		if a.Add != nil {
			counted = append(counted, a.Add)
		}
	}
	var (
		paths, parts []string
		seen         = map[string]bool{}
		why          string
	)
	for _, add := range counted {
		reason, ok := c.mayHaveRead(add)
		if !ok {
			continue
		}
		if why == "" {
			why = reason
		}
		paths = append(paths, actions.CanonicalPath(add.Path))
		if p := partitionOf(c.table, add.PartitionValues); p != "" && !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return &Error{
		Kind:       ErrConcurrentAppend,
		Paths:      paths,
		Partitions: parts,
		Detail:     fmt.Sprintf("%s added files that this transaction would have read at %s isolation: it read %s", winnerName(w), c.isolation, why),
	}
}

// mayHaveRead reports whether the transaction's read may have included
// the added file, and how it read.
func (c *checker) mayHaveRead(add *actions.Add) (string, bool) {
	if c.readAll {
		return c.readWide, true
	}
	var stats *actions.Stats
	statsParsed := false
	for _, p := range c.pruners {
		if p.p == nil {
			return fmt.Sprintf("where %s, which cannot be tested on files: %v", p.e, p.err), true
		}
		if !statsParsed {
			statsParsed = true
			if s, err := actions.ParseStats(add.Stats); err == nil {
				stats = s
			}
		}
		if p.p.MayMatch(add.PartitionValues, stats) {
			return "where " + p.e.String(), true
		}
	}
	return "", false
}

// deletedReadFiles: Spark's checkForDeletedFilesAgainstCurrentTxnReadFiles.
// Every remove counts, also dataChange=false ones: a file OPTIMIZE
// rewrote was still read by the transaction.
func (c *checker) deletedReadFiles(w *Winner) *Error {
	var paths, parts []string
	seen := map[string]bool{}
	for _, a := range w.Actions {
		r := a.Remove
		if r == nil {
			continue
		}
		p := actions.CanonicalPath(r.Path)
		if !c.readSet[p] && !c.tx.ReadWholeTable {
			continue
		}
		paths = append(paths, p)
		if part := partitionOf(c.table, r.PartitionValues); part != "" && !seen[part] {
			seen[part] = true
			parts = append(parts, part)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	what := "files this transaction read"
	if c.tx.ReadWholeTable {
		what = "files of the table, which this transaction read whole"
	}
	return &Error{Kind: ErrConcurrentDeleteRead, Paths: paths, Partitions: parts, Detail: fmt.Sprintf("%s removed %s", winnerName(w), what)}
}

// deletedDeletedFiles: Spark's checkForDeletedFilesAgainstCurrentTxnDeletedFiles.
func (c *checker) deletedDeletedFiles(w *Winner) *Error {
	if len(c.removes) == 0 {
		return nil
	}
	var paths, parts []string
	seen := map[string]bool{}
	for _, a := range w.Actions {
		if a.Remove == nil {
			continue
		}
		p := actions.CanonicalPath(a.Remove.Path)
		ours, ok := c.removes[p]
		if !ok {
			continue
		}
		paths = append(paths, p)
		// Spark names the partition from our remove; fall back to theirs.
		pv := ours.PartitionValues
		if len(pv) == 0 {
			pv = a.Remove.PartitionValues
		}
		if part := partitionOf(c.table, pv); part != "" && !seen[part] {
			seen[part] = true
			parts = append(parts, part)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return &Error{Kind: ErrConcurrentDeleteDelete, Paths: paths, Partitions: parts, Detail: fmt.Sprintf("%s removed files this transaction also removes", winnerName(w))}
}

// winnerName names the winning commit for people: "the winning commit
// (DELETE)" when its commitInfo names the operation.
func winnerName(w *Winner) string {
	for _, a := range w.Actions {
		if a.CommitInfo != nil && a.CommitInfo.Operation != "" {
			return fmt.Sprintf("the winning commit (%s)", a.CommitInfo.Operation)
		}
	}
	return "the winning commit"
}

// CheckCreate is the rebase rule for a transaction that creates a table
// (there is no table to check against yet): a loser rebases only when it is
// a blind append and the winner changed neither protocol nor metadata;
// otherwise it aborts. Transactions on a snapshot use NewChecker
// with Spark's rules.
func CheckCreate(tx *Txn, w *Winner) error {
	for _, a := range w.Actions {
		switch {
		case a.Protocol != nil:
			return &Error{Kind: ErrProtocolChanged, WinningVersion: w.Version}
		case a.Metadata != nil:
			return &Error{Kind: ErrMetadataChanged, WinningVersion: w.Version}
		}
	}
	for _, a := range tx.Actions {
		if a.Protocol != nil || a.Metadata != nil {
			return &Error{Kind: ErrMetadataChanged, WinningVersion: w.Version, Detail: "this transaction changes metadata and another commit landed first"}
		}
	}
	if tx.IsBlindAppend {
		return nil
	}
	var paths []string
	for _, a := range w.Actions {
		if a.Add != nil {
			paths = append(paths, a.Add.Path)
		}
	}
	return &Error{Kind: ErrConcurrentAppend, WinningVersion: w.Version, Paths: paths, Detail: "only blind appends rebase without the conflict checker"}
}
