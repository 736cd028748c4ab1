package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// The table: rows (id, p, v) partitioned by p. Every id is unique over a
// run, so a lost or duplicated row shows.
const schemaDDL = "id long not null, p string, v long"

var partitions = []string{"a", "b", "c", "d"}

// row is one row of the table.
type row struct {
	ID int64  `json:"id"`
	P  string `json:"p"`
	V  int64  `json:"v"`
}

// Operation kinds.
const (
	opAppend       = "append"       // writer.Append, a blind append
	opOverwrite    = "overwrite"    // writer.Overwrite
	opReplaceWhere = "replaceWhere" // writer.ReplaceWhere p = 'x'
	opDelete       = "delete"       // DELETE WHERE p = 'x' AND v < K
	opUpdate       = "update"       // UPDATE SET v = v + 500 WHERE p = 'x' AND v < K
	opMerge        = "merge"        // MERGE on id into partition x: update matches, insert the rest
	opOptimize     = "optimize"     // compact partition x (dataChange=false)
	opAlter        = "alter"        // SET TBLPROPERTIES: a metadata change
	// opSchema is a change of the table's shape (package schema) on a
	// column-mapped table: add a column, rename, drop or widen one the
	// model's ops added (id, p and v stay), a metadata change.
	opSchema = "schema"
)

// Faults injected into one operation.
const (
	faultNone          = ""
	faultFailCreate    = "failCreate"       // the commit's create fails FaultN (1..5) times: retried inside Commit
	faultFailCreateAll = "failCreateAll"    // it fails every time: ErrCommitUnknown, nothing written
	faultLostOnce      = "lostOnce"         // the first create's reply is lost after the write
	faultLostAll       = "lostAll"          // every create's reply is lost: ErrCommitUnknown, written or not
	faultCrash         = "crash"            // data files written, the writer dies before committing
	faultCrashAfter    = "crashAfterCommit" // the process dies after the commit, before it records it (processes only)
)

// Outcomes of an operation as its writer saw it.
const (
	outPending   = "pending"        // journalled before the commit; final unless the writer died
	outCommitted = "committed"      // Commit returned a version
	outApplied   = "alreadyApplied" // an idempotent write found its app version applied
	outConflict  = "conflict"       // a *conflict.Error
	outUnknown   = "unknown"        // deltalog.ErrCommitUnknown
	outCrashed   = "crashed"        // a goroutine's simulated crash before the commit
	outNoop      = "noop"           // nothing to do (OPTIMIZE of fewer than two files)
	outError     = "error"          // anything else: always a test failure
)

// opRecord is the journal entry of one operation: what the writer decided,
// read and wrote, and how its commit ended.
type opRecord struct {
	ID         string `json:"id"`
	Writer     string `json:"writer"`
	Kind       string `json:"kind"`
	Part       string `json:"part,omitempty"`
	K          int64  `json:"k,omitempty"`
	Isolation  string `json:"isolation"`
	Fault      string `json:"fault,omitempty"`
	FaultN     int    `json:"faultN,omitempty"`
	AppID      string `json:"appId,omitempty"`
	AppVersion int64  `json:"appVersion,omitempty"`
	RetryOf    string `json:"retryOf,omitempty"`
	SchemaOp   string `json:"schemaOp,omitempty"` // opSchema: the commit's operation (ADD COLUMNS, ...)

	ReadVersion int64    `json:"readVersion"`
	ReadFiles   []string `json:"readFiles,omitempty"` // canonical paths the op read
	Removes     []string `json:"removes,omitempty"`   // canonical paths it removes
	Source      []row    `json:"source,omitempty"`    // MERGE's source rows
	Rows        []row    `json:"rows,omitempty"`      // the rows of the files it adds
	Written     []string `json:"written,omitempty"`   // data files written before a crash

	Outcome        string `json:"outcome"`
	Version        int64  `json:"version,omitempty"`
	Attempts       int    `json:"attempts,omitempty"`
	TxnID          string `json:"txnId,omitempty"`
	ConflictKind   string `json:"conflictKind,omitempty"`
	WinningVersion int64  `json:"winningVersion,omitempty"`
	Err            string `json:"err,omitempty"`
	CorruptOpens   int    `json:"corruptOpens,omitempty"` // opens that failed with ErrLogCorrupt
	CorruptErr     string `json:"corruptErr,omitempty"`
}

