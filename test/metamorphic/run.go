package metamorphic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/deltasql"
	"github.com/lakelog/lakelog/objstore"
	_ "github.com/lakelog/lakelog/uniform" // UniForm tables convert after every commit
	"github.com/lakelog/lakelog/writer"
)

// Root is where a run's table lives in its folder.
const Root = "t"

// Options size a run.
type Options struct {
	// Ops is the number of operations after the table is created.
	Ops int
	// Dir is the folder the table (at Dir/t) and the SQL sources are
	// written to.
	Dir string
	// EveryVersion: after each step, read every earlier version by time
	// travel (else a sample of them, and every one after the last step).
	EveryVersion bool
}

// Result is a finished run: the table's folder and what the model holds
// at the latest version.
type Result struct {
	Dir     string // the table is at Dir/t
	Config  string
	Ops     []string
	Version int64
	// Columns and Rows are the latest version's, rendered by the model
	// (sorted); ReadRows renders a reader's rows the same way.
	Columns []string
	Rows    []string
	// Features the table uses at the latest version, as peers name their
	// limitations: "columnMapping", "deletionVectors", "typeWidening",
	// "timestampNtz", "rowTracking", "v2Checkpoint", "identity", "generated".
	Features []string

	last *state
}

// ReadRows renders the rows of an Arrow record (a peer's read of the
// table) as the model renders Result.Rows: columns matched by name.
func (r *Result) ReadRows(rec arrow.RecordBatch) ([]string, error) {
	rows, err := decodeRows(r.last.cols, rec, false)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, rw := range rows {
		out[i] = renderRow(r.last.cols, rw.row)
	}
	return out, nil
}

// env is what operations run against: the table's store, a SQL session,
// and the allocator.
type env struct {
	t      testing.TB
	ctx    context.Context
	dir    string
	store  objstore.Store
	sess   *deltasql.Session
	mem    memory.Allocator
	stageN int
}

func (e *env) table() string { return "delta.`" + filepath.Join(e.dir, Root) + "`" }

func (e *env) snap() (*deltalog.Snapshot, error) { return deltalog.Open(e.ctx, e.store, Root) }

// hookError is a post-commit hook's failure: never a refusal, always a
// test failure.
type hookError struct{ err error }

func (h *hookError) Error() string { return "post-commit hook: " + h.err.Error() }

func (e *env) wait(res *deltalog.CommitResult) error {
	if res == nil {
		return nil
	}
	if err := res.WaitHooks(); err != nil {
		return &hookError{err}
	}
	return nil
}

// sql runs every statement of text through the session, as `lakelog
// sql` does, and waits for each one's post-commit hooks.
func (e *env) sql(text string) error {
	stmts, err := deltasql.Parse(text)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		res, err := e.sess.Run(e.ctx, st)
		if err != nil {
			return err
		}
		for _, err := range res.Rows() {
			if err != nil {
				return err
			}
		}
		if err := res.WaitHooks(); err != nil {
			return &hookError{err}
		}
	}
	return nil
}

// batch is rows as one Arrow record of cols (logical names and types).
func (e *env) batch(cols []*column, rows []row) arrow.RecordBatch {
	st := &actions.StructType{}
	for _, c := range cols {
		st.Fields = append(st.Fields, &actions.StructField{Name: c.name, Type: c.typ, Nullable: c.kind != keyCol})
	}
	sc, err := actions.ToArrowSchema(st, false, "")
	if err != nil {
		e.t.Fatalf("metamorphic: arrow schema of %s: %v", ddl(cols), err)
	}
	b := array.NewRecordBuilder(e.mem, sc)
	defer b.Release()
	for _, rw := range rows {
		for i, c := range cols {
			appendValue(b.Field(i), c.typ, rw.vals[c.uid])
		}
	}
	return b.NewRecordBatch()
}

func (e *env) batches(cols []*column, rows []row) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		rec := e.batch(cols, rows)
		defer rec.Release()
		yield(rec, nil)
	}
}

// stage writes rows to a new plain table (a SQL statement's source) and
// returns its SQL name.
func (e *env) stage(cols []*column, rows []row) (string, error) {
	e.stageN++
	root := fmt.Sprintf("stage/%d", e.stageN)
	st := &actions.StructType{}
	for _, c := range cols {
		st.Fields = append(st.Fields, &actions.StructField{Name: c.name, Type: c.typ, Nullable: true})
	}
	s, err := actions.SchemaString(st)
	if err != nil {
		return "", err
	}
	md := &actions.Metadata{SchemaString: s, Configuration: map[string]string{}}
	var opts []deltalog.CommitOption
	for _, c := range cols {
		if hasNTZ(c.typ) {
			opts = append(opts, deltalog.WithTableFeatures(actions.FeatureTimestampNTZ))
			break
		}
	}
	if _, err := writer.CreateTable(e.ctx, e.store, root, md, e.batches(cols, rows), writer.WithAllocator(e.mem), writer.WithCommitOptions(opts...)); err != nil {
		return "", fmt.Errorf("metamorphic: staging the source: %w", err)
	}
	return "delta.`" + filepath.Join(e.dir, root) + "`", nil
}

