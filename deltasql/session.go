package deltasql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/objstore"
)

// Session runs statements: each through the same library call as the
// lakelog verb that does the same (dml.Merge for MERGE and `lakelog
// merge`, maintenance.Vacuum for VACUUM and `lakelog vacuum`, ...). It
// holds the stores it opened until Close.
type Session struct {
	catalog *Catalog
	dmlOpts []dml.Option
	// retentionCheck is Spark's
	// spark.databricks.delta.retentionDurationCheck.enabled: VACUUM under
	// the table's retention is refused while it is on.
	retentionCheck bool
	// autoMerge is spark.databricks.delta.schema.autoMerge.enabled:
	// MERGE evolves the schema as WITH SCHEMA EVOLUTION does.
	autoMerge bool
	// timeZone is spark.sql.session.timeZone ("" is UTC).
	timeZone string
	progress Progress
	stores   []objstore.Store
}

// Progress receives the progress of long statements (files done of
// total), for a progress line; nil reports nothing.
type Progress func(what string, done, total int)

// Option configures a Session.
type Option func(*Session)

// WithCatalog lets statements name tables of c.
func WithCatalog(c *Catalog) Option { return func(s *Session) { s.catalog = c } }

// WithDMLOptions passes options to DELETE, UPDATE and MERGE (for example
// dml.WithoutDeletionVectors).
func WithDMLOptions(opts ...dml.Option) Option {
	return func(s *Session) { s.dmlOpts = append(s.dmlOpts, opts...) }
}

// WithProgress reports the progress of DELETE, UPDATE and MERGE (rows read, then rows rewritten), OPTIMIZE (rows rewritten) and VACUUM (files deleted) to fn.
func WithProgress(fn Progress) Option { return func(s *Session) { s.progress = fn } }

// New returns a session.
func New(opts ...Option) *Session {
	s := &Session{retentionCheck: true}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Close closes the stores the session opened.
func (s *Session) Close() error {
	var errs []error
	for _, st := range s.stores {
		errs = append(errs, objstore.Close(st))
	}
	s.stores = nil
	return errors.Join(errs...)
}

// Run runs one statement. An error about a place in the statement (a
// table or column that does not exist, a value that does not fit) is an
// *Error pointing there, wrapping the library's error.
func (s *Session) Run(ctx context.Context, st *Statement) (*Result, error) {
	r := &Result{Kind: st.Kind}
	x := &run{s: s, st: st, r: r}
	var err error
	if s.timeZone != "" && s.timeZone != "UTC" {
		if err := inTimeZone(st.node, s.timeZone); err != nil {
			return nil, x.errorf(st.Pos, "%v", err)
		}
	}
	switch n := st.node.(type) {
	case *createTable:
		err = x.createTable(ctx, n)
	case *insert:
		err = x.insert(ctx, n)
	case *deleteStmt:
		err = x.delete(ctx, n)
	case *update:
		err = x.update(ctx, n)
	case *merge:
		err = x.merge(ctx, n)
	case *query:
		err = x.selectRows(ctx, n)
	case *describe:
		err = x.describe(ctx, n)
	case *restore:
		err = x.restore(ctx, n)
	case *vacuum:
		err = x.vacuum(ctx, n)
	case *optimize:
		err = x.optimize(ctx, n)
	case *alterProperties:
		err = x.alter(ctx, n)
	case *alterColumns:
		err = x.alterColumns(ctx, n)
	case *setConf:
		err = x.setConf(n)
	case *convertStmt:
		err = x.convert(ctx, n)
	case *show:
		err = x.show(ctx, n)
	case *generate:
		err = x.generate(ctx, n)
	default:
		err = fmt.Errorf("deltasql: no runner for %T", n)
	}
	if err != nil {
		return nil, err
	}
	switch n := st.node.(type) {
	case *createTable, *insert, *deleteStmt, *update, *merge, *restore, *optimize, *alterProperties, *alterColumns, *convertStmt, *generate:
		r.Command = true
	case *vacuum:
		r.Command = !n.dryRun
	}
	return r, nil
}

// run is one statement being run.
type run struct {
	s  *Session
	st *Statement
	r  *Result
}

// errAt is an error about the statement at pos, wrapping err.
func (x *run) errAt(pos int, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return errAt(x.st.Text, pos, err, "%v", err)
}

// errorf is an error about the statement at pos.
func (x *run) errorf(pos int, format string, a ...any) error {
	return errAt(x.st.Text, pos, nil, format, a...)
}

// location resolves a table reference to where the table lives.
func (x *run) location(t tableRef) (string, error) {
	if t.path != "" {
		return t.path, nil
	}
	c := x.s.catalog
	if c == nil {
		return "", x.errorf(t.pos, "table %s: there is no catalog; name the table by its path: delta.`/path/to/%s`", t.name, t.name)
	}
	loc, ok := c.Location(t.name)
	if !ok {
		known := "it has none"
		if names := c.Names(); len(names) > 0 {
			known = "it has " + strings.Join(names, ", ")
		}
		return "", x.errorf(t.pos, "table %s is not in the catalog %s (%s); CREATE TABLE %s registers one, or name a table by its path: delta.`path`", t.name, c.Path(), known, t.name)
	}
	return loc, nil
}

// display is how errors and summaries name the table.
func (t tableRef) display() string {
	switch {
	case t.path != "":
		return "delta.`" + t.path + "`"
	case t.name != "":
		return t.name
	}
	return t.format + ".`" + strings.Join(t.files, ",") + "`"
}

// store opens the store of a table location; the session closes it.
func (x *run) store(ctx context.Context, t tableRef) (objstore.Store, string, error) {
	loc, err := x.location(t)
	if err != nil {
		return nil, "", err
	}
	st, err := objstore.Open(ctx, loc)
	if err != nil {
		return nil, "", x.errAt(t.pos, err)
	}
	x.s.stores = append(x.s.stores, st)
	return st, loc, nil
}

// snapshot opens a table at its time travel (the latest without).
func (x *run) snapshot(ctx context.Context, t tableRef) (*deltalog.Snapshot, error) {
	st, _, err := x.store(ctx, t)
	if err != nil {
		return nil, err
	}
	var opts []deltalog.Option
	switch {
	case t.version != nil:
		opts = append(opts, deltalog.AtVersion(*t.version))
	case t.timestamp != "":
		ts, err := deltalog.ParseTime(t.timestamp)
		if err != nil {
			return nil, x.errorf(t.pos, "TIMESTAMP AS OF '%s': %v", t.timestamp, err)
		}
		opts = append(opts, deltalog.AtTimestamp(ts))
	}
	snap, err := deltalog.Open(ctx, st, "", opts...)
	if err != nil {
		return nil, x.errAt(t.pos, fmt.Errorf("%s: %w", t.display(), err))
	}
	return snap, nil
}