// conflictKinds names the conflict sentinels.
var conflictKinds = []struct {
	name string
	err  error
}{
	{"ProtocolChanged", conflict.ErrProtocolChanged},
	{"MetadataChanged", conflict.ErrMetadataChanged},
	{"ConcurrentTransaction", conflict.ErrConcurrentTransaction},
	{"ConcurrentAppend", conflict.ErrConcurrentAppend},
	{"ConcurrentDeleteRead", conflict.ErrConcurrentDeleteRead},
	{"ConcurrentDeleteDelete", conflict.ErrConcurrentDeleteDelete},
}

func kindName(err error) string {
	for _, k := range conflictKinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return ""
}

// injectorBox holds the fault armed for the current operation.
type injectorBox struct{ inj objstore.Injector }

// commitGlob matches the commit files, and nothing else the writers put.
const commitGlob = "_delta_log/*.json"

// worker is one writer: a goroutine, or the body of an OS process.
type worker struct {
	name  string // "g3" or "p1"
	index int    // its id space
	inc   int    // incarnation: a process restarted after a crash has inc+1
	rng   *rand.Rand
	store *objstore.FaultyStore
	fault atomic.Pointer[injectorBox]
	snap  *deltalog.Snapshot
	seq   int // operations begun in this incarnation
	ids   int64
	// shared, when set, hands out the versions of the app "shared" that
	// four goroutines write, so their idempotent appends race.
	shared *atomic.Int64
	// journal records an operation; called with outPending before a
	// process's commit and once more with the outcome.
	journal func(*opRecord) error
	// process: crashes are real (os.Exit) and may come after the commit.
	process bool
	exit    func()
	// checkpoints started by this worker's commits, waited for at the end.
	pending []*deltalog.CommitResult
	// txnOpts go to every transaction (a mutant checker).
	txnOpts []deltalog.CommitOption
}

func newWorker(base objstore.Store, name string, index, inc int, seed uint64) *worker {
	w := &worker{
		name:  name,
		index: index,
		inc:   inc,
		rng:   rand.New(rand.NewPCG(seed, uint64(index)<<16|uint64(inc))),
	}
	w.store = objstore.Faulty(base, objstore.Func(func(c objstore.Call) (error, error) {
		if b := w.fault.Load(); b != nil {
			return b.inj.Inject(c)
		}
		return nil, nil
	}))
	return w
}

// newID is a fresh row id, unique over the run.
func (w *worker) newID() int64 {
	w.ids++
	return int64(w.index+1)*1_000_000_000 + int64(w.inc)*1_000_000 + w.ids
}

// run does n operations. It returns an error only when the harness itself
// fails (a journal write, a snapshot that cannot be opened); what the
// operations do is judged later from the journal and the log.
func (w *worker) run(ctx context.Context, n int, retry *opRecord) error {
	if retry != nil {
		if err := w.retryAppend(ctx, retry); err != nil {
			return err
		}
	}
	for done := 0; done < n; done++ {
		if err := w.step(ctx); err != nil {
			return err
		}
	}
	for _, res := range w.pending {
		if err := res.WaitHooks(); err != nil {
			return fmt.Errorf("%s: checkpoint after version %d: %w", w.name, res.Version, err)
		}
	}
	return nil
}