// ---- the runner

type runner struct {
	t       testing.TB
	opts    Options
	g       *generator
	e       *env
	cfg     *tableConfig
	history []*state // by version
	cur     *state
	log     []string
	seed    uint64
}

func (rn *runner) fail(format string, args ...any) {
	rn.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "metamorphic (seed %d): %s\n", rn.seed, fmt.Sprintf(format, args...))
	fmt.Fprintf(&b, "table: %s\noperations:\n", rn.cfg)
	for i, l := range rn.log {
		fmt.Fprintf(&b, "%3d. %s\n", i, l)
	}
	rn.t.Fatal(b.String())
}

// Run draws a table configuration and opts.Ops operations from seed,
// runs them, and checks every step against the model (see the package
// doc); it fails t at the first difference, printing the operations.
func Run(t testing.TB, seed uint64, opts Options) *Result {
	t.Helper()
	ctx := context.Background()
	store, err := objstore.NewLocal(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sess := deltasql.New()
	defer sess.Close()
	rn := &runner{t: t, opts: opts, g: newGenerator(seed), seed: seed,
		e: &env{t: t, ctx: ctx, dir: opts.Dir, store: store, sess: sess, mem: mem}}
	rn.cfg = drawConfig(rn.g.r, rn.g)
	rn.create()
	for range opts.Ops {
		rn.step()
	}
	rn.checkHistory(true)
	if n := mem.CurrentAlloc(); n != 0 {
		rn.fail("%d bytes of Arrow memory not released", n)
	}
	res := &Result{Dir: opts.Dir, Config: rn.cfg.String(), Ops: rn.log, Version: rn.cur.version, last: rn.cur}
	for _, c := range rn.cur.cols {
		res.Columns = append(res.Columns, c.name)
	}
	res.Rows = renderRows(rn.cur.cols, rn.cur.rows)
	snap, err := rn.e.snap()
	if err != nil {
		t.Fatal(err)
	}
	cfg := snap.Config()
	for _, f := range []string{actions.FeatureColumnMapping, actions.FeatureDeletionVectors, actions.FeatureTypeWidening,
		actions.FeatureTimestampNTZ, actions.FeatureRowTracking, actions.FeatureV2Checkpoint, actions.FeatureIdentityColumns, actions.FeatureGeneratedColumns} {
		if cfg.Supports(f) {
			res.Features = append(res.Features, f)
		}
	}
	return res
}

// create makes version 0 from the drawn configuration, through the Go
// API or CREATE TABLE.
func (rn *runner) create() {
	cfg := rn.cfg
	s := &state{version: 0, cols: cfg.cols, feat: cfg.feat, parts: cfg.parts, touched: map[int64]bool{}, changes: &changeSet{}, hwm: map[int]int64{}}
	var partNames []string
	for _, p := range cfg.parts {
		partNames = append(partNames, s.colByUID(p).name)
	}
	viaSQL := rn.g.viaSQL()
	var err error
	if viaSQL {
		var props []string
		for _, k := range sortedKeys(cfg.props) {
			props = append(props, sqlString(k)+" = "+sqlString(cfg.props[k]))
		}
		text := fmt.Sprintf("CREATE TABLE %s (%s) USING DELTA", rn.e.table(), ddl(cfg.cols))
		if len(partNames) > 0 {
			text += " PARTITIONED BY (" + quotedNames(partCols(s)) + ")"
		}
		if len(props) > 0 {
			text += " TBLPROPERTIES (" + strings.Join(props, ", ") + ")"
		}
		rn.log = append(rn.log, text)
		err = rn.e.sql(text)
	} else {
		rn.log = append(rn.log, fmt.Sprintf("deltalog.Create(%s; partitioned by %v; %v)", ddl(cfg.cols), partNames, cfg.props))
		err = rn.createAPI(partNames)
	}
	if err != nil {
		rn.fail("create: %v", err)
	}
	rn.history = []*state{s}
	rn.cur = s
	rn.check(nil)
}

func partCols(s *state) []*column {
	var out []*column
	for _, p := range s.parts {
		out = append(out, s.colByUID(p))
	}
	return out
}

func (rn *runner) createAPI(parts []string) error {
	st, err := actions.ParseDDL(ddl(rn.cfg.cols))
	if err != nil {
		return err
	}
	s, err := actions.SchemaString(st)
	if err != nil {
		return err
	}
	props, features, err := deltalog.SplitFeatureProperties(rn.cfg.props)
	if err != nil {
		return err
	}
	tx, err := deltalog.Create(rn.e.store, Root, &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props},
		deltalog.WithTableFeatures(features...))
	if err != nil {
		return err
	}
	res, err := tx.Commit(rn.e.ctx)
	if err != nil {
		return err
	}
	return rn.e.wait(res)
}

