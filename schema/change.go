package schema

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// ErrRefused is wrapped by every *ChangeError: the change cannot be made
// to the table. Nothing was committed.
var ErrRefused = errors.New("schema change refused")

// ChangeError reports a schema change that cannot be made, and why.
type ChangeError struct {
	Op     string // Spark's operation name: "ADD COLUMNS", "RENAME COLUMN", ...
	Column string // the column (or constraint) concerned, when one is
	Reason string
}

func (e *ChangeError) Error() string {
	var b strings.Builder
	b.WriteString("schema: ")
	b.WriteString(e.Op)
	if e.Column != "" {
		fmt.Fprintf(&b, " %s", e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	b.WriteString("; nothing was committed")
	return b.String()
}

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *ChangeError) Unwrap() error { return ErrRefused }

func refuse(op, column, format string, args ...any) error {
	return &ChangeError{Op: op, Column: column, Reason: fmt.Sprintf(format, args...)}
}

// Option configures a schema change.
type Option func(*config)

type config struct {
	commit   []deltalog.CommitOption
	mem      memory.Allocator
	ifExists bool
}

// WithCommitOptions sets how the change commits (deltalog.CommitOption,
// the options every operation takes: operation parameters, user
// metadata, an app transaction, post-commit hooks, ...).
func WithCommitOptions(opts ...deltalog.CommitOption) Option {
	return func(c *config) { c.commit = append(c.commit, opts...) }
}

// WithAllocator sets the allocator of the scan with which AddConstraint
// checks the existing rows (default memory.DefaultAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// IfExists makes DropConstraint of a constraint the table does not have
// a commit anyway (Spark's DROP CONSTRAINT IF EXISTS), instead of an
// error.
func IfExists() Option { return func(c *config) { c.ifExists = true } }

func newConfig(opts []Option) *config {
	c := &config{mem: memory.DefaultAllocator}
	for _, o := range opts {
		o(c)
	}
	return c
}

// change is a schema change being built on a copy of the table's
// metadata, and the transaction that will commit it.
type change struct {
	snap   *deltalog.Snapshot
	tx     *deltalog.Transaction
	op     string
	schema *actions.StructType // a deep copy, changed in place
	md     actions.Metadata    // a copy; Configuration and PartitionColumns are copies too
	props  *actions.TableProperties
	params map[string]any
	// applied is the result when the table already holds the change's app
	// transaction: nothing is to be done.
	applied *deltalog.CommitResult
}

// begin checks that the table can take a metadata change and copies its
// metadata.
func begin(snap *deltalog.Snapshot, op string, cfg *config) (*change, error) {
	// A schema change removes no rows: allowed where an append is.
	if err := snap.Supports(deltalog.OpAppend); err != nil {
		return nil, fmt.Errorf("schema: %s: %w", op, err)
	}
	c := &change{snap: snap, tx: snap.NewTransaction(cfg.commit...), op: op, schema: actions.CopyStruct(snap.Schema()), md: *snap.Metadata(), props: snap.Properties(), params: map[string]any{}}
	c.md.Configuration = maps.Clone(c.md.Configuration)
	if c.md.Configuration == nil {
		c.md.Configuration = map[string]string{}
	}
	c.md.PartitionColumns = append([]string{}, c.md.PartitionColumns...)
	if res, err := c.tx.Start(); err != nil {
		return nil, fmt.Errorf("schema: %s: %w", op, err)
	} else if res != nil {
		c.applied = res
	}
	return c, nil
}

func (c *change) refuse(column, format string, args ...any) error {
	return refuse(c.op, column, format, args...)
}

// mapped reports whether the table is column-mapped.
func (c *change) mapped() bool { return c.snap.Config().ColumnMapped() }

// needMapping refuses an operation that needs column mapping on a table
// without it, naming the property to set.
func (c *change) needMapping(column string) error {
	if c.mapped() {
		return nil
	}
	return c.refuse(column, "%s needs column mapping, which the table does not use: data files name their columns, so only a mapped table can %s a column without rewriting them; enable it with %s=name (maintenance.SetProperties), as Spark requires",
		c.op, strings.ToLower(strings.Fields(c.op)[0]), actions.PropColumnMappingMode)
}

// commit commits the changed metadata; the protocol follows it by
// deltalog's one rule (Transaction.SetMetadata).
func (c *change) commit(ctx context.Context) (*deltalog.CommitResult, error) {
	text, err := actions.SchemaString(c.schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", c.op, err)
	}
	c.md.SchemaString = text
	tx := c.tx
	if err := tx.Stage(&deltalog.Changes{Operation: c.op, Parameters: c.params, Metadata: &c.md}); err != nil {
		return nil, fmt.Errorf("schema: %s: %w; nothing was committed", c.op, err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", c.op, err)
	}
	return res, nil
}