// step does one random operation.
func (w *worker) step(ctx context.Context) error {
	w.seq++
	rec := &opRecord{ID: fmt.Sprintf("%s.%d-%d", w.name, w.inc, w.seq), Writer: w.name}
	// Decide everything from the RNG first, in a fixed number of draws,
	// so that a seed fixes the operations whatever the interleaving.
	k := w.rng.IntN(1000)
	part := partitions[w.rng.IntN(len(partitions))]
	rec.Isolation = string(conflict.WriteSerializable)
	if w.rng.IntN(5) == 0 {
		rec.Isolation = string(conflict.Serializable)
	}
	rec.Fault, rec.FaultN = w.pickFault()
	reopen := w.rng.IntN(5) == 0
	draws := [4]uint64{w.rng.Uint64(), w.rng.Uint64(), w.rng.Uint64(), w.rng.Uint64()}

	if w.snap == nil || reopen {
		if err := w.open(ctx, rec); err != nil {
			return err
		}
	}
	rec.ReadVersion = w.snap.Version()
	switch {
	case k < 400:
		rec.Kind = opAppend
		return w.append(ctx, rec, draws)
	case k < 415:
		rec.Kind = opOverwrite
		return w.overwrite(ctx, rec, draws)
	case k < 515:
		rec.Kind, rec.Part = opReplaceWhere, part
		return w.replaceWhere(ctx, rec, draws)
	case k < 635:
		rec.Kind, rec.Part, rec.K = opDelete, part, int64(draws[0]%300)
		return w.rewrite(ctx, rec, draws)
	case k < 755:
		rec.Kind, rec.Part, rec.K = opUpdate, part, int64(draws[0]%500)
		return w.rewrite(ctx, rec, draws)
	case k < 875:
		rec.Kind, rec.Part = opMerge, part
		return w.rewrite(ctx, rec, draws)
	case k < 880:
		rec.Kind = opAlter
		return w.alter(ctx, rec)
	case k < 920 && w.snap.Config().ColumnMapped():
		rec.Kind = opSchema
		return w.schemaChange(ctx, rec, draws)
	default:
		rec.Kind, rec.Part = opOptimize, part
		return w.rewrite(ctx, rec, draws)
	}
}

// open reads the latest snapshot. An open that fails with ErrLogCorrupt
// is tried again, and counted in rec.CorruptOpens so the check reports it:
// a listing that runs while others commit can miss a commit (see
// TestOpenWithListingThatMissesACommit), and the model goes on to check
// everything else.
func (w *worker) open(ctx context.Context, rec *opRecord) error {
	for {
		s, err := deltalog.Open(ctx, w.store, "")
		if errors.Is(err, deltalog.ErrLogCorrupt) && rec.CorruptOpens < 10 {
			rec.CorruptOpens++
			rec.CorruptErr = err.Error()
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: open: %w", w.name, err)
		}
		w.snap = s
		return nil
	}
}

func (w *worker) pickFault() (string, int) {
	r, n := w.rng.IntN(100), 1+w.rng.IntN(5)
	switch {
	case r < 70:
		return faultNone, 0
	case r < 76:
		return faultFailCreate, n
	case r < 79:
		return faultFailCreateAll, 0
	case r < 85:
		return faultLostOnce, 0
	case r < 88:
		return faultLostAll, 0
	case r < 94:
		return faultCrash, 0
	case r < 97 && w.process:
		return faultCrashAfter, 0
	}
	return faultNone, 0
}

// arm sets the fault for the coming commit; disarm clears it.
func (w *worker) arm(rec *opRecord) {
	var inj objstore.Injector
	switch rec.Fault {
	case faultFailCreate:
		inj = objstore.Times(rec.FaultN, objstore.FailMatching(objstore.OpPut, commitGlob, nil))
	case faultFailCreateAll:
		inj = objstore.Times(maxIORetries+1, objstore.FailMatching(objstore.OpPut, commitGlob, nil))
	case faultLostOnce:
		inj = objstore.Times(1, objstore.LoseResponse(objstore.OpPut, commitGlob))
	case faultLostAll:
		inj = objstore.Times(maxIORetries+1, objstore.LoseResponse(objstore.OpPut, commitGlob))
	default:
		return
	}
	w.fault.Store(&injectorBox{inj})
}

func (w *worker) disarm() { w.fault.Store(nil) }

// maxIORetries is how many failed creates of one version deltalog's commit
// loop retries before it gives up with ErrCommitUnknown.
const maxIORetries = 5

// genRows draws n fresh rows, in partition part or in random ones.
func (w *worker) genRows(n int, part string) []row {
	rows := make([]row, n)
	for i := range rows {
		p := part
		if p == "" {
			p = partitions[w.rng.IntN(len(partitions))]
		}
		rows[i] = row{ID: w.newID(), P: p, V: int64(w.rng.IntN(1000))}
	}
	return rows
}