func (rn *runner) latest() int64 {
	snap, err := rn.e.snap()
	if err != nil {
		rn.fail("open the table: %v", err)
	}
	return snap.Version()
}

// step draws, predicts, runs and checks one operation.
func (rn *runner) step() {
	if n := rn.e.mem.(*memory.CheckedAllocator).CurrentAlloc(); n != 0 {
		rn.fail("%d bytes of Arrow memory were not released by the checks of the last operation (reads, time travel, change feed, Iceberg)", n)
	}
	cur := rn.cur
	o := rn.g.next(cur, rn.history)
	next, want, why := o.predict(cur)
	before := rn.latest()
	err := o.run(rn.e)
	after := rn.latest()
	line := o.desc
	if err != nil {
		line += "\n\t=> refused: " + err.Error()
	} else if after > before {
		line += fmt.Sprintf("\n\t=> version %d", after)
	} else {
		line += "\n\t=> nothing committed"
	}
	if want != commits {
		line += fmt.Sprintf(" (model: %s%s)", want, map[bool]string{true: ": " + why, false: ""}[why != ""])
	}
	rn.log = append(rn.log, line)
	var he *hookError
	switch {
	case errors.As(err, &he):
		rn.fail("%v", err)
	case err != nil && want == commits:
		rn.fail("the operation failed, the model says it succeeds: %v", err)
	case err != nil && after != before:
		rn.fail("the operation failed (%v) but committed version %d", err, after)
	case err != nil:
		rn.check(nil)
		return
	case want == refused:
		rn.fail("the operation succeeded, the model says it is refused: %s", why)
	}
	if after == before {
		if !sameState(cur, next) {
			rn.fail("nothing was committed, but the model has the operation change the table")
		}
		if o.after != nil {
			o.after(rn)
		}
		rn.check(nil)
		return
	}
	if after < before {
		rn.fail("the latest version went from %d to %d", before, after)
	}
	prev := cur
	for v := before + 1; v <= after; v++ {
		s := next
		if v > before+1 {
			s = next.clone()
			s.changes = &changeSet{}
			s.op = "(second commit of the operation)"
		}
		s.version = v
		s.partial = v < after
		rn.history = append(rn.history, s)
	}
	rn.cur = rn.history[len(rn.history)-1]
	rn.cur.vacuumed = rn.cur.vacuumed || prev.vacuumed
	if o.after != nil {
		o.after(rn)
	}
	rn.check(prev)
}

// checkMemory fails when Arrow memory of the step was not released.
func (rn *runner) checkMemory() {
	if n := rn.e.mem.(*memory.CheckedAllocator).CurrentAlloc(); n != 0 {
		rn.fail("%d bytes of Arrow memory were not released by the last operation", n)
	}
}

// sameState reports whether b's schema and rows are a's.
func sameState(a, b *state) bool {
	if ddl(a.cols) != ddl(b.cols) {
		return false
	}
	return slices.Equal(renderRows(a.cols, a.rows), renderRows(b.cols, b.rows))
}

// logCleaned notes a log cleanup: versions before the newest checkpoint
// may be gone.
func (rn *runner) logCleaned() {
	var newest int64 = -1
	for o, err := range rn.e.store.List(rn.e.ctx, Root+"/"+deltalog.LogDir, "") {
		if err != nil {
			rn.fail("list the log: %v", err)
		}
		p, ok := actions.ParseLogPath(path.Base(o.Key))
		if ok && p.IsCheckpoint() && p.Version > newest {
			newest = p.Version
		}
	}
	if newest > rn.cur.restorable {
		rn.cur.restorable = newest
	}
}

// vacuumed notes a VACUUM: files only earlier versions read may be gone.
func (rn *runner) vacuumed() { rn.cur.vacuumed = true; rn.cur.vacuumedAt = rn.cur.version }