func (w *worker) commitOptions(rec *opRecord) []deltalog.CommitOption {
	opts := append(w.txnOptions(rec), deltalog.WithOperationParameters(map[string]any{"modelOp": rec.ID}))
	if rec.AppID != "" {
		opts = append(opts, deltalog.WithAppTransaction(rec.AppID, rec.AppVersion))
	}
	return opts
}

// txnOptions are the options of op's transaction.
func (w *worker) txnOptions(rec *opRecord) []deltalog.CommitOption {
	return append([]deltalog.CommitOption{deltalog.WithIsolation(conflict.Isolation(rec.Isolation))}, w.txnOpts...)
}

func (w *worker) append(ctx context.Context, rec *opRecord, draws [4]uint64) error {
	rec.Rows = w.genRows(1+int(draws[0]%6), "")
	switch draws[2] % 4 {
	case 0, 1: // idempotent: the writer's own app
		rec.AppID, rec.AppVersion = w.name, int64(w.inc)<<32|int64(w.seq)
	case 2:
		if w.shared != nil {
			rec.AppID, rec.AppVersion = "shared", w.shared.Add(1)
		}
	}
	return w.writeOp(ctx, rec, func(opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
		return writer.Append(ctx, w.snap, batchOf(rec.Rows), writer.WithCommitOptions(opts...))
	})
}

// retryAppend runs an idempotent append again after its outcome was lost
// (ErrCommitUnknown, or a crash): same rows, same app version. Exactly one
// of the two may land.
func (w *worker) retryAppend(ctx context.Context, prev *opRecord) error {
	w.seq++
	rec := &opRecord{
		ID: fmt.Sprintf("%s.%d-%d", w.name, w.inc, w.seq), Writer: w.name, Kind: opAppend,
		Isolation: prev.Isolation, AppID: prev.AppID, AppVersion: prev.AppVersion,
		RetryOf: prev.ID, Rows: prev.Rows,
	}
	// Half the time from the table as it is now, which holds the batch
	// when the first try landed; else from the first try's own snapshot,
	// so the commit loop meets the landed try as a winner.
	if w.snap == nil || w.rng.IntN(2) == 0 {
		if err := w.open(ctx, rec); err != nil {
			return err
		}
	}
	rec.ReadVersion = w.snap.Version()
	return w.writeOp(ctx, rec, func(opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
		return writer.Append(ctx, w.snap, batchOf(rec.Rows), writer.WithCommitOptions(opts...))
	})
}

func (w *worker) overwrite(ctx context.Context, rec *opRecord, draws [4]uint64) error {
	rec.Rows = w.genRows(1+int(draws[0]%4), "")
	for f := range w.snap.Files() {
		p := actions.CanonicalPath(f.Path)
		rec.ReadFiles = append(rec.ReadFiles, p)
		rec.Removes = append(rec.Removes, p)
	}
	return w.writeOp(ctx, rec, func(opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
		return writer.Overwrite(ctx, w.snap, batchOf(rec.Rows), writer.WithCommitOptions(opts...))
	})
}

func (w *worker) replaceWhere(ctx context.Context, rec *opRecord, draws [4]uint64) error {
	rec.Rows = w.genRows(1+int(draws[0]%6), rec.Part)
	for f := range w.snap.Files() {
		if v := f.PartitionValues["p"]; v != nil && *v == rec.Part {
			p := actions.CanonicalPath(f.Path)
			rec.ReadFiles = append(rec.ReadFiles, p)
			rec.Removes = append(rec.Removes, p)
		}
	}
	pred, err := expr.Parse(fmt.Sprintf("p = '%s'", rec.Part))
	if err != nil {
		return err
	}
	return w.writeOp(ctx, rec, func(opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
		return dml.ReplaceWhere(ctx, w.snap, pred, batchOf(rec.Rows), dml.WithCommitOptions(opts...))
	})
}

// writeOp runs a writer-package operation with the op's fault. A crash
// writes the data files (as the operation would) and stops before the
// commit.
func (w *worker) writeOp(ctx context.Context, rec *opRecord, do func([]deltalog.CommitOption) (*deltalog.CommitResult, error)) error {
	if rec.Fault == faultCrash {
		wr, err := writer.WriteFiles(ctx, w.snap, batchOf(rec.Rows))
		if err != nil {
			rec.Outcome, rec.Err = outError, err.Error()
			return w.journal(rec)
		}
		for _, a := range wr.Adds {
			rec.Written = append(rec.Written, actions.CanonicalPath(a.Path))
		}
		return w.crash(ctx, rec)
	}
	if err := w.beforeCommit(rec); err != nil {
		return err
	}
	w.arm(rec)
	res, err := do(w.commitOptions(rec))
	w.disarm()
	return w.finish(ctx, rec, res, err)
}

// alter sets the table property model.alter to the op's id: a metadata
// change, which aborts every transaction it wins against.
func (w *worker) alter(ctx context.Context, rec *opRecord) error {
	md := *w.snap.Metadata()
	md.Configuration = maps.Clone(md.Configuration)
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	md.Configuration["model.alter"] = rec.ID
	if rec.Fault == faultCrash {
		return w.crash(ctx, rec)
	}
	tx := w.snap.NewTransaction(w.txnOptions(rec)...)
	tx.SetMetadata(&md)
	tx.SetOperation("SET TBLPROPERTIES", map[string]any{"properties": `{"model.alter":"` + rec.ID + `"}`, "modelOp": rec.ID}, nil)
	if err := w.beforeCommit(rec); err != nil {
		return err
	}
	w.arm(rec)
	res, err := tx.Commit(ctx)
	w.disarm()
	return w.finish(ctx, rec, res, err)
}

// schemaChange changes the shape of a column-mapped table with package
// schema: it adds a column x_<op> (int), or renames, drops or widens (int
// to long) one an earlier op added, chosen by draws[0]; the model's
// columns id, p and v stay as they are. Its commit is metadata only, as
// alter's.
func (w *worker) schemaChange(ctx context.Context, rec *opRecord, draws [4]uint64) error {
	var extras []*actions.StructField
	for _, f := range w.snap.Schema().Fields {
		if f.Name != "id" && f.Name != "p" && f.Name != "v" {
			extras = append(extras, f)
		}
	}
	suffix := strings.NewReplacer(".", "_", "-", "_").Replace(rec.ID)
	opts := []schema.Option{schema.WithCommitOptions(w.txnOptions(rec)...), schema.WithCommitOptions(deltalog.WithOperationParameters(map[string]any{"modelOp": rec.ID}))}
	var do func() (*deltalog.CommitResult, error)
	choice := int(draws[0] % 4)
	if len(extras) == 0 {
		choice = 0
	}
	pick := extras[0:0]
	if len(extras) > 0 {
		pick = extras[int(draws[1]%uint64(len(extras))):][:1]
	}
	if choice == 3 && pick[0].Type != actions.TypeInteger {
		choice = 0
	}
	switch choice {
	case 0:
		rec.SchemaOp = "ADD COLUMNS"
		do = func() (*deltalog.CommitResult, error) {
			return schema.AddColumns(ctx, w.snap, []schema.Column{{Path: "x_" + suffix, Type: actions.TypeInteger}}, opts...)
		}
	case 1:
		rec.SchemaOp = "RENAME COLUMN"
		do = func() (*deltalog.CommitResult, error) {
			return schema.RenameColumn(ctx, w.snap, pick[0].Name, "r_"+suffix, opts...)
		}
	case 2:
		rec.SchemaOp = "DROP COLUMNS"
		do = func() (*deltalog.CommitResult, error) {
			return schema.DropColumns(ctx, w.snap, []string{pick[0].Name}, opts...)
		}
	case 3:
		rec.SchemaOp = "CHANGE COLUMN"
		do = func() (*deltalog.CommitResult, error) {
			return schema.ChangeColumnType(ctx, w.snap, pick[0].Name, actions.TypeLong, opts...)
		}
	}
	if rec.Fault == faultCrash {
		return w.crash(ctx, rec)
	}
	if err := w.beforeCommit(rec); err != nil {
		return err
	}
	w.arm(rec)
	res, err := do()
	w.disarm()
	return w.finish(ctx, rec, res, err)
}

// readFile is a data file a rewrite read, with its rows.
type readFile struct {
	add  *actions.Add
	path string
	rows []row
}

// rewrite runs DELETE, UPDATE, MERGE and OPTIMIZE as a transaction of its
// own: plan the files of the partition under the predicate, read them,
// remove the ones that change, add their rewritten rows.
func (w *worker) rewrite(ctx context.Context, rec *opRecord, draws [4]uint64) error {
	predText := fmt.Sprintf("p = '%s'", rec.Part)
	if rec.Kind == opDelete || rec.Kind == opUpdate {
		predText += fmt.Sprintf(" AND v < %d", rec.K)
	}
	parsed, err := expr.Parse(predText)
	if err != nil {
		return err
	}
	bound, err := expr.BindPredicate(parsed, w.snap.Schema())
	if err != nil {
		return err
	}
	files, err := readPlanned(ctx, w.snap, bound)
	if err != nil {
		rec.Outcome, rec.Err = outError, err.Error()
		return w.journal(rec)
	}
	if rec.Kind == opMerge {
		// The source: up to two ids of the partition (new values), one to
		// three new rows. MERGE reads the files that may hold its ids.
		var all []row
		for _, f := range files {
			all = append(all, f.rows...)
		}
		for i := range int(draws[0] % 3) {
			if len(all) == 0 {
				break
			}
			r := all[draws[1+i]%uint64(len(all))]
			if !slices.ContainsFunc(rec.Source, func(s row) bool { return s.ID == r.ID }) {
				rec.Source = append(rec.Source, row{ID: r.ID, P: r.P, V: int64(draws[3] % 1000)})
			}
		}
		rec.Source = append(rec.Source, w.genRows(1+int(draws[3]%3), rec.Part)...)
		var ids []string
		for _, s := range rec.Source {
			ids = append(ids, strconv.FormatInt(s.ID, 10))
		}
		predText += " AND id IN (" + strings.Join(ids, ", ") + ")"
		if parsed, err = expr.Parse(predText); err != nil {
			return err
		}
		if bound, err = expr.BindPredicate(parsed, w.snap.Schema()); err != nil {
			return err
		}
		if files, err = readPlanned(ctx, w.snap, bound); err != nil {
			rec.Outcome, rec.Err = outError, err.Error()
			return w.journal(rec)
		}
	}
	for _, f := range files {
		rec.ReadFiles = append(rec.ReadFiles, f.path)
	}

	var removes []readFile
	dataChange := true
	op := "DELETE"
	switch rec.Kind {
	case opDelete:
		for _, f := range files {
			if slices.ContainsFunc(f.rows, func(r row) bool { return r.V < rec.K }) {
				removes = append(removes, f)
				for _, r := range f.rows {
					if r.V >= rec.K {
						rec.Rows = append(rec.Rows, r)
					}
				}
			}
		}
	case opUpdate:
		op = "UPDATE"
		for _, f := range files {
			if slices.ContainsFunc(f.rows, func(r row) bool { return r.V < rec.K }) {
				removes = append(removes, f)
				for _, r := range f.rows {
					if r.V < rec.K {
						r.V += 500
					}
					rec.Rows = append(rec.Rows, r)
				}
			}
		}
	case opMerge:
		op = "MERGE"
		src := map[int64]row{}
		for _, s := range rec.Source {
			src[s.ID] = s
		}
		matched := map[int64]bool{}
		for _, f := range files {
			if !slices.ContainsFunc(f.rows, func(r row) bool { _, ok := src[r.ID]; return ok }) {
				continue
			}
			removes = append(removes, f)
			for _, r := range f.rows {
				if s, ok := src[r.ID]; ok {
					r.V, matched[r.ID] = s.V, true
				}
				rec.Rows = append(rec.Rows, r)
			}
		}
		for _, s := range rec.Source {
			if !matched[s.ID] {
				rec.Rows = append(rec.Rows, s)
			}
		}
	case opOptimize:
		op = "OPTIMIZE"
		if len(files) < 2 {
			rec.Outcome = outNoop
			return w.journal(rec)
		}
		dataChange = false
		removes = files
		for _, f := range files {
			rec.Rows = append(rec.Rows, f.rows...)
		}
	}
	for _, f := range removes {
		rec.Removes = append(rec.Removes, f.path)
	}
	if rec.Kind != opOptimize {
		return w.dml(ctx, rec, parsed)
	}

	var adds []*actions.Add
	if len(rec.Rows) > 0 {
		wr, err := writer.WriteFiles(ctx, w.snap, batchOf(rec.Rows), writer.WithDataChange(dataChange))
		if err != nil {
			rec.Outcome, rec.Err = outError, err.Error()
			return w.journal(rec)
		}
		adds = wr.Adds
		for _, a := range adds {
			rec.Written = append(rec.Written, actions.CanonicalPath(a.Path))
		}
	}
	if rec.Fault == faultCrash {
		return w.crash(ctx, rec)
	}
	rec.Written = nil

	tx := w.snap.NewTransaction(w.txnOptions(rec)...)
	tx.ReadPredicates(bound)
	tx.ReadFiles(rec.ReadFiles...)
	now := time.Now().UnixMilli()
	ext := true
	for _, f := range removes {
		size := f.add.Size
		tx.Add(actions.Action{Remove: &actions.Remove{
			Path: f.add.Path, DeletionTimestamp: &now, DataChange: dataChange, ExtendedFileMetadata: &ext,
			PartitionValues: f.add.PartitionValues, Size: &size, Stats: f.add.Stats,
		}})
	}
	for _, a := range adds {
		tx.Add(actions.Action{Add: a})
	}
	tx.SetOperation(op, map[string]any{"predicate": predText, "modelOp": rec.ID}, nil)
	if err := w.beforeCommit(rec); err != nil {
		return err
	}
	w.arm(rec)
	res, err := tx.Commit(ctx)
	w.disarm()
	return w.finish(ctx, rec, res, err)
}

// errNothingMatched is a DELETE or UPDATE that matched no row: dml
// commits nothing for it.
var errNothingMatched = errors.New("nothing matched")

// dml runs DELETE, UPDATE or MERGE through package dml, the way users do.
func (w *worker) dml(ctx context.Context, rec *opRecord, pred expr.Expr) error {
	return w.writeOp(ctx, rec, func(opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
		dopts := []dml.Option{dml.WithCommitOptions(opts...)}
		if w.snap.Config().ColumnMapped() {
			// The source has only id, p and v: INSERT * leaves the
			// columns schema changes added NULL, which takes schema
			// evolution (as in Spark); the source adds no column.
			dopts = append(dopts, dml.WithSchemaEvolution())
		}
		var res *dml.Result
		var err error
		switch rec.Kind {
		case opDelete:
			res, err = dml.Delete(ctx, w.snap, pred, dopts...)
		case opUpdate:
			var set *expr.Assignment
			if set, err = expr.ParseAssignment("v = v + 500"); err != nil {
				return nil, err
			}
			res, err = dml.Update(ctx, w.snap, pred, []*expr.Assignment{set}, dopts...)
		case opMerge:
			on, perr := expr.Parse("target.id = source.id AND target.p = source.p")
			set, aerr := expr.ParseAssignment("v = source.v")
			if err = errors.Join(perr, aerr); err != nil {
				return nil, err
			}
			res, err = dml.Merge(ctx, w.snap, batchOf(rec.Source), on,
				[]dml.Clause{dml.WhenMatchedUpdate(nil, set), dml.WhenNotMatchedInsertAll(nil)}, dopts...)
		default:
			return nil, fmt.Errorf("op %s: %s is not DML", rec.ID, rec.Kind)
		}
		if err != nil {
			return nil, err
		}
		if res.CommitResult == nil {
			return nil, errNothingMatched
		}
		return res.CommitResult, nil
	})
}

// readPlanned plans a scan of snap under pred and reads every row of each
// planned file.
func readPlanned(ctx context.Context, snap *deltalog.Snapshot, pred expr.Expr) ([]readFile, error) {
	planner, err := reader.NewScan(snap, reader.WithFilter(pred))
	if err != nil {
		return nil, err
	}
	all, err := reader.NewScan(snap, reader.WithParallelism(1))
	if err != nil {
		return nil, err
	}
	var out []readFile
	for sf, err := range planner.Files(ctx) {
		if err != nil {
			return nil, err
		}
		f := readFile{add: sf.Add, path: actions.CanonicalPath(sf.Add.Path)}
		for rec, err := range all.ReadFile(ctx, sf) {
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", sf.Key, err)
			}
			rows, err := rowsOf(rec)
			if err != nil {
				return nil, err
			}
			f.rows = append(f.rows, rows...)
		}
		out = append(out, f)
	}
	return out, nil
}

// rowsOf decodes a batch of the table's schema.
func rowsOf(rec arrow.RecordBatch) ([]row, error) {
	lines, err := reader.CanonicalRows(rec)
	if err != nil {
		return nil, err
	}
	rows := make([]row, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &rows[i]); err != nil {
			return nil, fmt.Errorf("decode row %s: %w", l, err)
		}
	}
	return rows, nil
}

// beforeCommit journals a process's operation as pending, so that a crash
// during or after the commit leaves a trace.
func (w *worker) beforeCommit(rec *opRecord) error {
	if !w.process {
		return nil
	}
	rec.Outcome = outPending
	return w.journal(rec)
}

// crash ends the operation before its commit: a process dies for real, a
// goroutine just drops the transaction.
func (w *worker) crash(ctx context.Context, rec *opRecord) error {
	if w.process {
		rec.Outcome = outPending
		if err := w.journal(rec); err != nil {
			return err
		}
		w.exit() // the restarted process retries an idempotent append
	}
	rec.Outcome = outCrashed
	if err := w.journal(rec); err != nil {
		return err
	}
	if rec.AppID != "" {
		return w.retryAppend(ctx, rec)
	}
	w.snap = nil
	return nil
}

// finish records the commit's outcome and moves the worker on: from the
// commit's own snapshot after a success, from a fresh one otherwise.
func (w *worker) finish(ctx context.Context, rec *opRecord, res *deltalog.CommitResult, err error) error {
	var cerr *conflict.Error
	switch {
	case errors.Is(err, errNothingMatched):
		rec.Outcome = outNoop
	case err == nil && res.AlreadyApplied:
		rec.Outcome, rec.Version = outApplied, res.Version
		w.snap = nil
	case err == nil:
		rec.Outcome, rec.Version, rec.Attempts, rec.TxnID = outCommitted, res.Version, res.Attempts, res.TxnID
		if rec.Fault == faultCrashAfter {
			w.exit() // the commit landed; its writer never learns of it
		}
		s, serr := res.Snapshot()
		if serr != nil {
			return fmt.Errorf("%s: op %s: snapshot of commit %d: %w", w.name, rec.ID, res.Version, serr)
		}
		w.snap = s
		w.pending = append(w.pending, res)
	case errors.As(err, &cerr):
		rec.Outcome, rec.ConflictKind, rec.WinningVersion, rec.Err = outConflict, kindName(cerr), cerr.WinningVersion, err.Error()
		if !errors.Is(err, conflict.ErrConflict) {
			rec.Outcome = outError
		}
		w.snap = nil
	case errors.Is(err, deltalog.ErrCommitUnknown):
		rec.Outcome, rec.Err = outUnknown, err.Error()
		if rec.AppID == "" {
			w.snap = nil
		} // else retryAppend may go on from the snapshot the op read
	default:
		rec.Outcome, rec.Err = outError, err.Error()
		w.snap = nil
	}
	if jerr := w.journal(rec); jerr != nil {
		return jerr
	}
	if rec.Outcome == outUnknown && rec.AppID != "" {
		// What an ingestor does when it cannot know: send the batch again
		// under the same app version.
		return w.retryAppend(ctx, rec)
	}
	return nil
}

// batchOf is rows as one Arrow batch of the table's schema.
func batchOf(rows []row) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
		defer b.Release()
		ids := b.Field(0).(*array.Int64Builder)
		ps := b.Field(1).(*array.StringBuilder)
		vs := b.Field(2).(*array.Int64Builder)
		for _, r := range rows {
			ids.Append(r.ID)
			ps.Append(r.P)
			vs.Append(r.V)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		yield(rec, nil)
	}
}

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)
